/* zygote.h - preloaded interpreters that fork one process per job
 * (internal to agent/; the Python side is languages/hooks/llmsb_zygote.py). */
#ifndef LLMSB_AGENT_ZYGOTE_H
#define LLMSB_AGENT_ZYGOTE_H

#include <sys/resource.h>
#include <sys/types.h>
#include "proto/proto.h"
#include "user.h"

/* Below this cgroup memory limit no zygote is started: what it holds would
 * be missing from the job's share (docs/benchmarks.md). */
#define ZYGOTE_MIN_MEMORY ((long long)256 << 20)

/* Before a job's files are unpacked (nothing for a session's call, whose
 * zygote is zygote_session's): picks the zygote its run steps go through
 * (one is up, ready, and was started for this job's interpreter, script
 * and start-up environment; zygote_in_use says), waiting for one that is
 * still preloading.  Remembers what the job asked for, so that the next
 * idle time starts it.  No zygote preloads beside a job: every one still
 * starting is waited for (ZYGOTE_READY_MS in all) or ended. */
void zygote_for_job(const struct agent_conf *conf, const struct proto_job *job);
/* 1 when zygote_for_job (or zygote_session) picked a zygote for the job
 * being run. */
int zygote_in_use(void);
/* The worker's PRESTART, on a clean sandbox that runs no job: remembers
 * what job asks for (a JOB without files: zygote, profile, run argv, env)
 * and starts that zygote now, waiting for it (ZYGOTE_READY_MS at most) as
 * a job would, so that the sandbox's first job of that spec finds it
 * ready.  Nothing for a session's call or a job that cannot have one. */
void zygote_prestart(const struct agent_conf *conf, const struct proto_job *job);
/* Before a session's call (job->session) is unpacked: its process, started
 * at the first call (as the zygote's one child, llmsb_zygote.py "session"),
 * is the zygote all its calls go through.  Returns 0, or -1 with why when
 * the session's process is gone (or cannot start): the call is
 * session_lost.  A sandbox holds one session for its whole life. */
int zygote_session(const struct agent_conf *conf, const struct proto_job *job, char *why,
                   size_t whysz);
/* 1 while the session's process lives and waits for its next call. */
int zygote_session_alive(void);
/* Ends the session's process (after a call that ended it). */
void zygote_session_end(void);
/* After a cleanup that left the sandbox clean: starts the zygote the last
 * job asked for, when none or another is running. */
void zygote_idle(const struct agent_conf *conf);
/* Starts the job's process argv/env through the zygote on the given
 * descriptors (the child's ends).  Returns its pid (the zygote's child;
 * zygote_exit answers for it), *plain set when the zygote handed the job to a plain
 * interpreter (what it cannot mimic), or -1: nothing was started, the
 * caller starts it itself. */
pid_t zygote_fork(const struct agent_conf *conf, const struct proto_job *job, char *const *argv,
                  char *const *env, int in_fd, int out_fd, int err_fd, int *plain);
/* The socket to poll for the exit of a job the zygote started, -1 when
 * there is none. */
int zygote_socket(void);
/* After zygote_socket() polled readable: 1 with the job's wait status and
 * rusage, 0 when there is nothing yet, -1 when the zygote failed (it is
 * ended; the job's process, its death signal fired, is the agent's to
 * reap). */
int zygote_exit(int *status, struct rusage *ru);
/* The agent reaped pid: if it was the zygote, it is gone. */
void zygote_reaped(pid_t pid);
/* Ends a zygote whose answer for the last job never came. */
void zygote_abandon(void);
/* Ends the zygote (shutdown). */
void zygote_stop(void);
/* 1 when name (up to '=' or NUL) is read at interpreter start-up, so a job
 * setting it differently cannot use a zygote started without it.
 * Exposed for tests. */
int zygote_env_sensitive(const char *kv);

#endif
