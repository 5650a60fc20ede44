// tsc-fast.js - the entry of the typescript image's start-up snapshot
// (/usr/local/lib/llmsb/tsc.blob), which languages/hooks/tsc-fast runs in
// place of `tsc --target esnext FILE`.
//
// At image build, as root, `node --snapshot-blob tsc.blob --build-snapshot`
// runs this file: it loads Debian's tsc.js itself (the file /usr/bin/tsc
// requires), all of it but its last statements, which set stdout blocking
// and call ts.executeCommandLine(ts.sys, ts.noop, ts.sys.args); then it
// compiles a warm-up program with exactly the job's compiler options, which
// parses and binds the default lib .d.ts files; and V8 writes the heap to
// the blob. A job's compile starts node from the blob and runs those last
// statements with the job's arguments: the same code as plain tsc, on the
// same files, but for one thing: ts.createSourceFile hands back the
// warm-up's SourceFile of a lib file when it is asked for one with the
// same file name, text, language version, module format and parent-node
// setting (a parse is a function of those), as tsc --watch and tsserver
// reuse lib SourceFiles from program to program.  Each compile still
// checks every file, the libs included, in a checker of its own, in
// tsc's order, so type ids, the order of unions in messages and the
// diagnostics are the plain compile's.
//
// What the compile writes to stdout is held and written at its end, and
// "tsc CODE HITS" goes to descriptor 3 just before node exits with tsc's
// exit code: tsc-fast keeps the result only then (and with nothing on
// stderr).  Anything else (wrong arguments, an exception) exits 97 having
// written nothing and removed any file it created: tsc-fast then runs the
// plain tsc.
'use strict';
const fs = require('fs');
const v8 = require('v8');

const TSC = '/usr/share/nodejs/typescript/lib/tsc.js';
const LIB = '/usr/share/nodejs/typescript/lib/lib.';
const TAIL = 'if (ts.sys.setBlocking) {\n    ts.sys.setBlocking();\n}\n' +
  'ts.executeCommandLine(ts.sys, ts.noop, ts.sys.args);\n';
const OPTS = ['--target', 'esnext']; // the typescript row's, before the file
const FALLBACK = 97;
const WARM = '/tmp/tsc-fast-warm';
const WARM_TS = `declare var require: any;
const assert = require("node:assert");
interface P { name: string; age?: number }
function f(xs: number[], m: Map<string, P>): [string, number] | undefined {
  const s = new Set<number>(xs.filter((x) => x % 2 === 0).map((x) => x * 2));
  for (const [k, v] of m) if (v.age && s.has(v.age)) return [k.toUpperCase(), v.age];
  return xs.length ? [String(Math.max(...xs)), xs.reduce((a, b) => a + b, 0)] : undefined;
}
class C<T> { constructor(private items: T[] = []) {} push(x: T): this { this.items.push(x); return this; } }
const r = f([1, 2, 3], new Map([["a", { name: "a", age: 4 }]]));
assert.deepEqual(r, ["A", 4]);
console.log(JSON.stringify(r), new C<string>().push("x"), "abc".split("").join("-"));
let bad: string = 1;
`;

// tsc.js as a function of what a CommonJS module gets, returning ts
const src = fs.readFileSync(TSC, 'utf8');
if (!src.endsWith(TAIL))
  throw new Error('tsc-fast.js: ' + TSC + ' does not end with the statements it replaces');
const mod = { exports: {} };
const ts = new Function('require', 'module', 'exports', '__filename', '__dirname',
  src.slice(0, src.length - TAIL.length) + '\nreturn ts;\n')
  .call(mod.exports, require, mod, mod.exports, TSC, TSC.slice(0, TSC.lastIndexOf('/')));

// the lib SourceFiles, by what their parse depends on
const libs = new Map();
let warm = true, hits = 0;
const createSourceFile = ts.createSourceFile;
ts.createSourceFile = function (fileName, text, version, setParentNodes) {
  const v = typeof version === 'object' ? version : { languageVersion: version };
  const lib = arguments.length <= 4 && fileName.startsWith(LIB) && fileName.endsWith('.d.ts');
  const key = [fileName, v.languageVersion, v.impliedNodeFormat, !!setParentNodes].join('\n');
  if (lib && !warm) {
    const sf = libs.get(key);
    if (sf && sf.text === text) {
      hits++;
      return sf;
    }
  }
  const sf = createSourceFile.apply(this, arguments);
  if (lib && warm)
    libs.set(key, sf);
  return sf;
};

// the warm-up: a program with the job's options, checked (which binds the
// libs) and emitted to nowhere.  Its host's system is ts.sys but for the
// current directory, which ts.sys memoizes on its first call: that must
// be the job's (relative paths in messages, the order of diagnostics), so
// nothing here may ask node for it (checked).
{
  const cwd = process.cwd;
  let asked = 0;
  fs.rmSync(WARM, { recursive: true, force: true });
  fs.mkdirSync(WARM);
  fs.writeFileSync(WARM + '/main.ts', WARM_TS);
  process.chdir(WARM);
  process.cwd = () => { asked++; return cwd.call(process); };
  const system = Object.assign(Object.create(ts.sys), { getCurrentDirectory: () => WARM });
  const cl = ts.parseCommandLine([...OPTS, 'main.ts']);
  const program = ts.createProgram({ rootNames: cl.fileNames, options: cl.options,
                                     host: ts.createCompilerHostWorker(cl.options, undefined, system) });
  const n = ts.getPreEmitDiagnostics(program).length;
  program.emit(undefined, () => {});
  process.cwd = cwd;
  process.chdir('/');
  fs.rmSync(WARM, { recursive: true });
  warm = false;
  if (n !== 1 || libs.size < 10 || asked)
    throw new Error('tsc-fast.js: the warm-up has ' + n + ' diagnostics, ' + libs.size +
                    ' libs, and asked for the current directory ' + asked + ' times');
}

function writeAll(fd, s) {
  const b = Buffer.from(s, 'utf8');
  for (let off = 0; off < b.length;)
    off += fs.writeSync(fd, b, off, b.length - off);
}

// a job's compile: argv is node's, then OPTS and the file (after --)
v8.startupSnapshot.setDeserializeMainFunction(() => {
  const created = [];
  try {
    const args = process.argv.slice(1);
    if (args.length !== OPTS.length + 1 || OPTS.some((a, i) => args[i] !== a))
      process.exit(FALLBACK);
    const sys = ts.sys;
    let out = '';
    const writeFile = sys.writeFile;
    sys.writeFile = function (path) {
      if (!fs.existsSync(path))
        created.push(path);
      return writeFile.apply(this, arguments);
    };
    sys.write = (s) => { out += s; };
    sys.exit = (code) => {
      writeAll(1, out);
      writeAll(3, 'tsc ' + code + ' ' + hits + '\n');
      process.exit(code);
    };
    if (sys.setBlocking)
      sys.setBlocking();
    ts.executeCommandLine(sys, ts.noop, args);
  } catch (e) {
    // nothing reached fd 3 (writeAll(1) may have failed: nothing kept)
  }
  for (const path of created)
    try { fs.unlinkSync(path); } catch (e) { /* gone */ }
  process.exit(FALLBACK);
});
