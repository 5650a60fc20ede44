/* ocaml.c - OCaml, as MultiPL-E's eval_ocaml.py runs it: `ocaml FILE`
 * (the toplevel: the file is type-checked and run phrase by phrase, no
 * compile step), the verdict the exit code.  The scanner's spawning is
 * Sys.command and Unix's exec, system, create_process and open_process;
 * OCaml has no imports, so a restricted module is any use of it
 * (open M, include M, M.x, #load "m.cma"). */
#include "languages_int.h"

/* clang-format off */
const struct language language_ocaml = {
    .name = "ocaml", .aliases = {"ml"}, .image = "llmsb/ocaml", .ext = "ml",
    .default_stem = "main",
    .run = {"ocaml", "{file}"},
    /* the toplevel is ocaml-interp, the standard library's .cmi files
     * are in ocaml (which ocaml-nox names) */
    .packages = "ocaml",
    .line_comment = NULL, .block_comment = {"(*", "*)"},
    .import_pattern = "(?:\\bopen!?\\s+|\\binclude\\s+|\\bmodule\\s+\\w+\\s*=\\s*)MOD\\b|\\bMOD\\s*\\.|#(?:load|require)\\s+\"(?i:MOD)(?:\\.cm[x]?a)?\"",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\bSys\\s*\\.\\s*command\\b|\\bUnix\\s*\\.\\s*system\\b|\\b(?:execv|execve|execvp|execvpe|create_process|create_process_env|open_process(?:_in|_out|_full|_args|_args_in|_args_out|_args_full)?)\\b|\\bsystem\\s+\""
            /* Sys under another name, opened, or opened locally: its
             * command then goes by none of the names above */
            "|\\b(?:open!?|include)\\s+(?:Stdlib\\s*\\.\\s*)?Sys\\b|\\bmodule\\s+\\w+\\s*(?::[^=]*)?=\\s*(?:Stdlib\\s*\\.\\s*)?Sys\\b|\\bSys\\s*\\.\\s*[(\\[{]|\\(\\s*module\\s+(?:Stdlib\\s*\\.\\s*)?Sys\\b",
        [LANG_SCAN_EVAL] =
            "\\b(?:Toploop|Topdirs|Dynlink)\\b|#(?:use|mod_use)\\s+\"",
        [LANG_SCAN_FS_DELETE] =
            "\\bSys\\s*\\.\\s*(?:remove|rmdir)\\b|\\b(?:unlink|rmdir)\\b",
        [LANG_SCAN_NETWORK] =
            "\\bUnix\\s*\\.\\s*(?:socket|connect)\\b|\\b(?:open_connection|establish_server|getaddrinfo|gethostbyname|ADDR_INET)\\b",
        [LANG_SCAN_ENV] =
            "\\bSys\\s*\\.\\s*getenv(?:_opt)?\\b|\\bUnix\\s*\\.\\s*(?:getenv|putenv|environment|unsafe_environment)\\b|\\bputenv\\b",
        [LANG_SCAN_NATIVE] =
            "\\bexternal\\b|\\bObj\\s*\\.\\s*\\w+|\\bunsafe_(?:get|set|blit|of_string|to_string)\\b",
        [LANG_SCAN_PROCESS] =
            "\\bUnix\\s*\\.\\s*(?:fork|kill|setsid|_exit)\\b|\\bfork\\s*\\(\\s*\\)|\\bSys\\s*\\.\\s*(?:set_signal|signal)\\b",
    },
    .strict_modules = {"Unix", "UnixLabels", "Dynlink", "Toploop", "Topdirs", "Obj"},
    .tools = "ocaml", .hello = "let () = print_endline \"hello\"\n",
    .lexer = LEX_OCAML,
};
/* clang-format on */
