/* step.h - one step of a job (install, compile, run, a case's run): a
 * child under one poll loop until it ends (internal to agent/). */
#ifndef LLMSB_AGENT_STEP_H
#define LLMSB_AGENT_STEP_H

#include <stdint.h>
#include <sys/resource.h>
#include "proto/proto.h"
#include "user.h"

struct agent_step {
    char *const *argv;
    char *const *env;
    const char *stdin_data;
    size_t stdin_len;
    uint64_t timeout_ms;
    size_t out_cap;  /* stdout + stderr together */
    int kill_on_cap; /* run step: cap reached = output_limit */
    int zygote;      /* run step: started through the zygote when it can */
    int javac;       /* compile step: asks the warm javac first (javac.c) */
    int live;        /* run step: OUTPUT frames as it goes (TAG_LIVE) */
    struct buf *out;
    struct buf *err; /* == out to merge the streams */
    const struct proto_job *job;
};

/* How a step ended. */
struct agent_outcome {
    int exited;
    int exit_code;
    int signal;
    int timed_out;
    int over_output;
    int out_trunc;
    int err_trunc;
    int64_t duration_ms;
    struct rusage ru;
    int zygote;      /* forked by the zygote */
    int zygote_lost; /* which died before it answered for the job */
    int prespawned;  /* started ahead of the job (prespawn.c) */
};

/* Runs step s: starts its process (a run step: the one started ahead for
 * it, or through the zygote, when there is one; a compile step: asking
 * the warm javac first when s->javac), feeds its stdin, reads its output
 * against the cap, kills it (and everything of the sandbox uid) at its
 * deadline, at the cap or when it exited and leftovers hold its pipes.
 * Fills o.  Returns 0, -1 (errmsg set) when the agent itself failed. */
int agent_step_run(const struct agent_conf *conf, const struct agent_step *s,
                   struct agent_outcome *o, char *errmsg, size_t errsz);

#endif
