/* batch.h - a file of jobs run in this process with no Redis (`submit
 * --local`): N threads over one runner (runner.h), so the same execution
 * path and retry policy as every front end, a session's calls in order on
 * one thread. */
#ifndef LLMSB_EXEC_BATCH_H
#define LLMSB_EXEC_BATCH_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include "config/config.h"

/* How batch_run runs a file: slots jobs at a time, until deadline_ms
 * (clock_mono_ms(); 0: none); progress(ud, done, total, r) is called as
 * jobs finish (from runner threads, serialized). */
struct batch_opts {
    int slots;
    int64_t deadline_ms;
    void (*progress)(void *ud, size_t done, size_t total, const cJSON *r);
    void *ud;
};

enum batch_end {
    BATCH_DONE = 0,     /* every job has a result */
    BATCH_STOPPED = 1,  /* llmsb_interrupted (the front end's signal handler) */
    BATCH_TIMED_OUT = 2 /* deadline_ms reached */
};

/* Runs jobs (JSON objects of job fields) in-process. results[i] is set to a
 * new JSON result object per job that finished, in order. When stopped or
 * timed out no job starts after, the running ones end and their containers
 * are removed before it returns, and their results stay NULL. Returns an
 * enum batch_end, or a negative code with err (the engine cannot be
 * reached). */
int batch_run(const struct config *cfg, const struct batch_opts *o, cJSON *const *jobs, size_t n,
              cJSON **results, struct llmsb_err *err);

#endif
