/* runner.h - the in-process runner every front end uses (`run`, `submit
 * --local`, the MCP server, the Redis worker, the benchmarks): one engine
 * handle, pinged when opened; one pool sized from the config; who this
 * process is (the labels on its containers, the worker name on its
 * results); jobs run with the scheduler's one retry policy, or one attempt
 * at a time for the Redis worker, whose retries go through the queue.
 *
 * One runner serves many jobs, from many threads at once: each thread
 * passes its own engine handle (backend_clone of rn->be), or NULL for the
 * runner's own when one thread runs jobs.  A stop is asked through a
 * call's cancel flag (enum sched_cancel) or llmsb_interrupted, which the
 * front end's signal handler sets; the runner installs no handler and
 * returns the project's error codes, never a process's exit code.
 *
 * What a runner runs is its own, none of it the process's: its sessions
 * (exec/session.h: a table of them, their sandboxes its pool's; a job's
 * session_scope keeps one caller's ids apart from another's in it) and
 * the images its engine was seen to hold (exec.h); two runners in one
 * process never share them.  runner_close and runner_run's expiry end its
 * sessions. */
#ifndef LLMSB_EXEC_RUNNER_H
#define LLMSB_EXEC_RUNNER_H

#include <stdatomic.h>
#include <stdint.h>
#include "backends/backend.h"
#include "sandbox/pool.h"
#include "config/config.h"
#include "scheduler/decide.h"
#include "job/job.h"
#include "job/result.h"
#include "exec/exec.h"
#include "exec/identity.h"
#include "exec/session.h"

#define RUNNER_ENGINE_WAIT_MS 300000 /* how long runner_run waits for a lost engine */

/* The llmsb.kind label of a front end's containers; the worker's reaper
 * finds its own leftovers by it. */
#define RUNNER_KIND_RUN "run"       /* `run`, the benchmarks */
#define RUNNER_KIND_LOCAL "local"   /* `submit --local`, the MCP server */
#define RUNNER_KIND_WORKER "worker" /* the Redis worker */

/* What a front end asks of its runner. */
struct runner_opts {
    const char *kind;        /* the llmsb.kind label: a RUNNER_KIND_* */
    const char *worker_name; /* NULL or "": <host>-<pid> */
    const char *queue;       /* the llmsb.queue label (identity_queue_label); NULL: none */
    int slots;               /* jobs at a time; with sessions.max, the pool's size */
    int keep_warm;           /* 1: pool.min_idle idle containers kept; 0: none */
    int max_size;            /* > 0: the pool's cap, over the config's and the computed one */
    int64_t engine_wait_ms;  /* 0: RUNNER_ENGINE_WAIT_MS */
    /* 1: a new container starts the zygote of the job that made it before
     * that job (pool_config.prestart): for front ends that run jobs back
     * to back, where the next job would wait for the zygote anyway */
    int prestart;
};

struct runner {
    const struct config *cfg;
    struct identity id;
    struct backend be; /* the engine: one thread at a time, others clone it */
    struct pool pool;
    struct session_table sessions; /* its sessions, in its pool's sandboxes */
    struct exec_images images;     /* the images its engine holds, as last seen */
    char engine_version[64];       /* as the engine's ping said */
    int64_t engine_wait_ms;
};

/* Fills pc from cfg, be (its runtime: one job per container but on the
 * host's kernel), o (sizes, warmth) and id (labels). */
void runner_pool_config(const struct config *cfg, const struct backend *be,
                        const struct runner_opts *o, const struct identity *id,
                        struct pool_config *pc);

/* Opens cfg's engine (backend.name, backend.host), pings it and asks it
 * what backend.runtime is (backend_runtime_resolve), for a
 * verb that needs the engine and no pool (images build): version gets
 * what the engine says it is.  On failure nothing is left open. */
int runner_engine_open(struct backend *engine, const struct config *cfg, char *version, size_t vsz,
                       struct llmsb_err *err);

/* Opens cfg's engine (backend.name, backend.host), pings it and makes the
 * pool.  cfg must outlive the runner, and rn must not move until
 * runner_close (its pool points at rn->be).  Returns 0, or a negative code
 * with err (nothing to close then). */
int runner_open(struct runner *rn, const struct config *cfg, const struct runner_opts *o,
                struct llmsb_err *err);
/* The same over an engine the caller opened (a test's double): consumes
 * engine, which is closed on failure. */
int runner_open_engine(struct runner *rn, const struct config *cfg, const struct runner_opts *o,
                       struct backend *engine, struct llmsb_err *err);

/* Runs j with the scheduler's retry policy, ending idle or old sessions
 * first: attempts until a final result, max_attempts failures (r then says
 * internal_error and it returns SCHED_OUT_FAILED), or a cancel or abort
 * through *cancel (NULL: none) or llmsb_interrupted (SCHED_OUT_ABORTED: r
 * has no status; SCHED_OUT_CANCELLED with cancel SCHED_CANCEL_USER).  An
 * attempt that failed while the engine did not answer does not count: it
 * waits for the engine (up to engine_wait_ms, then internal_error) and
 * tries again.  be is the calling thread's engine handle, NULL: rn->be.
 * r's worker is this runner's name afterwards. */
enum sched_outcome runner_run(struct runner *rn, const struct backend *be, const struct job *j,
                              atomic_int *cancel, struct job_result *r);

/* One attempt of j (the Redis worker's; the scheduler decides what comes
 * after): exec_job's outcome, but SCHED_OUT_UNAVAILABLE for a failure
 * while the engine does not answer (the engine's outage, not the job's).
 * r's worker is left as the caller set it (runner_stamp first): a
 * SCHED_OUT_ELSEWHERE writes the session's owner there. */
enum sched_outcome runner_attempt(struct runner *rn, const struct backend *be, const struct job *j,
                                  atomic_int *cancel, struct job_result *r, struct llmsb_err *err);

/* 1 when the engine behind be answers a ping now (on a connection of its
 * own, so any thread may ask).  After a failed attempt this tells the
 * engine's outage (SCHED_OUT_UNAVAILABLE: uncounted) from a failure of
 * the job's own attempt; a paused worker asks it until the engine is back. */
int runner_engine_answers(const struct backend *be);

/* 1 when a stop is asked: a signal (llmsb_interrupted) or cancel (NULL:
 * none) no longer SCHED_GO. */
int runner_stop_asked(const atomic_int *cancel);

/* Writes this runner's worker name into r. */
void runner_stamp(const struct runner *rn, struct job_result *r);

/* A look at a container of a custom image from outside, before it starts
 * (exec_image_check): the caller's (images/tree.c reads its files), as a
 * callback, since exec/ does not include images/.  Findings go to f. */
struct image_check_hook {
    int (*fn)(void *ud, struct backend *be, const char *id, struct buf *f, struct llmsb_err *err);
    void *ud;
};

/* The checks of a custom image (exec/image_check.c): l's hello world runs
 * in image as a job (not "hello": an error naming the status and what the
 * job said), then a sandbox of image is made as a job's is: created is
 * called with it before it starts (NULL: none), then the hardening audit
 * runs inside it; each departure is a line appended to findings. */
int exec_image_check(struct runner *rn, const char *image, const struct language *l,
                     const struct image_check_hook *created, struct buf *findings,
                     struct llmsb_err *err);

/* Ends the sessions held in its pool (recording why), removes the pool's
 * containers and closes the engine. */
void runner_close(struct runner *rn, const char *why);

#endif
