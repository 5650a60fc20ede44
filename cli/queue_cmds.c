/* queue_cmds.c - the verbs around the Redis queue: worker, submit (also
 * --local, with no Redis), result and status. */
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

/* ---- summaries ------------------------------------------------------------ */

static const char *jstr(const cJSON *o, const char *k, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

struct tally {
    char key[32];
    int jobs, ok, expect, passed;
};

static struct tally *tally_of(struct tally *t, int *n, const char *key)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(t[i].key, key) == 0)
            return &t[i];
    if (*n >= 32)
        return &t[31];
    snprintf(t[*n].key, sizeof(t[0].key), "%s", key);
    return &t[(*n)++];
}

/* Prints the by-status and by-language tables. langs[i] is job i's lang. */
static void summary(cJSON **results, const char **langs, size_t n, FILE *out)
{
    struct tally st[32], lg[32], total = {"total", 0, 0, 0, 0};
    int nst = 0, nlg = 0;

    memset(st, 0, sizeof(st));
    memset(lg, 0, sizeof(lg));
    for (size_t i = 0; i < n; i++) {
        const char *status = results[i] ? jstr(results[i], "status", "unknown") : "not_run";
        const cJSON *passed = results[i] ? cJSON_GetObjectItem(results[i], "passed") : NULL;
        struct tally *l = tally_of(lg, &nlg, langs[i] ? langs[i] : "?");
        tally_of(st, &nst, status)->jobs++;
        l->jobs++, total.jobs++;
        if (strcmp(status, status_name(STATUS_OK)) == 0)
            l->ok++, total.ok++;
        if (cJSON_IsBool(passed)) {
            l->expect++, total.expect++;
            if (cJSON_IsTrue(passed))
                l->passed++, total.passed++;
        }
    }
    fprintf(out, "\n%-16s %6s\n", "status", "jobs");
    for (int i = 0; i < nst; i++)
        fprintf(out, "%-16s %6d\n", st[i].key, st[i].jobs);
    fprintf(out, "\n%-12s %6s %6s %8s %8s %9s\n", "language", "jobs", "ok", "checked", "passed",
            "pass rate");
    for (int i = 0; i <= nlg; i++) {
        struct tally *t = i < nlg ? &lg[i] : &total;
        char rate[16] = "-";
        if (t->expect)
            snprintf(rate, sizeof(rate), "%.1f%%", 100.0 * t->passed / t->expect);
        fprintf(out, "%-12s %6d %6d %8d %8d %9s\n", t->key, t->jobs, t->ok, t->expect, t->passed,
                rate);
    }
}

static int write_out(const char *path, cJSON **results, size_t n)
{
    FILE *f = fopen(path, "we");
    if (!f) {
        cli_error("--out: cannot write \"%s\"", path);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char *t = results[i] ? cJSON_PrintUnformatted(results[i]) : NULL;
        fprintf(f, "%s\n", t ? t : "{\"status\":\"not_run\"}");
        free(t);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- progress ----------------------------------------------------------------- */

struct progress {
    int tty;
    size_t last_shown;
    int64_t last_ms;
};

static void show_progress(struct progress *p, size_t done, size_t total)
{
    int64_t now = clock_mono_ms();
    if (p->tty) {
        int width = 30, fill = total ? (int)(width * done / total) : width;
        fprintf(stderr, "\r[%.*s%.*s] %zu/%zu", fill, "##############################",
                width - fill, "..............................", done, total);
        if (done == total)
            fputc('\n', stderr);
    } else if (done == total || done - p->last_shown >= (total + 9) / 10 ||
               now - p->last_ms >= 5000) {
        fprintf(stderr, "progress: %zu/%zu done\n", done, total);
        p->last_shown = done;
        p->last_ms = now;
    }
}

static void local_progress(void *ud, size_t done, size_t total, const cJSON *r)
{
    (void)r;
    show_progress(ud, done, total);
}

/* ---- submit ------------------------------------------------------------------- */

struct submit_opts {
    const char *file, *out, *artifacts;
    int wait, local;
    long long slots;
    double timeout_s;
};

static int parse_submit(struct cli_globals *g, int argc, char **argv, struct submit_opts *o)
{
    for (int i = 1; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return -1;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "--wait") == 0)
            o->wait = 1;
        else if (strcmp(argv[i], "--local") == 0)
            o->local = 1;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            o->out = argv[++i];
        else if (strcmp(argv[i], "--artifacts") == 0 && i + 1 < argc)
            o->artifacts = argv[++i];
        else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc) {
            if (parse_ll(argv[++i], 1, 256, &o->slots) != 0) {
                cli_error("--slots must be between 1 and 256 (got \"%s\")", argv[i]);
                return -1;
            }
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            if (parse_double(argv[++i], 0.1, 1e7, &o->timeout_s) != 0) {
                cli_error("--timeout must be a number of seconds (got \"%s\")", argv[i]);
                return -1;
            }
        } else if (strcmp(argv[i], "--help") == 0) {
            puts("usage: llm-sandbox submit JOBFILE [--wait] [--out results.jsonl] [--local]\n"
                 "                          [--artifacts DIR] [--slots N] [--timeout S]\n\n"
                 "Enqueues every job of a YAML or JSON Lines job file. --wait shows progress\n"
                 "and a summary; --out writes one JSON result per job, in input order;\n"
                 "--artifacts saves each job's plots and files under DIR/<id>/;\n"
                 "--local runs the file in this process with no Redis.");
            exit(0);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("submit: unknown option \"%s\"", argv[i]);
            return -1;
        } else if (o->file) {
            cli_error("submit: one job file at a time (got \"%s\" and \"%s\")", o->file, argv[i]);
            return -1;
        } else {
            o->file = argv[i];
        }
    }
    if (!o->file) {
        cli_error("submit: no job file (usage: llm-sandbox submit JOBFILE [--wait])");
        return -1;
    }
    if ((o->out || o->artifacts) && !o->wait && !o->local) {
        cli_error("submit: %s needs --wait or --local", o->out ? "--out" : "--artifacts");
        return -1;
    }
    return 0;
}

static int finish_submit(const struct submit_opts *o, const struct jobfile *jf, cJSON **results)
{
    const char **langs = calloc(jf->n ? jf->n : 1, sizeof(*langs));
    int rc = 0;

    for (size_t i = 0; langs && i < jf->n; i++)
        langs[i] = jstr(jf->jobs[i], "lang", "?");
    if (langs)
        summary(results, langs, jf->n, stdout);
    free(langs);
    if (o->out && write_out(o->out, results, jf->n) != 0)
        rc = EXIT_INTERNAL;
    if (o->artifacts) {
        int saved = 0;
        for (size_t i = 0; i < jf->n; i++)
            if (results[i] && cli_save_result_artifacts(o->artifacts, results[i], &saved) != 0)
                rc = EXIT_INTERNAL;
        fprintf(stderr, "llm-sandbox: %d artifact(s) saved under %s/<id>/\n", saved, o->artifacts);
    }
    return rc;
}

static int submit_local(struct cli_globals *g, const struct submit_opts *o, struct jobfile *jf)
{
    cJSON **results = calloc(jf->n, sizeof(*results));
    struct progress p = {isatty(STDERR_FILENO), 0, 0};
    int rc;

    if (!results)
        return EXIT_INTERNAL;
    rc = worker_run_local(&g->cfg, o->slots ? (int)o->slots : (int)g->cfg.slots, jf->jobs, jf->n,
                          results, local_progress, &p);
    if (rc == 0)
        rc = finish_submit(o, jf, results);
    for (size_t i = 0; i < jf->n; i++)
        cJSON_Delete(results[i]);
    free(results);
    return rc;
}

static cJSON *fetch_result(struct queue *q, const char *id)
{
    struct fields f;
    struct llmsb_err err = {0};
    cJSON *out = NULL;

    if (queue_result_get(q, id, &f, &err) == 1)
        out = result_fields_json(&f);
    fields_release(&f);
    return out;
}

static int is_final(const cJSON *r)
{
    const char *s = r ? jstr(r, "status", "") : "";
    enum job_status st;
    return status_parse(s, strlen(s), &st) == 0 && status_final(st);
}

/* Waits until every id has a final result (or the timeout). */
static int wait_results(struct queue *q, char **ids, size_t n, char *last, double timeout_s,
                        cJSON **results)
{
    struct progress p = {isatty(STDERR_FILENO), 0, 0};
    struct llmsb_err err = {0};
    size_t done = 0;
    int64_t deadline = timeout_s > 0 ? clock_mono_ms() + (int64_t)(timeout_s * 1000) : 0;
    int64_t next_sweep = 0;

    while (done < n) {
        struct queue_entry *e;
        size_t ne;
        if (deadline && clock_mono_ms() > deadline) {
            fprintf(stderr, "submit: --timeout reached with %zu of %zu jobs unfinished\n", n - done,
                    n);
            return -1;
        }
        if (queue_results_read(q, last, 64, 2000, &e, &ne, &err) != 0) {
            fprintf(stderr, "submit: %s; reconnecting\n", err.msg);
            sleep(1);
            queue_reconnect(q, &err);
            next_sweep = 0;
            continue;
        }
        queue_entries_free(e, ne);
        /* a sweep over unfinished ids: cheap, and covers ids that already had
         * a final result before this submit (no new results entry) */
        if (ne || clock_mono_ms() >= next_sweep) {
            for (size_t i = 0; i < n; i++) {
                if (results[i])
                    continue;
                cJSON *r = fetch_result(q, ids[i]);
                if (is_final(r)) {
                    results[i] = r;
                    done++;
                } else {
                    cJSON_Delete(r);
                }
            }
            next_sweep = clock_mono_ms() + 3000;
            show_progress(&p, done, n);
        }
    }
    return 0;
}

static int submit_redis(struct cli_globals *g, const struct submit_opts *o, struct jobfile *jf)
{
    struct queue q;
    struct llmsb_err err = {0};
    char **ids = calloc(jf->n, sizeof(char *)), last[64];
    cJSON **results = calloc(jf->n, sizeof(*results));
    int rc = 0;

    if (!ids || !results ||
        queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, 10000, &err) != 0 ||
        queue_group_ensure(&q, &err) != 0 || queue_results_last_id(&q, last, sizeof(last), &err)) {
        cli_error("%s (is redis-server running at %s?)", err.msg, g->cfg.redis_url);
        free(ids), free(results);
        return EXIT_INTERNAL;
    }
    for (size_t i = 0; i < jf->n; i++) {
        struct fields f;
        char entry[QUEUE_ENTRY_ID_MAX];
        fields_init(&f, QUEUE_MAX_FIELDS);
        rc = jobfile_fields(jf->jobs[i], &f);
        if (rc != 0)
            llmsb_err_set(&err, rc, "more than %d fields", QUEUE_MAX_FIELDS);
        else
            rc = queue_enqueue(&q, &f, entry, sizeof(entry), &err);
        fields_release(&f);
        if (rc != 0) {
            cli_error("%s:%zu: enqueue: %s (%zu of %zu jobs were enqueued)", jf->name, jf->lines[i],
                      err.msg, i, jf->n);
            rc = EXIT_INTERNAL;
            goto out;
        }
        ids[i] = strdup(jstr(jf->jobs[i], "id", entry));
    }
    fprintf(stderr, "submitted %zu job(s) to %s:jobs\n", jf->n, q.prefix);
    if (!o->wait) {
        for (size_t i = 0; i < jf->n; i++)
            printf("%s\n", ids[i]);
        goto out;
    }
    if (wait_results(&q, ids, jf->n, last, o->timeout_s, results) != 0)
        rc = EXIT_WAIT_TIMEOUT;
    if (finish_submit(o, jf, results) != 0)
        rc = EXIT_INTERNAL;
out:
    for (size_t i = 0; i < jf->n; i++) {
        free(ids[i]);
        cJSON_Delete(results[i]);
    }
    free(ids);
    free(results);
    queue_close(&q);
    return rc;
}

int cmd_submit(struct cli_globals *g, int argc, char **argv)
{
    struct submit_opts o = {0};
    struct jobfile jf;
    struct llmsb_err err = {0};
    int rc;

    if (parse_submit(g, argc, argv, &o) != 0 || cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (jobfile_load(&jf, o.file, &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_USAGE;
    }
    rc = o.local ? submit_local(g, &o, &jf) : submit_redis(g, &o, &jf);
    jobfile_release(&jf);
    return rc;
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
    r = fetch_result(&q, id);
    if (!is_final(r) && wait_s > 0) {
        cJSON_Delete(r);
        queue_wait_done(&q, id, wait_s, status, sizeof(status), &err);
        r = fetch_result(&q, id);
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
