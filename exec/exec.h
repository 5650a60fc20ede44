/* exec.h - executing one attempt of a job: the security check, the
 * agent's JOB, a pooled container of the right image and limits, the run,
 * and the result.  Front ends come here through the runner (runner.h);
 * what happens after an attempt (finish, retry, dead-letter) is the
 * scheduler's to decide. */
#ifndef LLMSB_EXEC_H
#define LLMSB_EXEC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "backends/backend.h"
#include "sandbox/pool.h"
#include "config/config.h"
#include "scheduler/decide.h"
#include "job/job.h"
#include "job/result.h"

struct runner;

#define EXEC_IMAGE_CACHE 32

/* Images known to exist, so the hot path asks the engine once a minute per
 * image rather than once per job; with the language a custom image was
 * built for (its llmsb.lang label; "" for any other image).  A runner's
 * (what its engine holds), never the process's. */
struct exec_images {
    pthread_mutex_t mu;
    struct {
        char name[256];
        char lang[32];
        int64_t until_ms;
    } seen[EXEC_IMAGE_CACHE];
};

/* No allocation; c knows no image. */
void exec_images_init(struct exec_images *c);
void exec_images_release(struct exec_images *c);

/* The RLIMIT_NPROC a job's processes get under be's runtime profile
 * (runtime_profile_nproc): limits.nproc, and where the pids cgroup does
 * not bound a job (gVisor) what holds it at limits.pids processes. */
int64_t exec_job_nproc(const struct backend *be, const struct job *j);

/* Fills a container spec for a job on be from the config and the job's
 * limits (no labels: the pool adds its own). */
void exec_spec_for_job(struct container_spec *spec, const struct backend *be,
                       const struct config *cfg, const struct job *j, const char *image);

/* The backstop for a job: its limits plus the grace. */
int64_t exec_backstop_ms(const struct config *cfg, const struct job *j);

/* Executes j in a container of rn's pool (a session's call: in its
 * session of rn's table), with rn's config and image cache, on be (the
 * calling thread's handle on rn's engine).  Returns how the attempt went
 * (SCHED_OUT_FINAL with r holding the result, SCHED_OUT_CANCELLED,
 * SCHED_OUT_ABORTED, SCHED_OUT_ELSEWHERE, or SCHED_OUT_FAILED with err
 * saying why). cancel is a slot's flag (enum sched_cancel), or NULL. */
enum sched_outcome exec_job(struct runner *rn, const struct backend *be, const struct job *j,
                            atomic_int *cancel, struct job_result *r, struct llmsb_err *err);

#endif
