// http_progress.mjs - execute_code's progress notifications over HTTP: a
// call that asks for progress (the SDK's onprogress sets a progressToken)
// gets its output's pieces as notifications/progress on the request's SSE
// stream while the program runs, the answer last.  Needs execute_code's
// live progress (mcp/server.c, notifications sent through jsonrpc_notify).
//   node http_progress.mjs URL TOKEN
// Prints "ok NAME" / "FAIL NAME: why" per check and exits 1 on a failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
let failed = 0;
function check(name, cond, why) {
  console.log(cond ? `ok   mcp_http.${name}` : `FAIL mcp_http.${name}: ${why}`);
  if (!cond) failed++;
}

const t = new StreamableHTTPClientTransport(new URL(url),
  { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
const client = new Client({ name: "progress", version: "1.0.0" });
try {
  await client.connect(t);
  const t0 = Date.now(), seen = [];
  const r = await client.callTool({
    name: "execute_code",
    arguments: { code: "import time\nprint('first', flush=True)\ntime.sleep(2)\nprint('second')" },
  }, undefined, { onprogress: (p) => seen.push({ ms: Date.now() - t0, ...p }) });
  const answered = Date.now() - t0;
  const first = seen.find((p) => /first/.test(p.message || ""));
  check("progress_over_sse", first && answered - first.ms >= 1000 && !r.isError &&
    r.content[0].text === "first\nsecond\n",
    `answer at ${answered} ms, progress ${JSON.stringify(seen)}, answer ${JSON.stringify(r.content)}`);
  await t.terminateSession();
} catch (e) {
  check("progress_run", false, e.stack || String(e));
} finally {
  await client.close().catch(() => {});
}
process.exit(failed ? 1 : 0);
