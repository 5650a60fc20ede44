/* bash.c - Bash, as MultiPL-E's eval_sh.py runs it: `bash FILE`, the
 * verdict the exit code.  Every command a script names is a program it
 * starts; what the scanner calls spawning is what starts one behind the
 * script's back: eval, exec, bash/sh -c, command substitution, coprocesses
 * and background jobs. */
#include "languages_int.h"

/* the words after which a command word follows (if "ev"al ...) */
#define BASH_KW "(?:(?:if|then|else|elif|do|while|until|time|!|\\w+=\\S*)\\s+)*"

/* clang-format off */
const struct language language_bash = {
    .name = "bash", .aliases = {"sh", "shell"}, .image = "llmsb/bash", .ext = "sh",
    .default_stem = "main",
    .run = {"bash", "{file}"},
    /* bc: the calculator MultiPL-E's Bash completions call for floats */
    .packages = "bash bc",
    .line_comment = "#", .block_comment = {NULL, NULL},
    /* `source FILE` / `. FILE` */
    .import_pattern = "(?:^|[\\n;&|])\\s*(?:source|\\.)\\s+['\"]?(?:\\S*/)?MOD['\"]?(?:\\s|$)",
    .scan = {
        [LANG_SCAN_SHELL] =
            "(?:^|[\\s;&|(`])(?:eval|exec|coproc|(?:ba|da|z|k)?sh\\s+-\\w*c|xargs|nohup|setsid|env\\s+\\S+\\s)\\b|`"
            /* $(...), not the arithmetic $((...)) */
            "|\\$\\((?!\\((?:[^()]|\\([^()]*\\))*\\)\\))"
            /* a shell as a command (echo id | bash, bash <<< "$s", sh f) */
            "|(?:^|[\\n;&|({!])\\s*" BASH_KW "(?:ba|da|z|k)?sh(?:\\s|$)",
        [LANG_SCAN_EVAL] =
            "(?:^|[\\s;&|(])(?:eval|source)\\s|(?:^|[\\n;&|])\\s*\\.\\s+\\S"
            /* a command word spelt with quotes or backslashes (\\eval,
             * "ev"al, e''val, $'\\x65val') or held in a variable ($x id):
             * any name, so any of the above */
            "|(?:^|[\\n;&|({!])\\s*" BASH_KW "(?:[\\w-]*(?:\\\\\\w|\\$?'[^'\\n]*'|\"[\\w-]*\"))+[\\w-]*(?=[\\s;&|)]|$)"
            "|(?:^|[\\n;&|({!])\\s*" BASH_KW "\"?\\$\\{?!?\\w+\\}?\"?(?=[\\s;&|)]|$)"
            /* prompt expansion runs the $(...) in a value: ${x@P} */
            "|\\$\\{[^}]*@P\\}",
        [LANG_SCAN_FS_DELETE] =
            "(?:^|[\\s;&|(])(?:rm|rmdir|unlink|shred|truncate)\\s",
        [LANG_SCAN_NETWORK] =
            "/dev/(?:tcp|udp)/|(?:^|[\\s;&|(])(?:curl|wget|nc|ncat|netcat|socat|ssh|telnet|ftp)\\s",
        [LANG_SCAN_ENV] =
            "(?:^|[\\s;&|(])(?:export|env|printenv|unset)\\b|\\$\\{?(?:PATH|HOME|LD_\\w+|BASH_ENV)\\b",
        [LANG_SCAN_NATIVE] =
            "(?:^|[\\s;&|(])(?:enable\\s+-f|gcc|cc|g\\+\\+|ld|gdb|LD_PRELOAD=)",
        [LANG_SCAN_PROCESS] =
            "(?:^|[\\s;&|(])(?:kill|killall|pkill|disown|trap|wait)\\b|(?<![&>])&(?![&>])\\s*(?:$|[\\n;)#]|\\w)",
    },
    .strict_modules = {NULL},
    .tools = "bash", .hello = "echo hello\n",
    .lexer = LEX_SHELL,
};
/* clang-format on */
