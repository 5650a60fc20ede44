/* local.c - `submit --local`: a job file run in this process with no Redis,
 * through the same execution path and retry policy as the worker.  Ctrl-C
 * (the caller's handler sets llmsb_interrupted) or the deadline stops it:
 * no job starts after, running ones end and their containers go, and
 * their results stay unset (not finished) while finished ones are kept. */
#include "local.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sandbox/pool.h"
#include "config/jobfile.h"
#include "exec/exec.h"
#include "exec/session.h"

#define LOCAL_POLL_MS 50

struct local_run {
    const struct config *cfg;
    struct pool pool;
    struct backend be;
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
};

static void local_one(struct local_run *lr, const struct backend *be, size_t i)
{
    struct fields f;
    char defid[32];
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;

    session_expire(&lr->pool, lr->cfg);
    snprintf(defid, sizeof(defid), "job-%zu", i + 1);
    fields_init(&f, JOB_MAX_FIELDS);
    job_init(&j, lr->cfg);
    if (jobfile_fields(lr->jobs[i], &f) != 0 ||
        job_from_fields(&j, lr->cfg, &f, defid, &err) != 0) {
        job_result_init(&r, &j);
        job_result_set_status(&r, STATUS_INVALID, "%s",
                              err.msg[0] ? err.msg : "job: too many fields or out of memory");
    } else {
        job_result_init(&r, &j);
        if (exec_job_retrying(&lr->pool, be, lr->cfg, &j, &lr->cancel, &r) == SCHED_OUT_ABORTED)
            goto out; /* stopped: not finished, no result */
    }
    if (!r.id[0])
        snprintf(r.id, sizeof(r.id), "%s", defid);
    snprintf(r.worker, sizeof(r.worker), "%s", exec_worker_name());
    lr->results[i] = job_result_json(&r);
    pthread_mutex_lock(&lr->mu);
    lr->finished++;
    if (lr->progress)
        lr->progress(lr->ud, lr->finished, lr->n, lr->results[i]);
    pthread_mutex_unlock(&lr->mu);
out:
    job_result_release(&r);
    job_release(&j);
    fields_release(&f);
}

static void *local_main(void *arg)
{
    struct local_run *lr = arg;
    struct backend be;
    struct llmsb_err err = {0};

    if (backend_clone(&be, &lr->be, &err) != 0) {
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
        if (i >= lr->n || exec_stop_asked(&lr->cancel))
            break;
        local_one(lr, &be, i);
        for (size_t k = i + 1; lr->group[i] && k < lr->n && !exec_stop_asked(&lr->cancel); k++)
            if (lr->group[k] == i + 1)
                local_one(lr, &be, k);
    }
    backend_close(&be);
    pthread_mutex_lock(&lr->mu);
    lr->alive--;
    pthread_mutex_unlock(&lr->mu);
    return NULL;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
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

int worker_run_local(const struct config *cfg, const struct worker_local *o, cJSON *const *jobs,
                     size_t n, cJSON **results, struct llmsb_err *err)
{
    static struct local_run lr;
    struct pool_config pc;
    pthread_t *th = NULL;
    char version[64];
    int started = 0, rc = WORKER_LOCAL_DONE, unfinished, no_runner;

    memset(&lr, 0, sizeof(lr));
    if (!(lr.group = calloc(n ? n : 1, sizeof(*lr.group))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "submit --local: out of memory");
    for (size_t i = 0; i < n; i++) {
        const cJSON *si = cJSON_GetObjectItemCaseSensitive(jobs[i], "session");
        for (size_t k = 0; cJSON_IsString(si) && k <= i && !lr.group[i]; k++) {
            const cJSON *sk = cJSON_GetObjectItemCaseSensitive(jobs[k], "session");
            if (cJSON_IsString(sk) && strcmp(sk->valuestring, si->valuestring) == 0)
                lr.group[i] = k + 1;
        }
    }
    lr.cfg = cfg;
    lr.jobs = jobs;
    lr.n = n;
    lr.results = results;
    lr.progress = o->progress;
    lr.ud = o->ud;
    atomic_init(&lr.cancel, SCHED_GO);
    pthread_mutex_init(&lr.mu, NULL);
    exec_identity(NULL, "local", NULL);
    if ((rc = backend_open(&lr.be, cfg->backend, cfg->backend_host, &cfg->kube, err)) != 0 ||
        (rc = lr.be.ops->ping(&lr.be, version, sizeof(version), err)) != 0) {
        backend_close(&lr.be);
        free(lr.group);
        return rc;
    }
    exec_pool_config(cfg, o->slots, &pc);
    pc.min_idle = 0; /* nothing to keep warm for after the file */
    pool_init(&lr.pool, &lr.be, &pc);
    if (!(th = calloc((size_t)o->slots, sizeof(*th)))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "submit --local: out of memory");
        goto out;
    }
    for (; started < o->slots; started++) {
        pthread_mutex_lock(&lr.mu);
        lr.alive++;
        pthread_mutex_unlock(&lr.mu);
        if (pthread_create(&th[started], NULL, local_main, &lr) != 0) {
            pthread_mutex_lock(&lr.mu);
            lr.alive--;
            pthread_mutex_unlock(&lr.mu);
            break;
        }
    }
    if (started == 0)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "submit --local: cannot start a thread");
    while (started && !llmsb_interrupted && !all_done(&lr) &&
           !(o->deadline_ms && clock_mono_ms() >= o->deadline_ms))
        sleep_ms(LOCAL_POLL_MS);
    pthread_mutex_lock(&lr.mu);
    unfinished = lr.finished < lr.n;
    no_runner = lr.alive == 0 && !llmsb_interrupted &&
                !(o->deadline_ms && clock_mono_ms() >= o->deadline_ms);
    pthread_mutex_unlock(&lr.mu);
    if (started && unfinished && no_runner) {
        /* no thread could reach the engine: an error, not a stopped run */
        rc = llmsb_err_set(
            err, lr.failed.code ? lr.failed.code : LLMSB_ERR_SYS, "submit --local: %s",
            lr.failed.code ? lr.failed.msg : "every runner thread ended with jobs left");
    } else if (started && unfinished) {
        atomic_store(&lr.cancel, SCHED_CANCEL_ABORT); /* running jobs stop, their containers go */
        rc = llmsb_interrupted ? WORKER_LOCAL_STOPPED : WORKER_LOCAL_TIMED_OUT;
    }
out:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    session_end_all(&lr.pool, "the run that held it ended");
    pool_release_all(&lr.pool);
    free(lr.group);
    backend_close(&lr.be);
    return rc;
}
