/* warm.h - the warm helpers, each one row of a table of life-cycle hooks
 * (internal to agent/; the table is in warm.c). */
#ifndef LLMSB_AGENT_WARM_H
#define LLMSB_AGENT_WARM_H

#include <sys/types.h>
#include "proto/proto.h"
#include "user.h"

/* What the agent starts ahead of a job so that the job finds it warm (a
 * zygote, a run step, a compile server), and when: every hook is called
 * for each helper in turn, in the table's order. */
struct warm_helper {
    /* Before a job's files are unpacked: remember what the job asks for
     * (the next idle time starts it), wait for what is starting, end what
     * the job cannot use; nothing warms up beside a job. */
    void (*for_job)(const struct agent_conf *conf, const struct proto_job *job);
    /* The worker's PRESTART on a clean sandbox that runs no job (a JOB
     * without files): start what job asks for now, waiting for it as a job
     * would. */
    void (*prestart)(const struct agent_conf *conf, const struct proto_job *job);
    /* After a cleanup that left the sandbox clean: start what the last job
     * asked for, when it is not running. */
    void (*idle)(const struct agent_conf *conf);
    /* The agent reaped pid: if it was the helper's, it is gone. */
    void (*reaped)(pid_t pid);
    /* End what runs (shutdown). */
    void (*stop)(void);
};

/* Each hook of every helper in turn. */
void warm_for_job(const struct agent_conf *conf, const struct proto_job *job);
void warm_prestart(const struct agent_conf *conf, const struct proto_job *job);
void warm_idle(const struct agent_conf *conf);
void warm_reaped(pid_t pid);
void warm_stop(void);

#endif
