// http_parallel.mjs - two MCP clients of one `llm-sandbox mcp --http`
// server calling at once (the SDK's Streamable HTTP client): each names
// the sandbox session "s", each gets its own; their 2-second calls overlap
// (the server runs different MCP sessions' calls at the same time).
//   node http_parallel.mjs URL TOKEN LABEL
// Prints "ok NAME" / "FAIL NAME: why" per check and exits 1 on a failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, label] = process.argv.slice(2);
let failed = 0;
function check(name, cond, why) {
  console.log(cond ? `ok   ${label}.${name}` : `FAIL ${label}.${name}: ${why}`);
  if (!cond) failed++;
}
const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
const transports = [];
async function connect(name) {
  const client = new Client({ name, version: "1.0.0" });
  const t = new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(t);
  transports.push(t);
  return client;
}
const call = (c, code) => c.callTool({ name: "execute_code", arguments: { session: "s", code } });

const clients = [];
try {
  const a = await connect("a"), b = await connect("b");
  clients.push(a, b);
  // warm both sessions first: the timing below is of the calls alone
  await Promise.all([call(a, "x = 'a'"), call(b, "x = 'b'")]);
  const t0 = Date.now();
  const [ra, rb] = await Promise.all([
    call(a, "import time\ntime.sleep(2)\nprint(x)"),
    call(b, "import time\ntime.sleep(2)\nprint(x)"),
  ]);
  const ms = Date.now() - t0;
  check("sessions_isolated", text(ra).startsWith("a\n") && text(rb).startsWith("b\n"),
    `${JSON.stringify(text(ra))} ${JSON.stringify(text(rb))}`);
  check("calls_overlap", ms < 3500, `two 2 s calls took ${ms} ms together`);
} catch (e) {
  check("run", false, e.stack || String(e));
} finally {
  for (const t of transports) await t.terminateSession().catch(() => {}); /* ends "s" too */
  for (const c of clients) await c.close().catch(() => {});
}
process.exit(failed ? 1 : 0);
