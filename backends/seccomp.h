/* seccomp.h - the project's own seccomp profile (docs/security.md), the
 * same for every backend: Docker takes it inline in SecurityOpt, Podman
 * the same way, Kubernetes as a Localhost profile file on the node.
 *
 * An allowlist: every x86_64 system call the kernel headers name (Linux
 * 6.1, linux-libc-dev) except the ones a sandboxed program has no business
 * with (io_uring, keyrings, bpf, userfaultfd, perf, the mount family, new
 * namespaces, ptrace and cross-process memory, modules, kexec, clocks,
 * swap, reboot, quotas, handles, NUMA policy); anything else, including
 * system calls newer than the list, fails with EPERM.  clone may not make
 * namespaces; clone3 (whose flags seccomp cannot read) answers ENOSYS so
 * libc falls back to clone; personality takes only the values Docker's
 * default allows. */
#ifndef LLMSB_SECCOMP_H
#define LLMSB_SECCOMP_H

/* The profile as JSON text (Docker / OCI seccomp format), malloc'd, or
 * NULL when out of memory. */
char *seccomp_profile_json(void);

/* 1 when name is a system call the profile denies (for tests and docs). */
int seccomp_denies(const char *name);

#endif
