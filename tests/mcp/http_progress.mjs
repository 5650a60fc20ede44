// http_progress.mjs - execute_code's progress notifications over HTTP: a
// call that asks for progress (the SDK's onprogress sets a progressToken)
// gets its output's pieces as notifications/progress on the request's SSE
// stream while the program runs, the answer last.  Needs execute_code's
// live progress (mcp/server.c, notifications sent through jsonrpc_notify).
// Then, raw, the bounds: a progressToken that is no token or a string over
// 256 bytes (7 MB here, which every notification would repeat) is a
// JSON-RPC error naming _meta.progressToken, one of 256 bytes is taken;
// a call whose output escapes to more than 8 MiB of notifications (2 MiB
// of control characters, 6 bytes each in JSON: the server's config must
// let a call keep 2 MiB of output) gets at most 8 MiB of them, the last
// saying the rest is in the answer, which holds all of it.
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

const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream",
  Authorization: `Bearer ${token}` };
const CAP = 8 << 20;

// POSTs a message; the SSE events' data (parsed) or the JSON answer, and
// each event's size
async function post(sid, msg) {
  const r = await fetch(url, { method: "POST", headers: { ...headers, ...(sid ? { "Mcp-Session-Id": sid } : {}) },
    body: JSON.stringify(msg) });
  const text = await r.text(), type = r.headers.get("content-type") || "";
  if (!type.startsWith("text/event-stream"))
    return { status: r.status, sid: r.headers.get("mcp-session-id"), msgs: text ? [JSON.parse(text)] : [], sizes: [] };
  const data = text.split("\n\n").filter((e) => e).map((e) => e.split("\n").find((l) => l.startsWith("data: ")).slice(6));
  return { status: r.status, msgs: data.map((d) => JSON.parse(d)), sizes: data.map((d) => d.length) };
}

const call = (id, code, progressToken) => ({ jsonrpc: "2.0", id, method: "tools/call",
  params: { name: "execute_code", arguments: { code }, _meta: { progressToken } } });

async function bounds() {
  const init = await post(null, { jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  const sid = init.sid;
  let r = await post(sid, call(2, "print(1)", "x".repeat(7 << 20)));
  let e = r.msgs[0] && r.msgs[0].error;
  check("progress_token_over_cap_refused", r.status === 200 && e && e.code === -32602 &&
    /_meta\.progressToken: a string of 7340032 bytes, over the 256 byte cap/.test(e.message),
    `${r.status} ${JSON.stringify(r.msgs).slice(0, 300)}`);
  r = await post(sid, call(3, "print(1)", { a: 1 }));
  e = r.msgs[0] && r.msgs[0].error;
  check("progress_token_object_refused", e && e.code === -32602 &&
    /_meta\.progressToken: a string or a number is expected \(got an object\)/.test(e.message),
    JSON.stringify(r.msgs).slice(0, 300));
  r = await post(sid, call(4, "print('t', flush=True)", "y".repeat(256)));
  let last = r.msgs[r.msgs.length - 1];
  check("progress_token_at_cap_taken", last.result && !last.result.isError &&
    r.msgs.some((m) => m.method === "notifications/progress" && m.params.progressToken === "y".repeat(256)),
    JSON.stringify(r.msgs).slice(0, 300));
  // 2 MiB of \x01: 12 MiB of notifications unbounded
  r = await post(sid, call(5, "import sys\nfor _ in range(64):\n    sys.stdout.write('\\x01' * 32768)\n    sys.stdout.flush()", 5));
  const notes = r.msgs.filter((m) => m.method === "notifications/progress");
  const bytes = r.sizes.slice(0, -1).reduce((a, b) => a + b, 0);
  last = r.msgs[r.msgs.length - 1];
  const out = last.result ? last.result.content[0].text : "";
  const biggest = Math.max(0, ...r.sizes.slice(0, -1));
  check("progress_notifications_capped", notes.length > 1 && bytes <= CAP &&
    /no more progress for this call/.test(notes[notes.length - 1].params.message) &&
    out.length === 2 << 20 && !last.result.isError,
    `${notes.length} notifications, ${bytes} bytes (cap ${CAP}, biggest ${biggest}); last: ` +
    `${JSON.stringify(notes[notes.length - 1] || {}).slice(0, 200)}; answer: ${out.length} characters ` +
    `${JSON.stringify(last).slice(0, 200)}`);
  await fetch(url, { method: "DELETE", headers: { ...headers, "Mcp-Session-Id": sid } });
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
  await bounds();
} catch (e) {
  check("progress_run", false, e.stack || String(e));
} finally {
  await client.close().catch(() => {});
}
process.exit(failed ? 1 : 0);
