// http_client.mjs - drives `llm-sandbox mcp --http` with the MCP SDK's own
// client over Streamable HTTP (@modelcontextprotocol/sdk's
// StreamableHTTPClientTransport), and with raw fetch for what a client
// library never sends: the token accepted and refused, a wrong Origin, a
// wrong Accept or Content-Type, a missing or unknown session id, an
// oversized body, DELETE ending the MCP session; then execute_code ok and
// failing, a sandbox session across calls, close_session, and two clients
// naming the same session id without meeting.
//   node http_client.mjs URL TOKEN
// Prints "ok NAME" / "FAIL NAME: why" per check and exits 1 on a failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
let failed = 0;

function check(name, cond, why) {
  if (cond) {
    console.log(`ok   mcp_http.${name}`);
  } else {
    console.log(`FAIL mcp_http.${name}: ${why}`);
    failed++;
  }
}

const texts = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text);
const statusLine = (r) => texts(r).find((t) => t.startsWith("status: ")) || "";
const auth = { Authorization: `Bearer ${token}` };
const jsonHeaders = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
const init = (id) => JSON.stringify({
  jsonrpc: "2.0", id, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const ping = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" });

async function post(headers, body) {
  const r = await fetch(url, { method: "POST", headers, body });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

async function connect(name) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

const clients = [];
try {
  // ---- the transport's own checks, raw
  let r = await post(jsonHeaders, init(1));
  check("no_token_refused", r.status === 401 && r.headers.get("www-authenticate") === "Bearer",
    `${r.status} ${r.headers.get("www-authenticate")} ${r.text}`);
  r = await post({ ...jsonHeaders, Authorization: `Bearer ${token}x` }, init(1));
  check("wrong_token_refused", r.status === 401, `${r.status} ${r.text}`);
  r = await post({ ...jsonHeaders, Authorization: `Basic ${token}` }, init(1));
  check("other_scheme_refused", r.status === 401, `${r.status} ${r.text}`);
  r = await post({ ...jsonHeaders, ...auth, Origin: "http://evil.example.com" }, init(1));
  check("wrong_origin_refused", r.status === 403 && /Origin not allowed/.test(r.text), `${r.status} ${r.text}`);
  r = await post({ ...jsonHeaders, ...auth, Origin: "http://localhost:3000" }, init(1));
  const sid = r.headers.get("mcp-session-id") || "";
  check("token_accepted_session_given", r.status === 200 && /^[0-9a-f]{32}$/.test(sid) &&
    JSON.parse(r.text).result.protocolVersion === "2025-06-18", `${r.status} ${sid} ${r.text}`);
  const s = { ...jsonHeaders, ...auth, "Mcp-Session-Id": sid };
  r = await post(s, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  check("notification_202", r.status === 202 && r.text === "", `${r.status} ${r.text}`);
  r = await post(s, ping);
  check("ping_json", r.status === 200 && r.headers.get("content-type") === "application/json" &&
    JSON.parse(r.text).id === 9, `${r.status} ${r.text}`);
  r = await post({ ...jsonHeaders, ...auth }, ping);
  check("no_session_400", r.status === 400 && /Mcp-Session-Id header required/.test(r.text), `${r.status} ${r.text}`);
  r = await post({ ...s, "Mcp-Session-Id": "0".repeat(32) }, ping);
  check("unknown_session_404", r.status === 404, `${r.status} ${r.text}`);
  r = await post({ ...s, Accept: "application/json" }, ping);
  check("accept_both_406", r.status === 406, `${r.status} ${r.text}`);
  r = await post({ ...s, "Content-Type": "text/plain" }, ping);
  check("content_type_415", r.status === 415, `${r.status} ${r.text}`);
  r = await post({ ...s, "MCP-Protocol-Version": "1999-01-01" }, ping);
  check("protocol_version_400", r.status === 400 && /MCP-Protocol-Version/.test(r.text), `${r.status} ${r.text}`);
  r = await post(s, "not json");
  check("parse_error_400", r.status === 400 && JSON.parse(r.text).error.code === -32700, `${r.status} ${r.text}`);
  r = await post(s, JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }, { jsonrpc: "2.0", id: 2, method: "nope" }]));
  check("batch", r.status === 200 && JSON.parse(r.text).length === 2, `${r.status} ${r.text}`);
  r = await post(s, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${"x".repeat(9 << 20)}"}}`);
  check("oversized_body_413", r.status === 413 && /over 8388608 bytes/.test(r.text), `${r.status} ${r.text.slice(0, 200)}`);
  const g = await fetch(url, { headers: { ...auth, Accept: "text/event-stream", "Mcp-Session-Id": sid } });
  check("get_405", g.status === 405 && g.headers.get("allow") === "POST, DELETE", `${g.status}`);
  let d = await fetch(url, { method: "DELETE", headers: { ...auth, "Mcp-Session-Id": sid } });
  r = await post(s, ping);
  check("delete_ends_session", d.status === 204 && r.status === 404, `DELETE ${d.status}, then ${r.status} ${r.text}`);

  // ---- the SDK's client: the tools over HTTP
  const a = await connect("a");
  clients.push(a);
  check("sdk_connect", /^[0-9a-f]{32}$/.test(a.transport.sessionId || ""), `session ${a.transport.sessionId}`);
  const { tools } = await a.client.listTools();
  check("tools_list", tools.map((t) => t.name).sort().join(",") ===
    "close_session,execute_code,get_language_details,get_supported_languages,submit_jobs", JSON.stringify(tools.map((t) => t.name)));
  let c = await a.client.callTool({ name: "execute_code", arguments: { code: "print(6 * 7)" } });
  check("execute_ok", !c.isError && texts(c)[0] === "42\n" && /^status: ok/.test(statusLine(c)), JSON.stringify(c));
  c = await a.client.callTool({ name: "execute_code", arguments: { code: "import sys\nsys.exit('bad thing')" } });
  check("execute_error", c.isError && statusLine(c).startsWith("status: runtime_error"), JSON.stringify(c));

  // one session id, two clients: each its own interpreter
  c = await a.client.callTool({ name: "execute_code", arguments: { session: "s1", code: "x = 'from a'\nprint('set')" } });
  check("session_define", !c.isError && texts(c)[0] === "set\n", JSON.stringify(c));
  c = await a.client.callTool({ name: "execute_code", arguments: { session: "s1", code: "print(x)" } });
  check("session_across_calls", !c.isError && texts(c)[0] === "from a\n", JSON.stringify(c));
  const b = await connect("b");
  clients.push(b);
  c = await b.client.callTool({ name: "execute_code", arguments: { session: "s1", code: "print('x' in globals())" } });
  check("sessions_isolated", !c.isError && texts(c)[0] === "False\n", JSON.stringify(c));
  c = await b.client.callTool({ name: "close_session", arguments: { session: "s1" } });
  check("close_session", !c.isError && /ended; its id is free again/.test(texts(c)[0]), JSON.stringify(c));
  c = await a.client.callTool({ name: "execute_code", arguments: { session: "s1", code: "print(x)" } });
  check("other_close_leaves_mine", !c.isError && texts(c)[0] === "from a\n", JSON.stringify(c));
  // submit_jobs over HTTP: its job naming s1 runs in b's own s1 (not a's),
  // the identical pair runs once, the answer names no scope; the batch's
  // session is b's to continue
  c = await b.client.callTool({ name: "submit_jobs", arguments: { jobs: [
    { id: "j1", lang: "python", session: "s1", code: "y = 5\nprint('x' in globals())" },
    { id: "j2", lang: "python", code: "print(6 * 7)" },
    { id: "j3", lang: "python", code: "print(6 * 7)" }].map((j) => JSON.stringify(j)).join("\n") } },
  undefined, { timeout: 120000 });
  const bl = (texts(c)[1] || "").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  check("submit_jobs_over_http", !c.isError && bl.length === 3 && bl[0].stdout === "False\n" &&
    bl[1].stdout === "42\n" && bl[2].copy_of === "j2" && bl[2].stdout === "42\n" &&
    texts(c)[0].includes("dedup: 3 jobs, 2 distinct programs run, 1 copies") &&
    !JSON.stringify(c).includes("mcp-"), JSON.stringify(c).slice(0, 800));
  c = await b.client.callTool({ name: "execute_code", arguments: { session: "s1", code: "print(y)" } });
  check("batch_session_is_the_clients", !c.isError && texts(c)[0] === "5\n", JSON.stringify(c));
  c = await a.client.callTool({ name: "execute_code", arguments: { session: "s1", code: "print(x, 'y' in globals())" } });
  check("batch_session_not_anothers", !c.isError && texts(c)[0] === "from a False\n", JSON.stringify(c));
  // b's requests with a's id: b cannot name a's MCP session without its id,
  // and a's session id is a's alone
  check("session_ids_differ", a.transport.sessionId !== b.transport.sessionId, "same id");

  // DELETE (the SDK's terminateSession) closes the sandbox sessions too
  const aid = a.transport.sessionId;
  await a.transport.terminateSession();
  r = await post({ ...jsonHeaders, ...auth, "Mcp-Session-Id": aid }, ping);
  check("sdk_terminate_ends_session", r.status === 404, `${r.status} ${r.text}`);
} catch (e) {
  check("run", false, e.stack || String(e));
} finally {
  for (const x of clients) await x.client.close().catch(() => {});
}
process.exit(failed ? 1 : 0);
