/* job_limits.h - the limits a job's process puts on itself before the
 * job's code, the same whoever starts it: the agent's own child
 * (agent/child.c) and a process of the R and Ruby zygote
 * (agent/zygote_lib.c, built on its own as bin/llmsb_zygote.so, hence
 * static inline).  llmsb_zygote.py does the same in Python. */
#ifndef LLMSB_AGENT_JOB_LIMITS_H
#define LLMSB_AGENT_JOB_LIMITS_H

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

/* No core files; the job's file size, open files and processes (0: the
 * container's own limit holds). */
static inline void job_limits(unsigned long long fsize, unsigned long long nofile,
                              unsigned long long nproc)
{
    const int res[3] = {RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_NPROC};
    const unsigned long long v[3] = {fsize, nofile, nproc};
    struct rlimit core = {0, 0};

    setrlimit(RLIMIT_CORE, &core);
    for (int i = 0; i < 3; i++) {
        struct rlimit r = {(rlim_t)v[i], (rlim_t)v[i]};
        if (v[i])
            setrlimit(res[i], &r);
    }
}

/* The OOM killer's first choice in the container (oom_score_adj 1000).
 * Returns -1 when it could not be set: best effort, the cgroup limit holds
 * anyway. */
static inline int job_oom_first(void)
{
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    int rc = fd >= 0 && write(fd, "1000", 4) == 4 ? 0 : -1;

    if (fd >= 0)
        close(fd);
    return rc;
}

#endif
