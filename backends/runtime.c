/* runtime.c - what each kind of runtime changes above the engine, one row
 * a kind (see struct runtime_profile in backend.h): the one place that
 * says how a job on gVisor differs from one on runc.  The agent tells its
 * own kernel apart inside the sandbox; the host reads this row. */
#include "backend.h"

/* gVisor on the ptrace platform: the host's pids cgroup of a sandbox holds
 * the Sentry's own threads and host threads for each process of the job,
 * more the longer they run (63 sleeping processes take 376; a fork bomb
 * held at 64 processes by RLIMIT_NPROC grows by about 700 host threads a
 * second, each costing the sandbox's memory about 64 KB), so a job at its
 * pids limit would kill the whole sandbox rather than end alone.  On gVisor
 * the job's bound is RLIMIT_NPROC at its pids limit (runtime_profile_nproc),
 * which gVisor counts inside the sandbox (fork and clone fail with EAGAIN),
 * set on the container (hard, for every process) and by the agent on the
 * job; the host cgroup is a backstop above both what that many processes
 * take and what the memory limit lets the host threads grow to, so a job
 * that outgrows it is OOM-killed (memory_limit) before the pids run out.
 * gVisor also keeps a job's POSIX message queues, and has neither
 * /dev/mqueue nor /proc/sysvipc for the agent to find what a job left:
 * there a container runs one job and is replaced (its zygote too). */
#define GVISOR_HOST_PIDS_PER_PID 8
#define GVISOR_HOST_PIDS_PER_MB 32

static const struct runtime_profile profiles[BACKEND_RUNTIME_COUNT] = {
    [BACKEND_RUNTIME_KERNEL] = {.kind = BACKEND_RUNTIME_KERNEL},
    [BACKEND_RUNTIME_GVISOR] = {.kind = BACKEND_RUNTIME_GVISOR,
                                .one_job_per_container = 1,
                                .nproc_from_pids = 1,
                                .host_pids_per_pid = GVISOR_HOST_PIDS_PER_PID,
                                .host_pids_per_mb = GVISOR_HOST_PIDS_PER_MB,
                                .no_engine_seccomp = 1},
    /* a runtime the engine would not describe: one job per container, as
     * on gVisor, so nothing a job leaves reaches the next whatever it
     * keeps; the host kernel's limits, since clamping RLIMIT_NPROC on runc
     * would count every sandbox of the same uid on the node */
    [BACKEND_RUNTIME_UNKNOWN] = {.kind = BACKEND_RUNTIME_UNKNOWN, .one_job_per_container = 1},
};

const struct runtime_profile *runtime_profile_of(enum backend_runtime_kind kind)
{
    return (unsigned)kind < BACKEND_RUNTIME_COUNT ? &profiles[kind]
                                                  : &profiles[BACKEND_RUNTIME_UNKNOWN];
}

uint64_t runtime_profile_nproc(const struct runtime_profile *rp, uint64_t pids, uint64_t nproc)
{
    uint64_t n = pids > 1 ? pids - 1 : 1;

    return rp->nproc_from_pids && pids && n < nproc ? n : nproc;
}

int64_t runtime_profile_host_pids(const struct runtime_profile *rp, int64_t pids, int64_t memory_mb)
{
    return rp->host_pids_per_pid > 0
               ? pids * rp->host_pids_per_pid + memory_mb * rp->host_pids_per_mb
               : pids;
}
