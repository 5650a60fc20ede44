/* confine.c - what the agent does to its own process at start, for every
 * process of the sandbox after it, on any runtime: the namespace filter.
 *
 * No process of a sandbox may make a namespace: unshare and setns fail
 * with EPERM, clone with a CLONE_NEW* flag too, and clone3 (whose flags
 * sit in memory a filter cannot read) with ENOSYS, so that libc falls
 * back to clone.  On runc the container's seccomp profile
 * (backends/seccomp.c) already answers the same, so nothing changes there;
 * on gVisor that profile is not loaded (docs/security.md), and a job that
 * made a user namespace held every capability in it, RLIMIT_NPROC's
 * exemption among them: its pids limit, the only bound on its processes
 * there, was gone (a job at pids 32 made 1,500).  gVisor runs seccomp
 * filters for the programs it runs, so this one filter, installed on the
 * agent before anything starts, holds on both (and on a pod, which cannot
 * carry our profile). */
#include "confine.h"

#include <endian.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

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

int agent_confine(struct llmsb_err *err)
{
    if (agent_confine_ns_filter() != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "agent: install the namespace filter: %s",
                             strerror(errno));
    return 0;
}
