/* clojure.c - Clojure on the JVM, as MultiPL-E's eval_clj.py runs it:
 * `clojure -J-Dclojure.main.report=stderr -M FILE` (the Clojure CLI, which
 * runs clojure.main with Clojure's jars on the class path).  Debian's
 * `clojure` is a script that cannot pass the JVM a -D, so the command is
 * its java line with that flag.  Its tests are clojure.test's, which print
 * failures and exit 0: MultiPL-E passes a run only when stdout has
 * "0 failures, 0 errors." (eval/fmt_multiple.c's runner does the same).
 * Libraries: Debian packages of jars (libmath-combinatorics-clojure),
 * unpacked where the class path looks, as for Java. */
#include "languages_int.h"

#define CLJ_LIB "/work/.llmsb-lib/clojure"
#define CLJ_CLASSPATH ".:/usr/share/java/*:" CLJ_LIB "/usr/share/java/*"
/* What ends a symbol in the patterns: Clojure names hold - * ! ? < > = + /. */
#define CLJ_END "(?=[\\s()\\[\\]{}\"',;@^`~]|$)"
#define CLJ_CALL(names) "\\(\\s*(?:" names ")" CLJ_END

/* clang-format off */
const struct language language_clojure = {
    .name = "clojure", .aliases = {"clj"}, .image = "llmsb/clojure", .ext = "clj",
    .default_stem = "main",
    /* the serial collector, as for Java: one CPU and a small heap; the
     * client compiler only: it halves the CPU a short program's start
     * takes (loading clojure.core), where C2's compiles do not pay off */
    .run = {"java", "-Dclojure.main.report=stderr", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", CLJ_CLASSPATH, "clojure.main",
            "{file}"},
    .packages = "clojure",
    .install = {"/usr/local/lib/llmsb/apt-get-local", CLJ_LIB},
    .install_what = "apt",
    .library_ok = language_lib_apt,
    .preinstall = {"apt-get", "install", "-y", "--no-install-recommends", "--"},
    .preinstall_before = "apt-get update",
    .hooks = {{"apt-get-local", "/usr/local/lib/llmsb/apt-get-local", 0755}},
    .line_comment = ";", .block_comment = {NULL, NULL},
    /* (require '[clojure.java.shell :as sh]), (ns x (:import (java.net Socket))) */
    .import_pattern = "\\(\\s*:?(?:require|use|import)(?![\\w\\-])[^)]*?(?<![\\w.\\-/])MOD(?![\\w\\-/])",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\bclojure\\.java\\.shell\\b|" CLJ_CALL("(?:[\\w.\\-]+/)?sh|\\.exec") "|\\bProcessBuilder\\b"
            /* (. (Runtime/getRuntime) exec "id"), (.. Runtime getRuntime (exec "id")) */
            "|\\bRuntime\\b|(?<![\\w\\-./])exec" CLJ_END,
        [LANG_SCAN_EVAL] =
            CLJ_CALL("(?:clojure\\.core/)?(?:eval|load-string|load-file|load-reader|load|"
                     "requiring-resolve|ns-resolve|resolve)") "|\\bClass/forName\\b|#=",
        [LANG_SCAN_FS_DELETE] =
            "(?<![\\w\\-])delete-file" CLJ_END "|" CLJ_CALL("\\.delete(?:OnExit)?") "|\\bFiles/delete(?:IfExists)?\\b",
        [LANG_SCAN_NETWORK] =
            "\\bjava\\.net\\b|\\b(?:Socket|ServerSocket|DatagramSocket|URL)\\.|\\bHttpClient\\b|"
            "\\bHttpURLConnection\\b|" CLJ_CALL("slurp") "\\s*\"(?:https?|ftp)://",
        [LANG_SCAN_ENV] =
            "\\bSystem/getenv\\b",
        [LANG_SCAN_NATIVE] =
            "\\bSystem/(?:loadLibrary|load)\\b|\\bsun\\.misc\\.Unsafe\\b|\\bjava\\.lang\\.foreign\\b",
        [LANG_SCAN_PROCESS] =
            "\\bSystem/exit\\b|" CLJ_CALL("\\.halt|\\.destroy(?:Forcibly)?") "|\\bProcessHandle\\b",
    },
    .strict_modules = {"clojure.java.shell", "java.net", "java.lang.reflect", "java.nio.file",
                       "sun.misc", "clojure.core.server", "java.lang.ProcessBuilder"},
    .tools = "java", .hello = "(println \"hello\")\n",
    .lexer = LEX_CLOJURE,
};
/* clang-format on */
