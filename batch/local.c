/* local.c - a batch run in this process with no Redis (`submit --local`,
 * MCP without --queue): its runs slots at a time on threads over one
 * runner (runner.h: the same execution path and retry policy as every
 * front end), a session's calls in order on one thread, then with recheck
 * its timeouts again one at a time; each copy gets its run's result.  A
 * stop (the front end's signal handler sets llmsb_interrupted, or the
 * batch's cancel flag) or the deadline stops it: no job starts after,
 * running ones end and their containers go, and their results stay unset
 * (not finished) while finished ones are kept. */
#include "batch/batch_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "config/jobfile.h"
#include "exec/runner.h"
#include "job/result.h"

#define BATCH_POLL_MS 50

/* One run of jobs over a runner: the batch's runs, or its rechecks. */
struct local_run {
    const struct batch *bt; /* whose stop, progress and config */
    struct runner own;      /* the runner when the batch has none */
    struct runner *rn;
    cJSON *const *jobs;
    size_t n, next, finished;
    cJSON **results;
    size_t *group; /* a session's calls: 1 + the index of its first call; 0: none */
    pthread_mutex_t mu;
    struct batch_progress *progress; /* the phase's, under mu */
    atomic_int cancel;
    int alive;               /* runner threads not yet ended (under mu) */
    struct llmsb_err failed; /* why a runner thread could not start */
    int64_t queued_at;       /* every job's queued_at: when the file was handed over */
};

/* Job i of the run on be: its result (job-N when the file gave no id),
 * or none when a stop came first. */
static void run_one(struct local_run *lr, const struct backend *be, size_t i)
{
    const struct config *cfg = lr->bt->cfg;
    struct fields f;
    char defid[32];
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;
    char why[8];

    snprintf(defid, sizeof(defid), "job-%zu", i + 1);
    fields_init(&f, JOB_MAX_FIELDS);
    job_init(&j, cfg);
    if (jobfile_fields(lr->jobs[i], &f) != 0 || job_from_fields(&j, cfg, &f, defid, &err) != 0) {
        job_result_init(&r, &j);
        job_result_set_status(&r, STATUS_INVALID, "%s",
                              err.msg[0] ? err.msg : "job: too many fields or out of memory");
        runner_stamp(lr->rn, &r);
    } else {
        job_result_init(&r, &j);
        j.session_scope = lr->bt->o.session_scope;
        if (runner_run(lr->rn, be, &j, &lr->cancel, &r) == SCHED_OUT_ABORTED)
            goto out; /* stopped: not finished, no result */
    }
    if (!r.id[0])
        snprintf(r.id, sizeof(r.id), "%s", defid);
    r.queued_at = lr->queued_at; /* its queue wait: the wait for a free runner thread */
    lr->results[i] = job_result_json(&r);
    pthread_mutex_lock(&lr->mu);
    lr->finished++;
    lr->progress->done = lr->finished;
    /* the job's own checked is not known here: a checked result has "passed" */
    lr->progress->failed += batch_job_failed(
        lr->results[i], cJSON_GetObjectItem(lr->results[i], "passed") != NULL, why, sizeof(why));
    batch__progress(lr->bt, lr->progress);
    pthread_mutex_unlock(&lr->mu);
out:
    job_result_release(&r);
    job_release(&j);
    fields_release(&f);
}

static void *run_thread(void *arg)
{
    struct local_run *lr = arg;
    struct backend be;
    struct llmsb_err err = {0};

    if (backend_clone(&be, &lr->rn->be, &err) != 0) {
        log_error("%s", err.msg);
        pthread_mutex_lock(&lr->mu);
        lr->failed = err;
        lr->alive--;
        pthread_mutex_unlock(&lr->mu);
        return NULL;
    }
    for (;;) {
        size_t i;
        pthread_mutex_lock(&lr->mu);
        /* the calls of one session all go to the thread that takes the
         * first, which runs them in the file's order */
        while (lr->next < lr->n && lr->group[lr->next] && lr->group[lr->next] != lr->next + 1)
            lr->next++;
        i = lr->next++;
        pthread_mutex_unlock(&lr->mu);
        if (i >= lr->n || runner_stop_asked(&lr->cancel))
            break;
        run_one(lr, &be, i);
        for (size_t k = i + 1; lr->group[i] && k < lr->n && !runner_stop_asked(&lr->cancel); k++)
            if (lr->group[k] == i + 1)
                run_one(lr, &be, k);
    }
    backend_close(&be);
    pthread_mutex_lock(&lr->mu);
    lr->alive--;
    pthread_mutex_unlock(&lr->mu);
    return NULL;
}

/* Every job has a result, or no runner thread is left to give one. */
static int all_done(struct local_run *lr)
{
    int all;
    pthread_mutex_lock(&lr->mu);
    all = lr->finished >= lr->n || lr->alive == 0;
    pthread_mutex_unlock(&lr->mu);
    return all;
}

/* Which jobs are a session's calls: group[i] is 1 + the index of the
 * first call of job i's session, 0 for a job of no session. */
static void group_sessions(cJSON *const *jobs, size_t n, size_t *group)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *si = cJSON_GetObjectItemCaseSensitive(jobs[i], "session");
        for (size_t k = 0; cJSON_IsString(si) && k <= i && !group[i]; k++) {
            const cJSON *sk = cJSON_GetObjectItemCaseSensitive(jobs[k], "session");
            if (cJSON_IsString(sk) && strcmp(sk->valuestring, si->valuestring) == 0)
                group[i] = k + 1;
        }
    }
}

/* Starts up to slots runner threads; returns how many started. */
static int start_threads(struct local_run *lr, pthread_t *th, int slots)
{
    int started = 0;

    for (; started < slots; started++) {
        pthread_mutex_lock(&lr->mu);
        lr->alive++;
        pthread_mutex_unlock(&lr->mu);
        if (pthread_create(&th[started], NULL, run_thread, lr) != 0) {
            pthread_mutex_lock(&lr->mu);
            lr->alive--;
            pthread_mutex_unlock(&lr->mu);
            break;
        }
    }
    return started;
}

static int past(int64_t deadline_ms)
{
    return deadline_ms && clock_mono_ms() >= deadline_ms;
}

/* Waits for every result, a stop or the deadline; then says how it ended. */
static int await_end(struct local_run *lr, int64_t deadline_ms, struct llmsb_err *err)
{
    int unfinished, no_runner, rc = BATCH_DONE;

    while (!batch__stop_asked(lr->bt) && !all_done(lr) && !past(deadline_ms))
        clock_sleep_ms(BATCH_POLL_MS);
    pthread_mutex_lock(&lr->mu);
    unfinished = lr->finished < lr->n;
    no_runner = lr->alive == 0 && !batch__stop_asked(lr->bt) && !past(deadline_ms);
    pthread_mutex_unlock(&lr->mu);
    if (unfinished && no_runner) {
        /* no thread could reach the engine: an error, not a stopped run */
        rc = llmsb_err_set(
            err, lr->failed.code ? lr->failed.code : LLMSB_ERR_SYS, "submit --local: %s",
            lr->failed.code ? lr->failed.msg : "every runner thread ended with jobs left");
    } else if (unfinished) {
        atomic_store(&lr->cancel, SCHED_CANCEL_ABORT); /* running jobs stop, their containers go */
        rc = batch__stop_asked(lr->bt) ? BATCH_STOPPED : BATCH_TIMED_OUT;
    }
    return rc;
}

/* Runs jobs (JSON objects of job fields) slots at a time on b's runner, or
 * one of its own opened for them (nothing kept warm after) and closed
 * after.  results[i] gets a new result object for each job that finished.
 * Returns an enum batch_end, or a negative code with err (the engine
 * cannot be reached). */
static int run_jobs(const struct batch *b, int slots, int64_t deadline_ms,
                    struct batch_progress *progress, cJSON *const *jobs, size_t n, cJSON **results,
                    struct llmsb_err *err)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_LOCAL, .slots = slots, .prestart = 1};
    struct local_run *lr = calloc(1, sizeof(*lr));
    pthread_t *th = NULL;
    int started = 0, rc;

    if (!lr || !(lr->group = calloc(n ? n : 1, sizeof(*lr->group)))) {
        free(lr);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "submit --local: out of memory");
    }
    group_sessions(jobs, n, lr->group);
    lr->bt = b;
    lr->queued_at = clock_wall_ms();
    lr->jobs = jobs;
    lr->n = n;
    lr->results = results;
    lr->progress = progress;
    atomic_init(&lr->cancel, SCHED_GO);
    pthread_mutex_init(&lr->mu, NULL);
    lr->rn = b->o.runner ? b->o.runner : &lr->own;
    if (!b->o.runner && (rc = runner_open(&lr->own, b->cfg, &ro, err)) != 0)
        goto free;
    if (!(th = calloc((size_t)slots, sizeof(*th)))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "submit --local: out of memory");
        goto out;
    }
    if ((started = start_threads(lr, th, slots)) == 0)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "submit --local: cannot start a thread");
    else
        rc = await_end(lr, deadline_ms, err);
out:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    if (!b->o.runner)
        runner_close(&lr->own, "the run that held it ended");
free:
    pthread_mutex_destroy(&lr->mu);
    free(lr->group);
    free(lr);
    return rc;
}

/* ---- the batch in process ---------------------------------------------------------- */

int batch_local_plan(struct batch *b, struct llmsb_err *err)
{
    if (b->dedup && batch__plan_dedup(b, 0, err) != 0)
        return err->code;
    for (size_t i = 0; i < b->n; i++) /* default ids: job-N */
        if (!b->jobs[i].explicit_) {
            free(b->jobs[i].id);
            if (asprintf(&b->jobs[i].id, "job-%zu", i + 1) < 0) {
                b->jobs[i].id = NULL;
                return llmsb_err_set(err, LLMSB_ERR_NOMEM, "batch: out of memory");
            }
        }
    return 0;
}

/* A run (its copies follow it). */
static int pick_run(const struct batch *b, size_t i)
{
    return b->jobs[i].rep == i;
}

/* Runs the jobs i with pick(b, i) in-process, slots at a time, each under
 * its id and with recheck set when given; their results replace
 * b->results[i].  Returns an enum batch_end or a negative code (said). */
static int run_picked(struct batch *b, int (*pick)(const struct batch *, size_t), int slots,
                      int64_t deadline_ms, const char *recheck, struct llmsb_err *err)
{
    cJSON **jobs = calloc(b->n ? b->n : 1, sizeof(*jobs)), **out = NULL;
    size_t *idx = calloc(b->n ? b->n : 1, sizeof(*idx)), m = 0;
    struct batch_progress pr = {0, 0, 0, recheck != NULL, clock_mono_ms()};
    int rc = LLMSB_ERR_NOMEM;

    for (size_t i = 0; jobs && idx && i < b->n; i++) {
        if (!pick(b, i))
            continue;
        if (!(jobs[m] = cJSON_Duplicate(b->jf->jobs[i], 1)))
            goto out;
        if (!b->jobs[i].explicit_)
            cJSON_AddStringToObject(jobs[m], "id", b->jobs[i].id);
        if (recheck)
            cJSON_AddStringToObject(jobs[m], "recheck", recheck);
        idx[m++] = i;
    }
    pr.total = m;
    if (jobs && idx && (out = calloc(m ? m : 1, sizeof(*out))))
        rc = m ? run_jobs(b, slots, deadline_ms, &pr, jobs, m, out, err) : BATCH_DONE;
    for (size_t k = 0; out && k < m; k++)
        if (out[k]) { /* a recheck stopped before its end leaves the first result */
            cJSON_Delete(b->results[idx[k]]);
            b->results[idx[k]] = out[k];
        }
out:
    if (rc == LLMSB_ERR_NOMEM && !err->msg[0])
        llmsb_err_set(err, rc, "submit --local: out of memory");
    if (rc < 0)
        batch__say(b, BATCH_SAY_ERROR, "%s", err->msg);
    for (size_t k = 0; jobs && k < m; k++)
        cJSON_Delete(jobs[k]);
    free(jobs);
    free(idx);
    free(out);
    return rc;
}

/* results[c] for each copy c of a run whose result is there. */
static void fill_copies(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        size_t r = b->jobs[i].rep;
        if (r != i && b->results[r]) {
            cJSON_Delete(b->results[i]);
            b->results[i] =
                result_json_copy(b->results[r], b->jobs[i].id, b->jobs[i].meta, b->jobs[r].id);
        }
    }
}

int batch_local_run(struct batch *b, struct llmsb_err *err)
{
    int64_t deadline_ms =
        b->o.timeout_s > 0 ? clock_mono_ms() + (int64_t)(b->o.timeout_s * 1000) : 0;
    int rc = run_picked(b, pick_run, b->o.slots, deadline_ms, NULL, err);

    if (rc == BATCH_DONE && b->o.recheck) {
        for (size_t i = 0; i < b->n; i++) /* a run and its copies (filled from it) */
            b->jobs[i].rechecked = batch__recheckable(b, b->jobs[i].rep);
        /* alone: one slot, nothing else running */
        rc = run_picked(b, batch__recheckable, 1, deadline_ms, status_name(STATUS_TIMEOUT), err);
    }
    if (rc < 0)
        return rc;
    fill_copies(b);
    if (b->o.recheck)
        batch__count_flaky(b);
    return rc;
}
