/* scan.h - the security check of a job (exec/scan.c), run before anything
 * touches a container: exec/ runs it for each attempt, the scan verb on
 * its own.  Here, not in job/job.h: it reads security/'s policies and is
 * defined in exec/, above job/. */
#ifndef LLMSB_EXEC_SCAN_H
#define LLMSB_EXEC_SCAN_H

#include "common/common.h"

struct config;
struct job;
struct sec_result;

/* The config's minimum policy plus the job's (inline security, else
 * policy, else the default) over the code and the files in the job's
 * language. res->blocked decides. A policy that does not compile is an
 * error naming it. */
int job_scan(const struct config *cfg, const struct job *j, struct sec_result *res,
             struct llmsb_err *err);

#endif
