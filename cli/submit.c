/* submit.c - the submit verb: its options, then a batch (batch/batch.h:
 * the whole file checked before anything runs, identical programs run
 * once, run here with --local or enqueued, waited for, timeouts rechecked
 * when asked), shown as it goes on stderr and summed up on stdout with
 * pass@k, --report, --out and --artifacts; the batch's ends as exit
 * codes, and Ctrl-C and SIGTERM answered once something runs. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "eval/passk.h"
#include "eval/report.h"
#include "config/jobfile.h"
#include "job/job.h"
#include "queue/queue.h"

struct submit_opts {
    const char *file, *out, *artifacts, *group_by, *report;
    int wait, local, allow_invalid, no_dedup, recheck;
    enum batch_existing existing;
    long long slots;
    double timeout_s;
    int64_t not_before_ms;    /* --delay, --not-before: when the jobs are due (0: now) */
    const char *due_flag;     /* which of them gave it */
    const struct config *cfg; /* --report's limits and engine */
};

/* The options the batch's lines name. */
static const char *const flag_names[BATCH_NAMES] = {
    [BATCH_NAME_ALLOW_INVALID] = "--allow-invalid",
    [BATCH_NAME_RERUN] = "--rerun",
    [BATCH_NAME_REUSE] = "--reuse",
    [BATCH_NAME_NO_DEDUP] = "--no-dedup",
    [BATCH_NAME_RECHECK] = "--recheck-timeouts",
    [BATCH_NAME_OUT] = "--out",
};

/* A line of the batch on stderr, after the prefix of its kind. */
static void say(void *ud, enum batch_say kind, const char *line)
{
    static const char *const prefix[] = {[BATCH_SAY_LINE] = "",
                                         [BATCH_SAY_NOTE] = "submit: ",
                                         [BATCH_SAY_WARNING] = "warning: ",
                                         [BATCH_SAY_ERROR] = "error: "};
    (void)ud;
    fprintf(stderr, "%s%s\n", prefix[kind], line);
}

/* ---- progress ----------------------------------------------------------------- */

struct progress {
    int tty;
    size_t last_shown;
    int64_t started_ms, last_ms;
};

/* The batch's progress on stderr: a bar on a terminal, else a line each
 * tenth of the jobs or 5 s; a new phase (the recheck) starts its own. */
static void show_progress(void *ud, const struct batch_progress *bp)
{
    struct progress *p = ud;
    size_t done = bp->done, total = bp->total;
    int64_t now = clock_mono_ms(), elapsed = now - bp->started_ms;
    char eta[32] = "";

    if (p->started_ms != bp->started_ms) /* a new phase */
        *p = (struct progress){p->tty, 0, bp->started_ms, 0};

    if (done > 0 && done < total) {
        long long left = (long long)(elapsed * (int64_t)(total - done) / (int64_t)done / 1000);
        snprintf(eta, sizeof(eta), ", ETA %lldm%02llds", left / 60, left % 60);
    }
    if (p->tty) {
        int width = 30, fill = total ? (int)(width * done / total) : width;
        fprintf(stderr, "\r[%.*s%.*s] %zu/%zu, %zu failed%s   ", fill,
                "##############################", width - fill, "..............................",
                done, total, bp->failed, eta);
        if (done == total)
            fputc('\n', stderr);
    } else if (done == total || done - p->last_shown >= (total + 9) / 10 ||
               now - p->last_ms >= 5000) {
        fprintf(stderr, "progress: %zu/%zu done, %zu failed%s\n", done, total, bp->failed, eta);
        p->last_shown = done;
        p->last_ms = now;
    }
}

/* ---- options -------------------------------------------------------------------- */

/* --delay DURATION or --not-before TIME into o->not_before_ms; 0, or -1 said. */
static int parse_due(const char *flag, const char *v, struct submit_opts *o)
{
    struct llmsb_err err = {0};
    int64_t ms;
    int rc = strcmp(flag, "--delay") == 0 ? job_duration_parse(flag, v, &ms, &err)
                                          : job_not_before_parse(v, strlen(v), &ms, &err);

    if (rc != 0) {
        cli_error("%s%s", strcmp(flag, "--delay") == 0 ? "" : "--not-before: ", err.msg);
        return -1;
    }
    if (o->due_flag) {
        cli_error("submit: %s and %s: give one of them", o->due_flag, flag);
        return -1;
    }
    o->due_flag = flag;
    o->not_before_ms = strcmp(flag, "--delay") == 0 ? clock_wall_ms() + ms : ms;
    return 0;
}

/* --delay/--not-before: not_before on every job that names no time of its
 * own (its not_before or delay_ms wins).  0, or -1 said. */
static int set_due(struct jobfile *jf, int64_t not_before_ms)
{
    char at[24];

    snprintf(at, sizeof(at), "%lld", (long long)not_before_ms);
    for (size_t i = 0; i < jf->n; i++) {
        cJSON *j = jf->jobs[i];
        if (!cJSON_IsObject(j) || cJSON_GetObjectItemCaseSensitive(j, "not_before") ||
            cJSON_GetObjectItemCaseSensitive(j, "delay_ms"))
            continue;
        if (!cJSON_AddStringToObject(j, "not_before", at)) {
            cli_error("submit: out of memory");
            return -1;
        }
    }
    return 0;
}

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
        else if (strcmp(argv[i], "--allow-invalid") == 0)
            o->allow_invalid = 1;
        else if (strcmp(argv[i], "--no-dedup") == 0)
            o->no_dedup = 1;
        else if (strcmp(argv[i], "--recheck-timeouts") == 0)
            o->recheck = 1;
        else if (strcmp(argv[i], "--rerun") == 0)
            o->existing = BATCH_EXISTING_RERUN;
        else if (strcmp(argv[i], "--reuse") == 0)
            o->existing = BATCH_EXISTING_REUSE;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            o->out = argv[++i];
        else if (strcmp(argv[i], "--artifacts") == 0 && i + 1 < argc)
            o->artifacts = argv[++i];
        else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc)
            o->report = argv[++i];
        else if (strcmp(argv[i], "--group-by") == 0 && i + 1 < argc) {
            o->group_by = argv[++i];
            if (strcmp(o->group_by, "id") != 0 &&
                (strncmp(o->group_by, "meta.", 5) != 0 || !o->group_by[5])) {
                cli_error("--group-by must be id or meta.FIELD (got \"%s\")", o->group_by);
                return -1;
            }
        } else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc) {
            if (parse_ll(argv[++i], 1, 256, &o->slots) != 0) {
                cli_error("--slots must be between 1 and 256 (got \"%s\")", argv[i]);
                return -1;
            }
        } else if ((strcmp(argv[i], "--delay") == 0 || strcmp(argv[i], "--not-before") == 0) &&
                   i + 1 < argc) {
            if (parse_due(argv[i], argv[i + 1], o) != 0)
                return -1;
            i++;
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            if (parse_double(argv[++i], 0.1, 1e7, &o->timeout_s) != 0) {
                cli_error("--timeout must be a number of seconds (got \"%s\")", argv[i]);
                return -1;
            }
        } else if (strcmp(argv[i], "--help") == 0) {
            puts(
                "usage: llm-sandbox submit JOBFILE [--wait] [--out results.jsonl] [--local]\n"
                "                          [--rerun | --reuse] [--allow-invalid] [--artifacts DIR]\n"
                "                          [--slots N] [--timeout S] [--group-by KEY] [--report FILE]\n"
                "                          [--no-dedup] [--recheck-timeouts]\n"
                "                          [--delay DURATION | --not-before TIME]\n\n"
                "Checks every job of a YAML or JSON Lines job file (nothing is enqueued when\n"
                "one is bad or two share an id; --allow-invalid submits bad jobs anyway, as\n"
                "invalid results), then enqueues them. An id that already has\n"
                "a result is refused unless --rerun (run it again) or --reuse (keep it).\n"
                "--wait shows progress and a summary and exits 1 unless every job ended ok\n"
                "and passed its expectations; --out writes one JSON result per job, in input\n"
                "order; --artifacts saves each job's plots and files under DIR/<id>/;\n"
                "--local runs the file in this process with no Redis. --timeout S ends the\n"
                "wait (with --local, the run) after S seconds, exit 124; Ctrl-C or SIGTERM,\n"
                "exit 130; either way the summary is printed and --out written, unfinished\n"
                "jobs as not_finished (--local stops them). Jobs with expectations\n"
                "are grouped into tasks (--group-by meta.FIELD or id; by default meta.task_id,\n"
                "else the id less a trailing #N) for pass@1/10/100; --report FILE writes them\n"
                "as JSON to FILE and as Markdown to FILE.md, with p50/p95/p99 of each phase\n"
                "per language and the machine, engine, image ids and limits.  Jobs identical\n"
                "in everything but id and meta run once, each getting its own result marked\n"
                "copy_of (--no-dedup runs every job).  --recheck-timeouts runs each timeout\n"
                "once more, alone, and keeps that result (rechecked, first_status).\n"
                "--delay DURATION (30s, 500ms, 2h) or --not-before TIME (epoch ms or\n"
                "2026-01-01T00:00:00Z) sets not_before on every job without a time of its\n"
                "own: the workers hold it in Redis until then (docs/jobs.md).");
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
    if (o->due_flag && o->local) {
        cli_error("submit: %s needs the queue (a delayed job waits in Redis), not --local",
                  o->due_flag);
        return -1;
    }
    if ((o->out || o->artifacts || o->report || o->recheck) && !o->wait && !o->local) {
        cli_error("submit: %s needs --wait or --local", o->out         ? "--out"
                                                        : o->artifacts ? "--artifacts"
                                                        : o->report    ? "--report"
                                                                       : "--recheck-timeouts");
        return -1;
    }
    return 0;
}

/* The task of job i for pass@k, as text (owned): --group-by meta.FIELD or
 * id; by default meta.task_id when the job has one, else the id less a
 * trailing "#N".  A job without the meta field counts under its id. */
static char *task_key(const cJSON *job, const char *id, const char *group_by)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(job, "meta"), *v = NULL;
    cJSON *parsed = cJSON_IsString(meta) ? cJSON_Parse(meta->valuestring) : NULL;
    const char *field = !group_by                            ? "task_id"
                        : strncmp(group_by, "meta.", 5) == 0 ? group_by + 5
                                                             : NULL;
    char *out = NULL, num[64];

    if (parsed)
        meta = parsed;
    if (field && cJSON_IsObject(meta))
        v = cJSON_GetObjectItemCaseSensitive(meta, field);
    if (cJSON_IsString(v))
        out = strdup(v->valuestring);
    else if (cJSON_IsNumber(v) && snprintf(num, sizeof(num), "%.17g", v->valuedouble) > 0)
        out = strdup(num);
    else if (!group_by)
        out = strndup(id, passk_task_len(id));
    else
        out = strdup(id);
    cJSON_Delete(parsed);
    return out;
}

/* --report's per-phase rows (every job with a result) and provenance;
 * NULL without --report.  Free with free(tm->t), free(tm->env), free(tm). */
static struct report_timings *report_timings_of(const struct submit_opts *o, const struct batch *b)
{
    const struct jobfile *jf = b->jf;
    cJSON **results = b->results;
    struct report_timings *tm;
    struct report_env *env;

    if (!o->report || !(tm = calloc(1, sizeof(*tm))))
        return NULL;
    tm->t = calloc(jf->n ? jf->n : 1, sizeof(*tm->t));
    tm->env = env = malloc(sizeof(*env));
    if (!tm->t || !env) {
        free(tm->t);
        free(env);
        free(tm);
        return NULL;
    }
    for (size_t i = 0; i < jf->n; i++) /* the runs: a copy's timings are its run's */
        if (results[i] && !cJSON_GetObjectItem(results[i], "copy_of"))
            cli_timing_of(results[i], batch_job_lang(b, i), &tm->t[tm->n++]);
    cli_provenance(o->cfg, jf, results, o->local, env);
    return tm;
}

/* pass@k over the jobs with expectations, and with --report the phases
 * and provenance; -1 on a write error. */
static int passk_summary(const struct submit_opts *o, const struct batch *b)
{
    const struct jobfile *jf = b->jf;
    cJSON **results = b->results;
    struct report_row *rows = calloc(jf->n ? jf->n : 1, sizeof(*rows));
    struct report_timings *tm = report_timings_of(o, b);
    struct llmsb_err err = {0};
    size_t n = 0;
    int rc = 0;

    if (!rows || (o->report && !tm)) {
        free(rows);
        return -1;
    }
    for (size_t i = 0; i < jf->n; i++) {
        if (!b->jobs[i].checked)
            continue;
        rows[n].lang = batch_job_lang(b, i);
        rows[n].passed = results[i] && cJSON_IsTrue(cJSON_GetObjectItem(results[i], "passed"));
        rows[n].base = report_base_verdict(jf->jobs[i], results[i], &rows[n].has_base);
        if (!(rows[n].key = task_key(jf->jobs[i], b->jobs[i].id, o->group_by))) {
            rc = -1;
            break;
        }
        n++;
    }
    if (rc == 0 && report_passk(stdout, rows, n,
                                o->group_by ? o->group_by : "meta.task_id, else the id less \"#N\"",
                                o->report, tm, &err) != 0) {
        cli_error("--report: %s", err.msg);
        rc = -1;
    }
    if (rc == 0 && o->report) {
        struct report_runs runs = {jf->n,        b->runs,      b->copies, b->dedup,
                                   b->o.recheck, b->rechecked, b->flaky};
        if (report_runs(o->report, &runs, &err) != 0) {
            cli_error("--report: %s", err.msg);
            rc = -1;
        }
    }
    for (size_t i = 0; i < n; i++)
        free((char *)rows[i].key);
    free(rows);
    if (tm) {
        free(tm->t);
        free((void *)tm->env);
        free(tm);
    }
    return rc;
}

/* Summary, pass@k, --out, --artifacts. Returns the exit code: 0 when
 * every job ended ok and passed, 1 when one did not, EXIT_INTERNAL on a
 * write error. */
static int finish_submit(const struct submit_opts *o, const struct batch *b)
{
    int rc = batch_summary(b, stdout) ? 1 : 0;

    if (passk_summary(o, b) != 0)
        rc = EXIT_INTERNAL;
    if (o->out) {
        FILE *f = fopen(o->out, "we");
        if (!f)
            cli_error("--out: cannot write \"%s\"", o->out);
        if (!f || batch_results_write(b, f) != 0 || fclose(f) != 0)
            rc = EXIT_INTERNAL;
    }
    if (o->artifacts) {
        int saved = 0;
        for (size_t i = 0; i < b->n; i++)
            if (b->results[i] &&
                cli_save_result_artifacts(o->artifacts, b->results[i], &saved) != 0)
                rc = EXIT_INTERNAL;
        fprintf(stderr, "llm-sandbox: %d artifact(s) saved under %s/<id>/\n", saved, o->artifacts);
    }
    return rc;
}

/* The batch's end as the exit code: after a run or wait cut short (a stop
 * or --timeout) what happens to the unfinished jobs (fate), then the
 * summary and --out as always. */
static int finish(const struct submit_opts *o, const struct batch *b, int end, const char *fate)
{
    size_t left = 0;
    int rc;

    if (end < 0)
        return EXIT_INTERNAL;
    if (end == BATCH_DONE)
        return finish_submit(o, b);
    for (size_t i = 0; i < b->n; i++)
        left += b->results[i] == NULL;
    fprintf(stderr, "\nsubmit: %s with %zu of %zu jobs unfinished; %s\n",
            end == BATCH_STOPPED ? "interrupted" : "--timeout reached", left, b->n, fate);
    rc = finish_submit(o, b);
    return rc == EXIT_INTERNAL ? rc : end == BATCH_STOPPED ? EXIT_INTERRUPTED : EXIT_WAIT_TIMEOUT;
}

static int submit_local(const struct submit_opts *o, struct batch *b)
{
    struct llmsb_err err = {0};

    if (batch_local_plan(b, &err) != 0)
        return EXIT_INTERNAL;
    cli_signals(); /* Ctrl-C and SIGTERM stop the run; the summary follows */
    return finish(o, b, batch_local_run(b, &err), "they were stopped and their containers removed");
}

#define SUBMIT_FAILOVER_WAIT_MS 30000 /* sentinels or a cluster naming a new primary */

static int submit_redis(struct cli_globals *g, const struct submit_opts *o, struct batch *b)
{
    struct queue q;
    struct llmsb_err err = {0};
    int rc;

    /* behind sentinels or in a cluster, a failover under way is a pause */
    if (queue_url_failover(g->cfg.redis_url)
            ? queue_connect_retry(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, 10000, 1, NULL,
                                  SUBMIT_FAILOVER_WAIT_MS, &err) != 0
            : (queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, 10000, &err) != 0 ||
               queue_group_ensure(&q, &err) != 0)) {
        char url[sizeof(g->cfg.redis_url)];
        queue_url_redact(g->cfg.redis_url, url, sizeof(url));
        cli_error("%s (is redis-server running at %s?)", err.msg, url);
        return EXIT_INTERNAL;
    }
    if ((rc = batch_queue_plan(b, &q, &err)) != 0) {
        rc = rc == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
        goto out;
    }
    cli_signals(); /* from here Ctrl-C and SIGTERM are answered, not fatal */
    if ((rc = batch_queue_send(b, &q, &err)) != BATCH_DONE || !o->wait) {
        for (size_t i = 0; rc >= 0 && i < b->n; i++) /* what was sent will run */
            if (rc == BATCH_DONE || batch_job_sent(b, i))
                printf("%s\n", b->jobs[i].id);
        rc = rc == BATCH_DONE ? 0 : rc == BATCH_STOPPED ? EXIT_INTERRUPTED : EXIT_INTERNAL;
        goto out;
    }
    rc = finish(o, b, batch_queue_wait(b, &q, &err),
                "they stay queued and keep running (llm-sandbox result ID, or cancel them)");
out:
    queue_close(&q);
    return rc;
}

int cmd_submit(struct cli_globals *g, int argc, char **argv)
{
    struct submit_opts o = {0};
    struct progress shown = {isatty(STDERR_FILENO), 0, 0, 0};
    struct batch_opts bo;
    struct jobfile jf;
    struct llmsb_err err = {0};
    struct batch b;
    int rc;

    if (parse_submit(g, argc, argv, &o) != 0 || cli_config_finish(g) != 0)
        return EXIT_USAGE;
    o.cfg = &g->cfg;
    if (jobfile_load(&jf, o.file, &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_USAGE;
    }
    if (o.due_flag && set_due(&jf, o.not_before_ms) != 0) {
        jobfile_release(&jf);
        return EXIT_INTERNAL;
    }
    bo = (struct batch_opts){.dedup = !o.no_dedup,
                             .recheck = o.recheck,
                             .allow_invalid = o.allow_invalid,
                             .queue = !o.local,
                             .existing = o.existing,
                             .slots = o.slots ? (int)o.slots : (int)g->cfg.slots,
                             .timeout_s = o.timeout_s,
                             .names = flag_names,
                             .say = say,
                             .progress = show_progress,
                             .ud = &shown};
    if (batch_init(&b, &g->cfg, &jf, &bo, &err) != 0)
        rc = EXIT_INTERNAL;
    else if (batch_check(&b, &err) != 0)
        rc = err.code == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
    else
        rc = o.local ? submit_local(&o, &b) : submit_redis(g, &o, &b);
    batch_release(&b);
    jobfile_release(&jf);
    return rc;
}
