/* confine.c - what the agent does to its own process at start, for every
 * process of the sandbox after it, on any runtime.
 *
 * The namespace filter.  No process of a sandbox may make a namespace:
 * unshare and setns fail with EPERM, clone with a CLONE_NEW* flag too, and
 * clone3 (whose flags sit in memory a filter cannot read) with ENOSYS, so
 * that libc falls back to clone.  On runc the container's seccomp profile
 * (backends/seccomp.c) already answers the same, so nothing changes there;
 * on gVisor that profile is not loaded (docs/security.md), and a job that
 * made a user namespace held every capability in it, RLIMIT_NPROC's
 * exemption among them: its pids limit, the only bound on its processes
 * there, was gone (a job at pids 32 made 1,500).  gVisor runs seccomp
 * filters for the programs it runs, so this one filter, installed on the
 * agent before anything starts, holds on both (and on a pod, which cannot
 * carry our profile).
 *
 * The environment.  gVisor's procfs lets any process read another's
 * environ (runc: EACCES for a process of another uid), and the agent's
 * holds whatever the image's ENV and the engine put there (the registry
 * settings of pool.preinstall, a mirror's URL with its credentials, say),
 * none of which the agent needs.  So the agent runs itself again with only
 * LLMSB_AGENT_UID and a guard string of two pages or more, and makes the
 * guard's whole pages unreadable: a read of /proc/1/environ then fails
 * (EFAULT) on gVisor, as it fails on runc (EACCES). */
#include "confine.h"

#include <endian.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

/* ---- the namespace filter ------------------------------------------------ */

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define X32_BIT 0x40000000u
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "the agent's namespace filter knows x86_64 and aarch64"
#endif

#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((e)&SECCOMP_RET_DATA))
/* the low half of clone's first argument, its flags */
#define ARG0_LO (offsetof(struct seccomp_data, args[0]) + (__BYTE_ORDER == __LITTLE_ENDIAN ? 0 : 4))

/* One ABI's numbers: what answers EPERM, clone3 (ENOSYS), clone (EPERM
 * with a namespace flag). */
struct abi {
    uint32_t arch;
    uint32_t denied[2]; /* unshare, setns */
    uint32_t clone3, clone;
    int x32; /* the x32 bit is taken off the number first */
};

static const struct abi abis[] = {
#if defined(__x86_64__)
    {AUDIT_ARCH_X86_64, {SYS_unshare, SYS_setns}, SYS_clone3, SYS_clone, 1},
    /* i386 calls (int 0x80) from an x86_64 process: numbers of their own */
    {AUDIT_ARCH_I386, {310, 346}, 435, 120, 0},
#else
    {NATIVE_ARCH, {SYS_unshare, SYS_setns}, SYS_clone3, SYS_clone, 0},
#endif
};

#define ABI_INSNS 14 /* emit_abi's instructions, at most */

static size_t stmt(struct sock_filter *f, size_t n, uint16_t code, uint32_t k)
{
    f[n] = (struct sock_filter)BPF_STMT(code, k);
    return n + 1;
}

static size_t jump_eq(struct sock_filter *f, size_t n, uint32_t k, uint8_t jt, uint8_t jf)
{
    f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf);
    return n + 1;
}

#define LOAD (BPF_LD | BPF_W | BPF_ABS)
#define RET (BPF_RET | BPF_K)

/* One ABI's block, reached with its arch checked: every path returns. */
static size_t emit_abi(struct sock_filter *f, size_t n, const struct abi *a)
{
    n = stmt(f, n, LOAD, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
    if (a->x32)
        n = stmt(f, n, BPF_ALU | BPF_AND | BPF_K, ~X32_BIT);
#endif
    for (size_t i = 0; i < 2; i++) {
        n = jump_eq(f, n, a->denied[i], 0, 1);
        n = stmt(f, n, RET, RET_ERRNO(EPERM));
    }
    n = jump_eq(f, n, a->clone3, 0, 1);
    n = stmt(f, n, RET, RET_ERRNO(ENOSYS));
    /* clone, last: its flags replace the number in the accumulator */
    n = jump_eq(f, n, a->clone, 0, 3);
    n = stmt(f, n, LOAD, ARG0_LO);
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, LLMSB_CLONE_NS_FLAGS, 0, 1);
    n = stmt(f, n, RET, RET_ERRNO(EPERM));
    return stmt(f, n, RET, SECCOMP_RET_ALLOW);
}

int agent_confine_ns_filter(void)
{
    struct sock_filter f[2 + (sizeof(abis) / sizeof(abis[0])) * (ABI_INSNS + 1)];
    struct sock_fprog prog;
    size_t n = stmt(f, 0, LOAD, offsetof(struct seccomp_data, arch));

    for (size_t i = 0; i < sizeof(abis) / sizeof(abis[0]); i++) {
        size_t at = n;
        n = emit_abi(f, n + 1, &abis[i]);
        jump_eq(f, at, abis[i].arch, 0, (uint8_t)(n - at - 1)); /* past the block */
    }
    /* an ABI of no block here: nothing of it may run */
    n = stmt(f, n, RET, RET_ERRNO(EPERM));
    prog.len = (unsigned short)n;
    prog.filter = f;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* ---- the environment ------------------------------------------------------ */

int agent_confine_env_ready(char *const *env, size_t page_bytes)
{
    int keep = 0, guard = 0;

    for (size_t i = 0; env && env[i]; i++) {
        if (strncmp(env[i], AGENT_CONFINE_KEEP, strlen(AGENT_CONFINE_KEEP)) == 0)
            keep++;
        else if (strncmp(env[i], AGENT_CONFINE_GUARD, strlen(AGENT_CONFINE_GUARD)) == 0 &&
                 strlen(env[i]) >= 2 * page_bytes)
            guard++;
        else
            return 0;
    }
    return keep <= 1 && guard == 1;
}

void agent_confine_pages(const char *p, size_t len, size_t page_bytes, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t start = (uintptr_t)p, end = start + len;

    *lo = (start + page_bytes - 1) / page_bytes * page_bytes;
    *hi = end / page_bytes * page_bytes;
    if (*hi < *lo)
        *hi = *lo;
}

int agent_confine_env_guard(char **env, size_t page_bytes)
{
    static char *kept[2];
    const char *guard = NULL;
    uintptr_t lo, hi;
    size_t k = 0;

    for (size_t i = 0; env[i]; i++) {
        if (strncmp(env[i], AGENT_CONFINE_GUARD, strlen(AGENT_CONFINE_GUARD)) == 0)
            guard = env[i];
        else if (k < 1)
            kept[k++] = env[i];
    }
    kept[k] = NULL;
    if (!guard) {
        errno = EINVAL;
        return -1;
    }
    agent_confine_pages(guard, strlen(guard), page_bytes, &lo, &hi);
    if (lo == hi) {
        errno = EINVAL;
        return -1;
    }
    environ = kept;
    return mprotect((void *)lo, hi - lo, PROT_NONE);
}

/* Runs the agent again with the kept entry and a guard.  Returns only when
 * that failed. */
static int run_again(char **argv, size_t page_bytes, struct llmsb_err *err)
{
    size_t glen = strlen(AGENT_CONFINE_GUARD) + 2 * page_bytes;
    char *guard = malloc(glen + 1), *env[3] = {NULL, NULL, NULL};
    const char *keep = getenv("LLMSB_AGENT_UID");
    char *keep_entry = NULL;

    if (!guard)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "agent: the environment's guard");
    memcpy(guard, AGENT_CONFINE_GUARD, strlen(AGENT_CONFINE_GUARD));
    memset(guard + strlen(AGENT_CONFINE_GUARD), 'x', glen - strlen(AGENT_CONFINE_GUARD));
    guard[glen] = '\0';
    env[0] = guard;
    if (keep) {
        size_t n = strlen(AGENT_CONFINE_KEEP) + strlen(keep) + 1;
        if (!(keep_entry = malloc(n))) {
            free(guard);
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "agent: the environment's kept entry");
        }
        snprintf(keep_entry, n, "%s%s", AGENT_CONFINE_KEEP, keep);
        env[1] = keep_entry;
    }
    execve("/proc/self/exe", argv, env);
    llmsb_err_set(err, LLMSB_ERR_SYS,
                  "agent: run /proc/self/exe again without the container's "
                  "environment: %s",
                  strerror(errno));
    free(keep_entry);
    free(guard);
    return err->code;
}

int agent_confine(char **argv, struct llmsb_err *err)
{
    long page = sysconf(_SC_PAGESIZE);

    if (page <= 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "agent: the page size: %s", strerror(errno));
    if (!agent_confine_env_ready(environ, (size_t)page)) {
        if (getenv("LLMSB_AGENT_GUARD")) /* run again already: never a loop */
            return llmsb_err_set(err, LLMSB_ERR_SYS,
                                 "agent: run again, its environment is still not the one it "
                                 "gave itself (only %s and a guard of two pages)",
                                 AGENT_CONFINE_KEEP);
        return run_again(argv, (size_t)page, err);
    }
    if (agent_confine_env_guard(environ, (size_t)page) != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS,
                             "agent: make the environment's guard unreadable: %s", strerror(errno));
    if (agent_confine_ns_filter() != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "agent: install the namespace filter: %s",
                             strerror(errno));
    return 0;
}
