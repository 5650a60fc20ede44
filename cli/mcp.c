/* mcp.c - `llm-sandbox mcp`: the verb of the Model Context Protocol server
 * (mcp/server.c on stdio, mcp/http.c over HTTP): its options, the token
 * (from a file or the environment, never argv), the config, the signal
 * handlers and the exit code. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/http_check.h"
#include "mcp/server.h"

static const char mcp_usage[] =
    "usage: llm-sandbox mcp [--queue] [--wait S]\n"
    "       llm-sandbox mcp --http ADDR [--token-file FILE] [--allow-origin LIST]\n"
    "                       [--allow-no-token] [--max-sessions N] [--session-idle S]\n"
    "                       [--queue] [--wait S]\n"
    "\n"
    "A Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message\n"
    "per line), or over HTTP (MCP's Streamable HTTP at /mcp), with the tools\n"
    "execute_code, close_session, get_supported_languages and\n"
    "get_language_details. Each execute_code call is a job: checked, scanned,\n"
    "limited and run like any other (docs/mcp.md).\n"
    "\n"
    "  (default)    run jobs in this process on a warm pool kept between calls\n"
    "  --queue      send them through Redis (--redis, LLMSB_REDIS_URL or the\n"
    "               config) to the workers and wait for their results\n"
    "  --wait S     with --queue: how long to wait for a result (default 600)\n"
    "  --http ADDR  serve HTTP on ADDR: PORT (on 127.0.0.1), HOST:PORT, [V6]:PORT\n"
    "               or :PORT (every interface)\n"
    "  --token-file FILE  every request must carry Authorization: Bearer <the\n"
    "               file's first line> (or the token in LLMSB_MCP_TOKEN)\n"
    "  --allow-origin LIST  browser Origins allowed beyond loopback's, comma\n"
    "               separated, exactly as sent (https://app.example.com)\n"
    "  --allow-no-token  listen off loopback without a token (anyone who can\n"
    "               reach the port runs code)\n"
    "  --max-sessions N  MCP sessions (and calls) at once (default 16)\n"
    "  --session-idle S  an MCP session unused S seconds ends, and its sandbox\n"
    "               sessions with it (default 1800)\n";

/* The token: FILE's first line, or the environment's env; NULL without
 * either.  Returns 0 or -1 (said why, verb first). */
int cli_read_token(const char *verb, const char *env_name, const char *file, char *tok,
                   size_t toksz, const char **out)
{
    const char *env = getenv(env_name);
    size_t n;

    *out = NULL;
    if (file && env && *env) {
        cli_error("%s: both --token-file and %s give a token: keep one", verb, env_name);
        return -1;
    }
    if (file) {
        FILE *f = fopen(file, "r");
        if (!f || !fgets(tok, (int)toksz, f)) {
            cli_error("%s: --token-file \"%s\": cannot read a line from it", verb, file);
            if (f)
                fclose(f);
            return -1;
        }
        fclose(f);
    } else if (env && *env) {
        snprintf(tok, toksz, "%s", env);
    } else {
        return 0;
    }
    n = strcspn(tok, "\r\n");
    tok[n] = '\0';
    while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
        tok[--n] = '\0';
    if (n < MCP_TOKEN_MIN || n + 1 >= toksz) {
        cli_error("%s: the token (%s) must be %d to %zu characters (got %zu)", verb,
                  file ? file : env_name, MCP_TOKEN_MIN, toksz - 2, n);
        return -1;
    }
    *out = tok;
    return 0;
}

int cmd_mcp(struct cli_globals *g, int argc, char **argv)
{
    struct mcp_options o = {0};
    const char *token_file = NULL;
    static char token[512];
    struct llmsb_err err = {0};
    long long n;

    o.wait_s = MCP_QUEUE_WAIT_S;
    o.max_sessions = MCP_HTTP_MAX_SESSIONS;
    o.session_idle_s = MCP_HTTP_IDLE_S;
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
        } else if (strcmp(argv[i], "--http") == 0 && i + 1 < argc) {
            o.http_addr = argv[++i];
        } else if (strcmp(argv[i], "--token-file") == 0 && i + 1 < argc) {
            token_file = argv[++i];
        } else if (strcmp(argv[i], "--allow-origin") == 0 && i + 1 < argc) {
            o.allow_origins = argv[++i];
        } else if (strcmp(argv[i], "--allow-no-token") == 0) {
            o.allow_no_token = 1;
        } else if (strcmp(argv[i], "--max-sessions") == 0 && i + 1 < argc) {
            if (parse_ll(argv[++i], 1, 1024, &n) != 0) {
                cli_error("mcp: --max-sessions: \"%s\" is not a number from 1 to 1024", argv[i]);
                return EXIT_USAGE;
            }
            o.max_sessions = (int)n;
        } else if (strcmp(argv[i], "--session-idle") == 0 && i + 1 < argc) {
            if (parse_double(argv[++i], 0.001, 1e7, &o.session_idle_s) != 0) {
                cli_error("mcp: --session-idle: \"%s\" is not a positive number of seconds",
                          argv[i]);
                return EXIT_USAGE;
            }
        } else {
            cli_error("mcp: unknown option \"%s\" (see 'llm-sandbox mcp --help')", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!o.http_addr && (token_file || o.allow_origins || o.allow_no_token)) {
        cli_error("mcp: --token-file, --allow-origin and --allow-no-token go with --http");
        return EXIT_USAGE;
    }
    if (o.http_addr &&
        cli_read_token("mcp", "LLMSB_MCP_TOKEN", token_file, token, sizeof(token), &o.token) != 0)
        return EXIT_USAGE;
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    o.cfg = &g->cfg;
    o.redis_url = g->cfg.redis_url;
    o.redis_prefix = g->cfg.redis_prefix;
    cli_signals();
    signal(SIGPIPE, SIG_IGN);
    if (o.http_addr) {
        int rc = mcp_serve_http(&o, &err);
        if (rc != 0)
            cli_error("mcp: %s", err.msg);
        return rc == 0 ? 0 : rc == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
    }
    if (mcp_serve(&o, &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL;
    }
    return 0;
}
