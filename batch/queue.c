/* queue.c - a batch through Redis to the workers (submit without --local,
 * MCP with --queue): first what the live workers understand (a batch
 * never sends what a worker older than it would call invalid), the ids
 * that already have a result, then the runs enqueued with their copies
 * riding on them, waited for through a dropped connection, and with
 * recheck each timeout sent again for a worker to run alone.  And a
 * result read back from Redis as JSON, for every front end. */
#include "batch/batch_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/features.h"
#include "common/status.h"
#include "job/job.h"
#include "job/result.h"
#include "queue/queue.h"

cJSON *batch_result_get(struct queue *q, const char *id, struct fields *raw)
{
    struct fields f, *hash = raw ? raw : &f;
    struct llmsb_err err = {0};
    cJSON *out = NULL;

    if (queue_result_get(q, id, hash, &err) == 1)
        out = result_fields_json(hash);
    if (!raw)
        fields_release(&f);
    return out;
}

/* A Redis call's failure, said: the queue's code, but a refusal by the
 * server (LLMSB_ERR_INVALID: a command Redis would not run, NOPERM) is
 * the infrastructure's (LLMSB_ERR_BACKEND), never a bad batch. */
static int redis_failed(const struct batch *b, struct llmsb_err *err)
{
    if (err->code == LLMSB_ERR_INVALID || err->code == 0)
        err->code = LLMSB_ERR_BACKEND;
    batch__say(b, BATCH_SAY_ERROR, "%s", err->msg);
    return err->code;
}

/* ---- workers older than a feature (docs/operations.md, rolling upgrades) ------------ */

/* 1 when a live worker lacks feature (said, and in err: which workers, and
 * what the batch does instead), 0 when none does (or none is alive), or a
 * negative code when the heartbeats could not be read (said). */
static int workers_lack(const struct batch *b, struct queue *q, enum llmsb_feature feature,
                        const char *instead, struct llmsb_err *err)
{
    const struct feature_info *fi = feature_info(feature);
    struct queue_workers_check c;

    if (queue_workers_check(q, fi->name, &c, err) != 0) {
        llmsb_err_wrap(err, "submit: the workers' heartbeats");
        return redis_failed(b, err);
    }
    if (!c.lacking)
        return 0;
    /* said whole (the names alone may fill an error's message) */
    batch__say(b, BATCH_SAY_NOTE, "%d of %d live worker(s) are older than %s: %s; %s", c.lacking,
               c.alive, fi->what, c.lacking_names, instead);
    llmsb_err_set(err, LLMSB_ERR_INVALID, "%d of %d live worker(s) are older than %s: %s; %s",
                  c.lacking, c.alive, fi->what, c.lacking_names, instead);
    return 1;
}

/* Before anything is sent (a rerun deletes results): recheck is refused
 * when a live worker would call a recheck invalid, and live jobs go
 * without live when one would call them so.  Returns 0,
 * LLMSB_ERR_INVALID (refused) or another negative code, said. */
static int check_workers(struct batch *b, struct queue *q, struct llmsb_err *err)
{
    char instead[200];
    size_t live = 0;
    int lack;

    snprintf(instead, sizeof(instead), "upgrade them, or submit without %s (nothing was enqueued)",
             batch__name(b, BATCH_NAME_RECHECK));
    if (b->o.recheck && (lack = workers_lack(b, q, FEATURE_RECHECK, instead, err)) != 0)
        return lack < 0 ? lack : LLMSB_ERR_INVALID;
    for (size_t i = 0; i < b->n; i++)
        live += cJSON_GetObjectItemCaseSensitive(b->jf->jobs[i], "live") != NULL;
    snprintf(instead, sizeof(instead),
             "the %zu job(s) with live are sent without it (no live output: they run as "
             "before, and result --follow prints their output when they end)",
             live);
    if (live && (lack = workers_lack(b, q, FEATURE_LIVE, instead, err)) != 0) {
        if (lack < 0)
            return lack;
        b->live_off = 1;
    }
    return 0;
}

/* ---- ids that already have a result ------------------------------------------------- */

/* Refused while running; else by o.existing: refused, run again (the old
 * result deleted first) or kept (reused).  Returns 0, LLMSB_ERR_INVALID
 * (refused: said) or Redis's error (said). */
static int check_existing(struct batch *b, struct queue *q, struct llmsb_err *err)
{
    const struct jobfile *jf = b->jf;
    enum batch_existing mode = b->o.existing;
    size_t found = 0, refused = 0;

    for (size_t i = 0; i < b->n; i++) {
        char shown[160], status[32];
        int rc;

        if (!b->jobs[i].explicit_)
            continue;
        if ((rc = queue_result_status(q, b->jobs[i].id, status, sizeof(status), err)) < 0)
            return redis_failed(b, err);
        if (rc == 0)
            continue;
        llmsb_escape(shown, sizeof(shown), b->jobs[i].id, strlen(b->jobs[i].id));
        if (mode == BATCH_EXISTING_REUSE) {
            b->jobs[i].reused = 1;
        } else if (strcmp(status, status_name(STATUS_RUNNING)) == 0) {
            batch__problem(b, &refused,
                           "%s:%zu: id \"%s\" is running now; wait for it or cancel it first",
                           jf->name, jf->lines[i], shown);
            continue;
        } else if (mode == BATCH_EXISTING_RERUN) {
            if (queue_result_delete(q, b->jobs[i].id, err) != 0)
                return redis_failed(b, err);
        } else {
            batch__problem(b, &refused, "%s:%zu: id \"%s\" already has a result (%s)", jf->name,
                           jf->lines[i], shown, status);
        }
        found++;
    }
    if (refused) {
        if (refused > BATCH_SHOW_MAX)
            batch__say(b, BATCH_SAY_LINE, "... and %zu more", refused - BATCH_SHOW_MAX);
        if (mode == BATCH_EXISTING_REFUSE)
            llmsb_err_set(err, LLMSB_ERR_INVALID,
                          "nothing was enqueued; %s runs such jobs again (their old results are "
                          "deleted first), %s keeps their results",
                          batch__name(b, BATCH_NAME_RERUN), batch__name(b, BATCH_NAME_REUSE));
        else
            llmsb_err_set(err, LLMSB_ERR_INVALID, "nothing was enqueued");
        batch__say(b, BATCH_SAY_NOTE, "%s", err->msg);
        return err->code;
    }
    if (found && mode == BATCH_EXISTING_REUSE)
        batch__say(b, BATCH_SAY_NOTE,
                   "%zu id(s) already had a result: kept (%s), not enqueued again", found,
                   batch__name(b, BATCH_NAME_REUSE));
    else if (found)
        batch__say(b, BATCH_SAY_NOTE,
                   "%zu id(s) already had a result: deleted and enqueued again (%s)", found,
                   batch__name(b, BATCH_NAME_RERUN));
    return 0;
}

int batch_queue_plan(struct batch *b, struct queue *q, struct llmsb_err *err)
{
    int rc;

    if (queue_results_last_id(q, b->last, sizeof(b->last), err) != 0)
        return redis_failed(b, err);
    if ((rc = check_workers(b, q, err)) != 0 || (rc = check_existing(b, q, err)) != 0)
        return rc;
    if (b->dedup && (rc = batch__plan_dedup(b, 1, err)) != 0)
        return rc;
    if (b->copies && (rc = workers_lack(b, q, FEATURE_DEDUP,
                                        "dedup is off: every job runs on its own", err)) != 0) {
        if (rc < 0)
            return rc;
        batch__undedup(b, "workers older than dedup");
    }
    return 0;
}

/* ---- sending -------------------------------------------------------------------- */

/* The copies field of run r: [{"id": ID, "meta": META}, ...] as text
 * (owned), or NULL when it has none. */
static char *copies_field(const struct batch *b, size_t r)
{
    cJSON *a = cJSON_CreateArray();
    char *text = NULL;

    for (size_t c = b->jobs[r].next; a && c != BATCH_NO_COPY; c = b->jobs[c].next) {
        const char *meta = b->jobs[c].meta;
        cJSON *o = cJSON_CreateObject(), *m = meta ? cJSON_Parse(meta) : NULL;
        cJSON_AddStringToObject(o, "id", b->jobs[c].id);
        if (m)
            cJSON_AddItemToObject(o, "meta", m);
        cJSON_AddItemToArray(a, o);
    }
    if (cJSON_GetArraySize(a) > 0)
        text = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return text;
}

/* Enqueues job i with its copies (and recheck: the status it rechecks, or
 * NULL); a job without an id gets its entry id (a recheck: the first
 * one's, as its id).  Returns 0 or a negative code with err. */
static int enqueue_one(struct batch *b, struct queue *q, size_t i, const char *recheck,
                       struct llmsb_err *err)
{
    char entry[QUEUE_ENTRY_ID_MAX], *copies = copies_field(b, i);
    const cJSON *file_job = b->jf->jobs[i];
    cJSON *job = NULL;
    struct fields f;
    int rc;

    fields_init(&f, QUEUE_MAX_FIELDS);
    if (b->live_off && cJSON_GetObjectItemCaseSensitive(file_job, "live") &&
        (job = cJSON_Duplicate(file_job, 1))) /* an older worker would call it invalid */
        cJSON_DeleteItemFromObjectCaseSensitive(job, "live");
    rc = jobfile_fields(job ? job : file_job, &f);
    cJSON_Delete(job);
    if (rc == 0 && copies)
        rc = fields_adds(&f, "copies", copies);
    if (rc == 0 && recheck)
        rc = fields_adds(&f, "recheck", recheck);
    if (rc == 0 && recheck && !b->jobs[i].explicit_) /* its result replaces the first */
        rc = fields_adds(&f, "id", b->jobs[i].id);
    if (rc != 0)
        llmsb_err_set(err, rc, "more than %d fields", QUEUE_MAX_FIELDS);
    else
        rc = queue_enqueue(q, &f, entry, sizeof(entry), err);
    fields_release(&f);
    free(copies);
    if (rc == 0 && !b->jobs[i].explicit_ && !recheck) {
        char *id = strdup(entry);
        if (!id)
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory after the enqueue");
        free(b->jobs[i].id);
        b->jobs[i].id = id;
    }
    return rc;
}

int batch_job_sent(const struct batch *b, size_t i)
{
    return !b->jobs[i].reused && b->jobs[b->jobs[i].rep].sent;
}

static void count_worker(void *ud, const char *name, const struct fields *f)
{
    (void)name, (void)f;
    (*(int *)ud)++;
}

static void warn_if_no_worker(const struct batch *b, struct queue *q)
{
    struct queue_stats st;
    struct llmsb_err err = {0};
    int alive = 0;

    if (queue_stats(q, &st, count_worker, &alive, &err) == 0 && alive == 0)
        batch__say(b, BATCH_SAY_WARNING,
                   "no worker is alive on %s (no heartbeat): the jobs wait in the queue until one "
                   "starts (llm-sandbox worker)",
                   q->prefix);
}

/* enqueue_one through a failover or a restart of Redis: an XADD cut off
 * with a retryable error is sent again on a new connection (up to
 * BATCH_QUEUE_RECONNECT_MS); the connection keeps nothing to send again
 * itself.  When the XADD went out and no reply came (queue_last_unanswered)
 * it may have been applied: a job with an id then has two entries of one
 * id, which run once (the first final result wins); a job without one
 * could run twice, under two ids: said. */
static int enqueue_retrying(struct batch *b, struct queue *q, size_t i, struct llmsb_err *err)
{
    int64_t start = clock_mono_ms();

    for (;;) {
        int64_t left;
        if (enqueue_one(b, q, i, NULL, err) == 0)
            return 0;
        left = BATCH_QUEUE_RECONNECT_MS - (clock_mono_ms() - start);
        if (!queue_err_retryable(err) || left <= 0 || batch__stop_asked(b))
            return err->code;
        if (queue_last_unanswered(q) && !b->jobs[i].explicit_)
            batch__say(b, BATCH_SAY_WARNING,
                       "%s:%zu: %s after the job was sent: it is sent again, and if the first one "
                       "was applied it may run twice under two ids (give jobs an id to make this "
                       "exact)",
                       b->jf->name, b->jf->lines[i], err->msg);
        batch__say(b, BATCH_SAY_NOTE, "%s; reconnecting", err->msg);
        if (queue_reconnect_wait(q, left, &llmsb_interrupted, err) != 0)
            return err->code;
    }
}

int batch_queue_send(struct batch *b, struct queue *q, struct llmsb_err *err)
{
    const struct jobfile *jf = b->jf;

    for (size_t i = 0; i < b->n; i++) {
        if (batch__stop_asked(b)) {
            batch__say(b, BATCH_SAY_ERROR,
                       "interrupted: %zu of %zu jobs were enqueued and will run; their ids follow",
                       b->sent, b->n);
            return BATCH_STOPPED;
        }
        if (b->jobs[i].reused || b->jobs[i].rep != i)
            continue;
        if (enqueue_retrying(b, q, i, err) != 0) {
            llmsb_err_wrap(err, "%s:%zu: enqueue", jf->name, jf->lines[i]);
            batch__say(b, BATCH_SAY_ERROR, "%s (%zu of %zu jobs were enqueued)", err->msg, b->sent,
                       b->n);
            return err->code == LLMSB_ERR_INVALID ? LLMSB_ERR_BACKEND : err->code;
        }
        b->jobs[i].sent = 1;
        b->sent++;
    }
    if (b->copies)
        batch__say(b, BATCH_SAY_LINE,
                   "submitted %zu job(s) to %s, carrying %zu copies (identical jobs: one run "
                   "each)",
                   b->sent, q->k_jobs, b->copies);
    else /* k_jobs: {prefix}:jobs in a cluster; a job with a priority or tenant went to its lane's */
        batch__say(b, BATCH_SAY_LINE, "submitted %zu job(s) to %s", b->sent, q->k_jobs);
    warn_if_no_worker(b, q);
    return BATCH_DONE;
}

/* ---- waiting -------------------------------------------------------------------- */

/* 1 when r ends job i: final, and a recheck's when i was sent again. */
static int result_ends(const struct batch *b, const cJSON *r, size_t i)
{
    return result_json_final(r) &&
           (!b->jobs[i].rechecked || cJSON_IsTrue(cJSON_GetObjectItem(r, "rechecked")));
}

/* One look at every job without a result; counts into *pr. */
static void sweep(struct batch *b, struct queue *q, struct batch_progress *pr)
{
    char why[8];

    for (size_t i = 0; i < b->n; i++) {
        cJSON *r;
        if (b->results[i])
            continue;
        r = batch_result_get(q, b->jobs[i].id, NULL);
        if (result_ends(b, r, i)) {
            b->results[i] = r;
            pr->done++;
            pr->failed += batch_job_failed(r, b->jobs[i].checked, why, sizeof(why));
        } else {
            cJSON_Delete(r);
        }
    }
}

/* Waits until every job without a result has a final one (a recheck's for
 * those rechecked), the timeout, or a stop.  Returns an enum batch_end. */
static int wait_results(struct batch *b, struct queue *q, int recheck)
{
    struct batch_progress pr = {0, 0, 0, recheck, clock_mono_ms()};
    struct llmsb_err err = {0};
    int64_t deadline = b->o.timeout_s > 0 ? clock_mono_ms() + (int64_t)(b->o.timeout_s * 1000) : 0;
    int64_t next_sweep = 0;

    for (size_t i = 0; i < b->n; i++)
        pr.total += b->results[i] == NULL;
    while (pr.done < pr.total) {
        struct queue_entry *e;
        size_t ne;
        if (batch__stop_asked(b))
            return BATCH_STOPPED;
        if (deadline && clock_mono_ms() > deadline)
            return BATCH_TIMED_OUT;
        if (queue_results_read(q, b->last, sizeof(b->last), 1000, &e, &ne, &err) != 0) {
            if (batch__stop_asked(b))
                return BATCH_STOPPED;
            batch__say(b, BATCH_SAY_NOTE, "%s; reconnecting", err.msg);
            sleep(1);
            queue_reconnect(q, &err);
            next_sweep = 0;
            continue;
        }
        queue_entries_free(e, ne);
        /* a sweep over unfinished ids: cheap, and covers ids whose result
         * was there before this batch (reuse) */
        if (ne || clock_mono_ms() >= next_sweep) {
            sweep(b, q, &pr);
            next_sweep = clock_mono_ms() + BATCH_QUEUE_SWEEP_MS;
            batch__progress(b, &pr);
        }
    }
    return BATCH_DONE;
}

/* Each run whose result is a timeout is sent again with recheck (a worker
 * runs it with its other slots idle; its result replaces the first, and
 * that of each copy whose result is a timeout too: a copy cancelled keeps
 * its own), then waited for.  When the wait ends first, the first results
 * stand.  Returns what wait_results does, or a negative code (said). */
static int recheck(struct batch *b, struct queue *q, struct llmsb_err *err)
{
    cJSON **first = calloc(b->n ? b->n : 1, sizeof(*first));
    size_t n = 0;
    int rc = 0;

    if (!first) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "recheck: out of memory");
        batch__say(b, BATCH_SAY_ERROR, "%s", err->msg);
        return rc;
    }
    for (size_t i = 0; i < b->n && rc == 0; i++) {
        if (!batch__recheckable(b, i))
            continue;
        if (enqueue_one(b, q, i, status_name(STATUS_TIMEOUT), err) != 0) {
            batch__say(b, BATCH_SAY_ERROR, "%s:%zu: recheck: %s", b->jf->name, b->jf->lines[i],
                       err->msg);
            rc = err->code == LLMSB_ERR_INVALID ? LLMSB_ERR_BACKEND : err->code;
        }
        for (size_t c = i; c != BATCH_NO_COPY; c = b->jobs[c].next)
            if (batch__is_timeout(b->results[c])) {
                b->jobs[c].rechecked = 1;
                first[c] = b->results[c];
                b->results[c] = NULL;
            }
        n++;
    }
    if (n)
        batch__say(b, BATCH_SAY_NOTE, "%zu timeout(s) sent again, each to run alone on a worker",
                   n);
    if (rc == 0)
        rc = wait_results(b, q, 1);
    for (size_t i = 0; i < b->n; i++)
        if (b->jobs[i].rechecked && !b->results[i])
            b->results[i] = first[i];
        else
            cJSON_Delete(first[i]);
    if (rc >= 0)
        batch__count_flaky(b);
    free(first);
    return rc;
}

int batch_queue_wait(struct batch *b, struct queue *q, struct llmsb_err *err)
{
    int rc = wait_results(b, q, 0);

    if (rc == BATCH_DONE && b->o.recheck)
        rc = recheck(b, q, err);
    return rc;
}
