/* child.h - a job's process from fork to exec: how every step's child
 * becomes the sandbox user under the job's limits (internal to agent/). */
#ifndef LLMSB_AGENT_CHILD_H
#define LLMSB_AGENT_CHILD_H

#include <stdint.h>
#include <sys/types.h>
#include "proto/proto.h"
#include "user.h"

/* Where a run step started ahead (prespawn.c) finds its two pipes: it
 * writes "R" on the first once it waits, and reads "g" from the second to
 * go on.  High numbers, so that every descriptor the program itself opens
 * gets the number it would get in a plain start; below 1024, the least
 * descriptor limit a container has. */
#define PRESPAWN_READY_FD 1022
#define PRESPAWN_GO_FD 1023

/* A warm helper's part in a step's process (javac.c's compile client). */
struct agent_child_hook {
    /* First of all: moves the helper's descriptors to fd on; returns the
     * first descriptor not taken (every one from there is closed). */
    int (*fds)(int fd);
    /* Last, as the sandbox user in the work dir: returns when the plain
     * exec must run. */
    void (*run)(const struct proto_job *job, uint64_t timeout_ms);
};

/* What a step's process is. */
struct agent_child {
    char *const *argv;
    char *const *env;
    const struct proto_job *job;         /* its limits: fsize_limit, nofile, nproc */
    uint64_t timeout_ms;                 /* the step's, for the hook */
    const struct agent_child_hook *hook; /* NULL: none */
};

/* In the child: a new session, in_fd, out_fd, err_fd as its stdin, stdout
 * and stderr, wait_fds (NULL, or the ready and go pipes of a run step
 * started ahead) at PRESPAWN_READY_FD and PRESPAWN_GO_FD, every other
 * descriptor closed, signals unblocked, the job's rlimits, the OOM
 * killer's first choice, the sandbox user, a death signal, the work dir,
 * the hook's run, then exec of argv with env.  Never returns. */
void __attribute__((noreturn))
agent_child_exec(const struct agent_conf *conf, const struct agent_child *c, int in_fd, int out_fd,
                 int err_fd, const int *wait_fds);
/* Starts the run step of job's limits, argv and env as a job's run would
 * start (agent_child_exec), on fds[0..2] as stdin, stdout, stderr and
 * fds[3], fds[4] as PRESPAWN_READY_FD and PRESPAWN_GO_FD: the child's
 * ends, the caller closes them.  Returns its pid, -1 when fork failed. */
pid_t agent_child_spawn(const struct agent_conf *conf, const struct proto_job *job,
                        char *const *argv, char *const *env, const int fds[5]);

#endif
