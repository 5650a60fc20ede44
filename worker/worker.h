/* worker.h - the worker: N slots pulling jobs through the consumer group
 * into a shared warm pool, plus a janitor thread (heartbeat, lease
 * renewal, cancellation, reclaim, reaping), and graceful drain.  The same
 * execution path runs job files in-process with no Redis (`submit
 * --local`). */
#ifndef LLMSB_WORKER_H
#define LLMSB_WORKER_H

#include <cjson/cJSON.h>
#include <signal.h>
#include "backends/pool.h"
#include "config/config.h"
#include "worker/job.h"

/* Signals: the first sets worker_stop (drain), the second exits at once. */
extern volatile sig_atomic_t worker_stop;

/* Outcomes of executing one job besides a final result. */
enum work_outcome {
    WORK_DONE = 0,        /* r holds a final result */
    WORK_CANCELLED = 1,   /* r holds a cancelled result */
    WORK_ABORTED = 2      /* no result: drained or the lease was lost */
};

/* Executes j in a pooled container. Returns a work_outcome, or a negative
 * code for an infrastructure failure (retry). cancel: 1 = user cancel,
 * 2 = abort. */
int worker_execute(struct pool *pool, struct backend *be, const struct config *cfg,
                   const struct job *j, volatile int *cancel, struct job_result *r,
                   struct llmsb_err *err);

/* Runs j once in a fresh container that is removed afterwards (the `run`
 * verb): worker_execute over a one-container pool. Returns 0 with r
 * filled, or a negative code (LLMSB_ERR_INTERRUPTED when exec_interrupted
 * stopped it). */
int worker_execute_once(struct backend *be, const struct config *cfg, const struct job *j,
                        struct job_result *r, struct llmsb_err *err);

/* Fills a pool config from cfg for `slots` concurrent users. */
void worker_pool_config(const struct config *cfg, int slots, struct pool_config *pc);

/* Runs the Redis worker until SIGTERM/SIGINT; returns the exit code. */
int worker_main(const struct config *cfg, int slots, const char *name);

/* Runs jobs (JSON objects of job fields) in-process. results[i] is set to a
 * new JSON result object per job, in order. progress(ud, done, total, r) is
 * called as jobs finish (from worker threads, serialized). */
int worker_run_local(const struct config *cfg, int slots, cJSON *const *jobs, size_t n,
                     cJSON **results, void (*progress)(void *, size_t, size_t, const cJSON *),
                     void *ud);

/* Converts a result object to JSON (same shape as the Redis hash form). */
cJSON *worker_result_json(const struct job_result *r);

#endif
