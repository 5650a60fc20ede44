/* serve.c - `llm-sandbox serve --http ADDR`: the HTTP front door
 * (front/server.c; docs/http.md): its options, the token (from a file or
 * the environment, never argv), the config, the signal handlers and the
 * exit code. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/front.h"

static const char serve_usage[] =
    "usage: llm-sandbox serve --http ADDR [--queue] [--wait S] [--slots N]\n"
    "                         [--token-file FILE] [--allow-no-token] [--allow-origin LIST]\n"
    "                         [--max-body BYTES] [--max-calls N] [--max-waiting N]\n"
    "                         [--rate N] [--burst N] [--callback-allow LIST]\n"
    "                         [--dedup-window MS] [--compile-once on|off]\n"
    "\n"
    "An HTTP server that speaks the APIs the peers' clients already use:\n"
    "SandboxFusion (POST /run_code, GET /v1/ping), Judge0 CE (/submissions,\n"
    "/submissions/batch, /languages, /statuses, ...) and Piston v2 (POST\n"
    "/api/v2/execute, GET /api/v2/runtimes); GET /openapi.json describes them.\n"
    "Each call is a job: checked, scanned, limited and run like any other\n"
    "(docs/http.md).\n"
    "\n"
    "  --http ADDR        listen on ADDR: PORT (on 127.0.0.1), HOST:PORT, [V6]:PORT\n"
    "                     or :PORT (every interface)\n"
    "  (default)          run jobs in this process on a warm pool\n"
    "  --queue            send them through Redis (--redis, LLMSB_REDIS_URL or the\n"
    "                     config) to the workers and wait for their results\n"
    "  --wait S           with --queue: how long a call waits for its result (600)\n"
    "  --slots N          in process: jobs at once (default: worker.slots)\n"
    "  --token-file FILE  every request must carry Authorization: Bearer <the\n"
    "                     file's first line> or X-Auth-Token (or LLMSB_HTTP_TOKEN)\n"
    "  --allow-no-token   listen off loopback without a token\n"
    "  --allow-origin LIST  browser Origins allowed beyond loopback's, comma\n"
    "                     separated; CORS answers go to these only\n"
    "  --max-body BYTES   a request's body at most (default 48 MiB)\n"
    "  --max-calls N      calls taken at once (default 256): in process they wait\n"
    "                     for one of the slots (or share a run)\n"
    "  --max-waiting N    calls waiting for one of those (default 256); past\n"
    "                     them a call is refused 429 with Retry-After\n"
    "  --rate N           calls a second per client address (default: no limit)\n"
    "  --burst N          ... and the most at once (default: 2 x N)\n"
    "  --callback-allow LIST  hosts, addresses and CIDRs a Judge0 callback_url\n"
    "                     may name (default: none, callbacks refused)\n"
    "  --dedup-window MS  identical calls share one run while it runs, and for MS\n"
    "                     after it ended (default 0)\n"
    "  --compile-once on|off  in process, calls of one compiled program (all\n"
    "                     but stdin equal) that wait for a slot together run as\n"
    "                     one job's cases, compiled once (default on)\n";

static int num(const char *opt, const char *v, double min, double max, double *out)
{
    if (parse_double(v, min, max, out) != 0) {
        cli_error("serve: %s: \"%s\" is not a number from %g to %g", opt, v, min, max);
        return -1;
    }
    return 0;
}

int cmd_serve(struct cli_globals *g, int argc, char **argv)
{
    struct front_options o = {0};
    const char *token_file = NULL;
    static char token[512];
    struct llmsb_err err = {0};
    double slots = 0, calls = 0, waiting = 256, body = (double)FRONT_MAX_BODY_DEFAULT;
    double window = 0, burst = 0;
    int rc;

    o.wait_s = FRONT_WAIT_S;
    o.compile_once = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(serve_usage, stdout);
            return 0;
        } else if (strcmp(a, "--queue") == 0) {
            o.queue_mode = 1;
            continue;
        } else if (strcmp(a, "--allow-no-token") == 0) {
            o.allow_no_token = 1;
            continue;
        } else if (!v) {
            cli_error("serve: unknown option \"%s\", or it lacks its value (see 'llm-sandbox "
                      "serve --help')",
                      a);
            return EXIT_USAGE;
        }
        i++;
        if (strcmp(a, "--http") == 0)
            o.http_addr = v;
        else if (strcmp(a, "--token-file") == 0)
            token_file = v;
        else if (strcmp(a, "--allow-origin") == 0)
            o.allow_origins = v;
        else if (strcmp(a, "--callback-allow") == 0)
            o.callback_allow = v;
        else if (strcmp(a, "--wait") == 0)
            bad = num(a, v, 0.001, 86400, &o.wait_s);
        else if (strcmp(a, "--slots") == 0)
            bad = num(a, v, 1, 256, &slots);
        else if (strcmp(a, "--max-body") == 0)
            bad = num(a, v, 1024, (double)FRONT_MAX_BODY_CAP, &body);
        else if (strcmp(a, "--max-calls") == 0)
            bad = num(a, v, 1, 4096, &calls);
        else if (strcmp(a, "--max-waiting") == 0)
            bad = num(a, v, 0, 4096, &waiting);
        else if (strcmp(a, "--rate") == 0)
            bad = num(a, v, 0.001, 1e6, &o.rate);
        else if (strcmp(a, "--burst") == 0)
            bad = num(a, v, 1, 1e6, &burst);
        else if (strcmp(a, "--compile-once") == 0) {
            if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
                cli_error("serve: --compile-once: \"%s\" is not on or off", v);
                return EXIT_USAGE;
            }
            o.compile_once = strcmp(v, "on") == 0;
        } else if (strcmp(a, "--dedup-window") == 0)
            bad = num(a, v, 0, 3600000, &window);
        else {
            cli_error("serve: unknown option \"%s\" (see 'llm-sandbox serve --help')", a);
            return EXIT_USAGE;
        }
        if (bad)
            return EXIT_USAGE;
    }
    if (!o.http_addr) {
        cli_error("serve: --http ADDR is required (see 'llm-sandbox serve --help')");
        return EXIT_USAGE;
    }
    if (cli_read_token("serve", "LLMSB_HTTP_TOKEN", token_file, token, sizeof(token), &o.token))
        return EXIT_USAGE;
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    o.cfg = &g->cfg;
    o.redis_url = g->cfg.redis_url;
    o.redis_prefix = g->cfg.redis_prefix;
    o.slots = slots > 0 ? (int)slots : (int)g->cfg.slots;
    o.max_calls = calls > 0 ? (int)calls : 256;
    o.max_waiting = (int)waiting;
    o.max_body = (size_t)body;
    o.burst = burst > 0 ? burst : 2 * o.rate;
    o.dedup_window_ms = (int)window;
    cli_signals();
    signal(SIGPIPE, SIG_IGN);
    if ((rc = front_serve(&o, &err)) != 0)
        cli_error("serve: %s", err.msg);
    return rc == 0 ? 0 : rc == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
}
