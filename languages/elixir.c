/* elixir.c - Elixir, as MultiPL-E's eval_elixir.py runs it: `elixir FILE`
 * (a .exs script whose ExUnit tests run at exit), the verdict the exit
 * code.  The BEAM starts as many schedulers as it sees cores, and a
 * container sees the host's: the run pins them (ELIXIR_ERL_OPTIONS), so a
 * job's threads stay well inside its pids limit on any host, and stops
 * the schedulers' busy waiting, which only burns a CPU-limited job's
 * quota.  Neither changes what a program computes. */
#include "languages_int.h"

/* clang-format off */
const struct language language_elixir = {
    .name = "elixir", .aliases = {"ex", "exs"}, .image = "llmsb/elixir", .ext = "exs",
    .default_stem = "main",
    .run = {"elixir", "{file}"},
    /* +S/+SDcpu/+SDio: 2 schedulers, 2 dirty CPU, 4 dirty I/O threads;
     * +sbwt*: no busy waiting; no erl_crash.dump in the work dir */
    .env = {"ELIXIR_ERL_OPTIONS=+S 2:2 +SDcpu 2:2 +SDio 4 +sbwt none +sbwtdcpu none +sbwtdio none",
            "ERL_CRASH_DUMP_BYTES=0", "LANG=C.UTF-8"},
    .packages = "elixir",
    .line_comment = "#", .block_comment = {NULL, NULL},
    /* import/alias/require/use of a module, Elixir's (System) or Erlang's (:os) */
    .import_pattern = "(?:^|[\\n;])\\s*(?:import|alias|require|use)\\s+:?MOD\\b(?![.\\w])",
    .scan = {
        [LANG_SCAN_SHELL] =
            "\\bSystem\\s*\\.\\s*(?:cmd|shell)\\b|\\bPort\\s*\\.\\s*open\\b|:os\\s*\\.\\s*cmd\\b|:erlang\\s*\\.\\s*open_port\\b|\\{\\s*:spawn(?:_executable)?\\s*,",
        [LANG_SCAN_EVAL] =
            "\\bCode\\s*\\.\\s*(?:eval_\\w+|compile_\\w+|require_file|load_file|string_to_quoted!?)\\b|:erl_eval\\b|:code\\s*\\.\\s*load_\\w+\\b|(?<![\\w.])(?:Kernel\\s*\\.\\s*)?apply\\s*\\("
            /* a module named by a quoted atom (:"Elixir.System".cmd) or
             * made from a string at run time */
            "|:\"[^\"\\n]*\"\\s*\\.\\s*\\w|\\b(?:alias|import|require|use)\\s+:\"|\\b(?:String|List)\\s*\\.\\s*to_(?:existing_)?atom\\b|\\bModule\\s*\\.\\s*(?:concat|safe_concat)\\b",
        [LANG_SCAN_FS_DELETE] =
            "\\bFile\\s*\\.\\s*(?:rm|rm_rf|rmdir)!?(?![\\w?])|:file\\s*\\.\\s*(?:delete|del_dir\\w*)\\b",
        [LANG_SCAN_NETWORK] =
            ":(?:gen_tcp|gen_udp|gen_sctp|ssl|httpc|inets|socket)\\s*\\.|\\b(?:HTTPoison|Mint\\s*\\.\\s*HTTP|Finch|Tesla)\\b|\\bReq\\s*\\.\\s*(?:get|post|put|delete|request)\\b",
        [LANG_SCAN_ENV] =
            "\\bSystem\\s*\\.\\s*(?:get_env|put_env|delete_env|fetch_env!?)\\b|:os\\s*\\.\\s*(?:getenv|putenv|unsetenv)\\b",
        [LANG_SCAN_NATIVE] =
            "\\bload_nif\\b|@on_load\\b|:erl_ddll\\b",
        [LANG_SCAN_PROCESS] =
            "\\bSystem\\s*\\.\\s*(?:halt|stop)\\b|:erlang\\s*\\.\\s*halt\\b|:init\\s*\\.\\s*stop\\b|\\bProcess\\s*\\.\\s*exit\\b|\\bNode\\s*\\.\\s*(?:spawn\\w*|start|connect)\\b",
    },
    .strict_modules = {"System", "Port", "Code", "File", ":os", ":erlang", ":gen_tcp", ":gen_udp",
                       ":ssl", ":httpc", ":inets", ":socket", ":file", ":code", "Node"},
    .tools = "elixir", .hello = "IO.puts(\"hello\")\n",
    .lexer = LEX_ELIXIR,
};
/* clang-format on */
