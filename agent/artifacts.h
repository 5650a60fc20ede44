/* artifacts.h - the files a job asked for, collected after its run
 * (internal to agent/; the rules are in artifacts.c). */
#ifndef LLMSB_AGENT_ARTIFACTS_H
#define LLMSB_AGENT_ARTIFACTS_H

#include "proto/proto.h"
#include "user.h"

/* Collects the files job->artifact_globs ask for, and the plots dir's,
 * into res->artifacts (with a note for each one left out). */
void agent_collect_artifacts(const struct agent_conf *conf, const struct proto_job *job,
                             struct proto_result *res);

#endif
