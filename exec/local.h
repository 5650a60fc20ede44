/* local.h - a file of jobs run in this process with no Redis (`submit
 * --local`): N runner threads over one warm pool, the same execution path
 * and retry policy as the worker, sessions' calls in order on one thread. */
#ifndef LLMSB_EXEC_LOCAL_H
#define LLMSB_EXEC_LOCAL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include "config/config.h"

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
