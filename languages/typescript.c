/* typescript.c - TypeScript, as MultiPL-E's eval_ts.py runs it: `tsc
 * --target esnext FILE` (any diagnostic fails the program: tsc exits 2,
 * "SyntaxError" there, compile_error here), then `node FILE.js`.  Debian's
 * node-typescript (tsc 4.8) on Debian's nodejs; no @types/node, so a
 * program declares what it takes from node (`declare var require: any;`,
 * as MultiPL-E's tests do).  The scanner's patterns are JavaScript's: what
 * tsc emits is the program's own code, calls and imports unchanged.
 * The compile runs through hooks/tsc-fast: tsc.js's own command line in a
 * node started from a snapshot made at image build, with tsc.js loaded and
 * the default libs parsed and bound; the output, exit code and .js are
 * plain tsc's (see the hook and docs/languages/typescript.md), and
 * anything unusual runs plain tsc. */
#include "languages_int.h"

/* clang-format off */
const struct language language_typescript = {
    .name = "typescript", .aliases = {"ts"}, .image = "llmsb/typescript", .ext = "ts",
    .default_stem = "main",
    .compile = {"/usr/local/lib/llmsb/tsc-fast", "tsc", "--target", "esnext", "{file}"},
    .run = {"node", "{stem}.js"},
    .packages = "nodejs node-typescript",
    .hooks = {{"tsc-fast", "/usr/local/lib/llmsb/tsc-fast", 0755},
              {"tsc-fast.js", "/usr/local/lib/llmsb/tsc-fast.js", 0644}},
    /* the snapshot, and one compile both ways that must agree, or the
     * build fails */
    .image_setup = "/usr/local/lib/llmsb/tsc-fast --build",
    C_COMMENTS,
    /* import x from 'm', import x = require('m'), require('m') */
    .import_pattern = "(?:import\\s[^;]*?from\\s*['\"](?:node:)?MOD['\"]|require\\s*\\(\\s*['\"](?:node:)?MOD['\"]\\s*\\))",
    .scan = {
        [LANG_SCAN_SHELL] =
            "require\\s*\\(\\s*['\"](?:node:)?child_process['\"]|from\\s+['\"](?:node:)?child_process['\"]|\\b(?:execSync|spawnSync|execFileSync|execFile)\\s*\\(",
        [LANG_SCAN_EVAL] =
            "\\beval\\s*\\(|\\bFunction\\s*\\(|require\\s*\\(\\s*['\"](?:node:)?vm['\"]|from\\s+['\"](?:node:)?vm['\"]|\\bimport\\s*\\(",
        [LANG_SCAN_FS_DELETE] =
            "\\b(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync)\\s*\\(",
        [LANG_SCAN_NETWORK] =
            "require\\s*\\(\\s*['\"](?:node:)?(?:net|http|https|dgram|tls|dns)['\"]|from\\s+['\"](?:node:)?(?:net|http|https|dgram|tls|dns)['\"]|\\bfetch\\s*\\(|\\bXMLHttpRequest\\b|\\bWebSocket\\b",
        [LANG_SCAN_ENV] =
            "\\bprocess\\s*\\.\\s*env\\b",
        [LANG_SCAN_NATIVE] =
            "\\bprocess\\s*\\.\\s*(?:binding|dlopen)\\s*\\(|require\\s*\\(\\s*['\"](?:ffi|ffi-napi)['\"]",
        [LANG_SCAN_PROCESS] =
            "\\bprocess\\s*\\.\\s*(?:exit|kill|abort)\\s*\\(|require\\s*\\(\\s*['\"](?:node:)?(?:cluster|worker_threads)['\"]|from\\s+['\"](?:node:)?(?:cluster|worker_threads)['\"]",
    },
    .strict_modules = {"child_process", "fs", "net", "http", "https", "dgram", "vm",
                       "worker_threads", "cluster", "os", "tls", "dns"},
    .tools = "tsc node", .hello = "console.log('hello');\n",
    .lexer = LEX_TS,
};
/* clang-format on */
