/* runner.c - the in-process runner (see runner.h): open, run with the
 * scheduler's retry policy or one attempt at a time, close. */
#include "exec/runner.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backends/registry/registry.h"

void runner_pool_config(const struct config *cfg, const struct backend *be,
                        const struct runner_opts *o, const struct identity *id,
                        struct pool_config *pc)
{
    memset(pc, 0, sizeof(*pc));
    pc->min_idle = o->keep_warm ? (int)cfg->pool_min_idle : 0;
    /* a session holds its container from its first call to its end */
    pc->max_size =
        cfg->pool_max_size > 0 ? (int)cfg->pool_max_size : o->slots + 1 + (int)cfg->sessions_max;
    if (o->max_size > 0)
        pc->max_size = o->max_size;
    pc->max_uses = (int)cfg->pool_max_uses;
    /* the runtime keeps what the agent cannot clean (gVisor), or nobody
     * said what it keeps (backends/runtime.c) */
    if (be->runtime.one_job_per_container)
        pc->max_uses = 1;
    pc->max_age_ms = cfg->pool_max_age_ms;
    pc->idle_timeout_ms = cfg->pool_idle_timeout_ms;
    pc->wait_ms = cfg->pool_wait_ms;
    pc->on_exhausted = strcmp(cfg->pool_on_exhausted, "fail_fast") == 0   ? POOL_FAIL_FAST
                       : strcmp(cfg->pool_on_exhausted, "temporary") == 0 ? POOL_TEMPORARY
                                                                          : POOL_WAIT;
    pc->start_timeout_ms = cfg->start_timeout_ms;
    pc->prestart = o->prestart;
    pc->slots = o->slots;
    identity_pool_labels(id, pc);
}

/* Pings engine and resolves the profile of backend.runtime (engine->runtime,
 * which the pool, the limits and the audit read); on failure closes it. */
static int engine_ready(struct backend *engine, const struct config *cfg, char *version, size_t vsz,
                        struct llmsb_err *err)
{
    int rc = engine->ops->ping(engine, version, vsz, err);

    if (rc == 0)
        rc = backend_runtime_resolve(engine, cfg->runtime, err);
    if (rc != 0)
        backend_close(engine);
    return rc;
}

int runner_engine_open(struct backend *engine, const struct config *cfg, char *version, size_t vsz,
                       struct llmsb_err *err)
{
    int rc = backend_open(engine, cfg->backend, cfg->backend_host, &cfg->kube, err);

    return rc != 0 ? rc : engine_ready(engine, cfg, version, vsz, err);
}

int runner_open_engine(struct runner *rn, const struct config *cfg, const struct runner_opts *o,
                       struct backend *engine, struct llmsb_err *err)
{
    struct pool_config pc;
    int rc;

    memset(rn, 0, sizeof(*rn));
    rn->cfg = cfg;
    rn->be = *engine;
    rn->engine_wait_ms = o->engine_wait_ms > 0 ? o->engine_wait_ms : RUNNER_ENGINE_WAIT_MS;
    identity_init(&rn->id, o->worker_name, o->kind, o->queue);
    if ((rc = engine_ready(&rn->be, cfg, rn->engine_version, sizeof(rn->engine_version), err)) != 0)
        return rc;
    runner_pool_config(cfg, &rn->be, o, &rn->id, &pc);
    if ((rc = pool_init(&rn->pool, &rn->be, &pc)) != 0) {
        backend_close(&rn->be);
        return llmsb_err_set(err, rc, "runner: the pool's condition variables (pthread_cond_init)");
    }
    session_table_init(&rn->sessions, &rn->pool);
    exec_images_init(&rn->images);
    return 0;
}

int runner_open(struct runner *rn, const struct config *cfg, const struct runner_opts *o,
                struct llmsb_err *err)
{
    struct backend engine;
    int rc;

    if ((rc = backend_open(&engine, cfg->backend, cfg->backend_host, &cfg->kube, err)) != 0)
        return rc;
    return runner_open_engine(rn, cfg, o, &engine, err);
}

int runner_stop_asked(const atomic_int *cancel)
{
    return llmsb_interrupted || (cancel && atomic_load(cancel) != SCHED_GO);
}

void runner_stamp(const struct runner *rn, struct job_result *r)
{
    snprintf(r->worker, sizeof(r->worker), "%s", rn->id.worker);
}

void runner_close(struct runner *rn, const char *why)
{
    session_end_all(&rn->sessions, why);
    session_table_release(&rn->sessions);
    exec_images_release(&rn->images);
    pool_release_all(&rn->pool);
    backend_close(&rn->be);
}

int runner_engine_answers(const struct backend *be)
{
    struct backend probe;
    struct llmsb_err err = {0};
    char version[64];
    int ok;

    if (backend_clone(&probe, be, &err) != 0)
        return 0;
    ok = probe.ops->ping(&probe, version, sizeof(version), &err) == 0;
    backend_close(&probe);
    return ok;
}

/* A failed attempt while the engine does not answer is the engine's
 * outage (SCHED_OUT_UNAVAILABLE: not counted), not the job's. */
static enum sched_outcome outage_or(enum sched_outcome o, const struct backend *be)
{
    return o == SCHED_OUT_FAILED && !runner_engine_answers(be) ? SCHED_OUT_UNAVAILABLE : o;
}

enum sched_outcome runner_attempt(struct runner *rn, const struct backend *be, const struct job *j,
                                  atomic_int *cancel, struct job_result *r, struct llmsb_err *err)
{
    enum sched_outcome o;

    be = be ? be : &rn->be;
    o = exec_job(rn, be, j, cancel, r, err);
    return outage_or(o, be);
}

/* ---- the retry policy ------------------------------------------------------------ */

/* Sleeps ms, or less when a stop is asked (looked at every 100 ms). */
static void nap_ms(int64_t ms, const atomic_int *cancel)
{
    int64_t until = clock_mono_ms() + ms;

    for (int64_t left = ms; left > 0 && !runner_stop_asked(cancel);
         left = until - clock_mono_ms()) {
        struct timespec ts = {0, (long)(left < 100 ? left : 100) * 1000000};
        nanosleep(&ts, NULL);
    }
}

/* Waits up to wait_ms for the engine; 1 when it answers. */
static int await_engine(const struct backend *be, int64_t wait_ms, atomic_int *cancel)
{
    int64_t until = clock_mono_ms() + wait_ms;

    log_warn("%s engine does not answer; waiting up to %lld s for it", be->ops->name,
             (long long)(wait_ms / 1000));
    while (clock_mono_ms() < until) {
        if (runner_stop_asked(cancel))
            return 0;
        nap_ms(1000, cancel);
        if (runner_engine_answers(be)) {
            log_info("%s engine answers again", be->ops->name);
            return 1;
        }
    }
    return 0;
}

/* The stop broke the attempt (a start cut short, say): the job's fault no
 * more than the engine's. */
static enum sched_outcome stopped(const atomic_int *cancel, struct job_result *r)
{
    if (cancel && atomic_load(cancel) == SCHED_CANCEL_USER) {
        job_result_set_status(r, STATUS_CANCELLED, "cancelled while its sandbox started");
        return SCHED_OUT_CANCELLED;
    }
    return SCHED_OUT_ABORTED;
}

static enum sched_outcome run_retrying(struct runner *rn, const struct backend *be,
                                       const struct job *j, atomic_int *cancel,
                                       struct job_result *r)
{
    const struct sched_backoff backoff = {SCHED_BACKOFF_BASE_MS, rn->cfg->lease_ms / 2};
    const int64_t wait_ms = rn->engine_wait_ms;
    struct llmsb_err err = {0};

    for (long long attempt = 1;; attempt++) {
        enum sched_outcome o;
        struct sched_decision d;

        r->attempts = (int)attempt;
        r->error[0] = r->r.error[0] = '\0'; /* a failed attempt's word is not the result's */
        llmsb_err_clear(&err);
        o = exec_job(rn, be, j, cancel, r, &err);
        if (o == SCHED_OUT_FAILED && runner_stop_asked(cancel))
            return stopped(cancel, r);
        o = outage_or(o, be);
        d = scheduler_decide(o, attempt, j->max_attempts, &backoff);
        switch (d.action) {
        case SCHED_FINISH:
        case SCHED_HAND_OVER: /* only with a session store: a worker's */
            return o;
        case SCHED_GIVE_BACK:
            return SCHED_OUT_ABORTED;
        case SCHED_PAUSE:
            if (!await_engine(be, wait_ms, cancel)) {
                if (runner_stop_asked(cancel))
                    return SCHED_OUT_ABORTED;
                job_result_set_status(r, STATUS_INTERNAL_ERROR,
                                      "the engine did not answer for %lld s; last: %s",
                                      (long long)(wait_ms / 1000), err.msg);
                return SCHED_OUT_FAILED;
            }
            attempt--; /* the engine's outage, not this job's attempt */
            break;
        case SCHED_DEAD_LETTER:
            job_result_set_status(r, STATUS_INTERNAL_ERROR,
                                  "infrastructure failed %lld "
                                  "times; last: %s",
                                  attempt, err.msg);
            return SCHED_OUT_FAILED;
        case SCHED_RETRY:
            log_warn("job=%s attempt %lld failed: %s; retrying in %lld ms", j->id ? j->id : "-",
                     attempt, err.msg, (long long)d.delay_ms);
            nap_ms(d.delay_ms, cancel);
            if (runner_stop_asked(cancel))
                return SCHED_OUT_ABORTED;
            break;
        }
    }
}

enum sched_outcome runner_run(struct runner *rn, const struct backend *be, const struct job *j,
                              atomic_int *cancel, struct job_result *r)
{
    enum sched_outcome o;

    session_expire(&rn->sessions, rn->cfg);
    o = run_retrying(rn, be ? be : &rn->be, j, cancel, r);
    runner_stamp(rn, r);
    return o;
}
