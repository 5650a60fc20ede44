// http_served.mjs - a client with the token is served while others hold
// connections (tests/mcp/http.sh runs tests/slow_clients.py meanwhile):
// ROUNDS times, GAP_MS apart (past undici's 4 s keep-alive, so each round
// opens connections anew through the server's front door), the SDK's own
// client connects (initialize), lists the tools, calls
// get_supported_languages and ends its MCP session (DELETE).
//   node http_served.mjs URL TOKEN ROUNDS GAP_MS NAME
// Prints "ok mcp_http.NAME_K" / "FAIL mcp_http.NAME_K: why" per round.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, rounds, gapMs, name] = process.argv.slice(2);
let failed = 0;

for (let k = 1; k <= Number(rounds); k++) {
  if (k > 1) await new Promise((r) => setTimeout(r, Number(gapMs)));
  const t = new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: `served-${k}`, version: "1.0.0" });
  try {
    await client.connect(t);
    const { tools } = await client.listTools();
    const r = await client.callTool({ name: "get_supported_languages", arguments: {} });
    await t.terminateSession();
    const ok = tools.length === 5 && !r.isError && JSON.parse(r.content[0].text).includes("python");
    console.log(ok ? `ok   mcp_http.${name}_${k}` : `FAIL mcp_http.${name}_${k}: ${JSON.stringify(r)}`);
    failed += !ok;
  } catch (e) {
    console.log(`FAIL mcp_http.${name}_${k}: ${e.message}${e.cause ? ` (${e.cause.message || e.cause})` : ""}`);
    failed++;
  } finally {
    await client.close().catch(() => {});
  }
}
process.exit(failed ? 1 : 0);
