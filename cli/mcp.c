/* mcp.c - `llm-sandbox mcp`: the verb of the Model Context Protocol server
 * (mcp/server.c): its options, the config, the signal handlers and the
 * exit code. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/server.h"

static const char mcp_usage[] =
    "usage: llm-sandbox mcp [--queue] [--wait S]\n"
    "\n"
    "A Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message\n"
    "per line) with the tools execute_code, get_supported_languages and\n"
    "get_language_details. Each execute_code call is a job: checked, scanned,\n"
    "limited and run like any other (docs/mcp.md).\n"
    "\n"
    "  (default)    run jobs in this process on a warm pool kept between calls\n"
    "  --queue      send them through Redis (--redis, LLMSB_REDIS_URL or the\n"
    "               config) to the workers and wait for their results\n"
    "  --wait S     with --queue: how long to wait for a result (default 600)\n";

int cmd_mcp(struct cli_globals *g, int argc, char **argv)
{
    struct mcp_options o = {0};

    o.wait_s = MCP_QUEUE_WAIT_S;
    for (int i = 1; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(mcp_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--queue") == 0) {
            o.queue_mode = 1;
        } else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
            char *end;
            o.wait_s = strtod(argv[++i], &end);
            if (*end || !(o.wait_s > 0)) {
                cli_error("mcp: --wait: \"%s\" is not a positive number of seconds", argv[i]);
                return EXIT_USAGE;
            }
        } else {
            cli_error("mcp: unknown option \"%s\" (see 'llm-sandbox mcp --help')", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    o.cfg = &g->cfg;
    o.redis_url = g->cfg.redis_url;
    o.redis_prefix = g->cfg.redis_prefix;
    cli_signals();
    signal(SIGPIPE, SIG_IGN);
    if (mcp_serve(&o) != 0) {
        cli_error("mcp: out of memory");
        return EXIT_INTERNAL;
    }
    return 0;
}
