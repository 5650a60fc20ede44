// client.mjs - drives `llm-sandbox mcp` with the MCP SDK's own client over
// stdio (@modelcontextprotocol/sdk from the npm registry): the handshake,
// tools/list, each tool, a plot as image content, a file as a resource,
// the statuses as tool errors, bad arguments and an unknown tool, and a
// call's live output as progress notifications (onprogress).
//   node client.mjs BIN TRANSCRIPT [ARGS...]   (ARGS: e.g. --queue)
// Prints "ok NAME" / "FAIL NAME: why" per check and exits 1 on a failure.
// TRANSCRIPT gets every request and answer (base64 shortened), for docs
// and for the note.
import { writeFileSync } from "node:fs";
import { checker, stdioClient } from "./sdk.mjs";

const [bin, transcriptPath, ...serverArgs] = process.argv.slice(2);
const label = serverArgs.includes("--queue") ? "mcp_queue" : "mcp";
const check = checker(label);
const transcript = [];

function shorten(v) {
  return JSON.stringify(v, (k, x) =>
    (k === "data" || k === "blob") && typeof x === "string" && x.length > 60
      ? `${x.slice(0, 40)}... (${x.length} base64 characters)`
      : x, 2);
}

const texts = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text);
const statusLine = (r) => texts(r).find((t) => t.startsWith("status: ")) || "";

async function call(client, name, args) {
  transcript.push(`> tools/call ${name} ${JSON.stringify(args)}`);
  const r = await client.callTool({ name, arguments: args });
  transcript.push(`< ${shorten(r)}`);
  return r;
}

// the progress notifications the SDK reported late (sdk.mjs), as sent
const { client, transport, late } = stdioClient(bin, serverArgs, "llmsb-test-client");

try {
  await client.connect(transport);
  const info = client.getServerVersion();
  transcript.push(`< initialize: ${JSON.stringify(info)}`);
  check("initialize", info && info.name === "llm-sandbox", JSON.stringify(info));

  const { tools } = await client.listTools();
  transcript.push(`< tools/list: ${tools.map((t) => t.name).join(", ")}`);
  const names = tools.map((t) => t.name).sort().join(",");
  check("tools_list",
    names === "close_session,execute_code,get_language_details,get_supported_languages,submit_jobs", names);
  const exec = tools.find((t) => t.name === "execute_code");
  check("execute_code_schema",
    exec && exec.inputSchema.required.includes("code") && exec.inputSchema.properties.libraries,
    JSON.stringify(exec && exec.inputSchema));

  let r = await call(client, "get_supported_languages", {});
  const langs = JSON.parse(texts(r)[0] || "[]");
  check("supported_languages", langs.includes("python") && langs.includes("cpp") && !r.isError,
    JSON.stringify(r));

  r = await call(client, "get_language_details", { language: "python" });
  const d = JSON.parse(texts(r)[0] || "{}");
  check("language_details", d.name === "python" && d.file === "main.py" && d.plots === true &&
    d.libraries === "pip", JSON.stringify(d));
  r = await call(client, "get_language_details", { language: "cobol" });
  check("language_details_unknown", r.isError && /language: "cobol" is not supported/.test(texts(r)[0]),
    JSON.stringify(r));

  // the plot: an image content item holding a PNG, and the program's output
  r = await call(client, "execute_code", {
    language: "python",
    code: "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.title('squares')\nplt.show()\nprint(6 * 7)\n",
  });
  const img = (r.content || []).find((c) => c.type === "image");
  const png = img ? Buffer.from(img.data, "base64") : Buffer.alloc(0);
  check("plot_as_image", !r.isError && texts(r)[0] === "42\n" && img && img.mimeType === "image/png" &&
    png.subarray(1, 4).toString() === "PNG" && png.length > 1000,
    shorten(r));
  check("status_line", /^status: ok, exit code 0, \d+ ms$/.test(statusLine(r)), statusLine(r));

  // a file the program writes, asked for by pattern: an embedded resource
  r = await call(client, "execute_code", {
    code: "open('table.csv', 'w').write('a,b\\n1,2\\n')\nopen('skip.txt', 'w').write('x')\nprint('written')\n",
    artifacts: ["*.csv"],
  });
  const res = (r.content || []).filter((c) => c.type === "resource");
  check("file_as_resource", !r.isError && res.length === 1 &&
    /^sandbox:\/\/mcp-[^/]+\/table\.csv$/.test(res[0].resource.uri) &&
    Buffer.from(res[0].resource.blob, "base64").toString() === "a,b\n1,2\n",
    shorten(r));

  r = await call(client, "execute_code", {
    language: "javascript",
    code: "console.log([1, 2, 3].map((x) => x * x).join(' '));",
  });
  check("javascript", !r.isError && texts(r)[0] === "1 4 9\n", shorten(r));

  r = await call(client, "execute_code", { code: "import sys\nprint('out')\nsys.exit('bad thing')\n" });
  check("runtime_error_is_tool_error", r.isError && texts(r)[0] === "out\n" &&
    texts(r).includes("stderr:\nbad thing\n") &&
    statusLine(r).startsWith("status: runtime_error, exit code 1"), shorten(r));

  r = await call(client, "execute_code", { code: "while True: pass", timeout: 1 });
  check("timeout", r.isError && statusLine(r).startsWith("status: timeout"), shorten(r));

  r = await call(client, "execute_code", { code: "import os\nos.system('rm -rf /')\n" });
  check("scan_blocks", r.isError && texts(r).some((t) => t.startsWith("blocked by the security policy: line 2")) &&
    statusLine(r).startsWith("status: blocked;"), shorten(r));

  r = await call(client, "execute_code", { code: "int main() { return 0 }", language: "cpp" });
  check("compile_error", r.isError && texts(r).some((t) => t.startsWith("compile output:\n")) &&
    statusLine(r).startsWith("status: compile_error"), shorten(r));

  r = await call(client, "execute_code", { code: "print(1)", language: "cobol" });
  check("bad_language", r.isError && /^invalid: lang: .*cobol/.test(texts(r)[0]), shorten(r));
  r = await call(client, "execute_code", { code: "print(1)", timeout: 100000 });
  check("timeout_over_ceiling", r.isError && /^invalid: timeout/.test(texts(r)[0]), shorten(r));
  r = await call(client, "execute_code", { language: "python" });
  check("code_required", r.isError && /^invalid: code: required/.test(texts(r)[0]), shorten(r));
  r = await call(client, "execute_code", { code: "print(1)", libraries: ["../evil"] });
  check("bad_library", r.isError && /^invalid: libraries/.test(texts(r)[0]), shorten(r));

  let threw = "";
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (e) {
    threw = String(e.message || e);
  }
  check("unknown_tool", /Unknown tool: no_such_tool/.test(threw) && /-32602/.test(threw), threw);

  // a session: three calls (define, use, plot) in one interpreter, then
  // closed, then the id anew; another that expires (the test's config:
  // sessions.idle_ttl 3 s)
  const sid = `mcp-test-${label}-${process.pid}`;
  r = await call(client, "execute_code", { session: sid, code: "import math\nx = 6\nprint('defined')" });
  check("session_define", !r.isError && texts(r)[0] === "defined\n", shorten(r));
  r = await call(client, "execute_code", { session: sid, code: "print(x * 7, math.sqrt(x * x))" });
  check("session_use", !r.isError && texts(r)[0] === "42 6.0\n", shorten(r));
  // a session has one language: a Ruby call to it runs nothing (it was
  // scanned as Ruby and ran as Python)
  r = await call(client, "execute_code", {
    session: sid, language: "ruby", code: "import subprocess\nprint(subprocess.run(['id']))",
  });
  check("session_one_language", r.isError && statusLine(r).startsWith("status: invalid") &&
    /runs python, the call names ruby/.test(statusLine(r)) && !/uid=/.test(texts(r).join("")),
    shorten(r));
  r = await call(client, "execute_code", {
    session: sid,
    code: "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [x, x * 7])\nplt.show()\nprint('plotted')",
  });
  const simg = (r.content || []).find((c) => c.type === "image");
  check("session_plot", !r.isError && texts(r)[0] === "plotted\n" && simg &&
    Buffer.from(simg.data, "base64").subarray(1, 4).toString() === "PNG", shorten(r));
  r = await call(client, "close_session", { session: sid });
  check("session_close", !r.isError && /ended; its id is free again/.test(texts(r)[0]), shorten(r));
  r = await call(client, "execute_code", { session: sid, code: "print('x' in globals())" });
  check("session_anew", !r.isError && texts(r)[0] === "False\n", shorten(r));
  await call(client, "close_session", { session: sid });
  const eid = `${sid}-ttl`;
  r = await call(client, "execute_code", { session: eid, code: "v = 1" });
  await new Promise((res) => setTimeout(res, 4500));
  r = await call(client, "execute_code", { session: eid, code: "print(v)" });
  check("session_idle_ttl", r.isError && statusLine(r).startsWith("status: session_lost") &&
    /expired: no call for 3 s/.test(statusLine(r)), shorten(r));
  await call(client, "close_session", { session: eid });

  // a session's later call without "language" runs in the session's
  const rid = `${sid}-rb`;
  r = await call(client, "execute_code", { session: rid, language: "ruby", code: "x = 6" });
  r = await call(client, "execute_code", { session: rid, code: "puts x * 7" });
  check("session_call_takes_its_language", !r.isError && texts(r)[0] === "42\n", shorten(r));
  await call(client, "close_session", { session: rid });

  // live output: asked for with a progress token (the SDK sends one with
  // onprogress), the first line comes as a progress notification while the
  // program still sleeps, well before the call returns; the messages
  // together are the output, progress only grows
  {
    const seen = [];
    late.length = 0;
    const code = "import sys, time\nprint('first', flush=True)\ntime.sleep(3)\n" +
      "print('second')\nsys.stderr.write('third\\n')\n";
    transcript.push(`> tools/call execute_code ${JSON.stringify({ code })} with _meta.progressToken`);
    const pr = await client.callTool({ name: "execute_code", arguments: { code } }, undefined,
      { onprogress: (p) => seen.push({ at: Date.now(), ...p }) });
    const done = Date.now();
    transcript.push(`< ${seen.length} notifications/progress: ${JSON.stringify(seen.map((p) => [p.progress, p.message]))}`);
    transcript.push(`< ${shorten(pr)}`);
    const first = seen.find((p) => (p.message || "").includes("first"));
    check("progress_first_line_before_the_end",
      !pr.isError && texts(pr)[0] === "first\nsecond\n" && first && done - first.at >= 2000,
      `first line ${first ? done - first.at : "never"} ms before the answer; ${JSON.stringify(seen)}`);
    // the messages the server sent, those that came with the answer last
    const sent = [...seen, ...late];
    check("progress_messages_are_the_output",
      sent.map((p) => p.message).join("") === "first\nsecond\nthird\n" &&
      sent.every((p, i) => i === 0 || p.progress > sent[i - 1].progress) &&
      sent[sent.length - 1].progress === 19, JSON.stringify({ seen, late }));
  }

  // still answering after all that
  r = await call(client, "execute_code", { code: "print('still here')" });
  check("after_errors", !r.isError && texts(r)[0] === "still here\n", shorten(r));
} catch (e) {
  check("session", false, e.stack || String(e));
} finally {
  await client.close().catch(() => {});
  if (transcriptPath) writeFileSync(transcriptPath, transcript.join("\n") + "\n");
}
process.exit(check.failed() ? 1 : 0);
