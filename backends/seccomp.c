/* seccomp.c - the project's seccomp profile (see seccomp.h). */
#include "seccomp.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/common.h"

/* clang-format off */

/* Allowed without conditions. */
static const char *const allowed[] = {
    /* files and descriptors */
    "read", "write", "open", "close", "stat", "fstat", "lstat", "poll", "lseek", "ioctl",
    "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2",
    "access", "faccessat", "faccessat2", "pipe", "pipe2", "select", "pselect6", "ppoll",
    "dup", "dup2", "dup3", "sendfile", "fcntl", "flock", "fsync", "fdatasync", "sync",
    "syncfs", "sync_file_range", "truncate", "ftruncate", "getdents", "getdents64", "getcwd",
    "chdir", "fchdir", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    "creat", "link", "linkat", "unlink", "unlinkat", "symlink", "symlinkat", "readlink",
    "readlinkat", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown",
    "fchownat", "umask", "utime", "utimes", "utimensat", "futimesat", "mknod", "mknodat",
    "statfs", "fstatfs", "newfstatat", "statx", "openat", "openat2", "close_range",
    "readahead", "fadvise64", "fallocate", "splice", "tee", "vmsplice", "copy_file_range",
    "setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr", "fgetxattr", "listxattr",
    "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
    "inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
    "eventfd", "eventfd2", "signalfd", "signalfd4", "timerfd_create", "timerfd_settime",
    "timerfd_gettime", "memfd_create", "memfd_secret", "cachestat",
    "io_setup", "io_destroy", "io_getevents", "io_pgetevents", "io_submit", "io_cancel",
    /* memory */
    "mmap", "mprotect", "munmap", "brk", "mremap", "msync", "mincore", "madvise", "mlock",
    "mlock2", "munlock", "mlockall", "munlockall", "remap_file_pages", "membarrier",
    "pkey_mprotect", "pkey_alloc", "pkey_free", "get_mempolicy", "mseal", "map_shadow_stack",
    /* processes, threads, signals */
    "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "kill",
    "tkill", "tgkill", "getpid", "gettid", "getppid", "getpgrp", "getpgid", "setpgid",
    "getsid", "setsid", "set_tid_address", "set_robust_list", "get_robust_list", "rseq",
    "futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "arch_prctl",
    "set_thread_area", "get_thread_area", "prctl", "seccomp", "restart_syscall",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
    "rt_sigqueueinfo", "rt_tgsigqueueinfo", "rt_sigsuspend", "sigaltstack", "pause",
    "pidfd_open", "pidfd_send_signal", "landlock_create_ruleset", "landlock_add_rule",
    "landlock_restrict_self",
    /* scheduling and limits */
    "sched_yield", "sched_setparam", "sched_getparam", "sched_setscheduler",
    "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
    "sched_rr_get_interval", "sched_setaffinity", "sched_getaffinity", "sched_setattr",
    "sched_getattr", "getpriority", "setpriority", "ioprio_get", "ioprio_set", "getrlimit",
    "setrlimit", "prlimit64", "getrusage", "getcpu",
    /* identity (the agent drops to the sandbox user; capabilities decide the rest) */
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid",
    "setfsgid", "setgroups", "capget", "capset",
    /* time */
    "nanosleep", "clock_nanosleep", "clock_gettime", "clock_getres", "gettimeofday", "time",
    "times", "alarm", "getitimer", "setitimer", "timer_create", "timer_settime",
    "timer_gettime", "timer_getoverrun", "timer_delete",
    /* system information */
    "uname", "sysinfo", "getrandom",
    /* sockets (a network exists only for jobs allowed one) */
    "socket", "socketpair", "connect", "accept", "accept4", "bind", "listen", "shutdown",
    "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "getsockname",
    "getpeername", "setsockopt", "getsockopt",
    /* SysV and POSIX IPC (removed between jobs by the agent) */
    "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semtimedop", "semctl",
    "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
    "mq_timedreceive", "mq_notify", "mq_getsetattr",
};

/* Denied on purpose (everything not allowed is denied; this list is what
 * the docs and the tests name). */
static const char *const denied[] = {
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key",
    "bpf", "userfaultfd", "perf_event_open",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    "unshare", "setns", "clone3",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "process_madvise", "process_mrelease",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "syslog", "vhangup", "iopl", "ioperm",
    "modify_ldt", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname", "quotactl", "quotactl_fd", "lookup_dcookie",
    "name_to_handle_at", "open_by_handle_at", "fanotify_init", "fanotify_mark",
    "mbind", "set_mempolicy", "set_mempolicy_home_node", "migrate_pages", "move_pages",
    "personality", /* except the values below */
    "clone",       /* except without namespace flags */
};

/* personality(2) values Docker's default profile allows: PER_LINUX,
 * UNAME26, PER_LINUX32, PER_LINUX32|UNAME26 and the query 0xffffffff. */
static const double personalities[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffff};

#define ERRNO_EPERM 1
#define ERRNO_ENOSYS 38

/* clang-format on */

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int seccomp_denies(const char *name)
{
    for (size_t i = 0; i < COUNT(denied); i++)
        if (strcmp(denied[i], name) == 0)
            return 1;
    for (size_t i = 0; i < COUNT(allowed); i++)
        if (strcmp(allowed[i], name) == 0)
            return 0;
    return 1;
}

static cJSON *rule(cJSON *syscalls, const char *name, const char *action)
{
    cJSON *r = cJSON_CreateObject(), *names = cJSON_AddArrayToObject(r, "names");
    cJSON_AddItemToArray(names, cJSON_CreateString(name));
    cJSON_AddStringToObject(r, "action", action);
    cJSON_AddItemToArray(syscalls, r);
    return r;
}

static void arg0(cJSON *r, double value, double value_two, const char *op)
{
    cJSON *args = cJSON_AddArrayToObject(r, "args"), *a = cJSON_CreateObject();
    cJSON_AddNumberToObject(a, "index", 0);
    cJSON_AddNumberToObject(a, "value", value);
    cJSON_AddNumberToObject(a, "valueTwo", value_two);
    cJSON_AddStringToObject(a, "op", op);
    cJSON_AddItemToArray(args, a);
}

char *seccomp_profile_json(void)
{
    static const char *const arches[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
    cJSON *root = cJSON_CreateObject(), *arr, *syscalls, *all, *names, *r;
    char *out;

    cJSON_AddStringToObject(root, "defaultAction", "SCMP_ACT_ERRNO");
    cJSON_AddNumberToObject(root, "defaultErrnoRet", ERRNO_EPERM);
    arr = cJSON_AddArrayToObject(root, "architectures");
    for (size_t i = 0; i < COUNT(arches); i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(arches[i]));
    syscalls = cJSON_AddArrayToObject(root, "syscalls");
    all = cJSON_CreateObject();
    names = cJSON_AddArrayToObject(all, "names");
    for (size_t i = 0; i < COUNT(allowed); i++)
        cJSON_AddItemToArray(names, cJSON_CreateString(allowed[i]));
    cJSON_AddStringToObject(all, "action", "SCMP_ACT_ALLOW");
    cJSON_AddItemToArray(syscalls, all);
    /* clone: allowed when (flags & LLMSB_CLONE_NS_FLAGS) == 0 */
    arg0(rule(syscalls, "clone", "SCMP_ACT_ALLOW"), LLMSB_CLONE_NS_FLAGS, 0, "SCMP_CMP_MASKED_EQ");
    r = rule(syscalls, "clone3", "SCMP_ACT_ERRNO");
    cJSON_AddNumberToObject(r, "errnoRet", ERRNO_ENOSYS);
    for (size_t i = 0; i < COUNT(personalities); i++)
        arg0(rule(syscalls, "personality", "SCMP_ACT_ALLOW"), personalities[i], 0, "SCMP_CMP_EQ");
    out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}
