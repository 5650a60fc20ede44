/* zygote.c - the agent's side of a preloaded interpreter.
 *
 * A job's TAG_ZYGOTE names a script in the image (llmsb_zygote.py for
 * Python) that loads the interpreter and the image's common libraries once
 * and then forks one process per job.  The agent starts it only when the
 * sandbox is clean (right after a cleanup that succeeded, before any job
 * file is unpacked, or at the worker's PRESTART on a sandbox no job has
 * used), as root with the job's start-up environment, stdout on the
 * agent's stderr (never on the protocol), a SOCK_SEQPACKET socket on fd 3
 * and a death signal tied to the agent.  It says "R" when it has
 * preloaded; no job runs while it preloads (a job that arrives waits, or
 * ends the zygote when it cannot use it).
 *
 * Per run the agent sends one message (see the script's docstring) with
 * the child's stdin, stdout, stderr and a control pipe; the zygote forks
 * and the job's process writes its pid on the control pipe before any of
 * the job's code runs.  From there the agent supervises it as any child of
 * its own (wall clock, output caps, kills by group and by uid) except that
 * the wait status and rusage come from the zygote, which waits for it, as
 * one message on the socket (zygote_exit).  Should the zygote die first,
 * the job's process dies with it (its death signal) and, re-parented to
 * the agent (a child subreaper), is reaped by the agent.  Anything that
 * goes wrong before the pid (no answer, a dead socket, a pid that makes no
 * sense) ends the zygote and the run starts plainly; after three failures
 * in a row the sandbox stops using one. */
#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Preloading numpy, pandas and matplotlib takes ~1 s on an idle sandbox; a
 * job waits at most this long, for all zygotes still starting together,
 * well inside the worker's backstop grace (10 s). */
#define ZYGOTE_READY_MS 5000
#define ZYGOTE_DIR "/usr/local/lib/llmsb/"
#define ZYGOTE_PID_MS 5000
#define ZYGOTE_MAX_MSG ((size_t)120 << 10)
#define ZYGOTE_MAX_FAILURES 3

enum zstate { Z_NONE, Z_STARTING, Z_READY };

struct zspec {
    const char *profile; /* one of profiles[] */
    char *script;
    char *argv0;
    char **env; /* the start-up-sensitive entries of the job's env, in order */
    size_t nenv;
};

/* What the zygote preloads (llmsb_zygote.py): "base" the standard library
 * a program commonly uses, "data" numpy, pandas and matplotlib besides,
 * "numpy" numpy alone besides.  One zygote per profile at most; the worker
 * picks the profile by the modules the job's code names (a smaller zygote
 * forks faster, and its job's process exits faster). */
static const char *const profiles[] = {"base", "data", "session", "numpy"};
#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))
/* The session's slot: started by the session's first call, its one process
 * runs every call ("done ..." per call); never started at idle time. */
#define SESSION_SLOT (&slots[2])

struct zslot {
    enum zstate state;
    pid_t pid;
    int sock;
    struct zspec running; /* what the zygote was started with */
    struct zspec wanted;  /* what the last job of this profile asked for */
    int failures;
};

static struct zslot slots[NPROFILES] = {{Z_NONE, -1, -1, {0}, {0}, 0},
                                        {Z_NONE, -1, -1, {0}, {0}, 0},
                                        {Z_NONE, -1, -1, {0}, {0}, 0},
                                        {Z_NONE, -1, -1, {0}, {0}, 0}};
/* The session this sandbox holds (NULL: none yet), and whether its process
 * finished its last call and waits for the next. */
static char *session_id;
static int session_idle;
static struct zslot *cur; /* the zygote of the job being run, if any */
static int memory_checked, memory_fits;

/* 1 when the name of kv ("NAME=value") is one of names[0..n). */
static int name_in(const char *kv, const char *const *names, size_t n)
{
    size_t len = strcspn(kv, "=");

    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == len && strncmp(kv, names[i], len) == 0)
            return 1;
    return 0;
}

int zygote_env_sensitive(const char *kv)
{
    static const char *const prefixes[] = {"PYTHON",  "LC_",      "MPL",     "MATPLOTLIB", "NPY_",
                                           "NUMPY",   "OPENBLAS", "OMP_",    "MKL_",       "GOTO",
                                           "NUMEXPR", "LD_",      "MALLOC_", /* Python's */
                                           "RUBY",    "GEM_",     "BUNDLE",  /* Ruby's */
                                           "R_"}; /* R's (R_LIBS*, R_PROFILE*, R_ENVIRON*) */
    static const char *const names[] = {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR"};

    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(kv, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return name_in(kv, names, sizeof(names) / sizeof(names[0]));
}

/* The interpreters with a zygote: the image's script, the interpreter a
 * job's run step must name (it starts the zygote), the arguments before
 * the script, and the start-up variables a zygote may be started with:
 * those the worker sets for every job of the language and a job cannot
 * replace (job/job.c job_check_env).  A job that sets any other
 * start-up variable (PYTHONPATH, RUBYOPT, R_PROFILE_USER, LD_PRELOAD, ...)
 * gets a plain start: what a job sets never reaches a process that runs
 * as root. */
#define COMMON_ALLOWED "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL"
static const struct zlang {
    const char *script, *argv0;
    const char *allowed[10];
} zlangs[] = {
    {"llmsb_zygote.py",
     "python3",
     {COMMON_ALLOWED, "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "MPLBACKEND", "MPLCONFIGDIR",
      "PYTHONUSERBASE"}},
    {"llmsb_zygote.rb", "ruby", {COMMON_ALLOWED, "GEM_HOME"}},
    {"llmsb_zygote.R", "Rscript", {COMMON_ALLOWED, "R_LIBS_USER"}},
};

static int env_allowed(const struct zlang *l, const char *kv)
{
    size_t n = 0;

    while (n < sizeof(l->allowed) / sizeof(l->allowed[0]) && l->allowed[n])
        n++;
    return name_in(kv, l->allowed, n);
}

/* The interpreter of the image's zygote script path, NULL: none. */
static const struct zlang *zlang_of(const char *script)
{
    const char *base;

    if (strncmp(script, ZYGOTE_DIR, strlen(ZYGOTE_DIR)) != 0 ||
        strchr(base = script + strlen(ZYGOTE_DIR), '/'))
        return NULL;
    for (size_t i = 0; i < sizeof(zlangs) / sizeof(zlangs[0]); i++)
        if (strcmp(base, zlangs[i].script) == 0)
            return &zlangs[i];
    return NULL;
}

static void spec_free(struct zspec *s)
{
    free(s->script);
    free(s->argv0);
    strlist_free(s->env, s->nenv);
    memset(s, 0, sizeof(*s));
}

/* The spec of job into s; -1 when it cannot have a zygote (or out of
 * memory). */
static int spec_of(const struct proto_job *job, struct zspec *s)
{
    const struct zlang *l = zlang_of(job->zygote);
    int rc = 0;

    memset(s, 0, sizeof(*s));
    /* the agent runs nothing as root but the image's own zygote script
     * with the interpreter the language names */
    if (!l || strcmp(job->run_argv[0], l->argv0) != 0)
        return -1;
    for (size_t i = 0; i < job->nenv; i++)
        if (zygote_env_sensitive(job->env[i]) && !env_allowed(l, job->env[i]))
            return -1;
    for (size_t i = 0; i < NPROFILES; i++)
        if (strcmp(job->session          ? "session"
                   : job->zygote_profile ? job->zygote_profile
                                         : "base",
                   profiles[i]) == 0)
            s->profile = profiles[i];
    if (!job->session && s->profile == profiles[2])
        s->profile = NULL; /* only a session's call starts one */
    if (!s->profile)
        return -1;
    s->script = strdup(job->zygote);
    s->argv0 = strdup(job->run_argv[0]);
    for (size_t i = 0; i < job->nenv && rc == 0; i++)
        if (zygote_env_sensitive(job->env[i]))
            rc = strlist_add(&s->env, &s->nenv, job->env[i], strlen(job->env[i]));
    if (rc != 0 || !s->script || !s->argv0) {
        spec_free(s);
        return -1;
    }
    return 0;
}

static int spec_eq(const struct zspec *a, const struct zspec *b)
{
    if (!a->script || !b->script || a->profile != b->profile || strcmp(a->script, b->script) != 0 ||
        strcmp(a->argv0, b->argv0) != 0 || a->nenv != b->nenv)
        return 0;
    for (size_t i = 0; i < a->nenv; i++)
        if (strcmp(a->env[i], b->env[i]) != 0)
            return 0;
    return 1;
}

static long long read_ll_file(const char *path)
{
    char line[64];
    long long v = -1;
    FILE *f = fopen(path, "re");

    if (!f)
        return -1;
    if (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, "max") == 0)
            v = (long long)1 << 62;
        else if (parse_ll(line, 0, (long long)1 << 62, &v) != 0)
            v = -1;
    }
    fclose(f);
    return v;
}

/* The sandbox's memory limit leaves room for a zygote (or there is none). */
static int memory_ok(void)
{
    if (!memory_checked) {
        long long lim = read_ll_file("/sys/fs/cgroup/memory.max");
        if (lim < 0)
            lim = read_ll_file("/sys/fs/cgroup/memory/memory.limit_in_bytes");
        memory_fits = lim < 0 || lim >= ZYGOTE_MIN_MEMORY;
        memory_checked = 1;
        if (!memory_fits)
            fprintf(stderr, "llmsb-agent: memory limit %lld MiB: no zygote (needs %lld)\n",
                    lim >> 20, ZYGOTE_MIN_MEMORY >> 20);
    }
    return memory_fits;
}

static void end_zygote(struct zslot *z, int failed)
{
    if (z->pid > 0) {
        kill(z->pid, SIGKILL);
        while (waitpid(z->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (z->sock >= 0)
        close(z->sock);
    z->pid = -1;
    z->sock = -1;
    z->state = Z_NONE;
    spec_free(&z->running);
    if (z == cur)
        cur = NULL;
    if (failed && ++z->failures == ZYGOTE_MAX_FAILURES)
        fprintf(stderr, "llmsb-agent: the %s zygote failed %d times: plain starts from now on\n",
                profiles[z - slots], ZYGOTE_MAX_FAILURES);
}

int zygote_socket(void)
{
    return cur && cur->state == Z_READY ? cur->sock : -1;
}

int zygote_exit(int *status, struct rusage *ru)
{
    char msg[160];
    long long st, ut, stm, rss;
    ssize_t n;

    if (!cur)
        return -1;
    do
        n = recv(cur->sock, msg, sizeof(msg) - 1, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
        return 0;
    if (n > 0) {
        msg[n] = '\0';
        char word[8] = "";
        if (sscanf(msg, "%4s %lld %lld %lld %lld", word, &st, &ut, &stm, &rss) == 5 &&
            (strcmp(word, "exit") == 0 || (strcmp(word, "done") == 0 && cur == SESSION_SLOT)) &&
            st >= 0 && st <= 0xffff && ut >= 0 && stm >= 0 && rss >= 0) {
            /* "done": a session's call ended and its process lives on */
            if (cur == SESSION_SLOT)
                session_idle = strcmp(word, "done") == 0;
            memset(ru, 0, sizeof(*ru));
            ru->ru_utime.tv_sec = (time_t)(ut / 1000000);
            ru->ru_utime.tv_usec = (suseconds_t)(ut % 1000000);
            ru->ru_stime.tv_sec = (time_t)(stm / 1000000);
            ru->ru_stime.tv_usec = (suseconds_t)(stm % 1000000);
            ru->ru_maxrss = (long)rss;
            *status = (int)st;
            return 1;
        }
    }
    fprintf(stderr, "llmsb-agent: the zygote's answer: %s\n",
            n == 0  ? "it closed the socket"
            : n < 0 ? strerror(errno)
                    : "malformed");
    end_zygote(cur, 1);
    return -1;
}

void zygote_reaped(pid_t pid)
{
    for (size_t i = 0; i < NPROFILES && pid > 0; i++) {
        if (pid != slots[i].pid)
            continue;
        slots[i].pid = -1; /* reaped: never signal that number again */
        fprintf(stderr, "llmsb-agent: the %s zygote died\n", profiles[i]);
        end_zygote(&slots[i], 1);
    }
}

void zygote_abandon(void)
{
    fprintf(stderr, "llmsb-agent: gave up waiting for the zygote's answer\n");
    if (cur)
        end_zygote(cur, 1);
}

void zygote_stop(void)
{
    for (size_t i = 0; i < NPROFILES; i++) {
        end_zygote(&slots[i], 0);
        spec_free(&slots[i].wanted);
    }
}

static void __attribute__((noreturn))
exec_zygote(const struct agent_conf *conf, const struct zslot *z, int sock, char **env)
{
    char uid[16], gid[16];
    char *argv[] = {
        z->running.argv0, z->running.script, (char *)z->running.profile, uid, gid, NULL};
    sigset_t none;
    int in[2];

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    setsid();
    /* stdin a pipe at its end, as every job's stdin is a pipe: the
     * interpreter's stdin objects, made now, are what a job inherits */
    if (pipe(in) != 0 || dup2(in[0], 0) < 0 || close(in[1]) != 0 || dup2(2, 1) < 0 ||
        dup2(sock, 3) < 0 || chdir("/") != 0 || setgroups(0, NULL) != 0)
        _exit(127);
    closefrom(4);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    snprintf(uid, sizeof(uid), "%u", (unsigned)conf->uid);
    snprintf(gid, sizeof(gid), "%u", (unsigned)conf->gid);
    environ = env;
    execvp(argv[0], argv);
    fprintf(stderr, "llmsb-agent: cannot start the zygote %s: %s\n", argv[1], strerror(errno));
    _exit(127);
}

/* Its start-up environment, BLAS pools at one thread unless the job's
 * environment says otherwise (then the zygote refuses: threads). */
static char **zygote_env(const struct zslot *z, size_t *n)
{
    static const char *const one_thread[] = {"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1",
                                             "MKL_NUM_THREADS=1"};
    char **env = NULL;
    int rc = 0;

    *n = 0;
    for (size_t i = 0; i < z->running.nenv && rc == 0; i++)
        rc = strlist_add(&env, n, z->running.env[i], strlen(z->running.env[i]));
    for (size_t i = 0; i < sizeof(one_thread) / sizeof(one_thread[0]) && rc == 0; i++) {
        size_t klen = strcspn(one_thread[i], "=") + 1;
        int set = 0;
        for (size_t k = 0; k < z->running.nenv; k++)
            set |= strncmp(z->running.env[k], one_thread[i], klen) == 0;
        if (!set)
            rc = strlist_add(&env, n, one_thread[i], strlen(one_thread[i]));
    }
    if (rc != 0) {
        strlist_free(env, *n);
        return NULL;
    }
    return env;
}

static int spec_copy(const struct zspec *from, struct zspec *to)
{
    int rc = 0;

    memset(to, 0, sizeof(*to));
    to->profile = from->profile;
    to->script = strdup(from->script);
    to->argv0 = strdup(from->argv0);
    for (size_t i = 0; i < from->nenv && rc == 0; i++)
        rc = strlist_add(&to->env, &to->nenv, from->env[i], strlen(from->env[i]));
    if (rc != 0 || !to->script || !to->argv0) {
        spec_free(to);
        return -1;
    }
    return 0;
}

static void start_zygote(const struct agent_conf *conf, struct zslot *z)
{
    char **env = NULL;
    size_t nenv = 0;
    int sv[2] = {-1, -1};
    pid_t pid = -1;

    if (spec_copy(&z->wanted, &z->running) != 0 || !(env = zygote_env(z, &nenv)) ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 || (pid = fork()) < 0) {
        fprintf(stderr, "llmsb-agent: cannot start the zygote: %s\n", strerror(errno));
        strlist_free(env, nenv);
        if (sv[0] >= 0)
            close(sv[0]), close(sv[1]);
        end_zygote(z, 1);
        return;
    }
    if (pid == 0)
        exec_zygote(conf, z, sv[1], env);
    close(sv[1]);
    strlist_free(env, nenv);
    z->pid = pid;
    z->sock = sv[0];
    z->state = Z_STARTING;
}

void zygote_idle(const struct agent_conf *conf)
{
    for (size_t i = 0; i < NPROFILES; i++) {
        struct zslot *z = &slots[i];
        if (z == SESSION_SLOT || !z->wanted.script || z->failures >= ZYGOTE_MAX_FAILURES ||
            !memory_ok())
            continue;
        if (z->state != Z_NONE && spec_eq(&z->running, &z->wanted))
            continue;
        end_zygote(z, 0);
        start_zygote(conf, z);
    }
}

/* Waits up to ms for the zygote's "R". */
static int wait_ready(struct zslot *z, int ms)
{
    struct pollfd pf = {z->sock, POLLIN, 0};
    int64_t deadline = clock_mono_ms() + ms;
    char c = 0;
    int n;

    for (;;) {
        int64_t left = deadline - clock_mono_ms();
        if (left < 0)
            left = 0;
        n = poll(&pf, 1, (int)left);
        if (n > 0)
            break;
        if (n == 0 || errno != EINTR)
            return -1;
    }
    if (recv(z->sock, &c, 1, 0) != 1 || c != 'R')
        return -1;
    z->state = Z_READY;
    return 0;
}

int zygote_session(const struct agent_conf *conf, const struct proto_job *job, char *why,
                   size_t whysz)
{
    struct zslot *z = SESSION_SLOT;
    struct zspec want;
    char peek;

    cur = NULL;
    if (session_id && strcmp(session_id, job->session) != 0) {
        snprintf(why, whysz, "agent: this sandbox holds another session");
        return -1;
    }
    if (session_id) { /* a later call: its process must be there, idle */
        if (z->state != Z_READY || !session_idle ||
            recv(z->sock, &peek, 1, MSG_PEEK | MSG_DONTWAIT) >= 0 ||
            (errno != EAGAIN && errno != EWOULDBLOCK)) {
            snprintf(why, whysz,
                     "the session's process is gone (a call timed out, ran out of "
                     "memory or output, or ended it with exit)");
            return -1;
        }
        cur = z;
        return 0;
    }
    if (spec_of(job, &want) != 0) {
        snprintf(why, whysz,
                 "a session's environment may set no start-up variable (PYTHON*, "
                 "LD_*, ...) but those the worker sets");
        return -1;
    }
    spec_free(&z->wanted);
    z->wanted = want;
    start_zygote(conf, z);
    if (z->state != Z_STARTING || wait_ready(z, ZYGOTE_READY_MS) != 0) {
        end_zygote(z, 1);
        snprintf(why, whysz, "agent: the session's interpreter did not start");
        return -1;
    }
    if (!(session_id = strdup(job->session))) {
        end_zygote(z, 1);
        snprintf(why, whysz, "agent: out of memory");
        return -1;
    }
    session_idle = 1;
    cur = z;
    return 0;
}

int zygote_session_alive(void)
{
    return session_id && SESSION_SLOT->state == Z_READY && session_idle;
}

void zygote_session_end(void)
{
    end_zygote(SESSION_SLOT, 0);
    session_idle = 0;
}

/* Remembers what job asks of its profile's zygote (the next idle time, or
 * a prestart, starts it).  Returns that profile's slot, NULL when the job
 * cannot have a zygote. */
static struct zslot *remember_wanted(const struct proto_job *job)
{
    struct zspec want;
    struct zslot *z = NULL;

    if (!job->zygote || !job->nrun || job->ninstall || job->ncompile || spec_of(job, &want) != 0)
        return NULL;
    for (size_t i = 0; i < NPROFILES; i++)
        if (want.profile == profiles[i])
            z = &slots[i];
    if (!spec_eq(&want, &z->wanted)) {
        spec_free(&z->wanted);
        z->wanted = want;
    } else {
        spec_free(&want);
    }
    return z;
}

/* No zygote preloads beside a job: each that is starting is waited for
 * (all together within ZYGOTE_READY_MS), or ended when no job can use it
 * (z's, started for another spec than z wants now). */
static void await_starting(struct zslot *z)
{
    int64_t deadline = clock_mono_ms() + ZYGOTE_READY_MS;

    for (size_t i = 0; i < NPROFILES; i++) {
        struct zslot *s = &slots[i];
        int64_t left = deadline - clock_mono_ms();
        if (s->state != Z_STARTING)
            continue;
        if (s == z && !spec_eq(&s->running, &s->wanted)) {
            end_zygote(s, 0);
        } else if (wait_ready(s, left > 0 ? (int)left : 0) != 0) {
            fprintf(stderr, "llmsb-agent: the %s zygote did not get ready in %d ms\n", profiles[i],
                    ZYGOTE_READY_MS);
            end_zygote(s, 1);
        }
    }
}

void zygote_for_job(const struct agent_conf *conf, const struct proto_job *job)
{
    struct zslot *z;

    (void)conf;
    if (job->session)
        return;
    cur = NULL;
    z = remember_wanted(job);
    await_starting(z);
    if (z && z->state == Z_READY && spec_eq(&z->running, &z->wanted))
        cur = z;
}

int zygote_in_use(void)
{
    return cur != NULL;
}

void zygote_prestart(const struct agent_conf *conf, const struct proto_job *job)
{
    cur = NULL;
    if (job->session || !remember_wanted(job))
        return;
    zygote_idle(conf);
    await_starting(NULL);
}

/* NUL-separated fields, as llmsb_zygote.py reads them. */
static int request(struct buf *m, const struct agent_conf *conf, const struct proto_job *job,
                   char *const *argv, char *const *env)
{
    size_t argc = 0;
    int rc;

    while (argv[argc])
        argc++;
    rc = buf_printf(m, "1%c%u%c%u%c%ld%c%llu%c%llu%c%llu%c%s%c%zu%c", 0, (unsigned)conf->uid, 0,
                    (unsigned)conf->gid, 0, (long)getpid(), 0, (unsigned long long)job->fsize_limit,
                    0, (unsigned long long)job->nofile, 0, (unsigned long long)job->nproc, 0,
                    conf->work_dir, 0, argc, 0);
    for (size_t i = 0; argv[i] && rc == 0; i++)
        rc = buf_append(m, argv[i], strlen(argv[i]) + 1);
    for (size_t i = 0; env && env[i] && rc == 0; i++)
        rc = buf_append(m, env[i], strlen(env[i]) + 1);
    return rc;
}

static int send_request(const struct buf *m, const int fds[4])
{
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(4 * sizeof(int))];
    } ctl;
    struct iovec iov = {m->data, m->len};
    struct msghdr msg = {0};
    struct cmsghdr *c;

    memset(&ctl, 0, sizeof(ctl));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.space;
    msg.msg_controllen = sizeof(ctl.space);
    c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(4 * sizeof(int));
    memcpy(CMSG_DATA(c), fds, 4 * sizeof(int));
    for (;;) {
        ssize_t n = sendmsg(cur->sock, &msg, MSG_NOSIGNAL);
        if (n == (ssize_t)m->len)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return -1;
    }
}

/* The job's pid from the control pipe ("PID zygote" or "PID plain": the
 * zygote's interpreter runs the job, or it exec'd a plain one), or -1. */
static pid_t read_pid(int fd, int *plain)
{
    struct pollfd pf = {fd, POLLIN, 0};
    int64_t deadline = clock_mono_ms() + ZYGOTE_PID_MS;
    char line[32], *how;
    size_t got = 0;
    long long pid;

    while (got < sizeof(line) - 1 && !memchr(line, '\n', got)) {
        int64_t left = deadline - clock_mono_ms();
        ssize_t n;
        int pr;
        if (left <= 0)
            return -1;
        if ((pr = poll(&pf, 1, (int)left)) == 0 || (pr < 0 && errno != EINTR))
            return -1;
        if (pr < 0)
            continue;
        n = read(fd, line + got, sizeof(line) - 1 - got);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    line[got] = '\0';
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "fail ", 5) == 0) {
        fprintf(stderr, "llmsb-agent: the zygote's child: %s\n", line + 5);
        return -1;
    }
    if (!(how = strchr(line, ' ')))
        return -1;
    *how++ = '\0';
    if (parse_ll(line, 2, 1 << 30, &pid) != 0 ||
        (strcmp(how, "zygote") != 0 && strcmp(how, "plain") != 0))
        return -1;
    *plain = strcmp(how, "plain") == 0;
    return (pid_t)pid;
}

pid_t zygote_fork(const struct agent_conf *conf, const struct proto_job *job, char *const *argv,
                  char *const *env, int in_fd, int out_fd, int err_fd, int *plain)
{
    struct buf m;
    int ctl[2], fds[4];
    pid_t pid = -1;

    if (!cur || cur->state != Z_READY)
        return -1;
    buf_init(&m, ZYGOTE_MAX_MSG);
    if (request(&m, conf, job, argv, env) != 0) {
        buf_release(&m); /* too big for one message: a plain start */
        return -1;
    }
    if (pipe2(ctl, O_CLOEXEC) != 0) {
        buf_release(&m);
        return -1;
    }
    fds[0] = in_fd, fds[1] = out_fd, fds[2] = err_fd, fds[3] = ctl[1];
    if (cur == SESSION_SLOT)
        session_idle = 0; /* "done" sets it again */
    if (send_request(&m, fds) == 0) {
        close(ctl[1]);
        ctl[1] = -1;
        pid = read_pid(ctl[0], plain);
    }
    if (ctl[1] >= 0)
        close(ctl[1]);
    close(ctl[0]);
    buf_release(&m);
    if (pid < 0) {
        fprintf(stderr, "llmsb-agent: the %s zygote did not start a job\n", profiles[cur - slots]);
        end_zygote(cur, 1);
        return -1;
    }
    cur->failures = 0;
    return pid;
}
