/* javac.c - the agent's side of the warm javac (the Java compile server).
 *
 * A Java job's compile step pays javac's JVM start-up (~250 ms) for a
 * compile that takes ~15 ms in a warm JVM.  The image's
 * languages/hooks/LlmsbJavac.java (compiled by root at image build) is a
 * long-lived JVM that compiles in-process, a new javac context and file
 * manager per compile, class files kept in memory; it writes no file.
 *
 * The rules, as the zygote's (zygote.c):
 * - started only on a clean sandbox (idle time after a cleanup that
 *   succeeded, or the worker's PRESTART), with a fixed environment, as
 *   JAVAC_UID (nobody), not the job's uid: a job's processes can neither
 *   signal nor trace it nor read its /proc files; oom_score_adj 1000, a
 *   bounded heap, a death signal tied to the agent; not below
 *   JAVAC_MIN_MEMORY; a job waits at most JAVAC_READY_MS for one warming
 *   up; three failures in a row and the sandbox compiles plainly.
 * - no job can reach it: it accepts on a unix socket passed to it as fd 0
 *   whose name is gone before any job runs: the agent binds it in a new
 *   directory only root can search (under /tmp: the root file system is
 *   read-only), connects JAVAC_CONNS times (the connections wait in the
 *   socket's backlog), and removes the name and the directory, all before
 *   the server starts on a clean, idle sandbox.  Per compile the agent
 *   hands the next connection (nothing of an earlier compile's on it) to
 *   the compile step's child only; the server accepts them in order.
 * - the child, already the job's uid under the job's limits in the work
 *   dir, sends javac's arguments and takes the answer.  ONLY when javac
 *   succeeded and said nothing does it write the class files itself (as the
 *   job's uid: owner and modes as javac's own) and exit 0; anything else
 *   (a diagnostic, a failure, the server gone, no answer within half the
 *   step's time) runs the exact plain javac argv, whose output and exit
 *   code are the job's: diagnostics are byte-identical by construction.
 *   Before it does, it says so on a status pipe: the agent's deadline for
 *   the step starts anew, the plain javac has the whole timeout of its own.
 * - eligible: the worker set job->compile_server (the row's own argv, no
 *   libraries, no flags), the job's env is only the sandbox's own entries
 *   (nothing the JVM or javac reads at start-up), LLMSB_COMPILE_CACHE is
 *   not 0, and the work dir holds no META-INF, module-info or installed
 *   library (whatever could add an annotation processor, which -proc:none
 *   leaves out; the server itself refuses to start when its class path
 *   names one) and no .hotspotrc or .hotspot_compiler (plain javac's JVM
 *   warns about them); the container's pids.max is the job's 256 or
 *   more with the server's threads on top (proto.h: the worker adds them).
 * - a compile that timed out or was killed ends the server (it may be
 *   stuck on that input), so does one that got no usable answer and one
 *   that left it above JAVAC_MAX_RSS; it restarts at the next idle time,
 *   and when its connections are used up.
 * LLMSB_COMPILE_CACHE_TRACE=FILE appends "warm", "plain" or "fallback" to
 * FILE, or to the compile output when FILE is "-" (the differential
 * test, tests/compile-cache/java.sh). */
#include "javac.h"
#include "job_limits.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define JAVAC_DIR "/tmp/.llmsb-javac-XXXXXX"
#define JAVAC_UID 65534
#define JAVAC_READY_MS 5000 /* the zygote's rule (zygote.c) */
#define JAVAC_MAX_FAILURES 3
#define JAVAC_CONNS 256 /* compiles per server start, at most */
/* caps on the server's answer, read by the job's child */
#define JAVAC_MAX_FILES 4096
#define JAVAC_MAX_PATH 1024
#define JAVAC_MAX_BYTES ((size_t)64 << 20)
/* past this RSS after a compile the server is ended (serial GC rarely
 * gives memory back: a job's compile must not grow it for the next ones) */
#define JAVAC_MAX_RSS ((long long)120 << 20)
/* below this cgroup pids.max no server starts: its PROTO_JAVAC_PIDS
 * threads count there, which the worker adds to the job's own limit when
 * that is PROTO_JAVAC_MIN_PIDS (the default, docs/config.md) or more; a
 * container without them has no room for the server */
#define JAVAC_MIN_PIDS (PROTO_JAVAC_MIN_PIDS + PROTO_JAVAC_PIDS)
/* what the child tells the agent (status pipe) as it starts plain javac:
 * the server answered (it is fine), or it did not (it is ended) */
#define JAVAC_PLAIN 'P'
#define JAVAC_GAVE_UP 'S'

enum jstate { J_NONE, J_STARTING, J_READY };

static struct {
    enum jstate state;
    pid_t pid;
    int ready_fd;           /* it says "R" here once warm */
    int chan;               /* the agent's end of this compile's connection */
    int status[2];          /* the child's word on the plain javac (a pipe) */
    int conns[JAVAC_CONNS]; /* the connections, made at its start */
    int nconns, next;       /* how many, the next one to use */
    char *wanted;           /* the last job's compile_server, NULL: none */
    char **opts;            /* its javac options, to warm up with */
    size_t nopts;
    int failures;
    int memory_checked, memory_fits;
} js = {.state = J_NONE, .pid = -1, .ready_fd = -1, .chan = -1, .status = {-1, -1}};

/* The server's environment, and the entries a job's env may hold: the
 * sandbox's own (job/job.c base_env; a job cannot replace them). */
static const char *const server_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
    "LC_ALL=C.UTF-8", NULL};
static const char *const job_env_ok[] = {"HOME=/tmp", "TMPDIR=/tmp", "USER=sandbox"};

int javac_env_ok(char *const *env, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *e = env[i];
        int ok = strncmp(e, "LLMSB_COMPILE_CACHE_TRACE=", 26) == 0 ||
                 (strncmp(e, "LLMSB_COMPILE_CACHE=", 20) == 0 && strcmp(e + 20, "0") != 0);
        for (size_t k = 0; server_env[k] && !ok; k++)
            ok = strcmp(e, server_env[k]) == 0;
        for (size_t k = 0; k < sizeof(job_env_ok) / sizeof(job_env_ok[0]) && !ok; k++)
            ok = strcmp(e, job_env_ok[k]) == 0;
        if (!ok)
            return 0;
    }
    return 1;
}

/* The first of files (cgroup v2, v1) that reads as a number or "max"
 * (1 << 62); -1 when none does. */
static long long cgroup_limit(const char *const files[2])
{
    long long lim = -1;

    for (size_t i = 0; i < 2 && lim < 0; i++) {
        char line[64];
        FILE *f = fopen(files[i], "re");
        if (f && fgets(line, sizeof(line), f)) {
            line[strcspn(line, "\n")] = '\0';
            if (strcmp(line, "max") == 0 || parse_ll(line, 0, (long long)1 << 62, &lim) != 0)
                lim = (long long)1 << 62;
        }
        if (f)
            fclose(f);
    }
    return lim;
}

/* The container's memory and pids limits leave room for the server. */
static int limits_ok(void)
{
    static const char *const mem[] = {"/sys/fs/cgroup/memory.max",
                                      "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    static const char *const pids[] = {"/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"};

    if (!js.memory_checked) {
        long long m = cgroup_limit(mem), p = cgroup_limit(pids);
        js.memory_checked = 1;
        js.memory_fits = (m < 0 || m >= JAVAC_MIN_MEMORY) && (p < 0 || p >= JAVAC_MIN_PIDS);
        if (!js.memory_fits)
            fprintf(stderr,
                    "llmsb-agent: memory limit %lld MiB, pids limit %lld: no javac server "
                    "(needs %lld MiB, %d pids)\n",
                    m >> 20, p, JAVAC_MIN_MEMORY >> 20, JAVAC_MIN_PIDS);
    }
    return js.memory_fits;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void close_chan(void)
{
    close_fd(&js.chan);
    close_fd(&js.status[0]);
    close_fd(&js.status[1]);
}

static void end_server(int failed)
{
    if (js.pid > 0) {
        kill(js.pid, SIGKILL);
        while (waitpid(js.pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (js.ready_fd >= 0)
        close(js.ready_fd);
    close_chan();
    for (int i = js.next; i < js.nconns; i++)
        close(js.conns[i]);
    js.nconns = js.next = 0;
    js.pid = -1;
    js.ready_fd = -1;
    js.state = J_NONE;
    if (failed && ++js.failures == JAVAC_MAX_FAILURES)
        fprintf(stderr,
                "llmsb-agent: the javac server failed %d times: plain compiles from now on\n",
                JAVAC_MAX_FAILURES);
}

void javac_stop(void)
{
    end_server(0);
}

void javac_reaped(pid_t pid)
{
    if (pid <= 0 || pid != js.pid)
        return;
    js.pid = -1; /* reaped: nothing to kill */
    fprintf(stderr, "llmsb-agent: the javac server died\n");
    end_server(1);
}

/* The connections, held in the backlog of the listening socket returned
 * (or -1), whose name is gone: see the header. */
static int open_channels(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    char dir[] = JAVAC_DIR;
    struct rlimit nofile;
    int fd = -1, max = JAVAC_CONNS;

    /* the agent's own descriptors: a quarter of them at most */
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur / 4 < (rlim_t)max)
        max = (int)(nofile.rlim_cur / 4);
    if (max < 1 || !mkdtemp(dir)) /* root's, 0700 */
        return -1;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", dir);
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, max) != 0)
        goto fail;
    for (js.nconns = 0; js.nconns < max; js.nconns++) {
        int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c < 0)
            break;
        if (connect(c, (struct sockaddr *)&a, sizeof(a)) != 0) { /* the backlog is full */
            close(c);
            break;
        }
        fcntl(c, F_SETFL, fcntl(c, F_GETFL) & ~O_NONBLOCK);
        js.conns[js.nconns] = c;
    }
    js.next = 0;
    if (js.nconns == 0)
        goto fail;
    if (unlink(a.sun_path) != 0 || rmdir(dir) != 0) {
        /* left in /tmp, the cleanup says the sandbox is not clean */
        fprintf(stderr, "llmsb-agent: javac server: remove %s: %s\n", dir, strerror(errno));
        goto fail;
    }
    return fd;
fail:
    if (fd >= 0)
        close(fd);
    unlink(a.sun_path);
    rmdir(dir);
    for (int i = 0; i < js.nconns; i++)
        close(js.conns[i]);
    js.nconns = 0;
    return -1;
}

/* The JVM: C1 only (one compiler thread), serial GC, no signal thread
 * (12 threads), bounded heap and metaspace (a plain javac of the job's
 * has a quarter of the container's memory, more than this: a compile that
 * runs out here, or takes too long, falls back to it with its own
 * deadline), its classes mapped from the archive
 * hooks/javac-prime made, no perf data file, no attach, no core or error
 * file (nothing written anywhere), the JVM's warnings on stderr (stdout is
 * the pipe for "R"). */
#define JAVAC_JVM                                                                             \
    "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",                            \
        "-XX:SharedArchiveFile=/usr/local/lib/llmsb/llmsb-javac.jsa", "-Xmx96m",              \
        "-XX:MaxMetaspaceSize=96m", "-XX:ReservedCodeCacheSize=32m", "-XX:CICompilerCount=1", \
        "-XX:+ReduceSignalUsage", "-XX:-UsePerfData", "-XX:+DisableAttachMechanism",          \
        "-XX:-CreateCoredumpOnCrash", "-XX:ErrorFile=/dev/null", "-Xlog:disable",             \
        "-Xlog:all=warning:stderr"

static void __attribute__((noreturn))
exec_server(const struct agent_conf *conf, int lfd, int ready_w)
{
    const char *jvm[] = {"java", JAVAC_JVM, "-cp", js.wanted, "LlmsbJavac"};
    size_t njvm = sizeof(jvm) / sizeof(jvm[0]);
    char *argv[64];
    sigset_t none;
    size_t n = 0;

    for (size_t i = 0; i < njvm; i++)
        argv[n++] = (char *)jvm[i];
    for (size_t i = 0; i < js.nopts && n + 1 < sizeof(argv) / sizeof(argv[0]); i++)
        argv[n++] = js.opts[i];
    argv[n] = NULL;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    setsid();
    if (dup2(lfd, 0) < 0 || dup2(ready_w, 1) < 0 || chdir(conf->work_dir) != 0)
        _exit(127);
    closefrom(3);
    job_limits(0, 0, 0); /* no core file */
    job_oom_first();
    if (setgroups(0, NULL) != 0 || setgid(JAVAC_UID) != 0 || setuid(JAVAC_UID) != 0 ||
        getuid() != JAVAC_UID || setuid(0) == 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        _exit(127);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* after setuid, which clears it */
    environ = (char **)server_env;
    execvp(argv[0], argv);
    fprintf(stderr, "llmsb-agent: cannot start the javac server: %s\n", strerror(errno));
    _exit(127);
}

static void start_server(const struct agent_conf *conf)
{
    int lfd = -1, ready[2] = {-1, -1};
    pid_t pid = -1;

    if ((lfd = open_channels()) < 0 || pipe2(ready, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
        fprintf(stderr, "llmsb-agent: cannot start the javac server %s: %s\n", js.wanted,
                strerror(errno));
        end_server(1);
        goto out;
    }
    if (pid == 0)
        exec_server(conf, lfd, ready[1]);
    js.pid = pid;
    js.ready_fd = ready[0];
    ready[0] = -1;
    js.state = J_STARTING;
out:
    if (lfd >= 0)
        close(lfd);
    for (int i = 0; i < 2; i++)
        if (ready[i] >= 0)
            close(ready[i]);
}

/* Waits up to JAVAC_READY_MS for its "R". */
static int wait_ready(void)
{
    struct pollfd pf = {js.ready_fd, POLLIN, 0};
    int64_t deadline = clock_mono_ms() + JAVAC_READY_MS;
    char c = 0;

    for (;;) {
        int64_t left = deadline - clock_mono_ms();
        int n = poll(&pf, 1, left > 0 ? (int)left : 0);
        if (n > 0)
            break;
        if (n == 0 || errno != EINTR)
            return -1;
    }
    if (read(js.ready_fd, &c, 1) != 1 || c != 'R')
        return -1;
    js.state = J_READY;
    return 0;
}

static void await_starting(void)
{
    if (js.state == J_STARTING && wait_ready() != 0) {
        fprintf(stderr, "llmsb-agent: the javac server did not get ready in %d ms\n",
                JAVAC_READY_MS);
        end_server(1);
    }
}

/* job's javac options: its compile argv but javac, -J options and the
 * source file (the last). */
static void remember(const struct proto_job *job)
{
    int rc = 0;

    if (!job->compile_server || job->ncompile < 2) {
        free(js.wanted);
        js.wanted = NULL;
        return;
    }
    if (js.wanted && strcmp(js.wanted, job->compile_server) == 0)
        return;
    free(js.wanted);
    strlist_free(js.opts, js.nopts);
    js.opts = NULL;
    js.nopts = 0;
    js.wanted = strdup(job->compile_server);
    for (size_t i = 1; i + 1 < job->ncompile && rc == 0; i++)
        if (strncmp(job->compile_argv[i], "-J", 2) != 0)
            rc = strlist_add(&js.opts, &js.nopts, job->compile_argv[i],
                             strlen(job->compile_argv[i]));
    if (rc != 0 || !js.wanted) {
        free(js.wanted);
        js.wanted = NULL;
    }
}

void javac_idle(const struct agent_conf *conf)
{
    if (!js.wanted || js.failures >= JAVAC_MAX_FAILURES || !limits_ok())
        return;
    if (js.state != J_NONE && js.next < js.nconns)
        return;
    end_server(0);
    start_server(conf);
}

void javac_for_job(const struct agent_conf *conf, const struct proto_job *job)
{
    (void)conf;
    if (job->session)
        return;
    remember(job);
    if (js.state == J_STARTING && !js.wanted)
        end_server(0); /* no job to use it: not beside this one */
    await_starting();
}

void javac_prestart(const struct agent_conf *conf, const struct proto_job *job)
{
    if (job->session || !job->compile_server)
        return;
    remember(job);
    javac_idle(conf);
    await_starting();
}

/* 1 while the server's process lives (one that died is reaped here). */
static int alive(void)
{
    pid_t p = js.pid > 0 ? waitpid(js.pid, NULL, WNOHANG) : -1;

    if (p == 0)
        return 1;
    if (p == js.pid)
        javac_reaped(p);
    return 0;
}

int javac_begin(const struct proto_job *job)
{
    close_chan();
    if (!job->compile_server || js.state != J_READY || js.next >= js.nconns || job->ncompile < 2 ||
        strcmp(job->compile_argv[0], "javac") != 0 || !javac_env_ok(job->env, job->nenv) ||
        !alive())
        return 0;
    if (pipe2(js.status, O_CLOEXEC) != 0) {
        js.status[0] = js.status[1] = -1;
        return 0;
    }
    fcntl(js.status[0], F_SETFL, O_NONBLOCK);
    js.chan = js.conns[js.next++];
    return 1;
}

int javac_status_fd(void)
{
    return js.status[0];
}

int javac_status_read(void)
{
    char c = 0;
    ssize_t n = read(js.status[0], &c, 1);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    close_fd(&js.status[0]); /* one word at most */
    /* a server still at that compile would take the CPU and memory the
     * plain javac now needs: ended at once */
    if (n == 1 && c == JAVAC_GAVE_UP)
        end_server(0);
    return n == 1;
}

/* The server's resident set, bytes (-1: unknown). */
static long long server_rss(void)
{
    char path[64];
    long long pages = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/statm", (int)js.pid);
    if (js.pid <= 0 || !(f = fopen(path, "re")))
        return -1;
    if (fscanf(f, "%*s %lld", &pages) != 1)
        pages = -1;
    fclose(f);
    return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

void javac_end(int killed)
{
    if (js.chan < 0)
        return;
    close_chan();
    if (killed || server_rss() > JAVAC_MAX_RSS)
        end_server(0);
    else if (js.state == J_READY) /* it lived through a compile: not "in a row" */
        js.failures = 0;
}

int javac_child_fds(int fd)
{
    if (js.chan < 0 || dup2(js.chan, fd) < 0 || dup2(js.status[1], fd + 1) < 0)
        return fd;
    return fd + 2;
}

/* ---- the compile step's child (the job's uid, in the work dir) ---------- */

static const char *env_get(const struct proto_job *job, const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; i < job->nenv; i++)
        if (strncmp(job->env[i], name, len) == 0 && job->env[i][len] == '=')
            return job->env[i] + len + 1;
    return NULL;
}

static void trace(const struct proto_job *job, const char *what)
{
    const char *to = env_get(job, "LLMSB_COMPILE_CACHE_TRACE");
    int fd;

    if (!to || !*to)
        return;
    if (strcmp(to, "-") == 0) {
        dprintf(2, "%s\n", what);
        return;
    }
    if ((fd = open(to, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644)) >= 0) {
        dprintf(fd, "%s\n", what);
        close(fd);
    }
}

static int read_all(int fd, void *p, size_t n)
{
    char *c = p;

    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static int put_u32(struct buf *b, uint32_t v)
{
    v = htonl(v);
    return buf_append(b, &v, 4);
}

static int get_u32(int fd, uint32_t *v)
{
    if (read_all(fd, v, 4) != 0)
        return -1;
    *v = ntohl(*v);
    return 0;
}

/* The request: javac's argv without javac and its -J options. */
static int send_request(int fd, const struct proto_job *job)
{
    struct buf b;
    uint32_t n = 0;
    int rc = 0;

    for (size_t i = 1; i < job->ncompile; i++)
        n += strncmp(job->compile_argv[i], "-J", 2) != 0;
    buf_init(&b, 1 << 20);
    rc |= put_u32(&b, n);
    for (size_t i = 1; i < job->ncompile && rc == 0; i++) {
        const char *a = job->compile_argv[i];
        if (strncmp(a, "-J", 2) != 0)
            rc |= put_u32(&b, (uint32_t)strlen(a)) | buf_append(&b, a, strlen(a));
    }
    /* MSG_NOSIGNAL: a server that is gone is an EPIPE here (a fallback),
     * not the job's SIGPIPE */
    for (size_t off = 0; rc == 0 && off < b.len;) {
        ssize_t w = send(fd, b.data + off, b.len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = -1;
        else
            off += (size_t)w;
    }
    buf_release(&b);
    return rc;
}

struct class_file {
    char *path;
    char *data;
    uint32_t len;
};

/* A path javac would write below -d: relative, plain components. */
static int path_ok(const char *p)
{
    if (!*p || *p == '/')
        return 0;
    for (const char *c = p; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += n + (c[n] == '/');
        if (c[-1] == '/' && !*c)
            return 0;
    }
    return 1;
}

/* The answer: 0 with the class files when javac succeeded with no
 * output, -1 when it did not (the server is fine), -2 when the server did
 * not answer in time, or badly, or failed itself (what's read is freed by
 * the caller). */
static int read_answer(int fd, struct class_file *files, uint32_t *nfiles, const char **why)
{
    uint32_t code, olen, n;
    size_t total = 0;

    *nfiles = 0;
    *why = "no answer";
    if (get_u32(fd, &code) != 0 || get_u32(fd, &olen) != 0)
        return -2;
    *why = "the server failed";
    if (code == 3)
        return -2;
    *why = "javac said something";
    if (code != 0 || olen != 0)
        return -1;
    *why = "a bad answer";
    if (get_u32(fd, &n) != 0 || n > JAVAC_MAX_FILES)
        return -2;
    for (uint32_t i = 0; i < n; i++) {
        struct class_file *f = &files[i];
        uint32_t plen;
        if (get_u32(fd, &plen) != 0 || plen == 0 || plen > JAVAC_MAX_PATH ||
            !(f->path = calloc(1, plen + 1)))
            return -2;
        *nfiles = i + 1;
        if (read_all(fd, f->path, plen) != 0 || strlen(f->path) != plen || !path_ok(f->path) ||
            get_u32(fd, &f->len) != 0 || f->len > JAVAC_MAX_BYTES - total)
            return -2;
        total += f->len;
        if (!(f->data = malloc(f->len ? f->len : 1)) || read_all(fd, f->data, f->len) != 0)
            return -2;
    }
    return 0;
}

/* Creates the directories above path (dirfd-relative), as javac does. */
static int make_parents(const char *path)
{
    char tmp[JAVAC_MAX_PATH + 512];

    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *s = strchr(tmp, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return 0;
}

static int write_classes(const char *dir, const struct class_file *files, uint32_t n)
{
    char path[JAVAC_MAX_PATH + 512];

    for (uint32_t i = 0; i < n; i++) {
        int fd;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, files[i].path) >= sizeof(path) ||
            make_parents(path) != 0 ||
            (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0)
            return -1;
        int rc = agent_write_all(fd, files[i].data, files[i].len);
        if (close(fd) != 0 || rc != 0)
            return -1;
    }
    return 0;
}

/* What in the work dir plain javac would treat otherwise than the server:
 * a processor's service file, a module, an installed library, the files
 * plain javac's JVM reads in its working directory (it warns that it
 * ignores them). */
static const char *odd_work_dir(void)
{
    static const char *const odd[] = {"META-INF",   "module-info.java", "module-info.class",
                                      ".llmsb-lib", ".hotspotrc",       ".hotspot_compiler"};
    struct stat st;

    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
        if (lstat(odd[i], &st) == 0 || errno != ENOENT)
            return odd[i];
    return NULL;
}

/* The warm compile may take half the step's time: the plain javac after
 * it has a time of its own (the agent's deadline starts anew when told). */
static void set_wait(int fd, uint64_t timeout_ms)
{
    uint64_t ms = timeout_ms / 2 ? timeout_ms / 2 : 1;
    struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

void javac_child(const struct proto_job *job, uint64_t timeout_ms)
{
    struct class_file *files = NULL;
    const char *why = NULL, *dir = ".";
    uint32_t n = 0;
    char msg[128], word = JAVAC_PLAIN;
    int rc = -2;

    for (size_t i = 1; i + 1 < job->ncompile; i++)
        if (strcmp(job->compile_argv[i], "-d") == 0)
            dir = job->compile_argv[i + 1];
    if ((why = odd_work_dir()) != NULL)
        goto plain;
    why = "out of memory";
    if (!(files = calloc(JAVAC_MAX_FILES, sizeof(*files))))
        goto plain;
    signal(SIGXFSZ, SIG_IGN); /* a class file over the size limit: plain javac's to meet */
    why = "the server is gone";
    set_wait(3, timeout_ms);
    if (send_request(3, job) != 0 || (rc = read_answer(3, files, &n, &why)) != 0) {
        if (rc != -1)
            word = JAVAC_GAVE_UP;
        goto plain;
    }
    why = "cannot write the class files";
    if (write_classes(dir, files, n) != 0)
        goto plain;
    trace(job, "warm");
    _exit(0);
plain:
    signal(SIGXFSZ, SIG_DFL);
    close(3);
    for (uint32_t i = 0; i < n; i++)
        free(files[i].path), free(files[i].data);
    free(files);
    snprintf(msg, sizeof(msg), "fallback (%s)", why);
    trace(job, msg);
    if (write(4, &word, 1) != 1) /* the agent's deadline starts anew */
        word = 0;
    close(4);
}

const struct agent_child_hook javac_child_hook = {javac_child_fds, javac_child};
