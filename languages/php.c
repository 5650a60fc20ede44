/* php.c - PHP, as MultiPL-E's eval_php.py runs it: `php FILE`, the verdict
 * the exit code (a parse error and an uncaught exception both exit 255).
 * Function names are case-insensitive in PHP, so the patterns are too; a
 * call through a method (`$pdo->exec(`) or a static one (`A::system(`) is
 * not the built-in and is not flagged. */
#include "languages_int.h"

/* not a method, static or variable's name: a call of the global function */
#define PHP_FN "(?i)(?<![\\w$>:])\\\\?"

/* clang-format off */
const struct language language_php = {
    .name = "php", .aliases = {"php8"}, .image = "llmsb/php", .ext = "php",
    .default_stem = "main",
    .run = {"php", "{file}"},
    .packages = "php-cli",
    /* "#" too (not "#[", an attribute): security/lex_php.c */
    C_COMMENTS,
    .scan = {
        /* backticks run a shell command like shell_exec */
        [LANG_SCAN_SHELL] =
            PHP_FN "(?:exec|shell_exec|system|passthru|proc_open|popen|pcntl_exec|pcntl_fork|mail)\\s*\\(|`",
        [LANG_SCAN_EVAL] =
            PHP_FN "(?:eval|create_function|assert|call_user_func|call_user_func_array|forward_static_call)\\s*\\(|(?i)(?<![\\w$>:])(?:include|require)(?:_once)?\\b|(?i)\\bReflectionFunction\\b"
            /* a function called by a name in a variable or a string ($f('id'),
             * 'system'('id'), ('sys'.'tem')('id')), or a callback named by
             * one of the shell's or eval's names (array_map('system', ...)) */
            "|(?<![\\w$>:])\\$\\w+\\s*\\(|(?<=['\")\\]])\\s*\\(|(?i)[(,]\\s*['\"]\\\\?(?:exec|shell_exec|system|passthru|proc_open|popen|pcntl_exec|eval|assert|create_function|call_user_func(?:_array)?)['\"]",
        [LANG_SCAN_FS_DELETE] =
            PHP_FN "(?:unlink|rmdir|ftruncate)\\s*\\(",
        [LANG_SCAN_NETWORK] =
            PHP_FN "(?:fsockopen|pfsockopen|socket_create|socket_connect|stream_socket_client|stream_socket_server|curl_init|curl_exec|gethostbyname|dns_get_record)\\s*\\(|" PHP_FN "(?:file_get_contents|fopen|file|readfile|copy|get_headers)\\s*\\(\\s*['\"](?:https?|ftps?|tcp|udp|ssl|tls)://",
        [LANG_SCAN_ENV] =
            PHP_FN "(?:getenv|putenv|apache_setenv)\\s*\\(|\\$_(?:ENV|SERVER)\\b",
        [LANG_SCAN_NATIVE] =
            "(?i)\\bFFI\\b|" PHP_FN "dl\\s*\\(",
        [LANG_SCAN_PROCESS] =
            PHP_FN "(?:pcntl_\\w+|posix_kill|posix_setsid|posix_setpgid|proc_terminate|proc_nice|set_time_limit|ignore_user_abort)\\s*\\(",
    },
    .strict_modules = {NULL},
    .tools = "php", .hello = "<?php\necho \"hello\\n\";\n",
    .lexer = LEX_PHP,
};
/* clang-format on */
