/* queue_cmds.c - the verbs around the Redis queue: result and status
 * (submit is in submit.c, worker in worker.c). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batch/batch.h"
#include "common/clock.h"
#include "config/jobfile.h"
#include "queue/queue.h"
#include "job/result.h"

/* ---- result --follow ------------------------------------------------------------- */

#define FOLLOW_BLOCK_MS 500 /* a read's wait: how soon a non-live job's end is seen */

/* A piece of fd (1, 2), or (fd 0) an attempt that starts over. */
static void print_piece(void *arg, int fd, const char *data, size_t len)
{
    FILE *to = fd == 1 ? stdout : stderr;

    (void)arg;
    if (fd == 0) {
        fprintf(stderr,
                "llm-sandbox: attempt %zu starts again; the output above was the "
                "attempt before's, what follows is the new attempt's\n",
                len);
        return;
    }
    fwrite(data, 1, len, to);
    fflush(to);
}

/* The followed job's end: run's one-line note on stderr (nothing for ok
 * or a plain non-zero exit) and run's exit code for its status. */
static int follow_end(const struct fields *res)
{
    const char *st = fields_get(res, "status", NULL), *why = fields_get(res, "error", NULL);
    const char *code = fields_get(res, "exit_code", NULL), *sig = fields_get(res, "signal", NULL);
    long long ec = 0, sg = 0;
    enum job_status s;

    if (!st || status_parse(st, strlen(st), &s) != 0) {
        cli_error("the result has no known status (\"%s\")", st ? st : "");
        return EXIT_INTERNAL;
    }
    if (code)
        parse_ll(code, -(1LL << 40), 1LL << 40, &ec);
    if (sig)
        parse_ll(sig, 0, 1 << 10, &sg);
    if (s == STATUS_RUNTIME_ERROR && sg)
        fprintf(stderr, "llm-sandbox: killed by signal %lld\n", sg);
    else if (s != STATUS_OK && s != STATUS_RUNTIME_ERROR)
        fprintf(stderr, "llm-sandbox: %s%s%s\n", st, why && why[0] ? ": " : "", why ? why : "");
    return status_info(s)->run_exit == STATUS_EXIT_PROGRAM ? (int)(ec & 0xff)
                                                           : status_info(s)->run_exit;
}

/* Where a followed job stands. */
enum follow_state {
    FOLLOW_RUNS = 0,   /* running, or its stream exists: follow it */
    FOLLOW_FINAL = 1,  /* its final result stands */
    FOLLOW_UNKNOWN = 2 /* neither a result nor a stream: unknown, not started, or expired */
};

/* A follow_state, or a negative code (err set). */
static int follow_state(struct queue *q, const char *id, struct llmsb_err *err)
{
    char status[64];
    int rc = queue_result_status(q, id, status, sizeof(status), err);

    if (rc < 0)
        return rc;
    if (rc == 1)
        return strcmp(status, "running") != 0 ? FOLLOW_FINAL : FOLLOW_RUNS;
    rc = queue_live_exists(q, id, err);
    return rc < 0 ? rc : rc == 1 ? FOLLOW_RUNS : FOLLOW_UNKNOWN;
}

/* Whether the follower printed chunks while the final result holds no
 * output and no exit code: its attempt failed before its program ran
 * (container create, a dead letter), the chunks were an attempt's before. */
static int never_ran(const struct queue_follow *f, const struct fields *res)
{
    size_t n[3] = {0, 0, 0};
    const char *code = fields_get(res, "exit_code", &n[2]);

    fields_get(res, "stdout", &n[0]);
    fields_get(res, "stderr", &n[1]);
    return f->next[0] + f->next[1] > 0 && n[0] == 0 && n[1] == 0 && (!code || n[2] == 0);
}

/* After a failed call: 1 when Redis answers again (a restart or a
 * failover is a pause: try the call again), 0 when the error is not the
 * connection's or Redis stayed away for FOLLOW_OUTAGE_MS (err says so). */
#define FOLLOW_OUTAGE_MS 120000
static int follow_recover(struct queue *q, struct llmsb_err *err)
{
    if (!queue_err_retryable(err) || llmsb_interrupted)
        return 0;
    fprintf(stderr, "llm-sandbox: %s; connecting again\n", err->msg);
    return queue_reconnect_wait(q, FOLLOW_OUTAGE_MS, &llmsb_interrupted, err) == 0;
}

/* `result ID --follow`: the live stream's chunks as they come, stdout to
 * stdout and stderr to stderr, then what the final result holds past
 * them, then run's note and exit code for its status.  wait_s bounds the
 * wait for a job that has not started.  Redis going away meanwhile (up to
 * FOLLOW_OUTAGE_MS) pauses it: the stream is read on from its last entry. */
static int follow(struct queue *q, const char *id, double wait_s)
{
    int64_t until = clock_mono_ms() + (int64_t)(wait_s * 1000);
    struct llmsb_err err = {0};
    struct queue_follow f;
    struct fields res;
    int state, n = 0, rc = 0;

    queue_follow_init(&f);
    while (((state = follow_state(q, id, &err)) == FOLLOW_UNKNOWN && clock_mono_ms() < until) ||
           (state < 0 && follow_recover(q, &err))) {
        if (llmsb_interrupted)
            break;
        if (state == FOLLOW_UNKNOWN)
            clock_sleep_ms(200);
    }
    if (state == FOLLOW_UNKNOWN && !llmsb_interrupted) {
        cli_error("no result for \"%s\" (not started yet, unknown, or expired)", id);
        return 1;
    }
    /* until the end entry; a job that is not live (or whose worker died)
     * shows its end in its result */
    while (state == FOLLOW_RUNS && !f.ended && !llmsb_interrupted) {
        n = queue_follow_step(q, id, &f, FOLLOW_BLOCK_MS, print_piece, NULL, &err);
        if (n == 0 && (state = follow_state(q, id, &err)) == FOLLOW_FINAL)
            n = queue_follow_step(q, id, &f, 0, print_piece, NULL, &err); /* the last ones */
        if ((n < 0 || state < 0) && follow_recover(q, &err))
            n = 0, state = FOLLOW_RUNS;
        else if (n < 0)
            break;
    }
    while (!llmsb_interrupted && n >= 0 && state >= 0 &&
           (rc = queue_result_get(q, id, &res, &err)) < 0) {
        fields_release(&res);
        if (!follow_recover(q, &err)) {
            n = rc;
            break;
        }
    }
    if (llmsb_interrupted)
        return EXIT_INTERRUPTED;
    if (n < 0 || state < 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL;
    }
    if (rc != 1) { /* res is initialised either way */
        fields_release(&res);
        cli_error("no result for \"%s\" (expired while it was followed)", id);
        return 1;
    }
    if (never_ran(&f, &res))
        fprintf(stderr, "llm-sandbox: the output above was an earlier attempt's; the final "
                        "attempt's program never ran\n");
    else if (queue_follow_rest(&f, &res, print_piece, NULL) != 0) {
        cli_error("what was printed of \"%s\" is not what its result holds (a stream from an "
                  "earlier run, or trimmed): see `llm-sandbox result %s`",
                  id, id);
        fields_release(&res);
        return EXIT_FOLLOW_MISMATCH;
    }
    rc = follow_end(&res);
    fields_release(&res);
    return rc;
}

/* ---- result, status ------------------------------------------------------------- */

/* A job waiting in the delayed set as a result-like object {id, status:
 * delayed, not_before, not_before_utc}, or NULL (not there, or Redis
 * failed: then it is as unknown as before). */
static cJSON *delayed_json(struct queue *q, const char *id)
{
    struct llmsb_err err = {0};
    int64_t due = 0;
    char when[40];
    time_t t;
    struct tm tm;
    cJSON *o;

    if (queue_delayed_due(q, id, &due, &err) != 1 || !(o = cJSON_CreateObject()))
        return NULL;
    t = (time_t)(due / 1000);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
    snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%03dZ", (int)(due % 1000));
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddStringToObject(o, "status", "delayed");
    cJSON_AddNumberToObject(o, "not_before", (double)due);
    cJSON_AddStringToObject(o, "not_before_utc", when);
    return o;
}

int cmd_result(struct cli_globals *g, int argc, char **argv)
{
    const char *id = NULL, *dir = NULL;
    double wait_s = 0;
    int follow_it = 0;
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
        } else if (strcmp(argv[i], "--follow") == 0) {
            follow_it = 1;
        } else if (argv[i][0] == '-') {
            cli_error("result: unknown option \"%s\" (usage: llm-sandbox result ID [--wait S] "
                      "[--artifacts DIR] [--follow])",
                      argv[i]);
            return EXIT_USAGE;
        } else {
            id = argv[i];
        }
    }
    if (!id) {
        cli_error("result: no job id (usage: llm-sandbox result ID [--wait S] [--follow])");
        return EXIT_USAGE;
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, (int)(wait_s * 1000) + 5000,
                   &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL;
    }
    if (follow_it) {
        int rc = follow(&q, id, wait_s);
        queue_close(&q);
        return rc;
    }
    r = batch_result_get(&q, id, NULL);
    if (!result_json_final(r) && wait_s > 0) {
        int64_t until = clock_mono_ms() + (int64_t)(wait_s * 1000), left;
        cJSON_Delete(r);
        while ((left = until - clock_mono_ms()) > 0 &&
               queue_wait_done(&q, id, (double)left / 1000, status, sizeof(status), &err) < 0 &&
               follow_recover(&q, &err))
            ;
        r = batch_result_get(&q, id, NULL);
    }
    if (!r)
        r = delayed_json(&q, id);
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

/* The Redis URL as it may be shown: a password becomes "***". */
static void add_worker(void *ud, const char *name, const struct fields *f)
{
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "name", name);
    for (size_t i = 0; i < f->n; i++) {
        char *end;
        double v = strtod(f->v[i].value, &end);
        if (f->v[i].len && !*end && f->v[i].value[0] >= '0' && f->v[i].value[0] <= '9')
            cJSON_AddNumberToObject(w, f->v[i].name, v);
        else
            cJSON_AddStringToObject(w, f->v[i].name, f->v[i].value);
    }
    if (!fields_get(f, "protocol", NULL)) /* a worker from before protocol levels */
        cJSON_AddNumberToObject(w, "protocol", 0);
    cJSON_AddItemToArray(ud, w);
}

/* The newest n dead letters: id, when, reason, attempts, last worker. */
static int add_dead(struct queue *q, long long n, cJSON *arr, struct llmsb_err *err)
{
    struct queue_entry *e;
    size_t got;
    int rc = queue_range(q, 1, 1, "+", (int)n, &e, &got, err);

    for (size_t i = 0; rc == 0 && i < got; i++) {
        static const char *const keep[] = {"id", "lang", "reason", "attempts", "last_worker"};
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "entry", e[i].id);
        cJSON_AddNumberToObject(d, "at_ms", strtod(e[i].id, NULL));
        for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++) {
            const char *v = fields_get(&e[i].f, keep[k], NULL);
            if (v)
                cJSON_AddStringToObject(d, keep[k], v);
        }
        cJSON_AddItemToArray(arr, d);
    }
    queue_entries_free(e, got);
    return rc;
}

static cJSON *status_json(struct cli_globals *g, struct queue *q, long long dead_n,
                          struct llmsb_err *err)
{
    struct queue_stats st;
    long long delayed;
    char url[512];
    cJSON *o = cJSON_CreateObject(), *workers = cJSON_CreateArray(), *dead = NULL;

    queue_url_redact(g->cfg.redis_url, url, sizeof(url));
    cJSON_AddStringToObject(o, "redis", url);
    cJSON_AddStringToObject(o, "prefix", q->prefix);
    cJSON_AddItemToObject(o, "workers", workers);
    if (queue_stats(q, &st, add_worker, workers, err) != 0 ||
        (dead_n > 0 &&
         add_dead(q, dead_n, dead = cJSON_AddArrayToObject(o, "dead_letters"), err) != 0)) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddNumberToObject(o, "workers_alive", st.workers);
    cJSON_AddNumberToObject(
        o, "queued", (double)(st.stream_len - st.pending > 0 ? st.stream_len - st.pending : 0));
    cJSON_AddNumberToObject(o, "pending", (double)st.pending);
    cJSON_AddNumberToObject(o, "dead", (double)st.dead);
    if ((delayed = queue_delayed_count(q, err)) < 0) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddNumberToObject(o, "delayed", (double)delayed);
    cJSON_AddNumberToObject(o, "done_last_minute", (double)st.done_last_minute);
    cJSON_AddNumberToObject(o, "jobs_per_s", st.done_last_minute / 60.0);
    return o;
}

static long long num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? (long long)v->valuedouble : 0;
}

/* A field as text: strings as they are, numbers as integers, else "-". */
static const char *str(const cJSON *o, const char *k)
{
    static char num[32];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsNumber(v)) {
        snprintf(num, sizeof(num), "%.15g", v->valuedouble);
        return num;
    }
    return cJSON_IsString(v) ? v->valuestring : "-";
}

static void print_status(const cJSON *o)
{
    const cJSON *w, *d, *dead = cJSON_GetObjectItemCaseSensitive(o, "dead_letters");
    const char *k[] = {"host",  "slots",           "busy",     "done",
                       "state", "pool_idle_total", "protocol", "features"};

    printf("redis %s, prefix %s\nworkers:\n", str(o, "redis"), str(o, "prefix"));
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(o, "workers")) {
        printf("  %-28s", str(w, "name"));
        for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
            printf(" %s=%s", k[i], str(w, k[i]));
        putchar('\n');
    }
    printf("workers alive:   %lld\n", num(o, "workers_alive"));
    printf("queued:          %lld (not yet taken)\n", num(o, "queued"));
    printf("pending:         %lld (taken, not finished)\n", num(o, "pending"));
    printf("delayed:         %lld (waiting for their not_before)\n", num(o, "delayed"));
    printf("dead letters:    %lld\n", num(o, "dead"));
    printf("last minute:     %lld finished (%.2f jobs/s)\n", num(o, "done_last_minute"),
           num(o, "done_last_minute") / 60.0);
    if (dead)
        printf("newest dead letters:\n");
    cJSON_ArrayForEach(d, dead) {
        char shown[256], when[32];
        time_t t = (time_t)(num(d, "at_ms") / 1000);
        struct tm tm;
        llmsb_escape(shown, sizeof(shown), str(d, "id"), strlen(str(d, "id")));
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tm));
        printf("  %s UTC  %s  attempts=%s worker=%s  %s\n", when, shown, str(d, "attempts"),
               str(d, "last_worker"), str(d, "reason"));
    }
}

int cmd_status(struct cli_globals *g, int argc, char **argv)
{
    struct queue q;
    struct llmsb_err err = {0};
    long long dead_n = 0;
    int as_json = 0;
    cJSON *o;

    for (int i = 1; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (strcmp(argv[i], "--dead") == 0 && i + 1 < argc) {
            if (parse_ll(argv[++i], 1, 10000, &dead_n) != 0) {
                cli_error("--dead must be a count from 1 to 10000 (got \"%s\")", argv[i]);
                return EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--help") == 0) {
            puts("usage: llm-sandbox status [--json] [--dead N]\n\n"
                 "Workers with their heartbeats, queued and pending jobs, dead letters and\n"
                 "jobs finished in the last minute; --dead N lists the newest N dead letters\n"
                 "(id, time, reason, attempts, last worker); --json prints it all as JSON.");
            return 0;
        } else {
            cli_error("status: unknown argument \"%s\" (usage: llm-sandbox status [--json] "
                      "[--dead N])",
                      argv[i]);
            return EXIT_USAGE;
        }
    }
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, 5000, &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL;
    }
    o = status_json(g, &q, dead_n, &err);
    queue_close(&q);
    if (!o) {
        cli_error("%s", err.msg[0] ? err.msg : "out of memory");
        return EXIT_INTERNAL;
    }
    if (as_json) {
        char *t = cJSON_Print(o);
        printf("%s\n", t ? t : "{}");
        free(t);
    } else {
        print_status(o);
    }
    cJSON_Delete(o);
    return 0;
}
