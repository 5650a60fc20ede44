/* prespawn.h - a job's run-step process started ahead of the job (internal
 * to agent/; node's side is languages/hooks/node-wait.js). */
#ifndef LLMSB_AGENT_PRESPAWN_H
#define LLMSB_AGENT_PRESPAWN_H

#include <sys/types.h>
#include "proto/proto.h"
#include "child.h"

/* The process's two pipes are PRESPAWN_READY_FD and PRESPAWN_GO_FD
 * (child.h: every step's child is set up there). */

/* Before a job's files are unpacked: keeps the process started ahead
 * only when it was started for exactly this job's first run (argv, env,
 * limits, the variable TAG_PRESPAWN names; prespawn_held says so then);
 * else it is killed and reaped now (it holds the previous job's env and
 * must never live beside another job).  Remembers what the job asks for,
 * so that the next idle time starts it. */
void prespawn_for_job(const struct agent_conf *conf, const struct proto_job *job);
/* The run step of argv: hands over the process started ahead (its pid,
 * the agent's ends of its stdin, stdout and stderr pipes), once it said it
 * waits, and tells it to go on; the caller supervises it as a child of its
 * own from now.  -1 when there is none for argv or it failed (it is ended;
 * three failures in a row and the sandbox stops starting one): the caller
 * starts the run plainly. */
pid_t prespawn_go(char *const *argv, int *in_w, int *out_r, int *err_r);
/* 1 while a process started ahead waits for its go (after
 * prespawn_for_job: for this job's first run; the only process of the
 * sandbox uid then, before a compile step). */
int prespawn_held(void);
/* After a cleanup that left the sandbox clean: starts the last job's run
 * step ahead, when it asked for that and none is running. */
void prespawn_idle(const struct agent_conf *conf);
/* The worker's PRESTART on a clean sandbox that runs no job: remembers
 * what job asks for (run argv, env, limits, TAG_PRESPAWN) and starts it,
 * waiting (PRESPAWN_READY_MS at most) until it waits for its go. */
void prespawn_prestart(const struct agent_conf *conf, const struct proto_job *job);
/* The agent reaped pid: if it was the process started ahead, it is gone. */
void prespawn_reaped(pid_t pid);
/* Ends the process started ahead, if any (shutdown). */
void prespawn_stop(void);

#endif
