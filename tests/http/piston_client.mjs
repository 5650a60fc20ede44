// piston_client.mjs - Piston's npm client, piston-client (dthree/node-piston,
// installed unchanged from the npm registry: npm ci --prefix tests/http),
// against `llm-sandbox serve --http`: the runtimes list, and jobs through
// client.execute as its users write them.  Prints `ok - NAME` or
// `not ok - NAME: why` per case and exits 1 when any case failed.
//
//   node tests/http/piston_client.mjs BASE_URL      (http://127.0.0.1:PORT)
//
// piston-client sends no headers of its own choosing (lib/get.js and
// lib/post.js call fetch with a URL and a body only; the body goes as
// text/plain), so it cannot carry a token: run the server without one
// (--allow-no-token, on loopback) for this test.
import piston from "piston-client";

const base = process.argv[2];
if (!base) {
  console.error("usage: node tests/http/piston_client.mjs BASE_URL");
  process.exit(2);
}
if (process.env.LLMSB_HTTP_TOKEN) {
  console.log(
    "# piston-client cannot send the token (no headers): the server must run without one",
  );
}

const client = piston({ server: base });
let failed = 0;

function ok(name) {
  console.log(`ok - ${name}`);
}
function notOk(name, why) {
  failed++;
  console.log(`not ok - ${name}: ${why}`);
}
const shown = (x) => JSON.stringify(x)?.slice(0, 400);

// One case: fn returns nothing when it passes, or why it did not.
async function check(name, fn) {
  try {
    const why = await fn();
    if (why) notOk(name, why);
    else ok(name);
  } catch (e) {
    notOk(name, `threw ${e && e.stack ? e.stack : e}`);
  }
}

// A run's answer, or why there is none (a refusal, a network error).
function runOf(res) {
  if (!res || typeof res !== "object") return [null, `no answer: ${shown(res)}`];
  if (res.success === false) return [null, `the request failed: ${res.error}`];
  if (!res.run) return [null, `no run in ${shown(res)}`];
  return [res.run, null];
}

let cppName = null;

await check("runtimes lists python and c++", async () => {
  const rts = await client.runtimes();
  if (!Array.isArray(rts)) return `not a list: ${shown(rts)}`;
  const py = rts.find((r) => r.language === "python");
  const cpp = rts.find((r) => r.language === "c++" || r.language === "cpp");
  if (!py) return `no python in ${shown(rts.map((r) => r.language))}`;
  if (!cpp) return `no c++ in ${shown(rts.map((r) => r.language))}`;
  for (const r of [py, cpp]) {
    if (!/^\d+\.\d+\.\d+$/.test(r.version)) return `${r.language}: version ${shown(r.version)}`;
    if (!Array.isArray(r.aliases)) return `${r.language}: aliases ${shown(r.aliases)}`;
  }
  cppName = cpp.language;
});

await check("execute python hello", async () => {
  const res = await client.execute("python", 'print("hello")');
  const [run, why] = runOf(res);
  if (why) return why;
  if (res.language !== "python") return `language ${shown(res.language)}`;
  if (run.stdout !== "hello\n") return `stdout ${shown(run.stdout)}`;
  if (run.code !== 0) return `code ${shown(run.code)} in ${shown(run)}`;
  if (run.output !== "hello\n") return `output ${shown(run.output)}`;
  if (res.compile !== undefined) return `python has a compile stage: ${shown(res.compile)}`;
});

await check("stdin", async () => {
  const res = await client.execute(
    "python",
    "import sys\nprint(sys.stdin.read().upper(), end='')",
    { stdin: "abc" },
  );
  const [run, why] = runOf(res);
  if (why) return why;
  // Piston adds a newline to a stdin that lacks one
  if (run.stdout !== "ABC\n") return `stdout ${shown(run.stdout)}`;
});

await check("args", async () => {
  const res = await client.execute("python", "import sys\nprint(sys.argv[1:])", {
    args: ["x", "y z"],
  });
  const [run, why] = runOf(res);
  if (why) return why;
  if (run.stdout !== "['x', 'y z']\n") return `stdout ${shown(run.stdout)}`;
});

await check("runtime error", async () => {
  const res = await client.execute("python", "import sys\nprint('bye', file=sys.stderr)\nsys.exit(3)");
  const [run, why] = runOf(res);
  if (why) return why;
  if (run.code !== 3) return `code ${shown(run.code)} in ${shown(run)}`;
  if (run.status !== "RE") return `status ${shown(run.status)}`;
  if (run.stderr !== "bye\n") return `stderr ${shown(run.stderr)}`;
});

await check("timeout", async () => {
  const res = await client.execute("python", "import time\ntime.sleep(30)", {
    runTimeout: 1000,
  });
  const [run, why] = runOf(res);
  if (why) return why;
  if (run.status !== "TO" && run.signal !== "SIGKILL") return `not a timeout: ${shown(run)}`;
  if (run.code !== null) return `code ${shown(run.code)}: Piston has null when killed`;
});

await check("c++ compile error", async () => {
  if (!cppName) return "no c++ runtime listed";
  const res = await client.execute(cppName, "int main( {");
  if (!res || !res.compile) return `no compile stage: ${shown(res)}`;
  if (res.compile.code === 0) return `compile.code 0: ${shown(res.compile)}`;
  if (!/error/.test(res.compile.output)) return `compile.output ${shown(res.compile.output)}`;
});

await check("c++ program", async () => {
  if (!cppName) return "no c++ runtime listed";
  const res = await client.execute(
    cppName,
    "#include <iostream>\nint main(int argc, char **argv) { std::cout << argc - 1 << \" args\\n\"; }",
  );
  const [run, why] = runOf(res);
  if (why) return why;
  if (!res.compile || res.compile.code !== 0) return `compile ${shown(res.compile)}`;
  // piston-client's own default args: 1, 2, 3
  if (run.stdout !== "3 args\n") return `stdout ${shown(run.stdout)}`;
  if (run.code !== 0) return `code ${shown(run.code)}`;
});

await check("unknown language", async () => {
  const res = await client.execute("cobol", "DISPLAY 'x'.", { version: "*" });
  if (!res || typeof res.message !== "string") return `no message: ${shown(res)}`;
  if (res.message !== "cobol-* runtime is unknown") return `message ${shown(res.message)}`;
  if (res.run) return `a run: ${shown(res.run)}`;
});

await check("unknown language without a version", async () => {
  // the client finds no version to send for a language not listed, and
  // Piston asks for one
  const res = await client.execute("cobol", "DISPLAY 'x'.");
  if (!res || res.message !== "version is required as a string") return `answer ${shown(res)}`;
});

process.exit(failed ? 1 : 0);
