/* exec.h - executing one job: the security check, the agent's JOB, a
 * pooled container of the right image and limits, the run, and the
 * result.  The Redis worker, `submit --local` and `run` all come here; what
 * happens after (finish, retry, dead-letter) is the scheduler's to decide.
 * Also who this process is, for the labels on its containers. */
#ifndef LLMSB_EXEC_H
#define LLMSB_EXEC_H

#include <stdatomic.h>
#include <stdint.h>
#include "backends/backend.h"
#include "sandbox/pool.h"
#include "config/config.h"
#include "scheduler/decide.h"
#include "job/job.h"
#include "job/result.h"

/* Fills a container spec for a job from the config and the job's limits
 * (no labels: the pool adds its own). */
void exec_spec_for_job(struct container_spec *spec, const struct config *cfg, const struct job *j,
                       const char *image);

/* Who this process is: kind is "run", "local" or "worker"; queue is the
 * label value that scopes a worker's containers to its Redis and prefix
 * (exec_queue_label), NULL for none. */
void exec_identity(const char *worker_name, const char *kind, const char *queue);
const char *exec_worker_name(void);
/* The value of the llmsb.queue label for a Redis URL and prefix: a short
 * hash, the same on every host, different for every deployment. */
void exec_queue_label(const char *redis_url, const char *prefix, char out[24]);
/* Fills the pool's llmsb.* labels from the identity. */
void exec_pool_labels(struct pool_config *pc);
/* Fills a pool config from cfg for `slots` concurrent users. */
void exec_pool_config(const struct config *cfg, int slots, struct pool_config *pc);

/* The backstop for a job: its limits plus the grace. */
int64_t exec_backstop_ms(const struct config *cfg, const struct job *j);

/* Executes j in a pooled container. Returns how the attempt went
 * (SCHED_OUT_FINAL with r holding the result, SCHED_OUT_CANCELLED,
 * SCHED_OUT_ABORTED, or SCHED_OUT_FAILED with err saying why). cancel is
 * a slot's flag (enum sched_cancel), or NULL. */
enum sched_outcome exec_job(struct pool *pool, const struct backend *be, const struct config *cfg,
                            const struct job *j, atomic_int *cancel, struct job_result *r,
                            struct llmsb_err *err);

/* 1 when the engine behind be answers a ping now. After a failed attempt
 * this tells the engine's outage (SCHED_OUT_UNAVAILABLE: uncounted) from
 * a failure of the job's own attempt. */
int exec_engine_answers(const struct backend *be);

/* 1 when a stop is asked: a signal (llmsb_interrupted) or cancel (NULL:
 * none) no longer SCHED_GO. */
int exec_stop_asked(const atomic_int *cancel);

#define EXEC_ENGINE_WAIT_MS 300000 /* run/--local: how long to wait for a lost engine */

/* Runs j with the scheduler's retry policy (the --local path and `run`):
 * attempts until a final result, max_attempts failures (r then says
 * internal_error and returns SCHED_OUT_FAILED), or a cancel or abort
 * through *cancel or llmsb_interrupted (SCHED_OUT_ABORTED: r has no
 * status). An attempt that failed while the engine did not answer does
 * not count: it waits for the engine (up to EXEC_ENGINE_WAIT_MS, then
 * internal_error) and tries again. */
enum sched_outcome exec_job_retrying(struct pool *pool, const struct backend *be,
                                     const struct config *cfg, const struct job *j,
                                     atomic_int *cancel, struct job_result *r);

#endif
