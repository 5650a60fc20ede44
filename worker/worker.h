/* worker.h - the worker process: N slots pulling jobs through the consumer
 * group into a shared warm pool, a janitor thread (heartbeat, the
 * scheduler's timers, pool upkeep, reaping of leaked containers), signals
 * and graceful drain.  The same execution path runs job files in-process
 * with no Redis (`submit --local`, worker/local.c). */
#ifndef LLMSB_WORKER_H
#define LLMSB_WORKER_H

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include "config/config.h"

/* Set by the first SIGTERM/SIGINT: drain. A second signal exits at once. */
extern atomic_int worker_stop;

#define WORKER_JANITOR_TICK_MS 250
#define WORKER_MAINTAIN_EVERY_MS 10000
#define WORKER_ENGINE_PROBE_MS 1000      /* while paused: how often the engine is asked */
#define WORKER_PAUSED_POLL_MS 200        /* while paused: how often a slot looks again */
#define WORKER_OWN_LEFTOVER_AGE_MS 60000 /* own containers unknown to the pool, past start */
#define WORKER_DRAIN_POLL_MS 100
#define WORKER_CONTROL_TIMEOUT_MS 3000

/* Runs the Redis worker until SIGTERM/SIGINT; returns the exit code. */
int worker_main(const struct config *cfg, int slots, const char *name);

/* How worker_run_local runs a file: slots jobs at a time, until
 * deadline_ms (clock_mono_ms(); 0: none); progress(ud, done, total, r) is
 * called as jobs finish (from worker threads, serialized). */
struct worker_local {
    int slots;
    int64_t deadline_ms;
    void (*progress)(void *ud, size_t done, size_t total, const cJSON *r);
    void *ud;
};

enum worker_local_end {
    WORKER_LOCAL_DONE = 0,     /* every job has a result */
    WORKER_LOCAL_STOPPED = 1,  /* llmsb_interrupted (the caller's signal handler) */
    WORKER_LOCAL_TIMED_OUT = 2 /* deadline_ms reached */
};

/* Runs jobs (JSON objects of job fields) in-process. results[i] is set to a
 * new JSON result object per job that finished, in order. When stopped or
 * timed out no job starts after, the running ones end and their containers
 * are removed before it returns, and their results stay NULL. Returns an
 * enum worker_local_end, or a negative code with err (the engine cannot be
 * reached). */
int worker_run_local(const struct config *cfg, const struct worker_local *o, cJSON *const *jobs,
                     size_t n, cJSON **results, struct llmsb_err *err);

#endif
