/* worker.c - the Redis worker (see worker.h): the life of the process.
 * It opens the runner and the consumer group, starts the slots (entry.c)
 * and the janitor (janitor.c), drains on a stop request, gives back what it
 * held and retires its consumer.  A slot runs one entry at a time; the
 * session store (store.c), the recheck gate (gate.c) and a live job's sink
 * (live.c) are files of their own (worker_int.h). */
#include "worker.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "exec/session.h"
#include "worker_int.h"

#define REDIS_EXTRA_TIMEOUT_MS 3000 /* command timeout above the longest BLOCK */

atomic_int worker_stop;

int redis_connect(struct worker *w, struct queue *q, int fresh, const atomic_int *stop,
                  int64_t giveup_ms)
{
    struct llmsb_err err = {0};
    return queue_connect_retry(q, w->cfg->redis_url, w->cfg->redis_prefix, w->name,
                               (int)w->cfg->block_ms + REDIS_EXTRA_TIMEOUT_MS, fresh, stop,
                               giveup_ms, &err);
}

/* ---- lifecycle ---------------------------------------------------------------- */

/* A scrape's gauges, on the metrics server's thread. */
static void metrics_gauges(void *ud, struct metrics_gauges *g)
{
    struct worker *w = ud;

    g->slots = w->nslots;
    g->busy = scheduler_busy(&w->sched);
    g->paused = atomic_load(&w->sched.paused) != 0;
    g->draining = atomic_load(&worker_stop) != 0;
    g->pool_total = pool_size(&w->rn.pool, &g->pool_idle);
    g->sessions = session_count(&w->rn.sessions);
}

int worker_stop_ask(void)
{
    int was = 0;

    return !atomic_compare_exchange_strong(&worker_stop, &was, 1);
}

/* Runs fn on a connection of its own for control commands. */
static void with_control(struct worker *w, const char *consumer,
                         void (*fn)(struct worker *, struct queue *))
{
    struct queue ctl;
    struct llmsb_err err = {0};

    if (queue_open(&ctl, w->cfg->redis_url, w->cfg->redis_prefix, consumer,
                   WORKER_CONTROL_TIMEOUT_MS, &err) == 0)
        fn(w, &ctl);
    else
        log_warn("redis: %s", err.msg);
    queue_close(&ctl);
}

static void unblock_slots(struct worker *w, struct queue *ctl)
{
    struct llmsb_err err = {0};

    for (int i = 0; i < w->nslots; i++)
        if (w->slots[i].client_id > 0)
            queue_unblock(ctl, w->slots[i].client_id, &err);
}

static void drain(struct worker *w)
{
    int64_t deadline = clock_mono_ms() + w->cfg->drain_ms;

    atomic_store(&w->sched.draining, 1);
    log_info("draining: no new jobs; waiting up to %lld ms for %d running",
             (long long)w->cfg->drain_ms, scheduler_running(&w->sched));
    with_control(w, NULL, unblock_slots);
    while (scheduler_running(&w->sched) > 0 && clock_mono_ms() < deadline)
        clock_sleep_ms(WORKER_DRAIN_POLL_MS);
    scheduler_abort_all(&w->sched);
}

static void give_back_held(struct worker *w, struct queue *ctl)
{
    scheduler_give_back_held(&w->sched, ctl);
}

static void retire(struct worker *w, struct queue *ctl)
{
    struct llmsb_err err = {0};

    queue_heartbeat_delete(ctl, w->name, &err);
    queue_consumer_retire(ctl, &err);
}

/* The engine and Redis answer, before any thread starts: the runner
 * (engine, pool, this worker's identity) opened, the consumer group made. */
static int preflight(struct worker *w, const char *name, struct llmsb_err *err)
{
    char queue_label[24];
    struct runner_opts ro = {.kind = RUNNER_KIND_WORKER,
                             .worker_name = name,
                             .queue = queue_label,
                             .slots = w->nslots,
                             .keep_warm = 1,
                             .prestart = 1};
    struct queue probe;
    int rc;

    identity_queue_label(w->cfg->redis_url, w->cfg->redis_prefix, queue_label);
    if ((rc = runner_open(&w->rn, w->cfg, &ro, err)) != 0)
        return rc;
    w->name = w->rn.id.worker;
    rc = queue_open(&probe, w->cfg->redis_url, w->cfg->redis_prefix, w->name, 5000, err);
    if (rc == 0)
        rc = queue_group_ensure(&probe, err);
    queue_close(&probe);
    if (rc != 0) {
        char url[300];
        queue_url_redact(w->cfg->redis_url, url, sizeof(url));
        llmsb_err_wrap(err, "is redis-server running at %s?", url);
        runner_close(&w->rn, "the worker did not start");
    }
    return rc;
}

static int start_threads(struct worker *w, struct llmsb_err *err)
{
    int rc;

    for (int i = 0; i < w->nslots; i++) {
        struct slot *s = &w->slots[i];
        s->w = w;
        s->index = i;
        live_sink_init(s);
        if ((rc = backend_clone(&s->be, &w->rn.be, err)) != 0)
            return rc;
        if ((rc = pthread_create(&s->th, NULL, slot_main, s)) != 0)
            return llmsb_err_set(err, LLMSB_ERR_SYS, "worker: cannot start slot %d: %s", i,
                                 strerror(rc));
        s->started = 1;
    }
    if ((rc = pthread_create(&w->janitor, NULL, janitor_main, w)) != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "worker: cannot start the janitor: %s",
                             strerror(rc));
    return 0;
}

int worker_main(const struct config *cfg, int slots, const char *name)
{
    static struct worker w;
    struct sched_config sc;
    struct llmsb_err err = {0};
    int rc = 0, janitor = 0;
    char url[300];

    memset(&w, 0, sizeof(w));
    w.cfg = cfg;
    w.nslots = slots;
    w.started_wall_ms = clock_wall_ms();
    atomic_init(&w.janitor_stop, 0);
    metrics_init(&w.metrics);
    if ((rc = preflight(&w, name, &err)) != 0) {
        log_error("%s", err.msg);
        return rc;
    }
    sc = (struct sched_config){cfg->lease_ms, cfg->block_ms, w.name, cfg->priority_weights};
    if ((rc = scheduler_init(&w.sched, slots, &sc, &err)) != 0) {
        log_error("%s", err.msg);
        runner_close(&w.rn, "the worker did not start");
        return rc;
    }
    store_attach(&w);
    pthread_mutex_init(&w.gate_mu, NULL);
    if ((rc = clock_cond_init(&w.gate_cv)) != 0) {
        log_error("worker: its slots' gate (a condition variable): %s", strerror(rc));
        rc = LLMSB_ERR_SYS;
        goto out;
    }
    if (!(w.slots = calloc((size_t)slots, sizeof(*w.slots)))) {
        rc = LLMSB_ERR_NOMEM;
        goto out;
    }
    if (cfg->metrics_addr[0] &&
        (rc = metrics_start(&w.metrics, cfg->metrics_addr, cfg->redis_url, cfg->redis_prefix,
                            metrics_gauges, &w, &err)) != 0) {
        log_error("%s", err.msg);
        goto out;
    }
    queue_url_redact(cfg->redis_url, url, sizeof(url));
    log_info("worker %s: %d slots, %s %s, redis %s prefix %s", w.name, slots, w.rn.be.ops->name,
             w.rn.engine_version, url, cfg->redis_prefix);
    with_control(&w, w.name, janitor_heartbeat_first);
    if ((rc = start_threads(&w, &err)) != 0) {
        log_error("%s", err.msg);
        atomic_store(&worker_stop, 1);
    }
    janitor = rc == 0;
    while (!atomic_load(&worker_stop))
        clock_sleep_ms(WORKER_DRAIN_POLL_MS);
    drain(&w);
out:
    for (int i = 0; w.slots && i < slots; i++) {
        if (w.slots[i].started)
            pthread_join(w.slots[i].th, NULL);
        backend_close(&w.slots[i].be);
    }
    atomic_store(&w.janitor_stop, 1);
    if (janitor)
        pthread_join(w.janitor, NULL);
    metrics_release(&w.metrics); /* before what its gauges read goes */
    /* before the jobs are given back and the session store goes: the
     * sessions' ends are recorded in Redis (runner_close finds none left) */
    session_end_all(&w.rn.sessions, "the worker that held it stopped");
    with_control(&w, w.name, give_back_held);
    with_control(&w, w.name, retire);
    store_detach(&w);
    runner_close(&w.rn, "the worker that held it stopped");
    log_info("worker %s stopped after %lld job(s)", w.name, (long long)atomic_load(&w.sched.done));
    free(w.slots);
    scheduler_release(&w.sched);
    return rc;
}
