/* d.c - D, as MultiPL-E's eval_dlang.py runs it: `rdmd -unittest -main
 * FILE` compiles with the unittest blocks and a main when the file has
 * none, then runs the program; the verdict is the exit code (a failed
 * assert in a unittest: exit 1).  rdmd is not in Debian: ldmd2, LDC's
 * driver that takes DMD's flags, compiles with those same flags and the
 * program runs as rdmd would start it.  What the scanner calls spawning is
 * std.process (spawnProcess, execute, executeShell, pipeProcess, ...) and
 * the C exec family of core.sys.posix / core.stdc. */
#include "languages_int.h"

/* clang-format off */
const struct language language_d = {
    .name = "d", .aliases = {"dlang", "d_ut", "ldc", "ldc2"}, .image = "llmsb/d", .ext = "d",
    .default_stem = "main",
    .compile = {"ldmd2", "-unittest", "-main", "{file}"},
    .run = {"./{stem}"},
    /* ldc brings Phobos (libphobos2-ldc-shared-dev); it links with cc,
     * which it only recommends */
    .packages = "ldc gcc libc6-dev",
    C_COMMENTS,
    /* `import std.process;`, `import std.stdio, p = std.process : x;`,
     * `static import core.sys.posix.unistd;` (MOD or a module under it) */
    .import_pattern = "\\bimport\\s+(?:[\\w.]+(?:\\s*=\\s*[\\w.]+)?\\s*,\\s*)*(?:\\w+\\s*=\\s*)?MOD(?:\\.\\w+)*\\s*[;:,]",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\b(?:spawnProcess|spawnShell|executeShell|execute|pipeProcess|pipeShell)\\b|\\b(?:execvp?e?|execlp?e?|posix_spawnp?|popen|system)\\s*\\(",
        [LANG_SCAN_EVAL] =
            "\\bimport\\b[^;(]*?(?:(?<![\\w.])(?:std|core)\\s*[;,]|\\s\\.|\\.\\s|/[*+/])|\\bmixin\\s*\\(|\\bimport\\s*\\(|\\b(?:dlopen|dlsym)\\s*\\(|\\bRuntime\\s*\\.\\s*loadLibrary\\b",
        [LANG_SCAN_FS_DELETE] =
            "\\b(?:rmdirRecurse|rmdir|unlink)\\b|\\bstd\\s*\\.\\s*file\\s*\\.\\s*remove\\b|(?<![\\w.])remove\\s*\\(\\s*\"|\"\\s*\\.\\s*remove\\b",
        [LANG_SCAN_NETWORK] =
            "\\b(?:Socket|TcpSocket|UdpSocket|TcpListener|getAddress|HTTP|FTP|SMTP)\\b|\\b(?:socket|connect)\\s*\\(|\\b(?:get|post|put|download|upload)\\s*\\(\\s*\"\\w+://",
        [LANG_SCAN_ENV] =
            "\\benvironment\\b|\\b(?:getenv|setenv|putenv|unsetenv)\\s*\\(|\\benviron\\b",
        [LANG_SCAN_NATIVE] =
            "\\basm\\b|\\bextern\\s*\\(\\s*(?:C|C\\+\\+|System|Windows)\\s*\\)|\\bsyscall\\s*\\(|@\\s*system\\b|\\b__traits\\s*\\(\\s*getMember\\b",
        [LANG_SCAN_PROCESS] =
            "\\b(?:fork|vfork|kill|setsid|daemon|exit|abort)\\s*\\(|\\bthisProcessID\\b|\\bsignal\\s*\\(",
    },
    .strict_modules = {"std.process", "std.socket", "std.net", "std.file", "core.sys",
                       "core.stdc.stdlib", "core.runtime", "core.thread", "std.parallelism"},
    .tools = "ldmd2 ldc2 cc", .hello = "import std.stdio;\n\nvoid main() { writeln(\"hello\"); }\n",
    .lexer = LEX_D,
};
/* clang-format on */
