// skew_mcp.mjs - one execute_code call with a progress token (the SDK's
// onprogress) through `llm-sandbox mcp --queue`, with the SDK's own client
// (@modelcontextprotocol/sdk, installed in tests/mcp/node_modules), for
// tests/queue/skew.sh.  Prints one JSON line: the tool result's text
// content, whether it is an error, and every progress notification.
//   node skew_mcp.mjs BIN CODE [SERVER ARGS...]
import { createRequire } from "node:module";

const require = createRequire(new URL("../mcp/package.json", import.meta.url));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const [bin, code, ...serverArgs] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["mcp", ...serverArgs],
                                             env: process.env, stderr: "inherit" });
const client = new Client({ name: "llmsb-skew-test", version: "1.0.0" });
await client.connect(transport);
const progress = [];
const r = await client.callTool({ name: "execute_code", arguments: { code, language: "python" } },
  undefined, { onprogress: (p) => progress.push(p), timeout: 120000 });
console.log(JSON.stringify({
  text: (r.content || []).filter((c) => c.type === "text").map((c) => c.text),
  isError: !!r.isError,
  progress,
}));
await client.close();
