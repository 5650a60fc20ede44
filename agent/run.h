/* run.h - the agent's job execution and cleanup (internal to agent/). */
#ifndef LLMSB_AGENT_RUN_H
#define LLMSB_AGENT_RUN_H

#include <sys/types.h>
#include "proto.h"

#define AGENT_DEFAULT_UID 10001
#define AGENT_WORK_DIR "/work"

struct agent_conf {
    uid_t uid; /* the unprivileged user jobs run as */
    gid_t gid;
    const char *work_dir;
    const char *wipe_dirs[6];
    /* Called after a successful install when the job asks for a pause:
     * returns 0 when the worker says CONTINUE, -1 otherwise. */
    int (*install_pause)(void);
};

int agent_conf_init(struct agent_conf *conf);
/* Runs one job, filling res. Never fails: every problem becomes a status. */
void agent_job_run(const struct agent_conf *conf, const struct proto_job *job,
                   struct proto_result *res);
/* Kills every process of the sandbox uid, empties the wipe dirs (POSIX
 * message queues among them) and removes the SysV IPC objects the uid
 * owns. Returns 0 when all is clean, -1 when something could not be
 * removed. */
int agent_cleanup(const struct agent_conf *conf);
/* Removes everything below dirfd without following symlinks; exposed for
 * tests. Returns 0 or -1. */
int agent_rm_tree_at(int dirfd, int depth);
/* Collects the files job->artifact_globs ask for into res->artifacts
 * (artifacts.c). */
void agent_collect_artifacts(const struct agent_conf *conf, const struct proto_job *job,
                             struct proto_result *res);
/* Reads the cgroup's OOM-kill counter; -1 when unknown. */
long long agent_oom_count(void);

#endif
