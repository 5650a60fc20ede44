// sdk.mjs - what the stdio test clients (client.mjs, batch.mjs,
// one_call.mjs) share: the SDK's own client (@modelcontextprotocol/sdk, in
// tests/mcp/node_modules, found from this file whatever the working
// directory) over `llm-sandbox mcp`, and their "ok NAME" / "FAIL NAME: why"
// lines.
import { createRequire } from "node:module";

const require = createRequire(new URL("./package.json", import.meta.url));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

// A client of `BIN mcp ARGS...` called name, to connect(transport).  The
// SDK hands a notification to its handler a turn after it reads it, and an
// answer at once: a progress notification that arrives in one read with its
// call's answer finds its handler gone and is reported to onerror as for an
// "unknown token" (typescript-sdk#2580).  late gets those, each its params
// as the server sent them, so that what the server sent can be judged.
export function stdioClient(bin, serverArgs, name) {
  const transport = new StdioClientTransport({ command: bin, args: ["mcp", ...serverArgs],
                                               env: process.env, stderr: "inherit" });
  const client = new Client({ name, version: "1.0.0" });
  const late = [];
  client.onerror = (e) => {
    const m = /progress notification for an unknown token: (.*)$/s.exec(e.message || "");
    if (m) late.push(JSON.parse(m[1]).params);
  };
  return { client, transport, late };
}

// check(name, cond, why) prints "ok   LABEL.NAME" or "FAIL LABEL.NAME: why";
// check.failed() says how many failed.
export function checker(label) {
  let failed = 0;
  const check = (name, cond, why) => {
    if (cond) {
      console.log(`ok   ${label}.${name}`);
    } else {
      console.log(`FAIL ${label}.${name}: ${why}`);
      failed++;
    }
  };
  check.failed = () => failed;
  return check;
}
