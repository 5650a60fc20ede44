/* javac.h - the warm javac: a long-lived JVM that compiles a Java job's
 * sources in memory (internal to agent/; the Java side is
 * languages/hooks/LlmsbJavac.java, the rules are in javac.c). */
#ifndef LLMSB_AGENT_JAVAC_H
#define LLMSB_AGENT_JAVAC_H

#include <sys/types.h>
#include "proto/proto.h"
#include "child.h"

/* Below this cgroup memory limit no server starts: its JVM holds 70-85 MB
 * (RSS, measured: docs/benchmarks.md "The Java compile server") that the
 * job's share would miss, and a job's own javac or java (a heap of a
 * quarter of the limit by default, ~200 MB of RSS at most at 512 MB) needs
 * the rest. */
#define JAVAC_MIN_MEMORY ((long long)PROTO_JAVAC_MIN_MEMORY_MB << 20)

/* Before a job's files are unpacked (nothing for a session's call):
 * remembers whether the job asks for the server (job->compile_server), so
 * that the next idle time starts it, and waits (at most 5 s) for one still
 * warming up; one no job can use is ended.  No server warms up beside a
 * job. */
void javac_for_job(const struct agent_conf *conf, const struct proto_job *job);
/* The worker's PRESTART on a clean sandbox: starts the server job asks
 * for now, waiting for it as a job would. */
void javac_prestart(const struct agent_conf *conf, const struct proto_job *job);
/* After a cleanup that left the sandbox clean: starts the server when the
 * last job asked for one and none runs (or the one running served its
 * share of compiles). */
void javac_idle(const struct agent_conf *conf);
/* Before the compile step: 1 when it goes to the server (the job is
 * eligible and the server alive and ready; the channel and the status
 * pipe are open), 0 for a plain compile. */
int javac_begin(const struct proto_job *job);
/* During the step: the status pipe's end to poll (-1: none), and reading
 * it: 1 when the child has started the plain javac (whose deadline then
 * starts anew: the step's timeout is the plain javac's own); a server
 * the child gave up on is ended there and then. */
int javac_status_fd(void);
int javac_status_read(void);
/* In the compile step's child, before anything else of the child's: moves
 * the channel to fd and the status pipe to fd + 1; returns the first fd
 * not taken (fd when there is no channel). */
int javac_child_fds(int fd);
/* Then, as the job's user in the work dir: asks the server (waiting at
 * most half of timeout_ms) and, when javac said nothing and succeeded,
 * writes the class files and exits 0.  Returns (channel closed, the agent
 * told on the status pipe) when the plain javac must run: its output and
 * exit code are the job's. */
void javac_child(const struct proto_job *job, uint64_t timeout_ms);
/* The two above, as the compile step's child runs them (child.h). */
extern const struct agent_child_hook javac_child_hook;
/* After the compile step: killed says it timed out, died by a signal or
 * could not run; the server is ended then (it may be stuck on that
 * input), and when it holds more than JAVAC_MAX_RSS. */
void javac_end(int killed);
/* The agent reaped pid: if it was the server, it is gone. */
void javac_reaped(pid_t pid);
/* Ends the server (shutdown). */
void javac_stop(void);
/* 1 when the job's env lets its compile go to the server: only the
 * sandbox's own entries (exact), the cache's switches, not
 * LLMSB_COMPILE_CACHE=0.  Exposed for tests. */
int javac_env_ok(char *const *env, size_t n);

#endif
