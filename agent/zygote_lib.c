/* zygote_lib.c - the zygote's side of a preloaded interpreter for the
 * languages whose runtime cannot pass descriptors or change its ids by
 * itself (R, and Ruby, which could, but one audited copy of the hardening
 * beats two): bin/llmsb_zygote.so, loaded by languages/hooks/llmsb_zygote.R
 * (.C) and llmsb_zygote.rb (Fiddle).  The Python zygote does the same in
 * Python (llmsb_zygote.py); the protocol with the agent is the same
 * (agent/zygote.c):
 *
 *   the zygote says "R" on the socket (fd 3) when it has preloaded;
 *   a process forked ahead of each request (llmsb_z_take) receives one
 *   message of NUL-separated fields (version, uid, gid, the agent's pid,
 *   RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_NPROC, the work dir, argc, argv...,
 *   env...) with four descriptors (the job's stdin, stdout, stderr and a
 *   control pipe), becomes the job's user (llmsb_z_become), writes "PID
 *   zygote" (or "PID plain" before it execs a plain interpreter) on the
 *   control pipe and runs the job; the zygote waits for it and answers
 *   "exit STATUS UTIME_US STIME_US MAXRSS_KB" (llmsb_z_wait).  A session's
 *   one process answers "done ..." after each call and takes the next
 *   (llmsb_z_next).  Anything that fails before the job's code is told on
 *   the control pipe ("fail WHY"), never on the job's streams.
 *
 * Every entry point takes pointers only (R's .C calling convention; Fiddle
 * passes the same).  Nothing here allocates from the heap after the
 * request: a request lands in a static buffer of the job's own process. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job_limits.h"

extern char **environ;

/* Exported to the interpreters; declared here, as nothing includes them. */
void llmsb_z_init(int *sock, int *uid, int *gid, int *session, int *rc);
void llmsb_z_ready(int *rc);
void llmsb_z_fork(int *pid);
void llmsb_z_take(int *rc);
void llmsb_z_wait(int *pid, int *rc);
void llmsb_z_become(int *rc);
void llmsb_z_arg(int *i, char **out, int *len);
void llmsb_z_tell(int *plain);
void llmsb_z_plain(void);
void llmsb_z_next(int *status, int *rc);
void llmsb_z_forked(int *rc);
void llmsb_z_r_job(int *session, int *rc);
void llmsb_z_waiting(void);
void llmsb_z_exit(int *status);

#define PROTO_VERSION "1"
#define MAX_MSG ((size_t)120 << 10)
#define MAX_ARGS 256
#define MAX_ENV 512

enum { WAITING, RUNNING, IDLE };

static int z_sock = -1, z_uid = -1, z_gid = -1, z_session;
static pid_t z_zygote, z_session_pid;
/* what the process forked ahead is doing, shared with the zygote: the
 * job's own process unmaps it (a session's keeps it: it is the session) */
static volatile unsigned char *z_state;
static char z_buf[MAX_MSG + 1];
static int z_fds[4] = {-1, -1, -1, -1}; /* stdin, stdout, stderr, control */
static char *z_argv[MAX_ARGS + 1], *z_env[MAX_ENV + 1], *z_work;
static int z_argc, z_nenv;
static unsigned long long z_limits[3]; /* fsize, nofile, nproc, as the agent sent them */
static struct rusage z_ru0;            /* a session's usage at its call's start */
/* The zygote's environment at its start, less what the agent added (the
 * BLAS pools' one thread): what the interpreter's launcher set besides
 * the start-up variables (R's front end: R_HOME, LD_LIBRARY_PATH, ...), as
 * a plain start of the job would have it too. */
static char **z_launch_env;
static int z_launch_pwd; /* the launcher exported PWD */

static void say(const char *what)
{
    char line[256];
    int n = snprintf(line, sizeof(line), "llmsb-zygote: %s\n", what);

    if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
        return;
}

static void __attribute__((noreturn)) die(const char *what)
{
    say(what);
    _exit(1);
}

/* Before the job's code: the agent hears why on the control pipe (and
 * starts the job itself); the job's streams get nothing of it. */
static void __attribute__((noreturn)) fail(const char *why)
{
    char line[256];
    int n = snprintf(line, sizeof(line), "fail %.200s\n", why);

    if (z_fds[3] >= 0 && n > 0 && write(z_fds[3], line, (size_t)n) < 0)
        _exit(127);
    _exit(127);
}

/* s as a whole decimal number of 0..max into *v; -1 when it is not one
 * (empty, a sign or a space, anything after the digits, out of range). */
static int parse_num(const char *s, unsigned long long max, unsigned long long *v)
{
    unsigned long long n;
    char *end;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    n = strtoull(s, &end, 10);
    if (*end || errno != 0 || n > max)
        return -1;
    *v = n;
    return 0;
}

static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int launch_env(void)
{
    /* PWD (R's shell front end exports it): the job's is its work dir */
    static const char *const agent_set[] = {
        "OPENBLAS_NUM_THREADS=", "OMP_NUM_THREADS=", "MKL_NUM_THREADS=", "PWD=", "OLDPWD="};
    size_t n = 0, k = 0;

    while (environ[n])
        n++;
    if (!(z_launch_env = calloc(n + 1, sizeof(char *))))
        return -1;
    for (size_t i = 0; i < n; i++) {
        int skip = 0;
        for (size_t a = 0; a < sizeof(agent_set) / sizeof(agent_set[0]); a++)
            skip |= strncmp(environ[i], agent_set[a], strlen(agent_set[a])) == 0;
        z_launch_pwd |= strncmp(environ[i], "PWD=", 4) == 0;
        if (!skip && strchr(environ[i], '=') && !(z_launch_env[k++] = strdup(environ[i])))
            return -1;
    }
    return 0;
}

void llmsb_z_init(int *sock, int *uid, int *gid, int *session, int *rc)
{
    void *m;

    *rc = -1;
    if (*uid <= 0 || *gid <= 0 || *sock < 0)
        return;
    m = mmap(NULL, 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return;
    z_state = m;
    z_sock = *sock, z_uid = *uid, z_gid = *gid, z_session = *session;
    if (launch_env() != 0)
        return;
    if (fcntl(z_sock, F_SETFD, FD_CLOEXEC) != 0)
        return;
    *rc = 0;
}

void llmsb_z_ready(int *rc)
{
    *rc = -1;
    if (threads() != 1) {
        say("refusing: more than one thread after preload");
        return;
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) /* the id changes cleared it */
        return;
    z_zygote = getpid();
    while (send(z_sock, "R", 1, MSG_NOSIGNAL) < 0)
        if (errno != EINTR)
            return;
    *rc = 0;
}

/* Before the interpreter's own fork (Ruby's): the state byte to WAITING. */
void llmsb_z_waiting(void)
{
    if (threads() != 1)
        die("refusing to fork: more than one thread");
    *z_state = WAITING;
}

/* For an interpreter without a fork of its own (R): fork(2), the state
 * byte set to WAITING first. */
void llmsb_z_fork(int *pid)
{
    if (threads() != 1)
        die("refusing to fork: more than one thread");
    *z_state = WAITING;
    *pid = (int)fork();
}

/* The agent's next request and its four descriptors into z_*; _exit(0)
 * when the agent closed the socket. */
static void recv_request(void)
{
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(4 * sizeof(int))];
    } ctl;
    struct iovec iov = {z_buf, MAX_MSG};
    struct msghdr msg = {0};
    struct cmsghdr *c;
    ssize_t n;
    int nfds = 0;
    char *p, *end;

    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.space;
    msg.msg_controllen = sizeof(ctl.space);
    do
        n = recvmsg(z_sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        die("recv failed");
    for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            if (k == 4 && nfds == 0)
                memcpy(z_fds, CMSG_DATA(c), sizeof(z_fds));
            nfds += (int)k;
        }
    if (n == 0)
        _exit(0); /* the agent closed the socket: the zygote ends too */
    if (nfds != 4 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        die("refusing: a request without its four descriptors");
    *z_state = RUNNING;
    z_buf[n] = '\0';
    /* NUL-separated fields: version, uid, gid, agent, fsize, nofile,
     * nproc, work, argc, argv..., env... */
    p = z_buf, end = z_buf + n;
    char *f[9];
    for (int i = 0; i < 9; i++) {
        if (p >= end)
            fail("bad request");
        f[i] = p;
        p += strlen(p) + 1;
    }
    unsigned long long uid, gid, argc;
    if (strcmp(f[0], PROTO_VERSION) != 0 || parse_num(f[1], INT_MAX, &uid) != 0 ||
        parse_num(f[2], INT_MAX, &gid) != 0 || uid != (unsigned long long)z_uid ||
        gid != (unsigned long long)z_gid || parse_num(f[8], MAX_ARGS, &argc) != 0 || argc < 1)
        fail("bad request");
    for (int i = 0; i < 3; i++)
        if (parse_num(f[4 + i], ULLONG_MAX, &z_limits[i]) != 0)
            fail("bad request");
    z_work = f[7];
    for (z_argc = 0; z_argc < (int)argc; z_argc++) {
        if (p >= end)
            fail("bad request");
        z_argv[z_argc] = p;
        p += strlen(p) + 1;
    }
    z_argv[z_argc] = NULL;
    for (z_nenv = 0; p < end && z_nenv < MAX_ENV; p += strlen(p) + 1)
        if (*p)
            z_env[z_nenv++] = p;
    z_env[z_nenv] = NULL;
}

/* In the process forked ahead (still root, a bare copy of the zygote): the
 * next request.  The zygote itself never receives one: nothing of a job's
 * is in its memory, so the next job, a copy of it, finds nothing of this
 * one's. */
void llmsb_z_take(int *rc)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != z_zygote)
        _exit(1);
    recv_request();
    if (!z_session) {
        munmap((void *)z_state, 1); /* the job cannot tell the zygote otherwise */
        z_state = NULL;
    }
    *rc = 0;
}

/* The zygote: waits for the process forked ahead and tells the agent how
 * the job ended.  *rc 0: fork the next one; it does not return when the
 * zygote is over (the agent closed the socket, a session ended). */
void llmsb_z_wait(int *pid, int *rc)
{
    struct rusage ru;
    int status = 0;
    char msg[128];

    while (wait4((pid_t)*pid, &status, 0, &ru) < 0)
        if (errno != EINTR)
            die("wait4 failed");
    if (*z_state == RUNNING) {
        int n =
            snprintf(msg, sizeof(msg), "exit %d %lld %lld %ld", status,
                     (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
                     (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
        while (send(z_sock, msg, (size_t)n, MSG_NOSIGNAL) < 0)
            if (errno != EINTR)
                die("send failed");
    } else if (*z_state == WAITING) { /* the agent closed the socket, or it was killed */
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            _exit(0);
        die("a waiting child ended");
    }
    if (z_session)
        _exit(0); /* the session is over */
    *rc = 0;
}

/* setenv of "NAME=value" (an entry without a name or '=' is skipped). */
static int set_kv(char *kv, int overwrite)
{
    char *eq = strchr(kv, '=');
    int rc;

    if (!eq || eq == kv)
        return 0;
    *eq = '\0';
    rc = setenv(kv, eq + 1, overwrite);
    *eq = '=';
    return rc;
}

/* On the job's pipes, as the job's user, exactly as the agent's own child
 * becomes it (agent/child.c): a new session, rlimits, oom_score_adj 1000, no
 * groups, no new privileges, the death signal, the work dir, the job's
 * environment.  Fails on the control pipe. */
void llmsb_z_become(int *rc)
{
    sigset_t none;

    *rc = -1;
    if (setsid() < 0 || dup2(z_fds[0], 0) < 0 || dup2(z_fds[1], 1) < 0 || dup2(z_fds[2], 2) < 0)
        fail("cannot take the job's pipes");
    for (int i = 0; i < 3; i++)
        if (z_fds[i] > 2)
            close(z_fds[i]);
    if (!z_session) {
        close(z_sock); /* only a session's process takes its next calls there */
        z_sock = -1;
    }
    /* the interpreter's own signal dispositions stay (its SIGPIPE
     * handling, as at its start) */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    job_limits(z_limits[0], z_limits[1], z_limits[2]);
    if (job_oom_first() != 0)
        say("oom_score_adj not set"); /* best effort: the cgroup limit holds */
    if (setgroups(0, NULL) != 0 || setgid((gid_t)z_gid) != 0 || setuid((uid_t)z_uid) != 0)
        fail("cannot change ids");
    if (getuid() != (uid_t)z_uid || geteuid() != (uid_t)z_uid || getgid() != (gid_t)z_gid ||
        getegid() != (gid_t)z_gid)
        fail("ids did not change");
    if (setuid(0) == 0)
        fail("uid 0 is still reachable");
    /* a uid change made the process undumpable (root's /proc files); an
     * exec would have made it dumpable again, as the job's own */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_DUMPABLE, 1) != 0 ||
        prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        fail("prctl failed");
    if (getppid() != z_zygote)
        fail("the zygote is gone");
    if (chdir(z_work) != 0)
        _exit(127); /* as the agent's own start */
    if (clearenv() != 0)
        fail("clearenv failed");
    /* copies (setenv): R unloads this library before the job's code */
    for (int i = 0; i < z_nenv; i++)
        if (set_kv(z_env[i], 1) != 0)
            fail("setenv failed");
    for (size_t i = 0; z_launch_env && z_launch_env[i]; i++)
        if (set_kv(z_launch_env[i], 0) != 0)
            fail("setenv failed");
    if (z_launch_pwd && setenv("PWD", z_work, 0) != 0)
        fail("setenv failed");
    z_session_pid = getpid();
    getrusage(RUSAGE_SELF, &z_ru0);
    *rc = 0;
}

/* argv[*i] (-1: the work dir) into out (a buffer of *len bytes,
 * NUL-terminated), *len set to its length; -1 past the last one.  When it
 * does not fit, nothing is copied and *len is set to the size it needs
 * (more than the buffer's: ask again with that). */
void llmsb_z_arg(int *i, char **out, int *len)
{
    const char *a = *i == -1 ? z_work : *i >= 0 && *i < z_argc ? z_argv[*i] : NULL;
    size_t n;

    if (!a) {
        *len = -1;
        return;
    }
    if ((n = strlen(a)) >= (size_t)*len) {
        *len = (int)n + 1;
        return;
    }
    memcpy(*out, a, n + 1);
    *len = (int)n;
}

/* The agent learns the pid (and whether the zygote's interpreter runs the
 * job) only now: nothing of the job's has run yet. */
void llmsb_z_tell(int *plain)
{
    char line[64];
    int n = snprintf(line, sizeof(line), "%d %s\n", (int)getpid(), *plain ? "plain" : "zygote");

    if (write(z_fds[3], line, (size_t)n) != n)
        _exit(127);
    close(z_fds[3]);
    z_fds[3] = -1;
}

/* What the zygote cannot mimic runs as a plain start would (the job's user
 * already). */
void llmsb_z_plain(void)
{
    int plain = 1;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    llmsb_z_tell(&plain);
    /* the plain start gets 0-2 only, as from the agent (R's REPL has the
     * zygote's script open) */
    while (d && (e = readdir(d))) {
        unsigned long long fd;
        if (parse_num(e->d_name, INT_MAX, &fd) == 0 && fd > 2 && (int)fd != dirfd(d))
            fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    }
    if (d)
        closedir(d);
    execvp(z_argv[0], z_argv);
    dprintf(2, "llmsb-agent: cannot run \"%s\": %s\n", z_argv[0], strerror(errno));
    _exit(127);
}

static long long us(struct timeval t)
{
    return (long long)t.tv_sec * 1000000 + t.tv_usec;
}

/* A session's call ended (the interpreter flushed its streams): its status
 * and resource use sent as "done ...", the streams let go; then the next
 * call's request, its pipes on 0-2.  The caller tells the pid (tell). */
void llmsb_z_next(int *status, int *rc)
{
    struct rusage ru, kids;
    char msg[128];
    int null = open("/dev/null", O_RDWR | O_CLOEXEC), n;

    *rc = -1;
    if (null < 0)
        _exit(1);
    for (int fd = 0; fd < 3; fd++)
        dup2(null, fd);
    if (null > 2)
        close(null);
    getrusage(RUSAGE_SELF, &ru);
    getrusage(RUSAGE_CHILDREN, &kids);
    n = snprintf(msg, sizeof(msg), "done %d %lld %lld %ld", (*status & 0xff) << 8,
                 us(ru.ru_utime) + us(kids.ru_utime) - us(z_ru0.ru_utime),
                 us(ru.ru_stime) + us(kids.ru_stime) - us(z_ru0.ru_stime),
                 ru.ru_maxrss > kids.ru_maxrss ? ru.ru_maxrss : kids.ru_maxrss);
    while (send(z_sock, msg, (size_t)n, MSG_NOSIGNAL) < 0)
        if (errno != EINTR)
            _exit(1);
    *z_state = IDLE;
    recv_request();
    for (int i = 0; i < 3; i++) {
        if (dup2(z_fds[i], i) < 0)
            fail("cannot take the call's pipes");
        if (z_fds[i] > 2)
            close(z_fds[i]);
    }
    getrusage(RUSAGE_SELF, &ru);
    getrusage(RUSAGE_CHILDREN, &kids);
    z_ru0.ru_utime.tv_sec = ru.ru_utime.tv_sec + kids.ru_utime.tv_sec;
    z_ru0.ru_utime.tv_usec = ru.ru_utime.tv_usec + kids.ru_utime.tv_usec;
    z_ru0.ru_stime.tv_sec = ru.ru_stime.tv_sec + kids.ru_stime.tv_sec;
    z_ru0.ru_stime.tv_usec = ru.ru_stime.tv_usec + kids.ru_stime.tv_usec;
    *rc = 0;
}

/* 1 in a process a session's call forked (it ends with the call, never
 * takes the next); the agent's socket closed in it. */
void llmsb_z_forked(int *rc)
{
    *rc = z_session_pid && getpid() != z_session_pid;
    if (*rc && z_sock >= 0) {
        close(z_sock);
        z_sock = -1;
    }
}

/* The descriptor R's REPL reads its --file through: the one open on the
 * zygote's own script, read whole (its offset at the end), or -1. */
static int r_file_fd(void)
{
    char self[PATH_MAX], link[300], target[PATH_MAX];
    struct stat st;
    DIR *d;
    struct dirent *e;
    ssize_t n;
    int fd = -1;

    if (!realpath("/usr/local/lib/llmsb/llmsb_zygote.R", self) || stat(self, &st) != 0 ||
        !(d = opendir("/proc/self/fd")))
        return -1;
    while ((e = readdir(d)) && fd < 0) {
        unsigned long long num;
        if (parse_num(e->d_name, INT_MAX, &num) != 0)
            continue; /* "." and ".." */
        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        if ((n = readlink(link, target, sizeof(target) - 1)) > 0) {
            target[n] = '\0';
            if (strcmp(target, self) == 0)
                fd = (int)num;
        }
    }
    closedir(d);
    if (fd < 3 || lseek(fd, 0, SEEK_CUR) != st.st_size)
        return -1;
    return fd;
}

/* R's side of a job: the REPL that Rscript runs reads its --file through a
 * stdio stream; the zygote was started with its own script as that file,
 * small enough to have been read whole into the stream's buffer.  The
 * job's program is put on the same descriptor, so that when the zygote's
 * last expression returns the REPL reads the job's file from its start,
 * exactly as `Rscript FILE` would: its errors, warnings, quit() and
 * "Execution halted" are R's own.  commandArgs(), proc.time() and
 * tempdir() are made the job's (a fresh R_TempDir of the job's user: the
 * zygote's is root's).  *session: only the last two (a session's process
 * reads its calls itself).  *rc -1: a plain start, nothing changed. */
void llmsb_z_r_job(int *session, int *rc)
{
    char file_arg[PATH_MAX + 8], *args[MAX_ARGS + 8];
    void (*set_args)(int, char **) =
        (void (*)(int, char **))dlsym(RTLD_DEFAULT, "R_set_command_line_arguments");
    void (*set_start)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "R_setStartTime");
    char **tempdir = (char **)dlsym(RTLD_DEFAULT, "R_TempDir");
    void (*reinit_tempdir)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "R_reInitTempDir");
    int fd = -1, job = -1, s = 1, k = 0;

    *rc = -1;
    if (!set_args || !set_start || !tempdir || !reinit_tempdir)
        return;
    if (!*session) {
        /* Rscript [OPTIONS] FILE [ARGS]: the R binary it execs sees
         * --no-echo --no-restore OPTIONS --file=FILE [--args ARGS] */
        while (s < z_argc && z_argv[s][0] == '-')
            s++;
        if (s >= z_argc || strlen(z_argv[s]) > PATH_MAX || (fd = r_file_fd()) < 0 ||
            (job = open(z_argv[s], O_RDONLY | O_CLOEXEC)) < 0)
            return;
    }
    if (job >= 0 && dup2(job, fd) < 0) {
        close(job);
        return;
    }
    if (job >= 0)
        close(job);
    /* R makes it anew (under TMPDIR, R_SESSION_TMPDIR set) as at its
     * start, and removes that one at exit, not the zygote's */
    *tempdir = NULL;
    reinit_tempdir(0);
    set_start();
    *rc = 0;
    if (*session)
        return;
    args[k++] = "/usr/lib/R/bin/exec/R";
    args[k++] = "--no-echo";
    args[k++] = "--no-restore";
    for (int i = 1; i < s; i++)
        args[k++] = z_argv[i];
    snprintf(file_arg, sizeof(file_arg), "--file=%s", z_argv[s]);
    args[k++] = file_arg;
    if (s + 1 < z_argc)
        args[k++] = "--args";
    for (int i = s + 1; i < z_argc; i++)
        args[k++] = z_argv[i];
    args[k] = NULL;
    set_args(k, args);
}

/* _exit for an interpreter's zygote side. */
void llmsb_z_exit(int *status)
{
    _exit(*status);
}
