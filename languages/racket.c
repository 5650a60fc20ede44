/* racket.c - Racket, as MultiPL-E's eval_racket.py runs it: `racket FILE`
 * (a `#lang racket` module; its tests are rackunit checks, which report a
 * failure on stderr and go on, so MultiPL-E fails a run that wrote to
 * stderr: eval/fmt_multiple.c's runner does the same).  Libraries are raco
 * packages from a catalog, not Debian packages: none (Debian's racket is the
 * whole distribution, rackunit, math, data and net included). */
#include "languages_int.h"

/* What ends an identifier in the patterns: Racket names hold - / * ! ? < > =. */
#define RKT_END "(?=[\\s()\\[\\]{}\"';`,]|$)"
#define RKT_CALL(names) "\\(\\s*(?:" names ")" RKT_END
/* The name anywhere, not only called: (define s system), (apply system ...) */
#define RKT_REF(names) "(?<![^\\s()\\[\\]{}'`,@])(?:" names ")" RKT_END

/* clang-format off */
const struct language language_racket = {
    .name = "racket", .aliases = {"rkt"}, .image = "llmsb/racket", .ext = "rkt",
    .default_stem = "main",
    .run = {"racket", "{file}"},
    .packages = "racket",
    .line_comment = ";", .block_comment = {"#|", "|#"},
    /* (require racket/system), (require (only-in ffi/unsafe ...)) */
    .import_pattern = "\\(\\s*require\\s[^)]*?(?<![\\w/.\\-])MOD(?![\\w/.\\-])",
    .scan = {
        [LANG_SCAN_SHELL] =
            RKT_REF("system\\*?(?:/exit-code)?|process\\*?(?:/ports)?|subprocess|shell-execute"),
        [LANG_SCAN_EVAL] =
            RKT_REF("eval|eval-syntax|dynamic-require|namespace-require|load|load-extension|"
                     "make-evaluator|make-module-evaluator")
            /* a #lang other than racket's reads the source its own way
             * (#lang at-exp racket: @system{id}); #reader too */
            "|#lang\\s+(?!racket(?:/base)?\\s)|#reader\\b|#!(?![ /])",
        [LANG_SCAN_FS_DELETE] =
            RKT_REF("delete-file|delete-directory(?:/files)?|delete-directory/files"),
        [LANG_SCAN_NETWORK] =
            RKT_CALL("tcp-connect|tcp-listen|udp-open-socket|get-pure-port|get-impure-port|"
                     "post-pure-port|http-sendrecv|http-conn-open!?|call/input-url"),
        [LANG_SCAN_ENV] =
            RKT_CALL("getenv|putenv|environment-variables-(?:ref|set!|names|copy)|"
                     "current-environment-variables"),
        [LANG_SCAN_NATIVE] =
            "(?<![\\w/.\\-])(?:ffi/unsafe|racket/unsafe/ops)(?![\\w\\-])|"
            RKT_CALL("ffi-lib|get-ffi-obj|make-c-pointer|malloc|unsafe-[\\w!?*<>=/+-]+"),
        [LANG_SCAN_PROCESS] =
            RKT_CALL("exit|subprocess-kill|custodian-shutdown-all|dynamic-place|place"),
    },
    .strict_modules = {"racket/system", "ffi/unsafe", "ffi/unsafe/define", "ffi/cvector",
                       "racket/unsafe/ops", "net/url", "net/http-client", "net/sendurl",
                       "racket/tcp", "racket/udp", "racket/place", "racket/sandbox",
                       "racket/os"},
    .tools = "racket", .hello = "#lang racket/base\n(displayln \"hello\")\n",
    .lexer = LEX_RACKET,
};
/* clang-format on */
