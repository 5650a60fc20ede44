/* batch.c - `submit --local`: a job file run in this process with no
 * Redis, through one runner.  Ctrl-C (the front end's handler sets
 * llmsb_interrupted) or the deadline stops it: no job starts after,
 * running ones end and their containers go, and their results stay unset
 * (not finished) while finished ones are kept. */
#include "exec/batch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "config/jobfile.h"
#include "exec/runner.h"

#define BATCH_POLL_MS 50

struct batch {
    const struct config *cfg;
    struct runner rn;
    cJSON *const *jobs;
    size_t n, next, finished;
    cJSON **results;
    size_t *group; /* a session's calls: 1 + the index of its first call; 0: none */
    pthread_mutex_t mu;
    void (*progress)(void *, size_t, size_t, const cJSON *);
    void *ud;
    atomic_int cancel;
    int alive;               /* runner threads not yet ended (under mu) */
    struct llmsb_err failed; /* why a runner thread could not start */
    int64_t queued_at;       /* every job's queued_at: when the file was handed over */
};

static void batch_one(struct batch *b, const struct backend *be, size_t i)
{
    struct fields f;
    char defid[32];
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;

    snprintf(defid, sizeof(defid), "job-%zu", i + 1);
    fields_init(&f, JOB_MAX_FIELDS);
    job_init(&j, b->cfg);
    if (jobfile_fields(b->jobs[i], &f) != 0 || job_from_fields(&j, b->cfg, &f, defid, &err) != 0) {
        job_result_init(&r, &j);
        job_result_set_status(&r, STATUS_INVALID, "%s",
                              err.msg[0] ? err.msg : "job: too many fields or out of memory");
        runner_stamp(&b->rn, &r);
    } else {
        job_result_init(&r, &j);
        if (runner_run(&b->rn, be, &j, &b->cancel, &r) == SCHED_OUT_ABORTED)
            goto out; /* stopped: not finished, no result */
    }
    if (!r.id[0])
        snprintf(r.id, sizeof(r.id), "%s", defid);
    r.queued_at = b->queued_at; /* its queue wait: the wait for a free runner thread */
    b->results[i] = job_result_json(&r);
    pthread_mutex_lock(&b->mu);
    b->finished++;
    if (b->progress)
        b->progress(b->ud, b->finished, b->n, b->results[i]);
    pthread_mutex_unlock(&b->mu);
out:
    job_result_release(&r);
    job_release(&j);
    fields_release(&f);
}

static void *batch_main(void *arg)
{
    struct batch *b = arg;
    struct backend be;
    struct llmsb_err err = {0};

    if (backend_clone(&be, &b->rn.be, &err) != 0) {
        log_error("%s", err.msg);
        pthread_mutex_lock(&b->mu);
        b->failed = err;
        b->alive--;
        pthread_mutex_unlock(&b->mu);
        return NULL;
    }
    for (;;) {
        size_t i;
        pthread_mutex_lock(&b->mu);
        /* the calls of one session all go to the thread that takes the
         * first, which runs them in the file's order */
        while (b->next < b->n && b->group[b->next] && b->group[b->next] != b->next + 1)
            b->next++;
        i = b->next++;
        pthread_mutex_unlock(&b->mu);
        if (i >= b->n || runner_stop_asked(&b->cancel))
            break;
        batch_one(b, &be, i);
        for (size_t k = i + 1; b->group[i] && k < b->n && !runner_stop_asked(&b->cancel); k++)
            if (b->group[k] == i + 1)
                batch_one(b, &be, k);
    }
    backend_close(&be);
    pthread_mutex_lock(&b->mu);
    b->alive--;
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* Every job has a result, or no runner thread is left to give one. */
static int all_done(struct batch *b)
{
    int all;
    pthread_mutex_lock(&b->mu);
    all = b->finished >= b->n || b->alive == 0;
    pthread_mutex_unlock(&b->mu);
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
static int start_threads(struct batch *b, pthread_t *th, int slots)
{
    int started = 0;

    for (; started < slots; started++) {
        pthread_mutex_lock(&b->mu);
        b->alive++;
        pthread_mutex_unlock(&b->mu);
        if (pthread_create(&th[started], NULL, batch_main, b) != 0) {
            pthread_mutex_lock(&b->mu);
            b->alive--;
            pthread_mutex_unlock(&b->mu);
            break;
        }
    }
    return started;
}

/* Waits for every result, a stop or the deadline; then says how it ended. */
static int await_end(struct batch *b, const struct batch_opts *o, struct llmsb_err *err)
{
    int unfinished, no_runner, rc = BATCH_DONE;

    while (!llmsb_interrupted && !all_done(b) &&
           !(o->deadline_ms && clock_mono_ms() >= o->deadline_ms))
        clock_sleep_ms(BATCH_POLL_MS);
    pthread_mutex_lock(&b->mu);
    unfinished = b->finished < b->n;
    no_runner = b->alive == 0 && !llmsb_interrupted &&
                !(o->deadline_ms && clock_mono_ms() >= o->deadline_ms);
    pthread_mutex_unlock(&b->mu);
    if (unfinished && no_runner) {
        /* no thread could reach the engine: an error, not a stopped run */
        rc = llmsb_err_set(
            err, b->failed.code ? b->failed.code : LLMSB_ERR_SYS, "submit --local: %s",
            b->failed.code ? b->failed.msg : "every runner thread ended with jobs left");
    } else if (unfinished) {
        atomic_store(&b->cancel, SCHED_CANCEL_ABORT); /* running jobs stop, their containers go */
        rc = llmsb_interrupted ? BATCH_STOPPED : BATCH_TIMED_OUT;
    }
    return rc;
}

int batch_run(const struct config *cfg, const struct batch_opts *o, cJSON *const *jobs, size_t n,
              cJSON **results, struct llmsb_err *err)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_LOCAL, .slots = o->slots, .prestart = 1};
    struct batch *b = calloc(1, sizeof(*b));
    pthread_t *th = NULL;
    int started = 0, rc;

    if (!b || !(b->group = calloc(n ? n : 1, sizeof(*b->group)))) {
        free(b);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "submit --local: out of memory");
    }
    group_sessions(jobs, n, b->group);
    b->cfg = cfg;
    b->queued_at = clock_wall_ms();
    b->jobs = jobs;
    b->n = n;
    b->results = results;
    b->progress = o->progress;
    b->ud = o->ud;
    atomic_init(&b->cancel, SCHED_GO);
    pthread_mutex_init(&b->mu, NULL);
    /* nothing to keep warm for after the file */
    if ((rc = runner_open(&b->rn, cfg, &ro, err)) != 0)
        goto free;
    if (!(th = calloc((size_t)o->slots, sizeof(*th)))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "submit --local: out of memory");
        goto out;
    }
    if ((started = start_threads(b, th, o->slots)) == 0)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "submit --local: cannot start a thread");
    else
        rc = await_end(b, o, err);
out:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    runner_close(&b->rn, "the run that held it ended");
free:
    pthread_mutex_destroy(&b->mu);
    free(b->group);
    free(b);
    return rc;
}
