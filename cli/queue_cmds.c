/* queue_cmds.c - the verbs around the Redis queue: worker, result and
 * status (submit is in submit.c). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/jobfile.h"
#include "queue/queue.h"
#include "worker/result.h"
#include "worker/worker.h"

/* ---- worker ------------------------------------------------------------- */

int cmd_worker(struct cli_globals *g, int argc, char **argv)
{
    const char *name = NULL;
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
        } else if (strcmp(argv[i], "--help") == 0) {
            puts("usage: llm-sandbox worker [--config FILE] [--slots N] [--name NAME]\n\n"
                 "Pulls jobs from the Redis stream until SIGTERM/SIGINT; the first signal\n"
                 "drains (finishes running jobs up to worker.drain), a second exits at once.");
            return 0;
        } else {
            cli_error("worker: unknown option \"%s\"", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    return worker_main(&g->cfg, slots ? (int)slots : (int)g->cfg.slots, name);
}

/* ---- results ---------------------------------------------------------------- */

cJSON *cli_fetch_result(struct queue *q, const char *id)
{
    struct fields f;
    struct llmsb_err err = {0};
    cJSON *out = NULL;

    if (queue_result_get(q, id, &f, &err) == 1)
        out = result_fields_json(&f);
    fields_release(&f);
    return out;
}

int cli_result_final(const cJSON *r)
{
    const cJSON *s = r ? cJSON_GetObjectItemCaseSensitive(r, "status") : NULL;
    enum job_status st;
    return cJSON_IsString(s) && status_parse(s->valuestring, strlen(s->valuestring), &st) == 0 &&
           status_final(st);
}

/* ---- result, status ------------------------------------------------------------- */

int cmd_result(struct cli_globals *g, int argc, char **argv)
{
    const char *id = NULL, *dir = NULL;
    double wait_s = 0;
    struct queue q;
    struct llmsb_err err = {0};
    cJSON *r;
    char status[64];

    for (int i = 1; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
            if (parse_double(argv[++i], 0, 1e6, &wait_s) != 0) {
                cli_error("--wait must be seconds (got \"%s\")", argv[i]);
                return EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--artifacts") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (argv[i][0] == '-') {
            cli_error("result: unknown option \"%s\" (usage: llm-sandbox result ID [--wait S] "
                      "[--artifacts DIR])",
                      argv[i]);
            return EXIT_USAGE;
        } else {
            id = argv[i];
        }
    }
    if (!id) {
        cli_error("result: no job id (usage: llm-sandbox result ID [--wait S])");
        return EXIT_USAGE;
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, (int)(wait_s * 1000) + 5000,
                   &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL;
    }
    r = cli_fetch_result(&q, id);
    if (!cli_result_final(r) && wait_s > 0) {
        cJSON_Delete(r);
        queue_wait_done(&q, id, wait_s, status, sizeof(status), &err);
        r = cli_fetch_result(&q, id);
    }
    queue_close(&q);
    if (!r) {
        cli_error("no result for \"%s\" (not started yet, unknown, or expired)", id);
        return 1;
    }
    {
        char *t = cJSON_Print(r);
        printf("%s\n", t ? t : "{}");
        free(t);
    }
    int rc = 0, saved = 0;
    if (dir) {
        rc = cli_save_result_artifacts(dir, r, &saved) != 0 ? EXIT_INTERNAL : 0;
        fprintf(stderr, "llm-sandbox: %d artifact(s) saved under %s/%s/\n", saved, dir, id);
    }
    cJSON_Delete(r);
    return rc;
}

static void print_worker(void *ud, const char *name, const struct fields *f)
{
    const char *k[] = {"host", "slots", "busy", "done", "state", "pool_idle_total"};
    (void)ud;
    printf("  %-28s", name);
    for (int i = 0; i < 6; i++) {
        const char *v = fields_get(f, k[i], NULL);
        printf(" %s=%s", k[i], v ? v : "-");
    }
    putchar('\n');
}

int cmd_status(struct cli_globals *g, int argc, char **argv)
{
    struct queue q;
    struct queue_stats st;
    struct llmsb_err err = {0};

    for (int i = 1; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return EXIT_USAGE;
        if (rc == 0) {
            cli_error("status: unknown argument \"%s\"", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, 5000, &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL;
    }
    printf("redis %s, prefix %s\n", g->cfg.redis_url, q.prefix);
    printf("workers:\n");
    if (queue_stats(&q, &st, print_worker, NULL, &err) != 0) {
        cli_error("%s", err.msg);
        queue_close(&q);
        return EXIT_INTERNAL;
    }
    printf("workers alive:   %d\n", st.workers);
    printf("queued:          %lld (not yet taken)\n",
           st.stream_len - st.pending > 0 ? st.stream_len - st.pending : 0);
    printf("pending:         %lld (taken, not finished)\n", st.pending);
    printf("dead letters:    %lld\n", st.dead);
    printf("last minute:     %lld finished (%.2f jobs/s)\n", st.done_last_minute,
           st.done_last_minute / 60.0);
    queue_close(&q);
    return 0;
}
