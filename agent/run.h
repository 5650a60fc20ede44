/* run.h - one job, from its files to its result, and the cleanup after it
 * (internal to agent/). */
#ifndef LLMSB_AGENT_RUN_H
#define LLMSB_AGENT_RUN_H

#include "proto/proto.h"
#include "user.h"

/* Runs one job, filling res. Never fails: every problem becomes a status. */
void agent_job_run(const struct agent_conf *conf, const struct proto_job *job,
                   struct proto_result *res);
/* After a job (or at the agent's start and end): agent_wipe, and -1 also
 * when the last job's cases left what could not be put back.  Returns 0
 * when the sandbox is clean for the next job. */
int agent_cleanup(const struct agent_conf *conf);

#endif
