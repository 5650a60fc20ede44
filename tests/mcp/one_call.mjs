// one_call.mjs - one execute_code call of Python with a progress token (the
// SDK's onprogress) through `llm-sandbox mcp` (SERVER ARGS: --queue ...), with
// the SDK's own client (@modelcontextprotocol/sdk, in tests/mcp/node_modules),
// for tests/queue/skew.sh and tests/mcp/run.sh.  Prints one JSON line: the
// tool result's text content, whether it is an error, every progress
// notification the server sent (late: how many of them the SDK reported as
// for an unknown token, having read them with the answer).
//   node one_call.mjs BIN CODE [SERVER ARGS...]
import { stdioClient } from "./sdk.mjs";

const [bin, code, ...serverArgs] = process.argv.slice(2);
// a progress notification that came in one read with the answer, which the
// SDK reports as for an unknown token (typescript-sdk#2580): kept as sent
const { client, transport, late } = stdioClient(bin, serverArgs, "llmsb-one-call");
await client.connect(transport);
const progress = [];
const r = await client.callTool({ name: "execute_code", arguments: { code, language: "python" } },
  undefined, { onprogress: (p) => progress.push(p), timeout: 120000 });
console.log(JSON.stringify({
  text: (r.content || []).filter((c) => c.type === "text").map((c) => c.text),
  isError: !!r.isError,
  progress: [...progress, ...late.map(({ progressToken, ...p }) => p)],
  late: late.length,
}));
await client.close();
