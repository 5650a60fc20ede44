/* worker.c - `llm-sandbox worker`: runs the Redis worker (worker/) until
 * SIGTERM or SIGINT.  The first signal asks it to drain (running jobs
 * finish up to worker.drain); a second one exits at once with 130. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/lane.h"
#include "worker/worker.h"

static void on_signal(int sig)
{
    (void)sig;
    if (worker_stop_ask())
        _exit(EXIT_INTERRUPTED); /* second signal: at once */
}

int cmd_worker(struct cli_globals *g, int argc, char **argv)
{
    const char *name = NULL, *metrics = NULL, *weights = NULL;
    long long slots = 0;

    for (int i = 1; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc) {
            if (parse_ll(argv[++i], 1, 256, &slots) != 0) {
                cli_error("--slots must be between 1 and 256 (got \"%s\")", argv[i]);
                return EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            name = argv[++i];
        } else if (strcmp(argv[i], "--metrics") == 0 && i + 1 < argc) {
            metrics = argv[++i];
        } else if (strcmp(argv[i], "--priority-weights") == 0 && i + 1 < argc) {
            weights = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            puts(
                "usage: llm-sandbox worker [--config FILE] [--slots N] [--name NAME]\n"
                "                           [--metrics HOST:PORT] [--priority-weights H,N,L|strict]\n\n"
                "Pulls jobs from the Redis stream until SIGTERM/SIGINT; the first signal\n"
                "drains (finishes running jobs up to worker.drain), a second exits at once.\n"
                "--metrics (worker.metrics_addr) serves Prometheus metrics at /metrics.\n"
                "--priority-weights (worker.priority_weights, default 8,4,1) weighs the\n"
                "classes high,normal,low when picking the next job; strict: high first always.");
            return 0;
        } else {
            cli_error("worker: unknown option \"%s\"", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (metrics) {
        if (strlen(metrics) >= sizeof(g->cfg.metrics_addr)) {
            cli_error("--metrics: address too long (got \"%.64s...\")", metrics);
            return EXIT_USAGE;
        }
        snprintf(g->cfg.metrics_addr, sizeof(g->cfg.metrics_addr), "%s", metrics);
    }
    if (weights) {
        struct llmsb_err err = {0};
        int wt[LANE_CLASSES], strict;
        if (strlen(weights) >= sizeof(g->cfg.priority_weights) ||
            lane_weights_parse(weights, wt, &strict, &err) != 0) {
            cli_error("--priority-weights: %s",
                      err.msg[0] ? err.msg : "too long (\"H,N,L\" or \"strict\")");
            return EXIT_USAGE;
        }
        snprintf(g->cfg.priority_weights, sizeof(g->cfg.priority_weights), "%s", weights);
    }
    llmsb_signals(on_signal);
    return worker_main(&g->cfg, slots ? (int)slots : (int)g->cfg.slots, name) == 0 ? 0
                                                                                   : EXIT_INTERNAL;
}
