/* test_agent.c - the agent's tree wipe: never follows symlinks out of the
 * wiped dir, removes unreadable subtrees, leaves the dir itself; the
 * per-case state restore; the run step started ahead (prespawn.c); the warm
 * javac's compile child falling back (javac.c); a live step whose
 * worker reads its frames late still gets its verdict in time; the R and
 * Ruby zygotes' library taking a request only with whole numbers
 * (zygote_lib.c); the agent's own confinement (confine.c): the namespace
 * filter, the guard over its environment. */
#include "test.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/prespawn.h"
#include "common/clock.h"
#include "proto/proto.h"
#include "agent/run.h"
#include "agent/javac.h"
#include "agent/snapshot.h"
#include "agent/user.h"
#include "agent/zygote.h"
#include "agent/confine.h"

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

TEST(rm_tree_does_not_follow_symlinks)
{
    char base[] = "/tmp/llmsb-test-XXXXXX", wipe[128], outside[128], p[256];
    int fd;

    ASSERT(mkdtemp(base) != NULL);
    snprintf(wipe, sizeof(wipe), "%s/wipe", base);
    snprintf(outside, sizeof(outside), "%s/outside", base);
    ASSERT_EQ(mkdir(wipe, 0755), 0);
    ASSERT_EQ(mkdir(outside, 0755), 0);
    snprintf(p, sizeof(p), "%s/keep.txt", outside);
    fd = open(p, O_CREAT | O_WRONLY, 0644);
    ASSERT(fd >= 0);
    close(fd);
    snprintf(p, sizeof(p), "%s/link", wipe);
    ASSERT_EQ(symlink(outside, p), 0);
    snprintf(p, sizeof(p), "%s/a/b/c", wipe);
    snprintf(p, sizeof(p), "%s/a", wipe);
    ASSERT_EQ(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/a/locked", wipe);
    ASSERT_EQ(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/a/locked/f", wipe);
    fd = open(p, O_CREAT | O_WRONLY, 0644);
    ASSERT(fd >= 0);
    close(fd);
    snprintf(p, sizeof(p), "%s/a/locked", wipe);
    ASSERT_EQ(chmod(p, 0), 0);

    fd = open(wipe, O_RDONLY | O_DIRECTORY);
    ASSERT(fd >= 0);
    ASSERT_EQ(agent_rm_tree_at(fd), 0);
    close(fd);

    ASSERT(exists(wipe));
    snprintf(p, sizeof(p), "%s/a", wipe);
    ASSERT(!exists(p));
    snprintf(p, sizeof(p), "%s/link", wipe);
    ASSERT(!exists(p));
    snprintf(p, sizeof(p), "%s/keep.txt", outside);
    ASSERT(exists(p)); /* the symlink's target survived */
    snprintf(p, sizeof(p), "rm -rf %s", base);
    ASSERT_EQ(system(p), 0);
}

/* A job can nest directories deeper than any stack: 700 levels (a case's
 * mkdir("d"); chdir("d") loop), one of them read-only, a file at the
 * bottom, are all removed. */
TEST(rm_tree_removes_a_tree_of_any_depth)
{
    char base[] = "/tmp/llmsb-test-XXXXXX";
    int top, fd, n = 0;
    DIR *d;

    ASSERT(mkdtemp(base) != NULL);
    top = open(base, O_RDONLY | O_DIRECTORY);
    ASSERT(top >= 0);
    fd = dup(top);
    for (int i = 0; i < 700; i++) {
        int next;
        ASSERT_EQ(mkdirat(fd, "d", 0700), 0);
        next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        ASSERT(next >= 0);
        close(fd);
        fd = next;
        if (i == 350)
            ASSERT_EQ(fchmod(fd, 0500), 0);
    }
    close(fd);
    ASSERT_EQ(agent_rm_tree_at(top), 0);
    d = fdopendir(dup(top));
    ASSERT(d != NULL);
    rewinddir(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    ASSERT_EQ(n, 0);
    close(top);
    ASSERT_EQ(rmdir(base), 0);
}

TEST(oom_count_reads_or_reports_unknown)
{
    long long v = agent_oom_count();
    ASSERT(v >= -1);
}

/* What a job may not set differently from its zygote's start: what the
 * interpreter and the preloaded libraries read once, at start-up. */
TEST(zygote_env_sensitive_names)
{
    static const char *const yes[] = {"PYTHONPATH=/x",
                                      "PYTHONHASHSEED=0",
                                      "LC_ALL=C",
                                      "LANG=C",
                                      "MPLBACKEND=Agg",
                                      "TZ=UTC",
                                      "PATH=/bin",
                                      "OMP_NUM_THREADS=4",
                                      "LD_PRELOAD=/x.so",
                                      "HOME=/tmp",
                                      "TMPDIR=/tmp",
                                      "MATPLOTLIBRC=/w",
                                      "NPY_PROMOTION_STATE=weak",
                                      "RUBYOPT=-rx",
                                      "RUBYLIB=/w",
                                      "GEM_PATH=/w",
                                      "R_PROFILE_USER=/w/p",
                                      "R_LIBS=/w",
                                      "R_ENVIRON_USER=/w/e"};
    static const char *const no[] = {"SANDBOX_PLOTS_DIR=/tmp/p",
                                     "FOO=1",
                                     "PATHX=1",
                                     "USER=x",
                                     "HOMEDIR=/",
                                     "MY_PYTHON=1",
                                     "RX=1",
                                     "MY_RUBY=1"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        ASSERT(zygote_env_sensitive(yes[i]));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        ASSERT(!zygote_env_sensitive(no[i]));
}

/* A job's compile goes to the warm javac only with the sandbox's own env
 * (what the server was started with) and the cache's switches. */
TEST(javac_env_ok_only_the_sandbox_env)
{
    char *base[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOME=/tmp",
                    "TMPDIR=/tmp",
                    "LANG=C.UTF-8",
                    "LC_ALL=C.UTF-8",
                    "USER=sandbox",
                    "LLMSB_COMPILE_CACHE_TRACE=-",
                    "LLMSB_COMPILE_CACHE=1"};
    static const char *const no[] = {"JAVA_TOOL_OPTIONS=-Dx=1",
                                     "JDK_JAVAC_OPTIONS=-g",
                                     "_JAVA_OPTIONS=-Xmx1m",
                                     "CLASSPATH=/work",
                                     "LANG=de_DE.UTF-8",
                                     "LC_MESSAGES=C",
                                     "TZ=UTC",
                                     "PATH=/work:/usr/bin",
                                     "FOO=1",
                                     "LLMSB_COMPILE_CACHE=0"};
    size_t n = sizeof(base) / sizeof(base[0]);

    ASSERT(javac_env_ok(base, n));
    ASSERT(javac_env_ok(base, 0));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        char *env[] = {base[0], (char *)no[i]};
        ASSERT(!javac_env_ok(env, 2));
    }
}

/* The compile step's child asking a server that is gone (its connection's
 * other end closed), or in a work dir holding fname (NULL: none): it must
 * return (to run the plain javac) with the signals' defaults, not die of
 * SIGPIPE, and tell the agent on fd 4.  Returns the word (0: none; -1: it
 * died) and the trace line in trace. */
static int javac_child_word(const char *fname, char *trace, size_t tsz)
{
    char dir[] = "/tmp/llmsb-test-XXXXXX", tfile[128], env0[160], word = 0;
    char *argv[] = {"javac", "-encoding", "UTF-8", "-d", ".", "Main.java", NULL};
    char *env[] = {env0, NULL};
    struct proto_job job = {0};
    int sp[2], st[2], status;
    pid_t pid;

    if (!mkdtemp(dir) || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0 || pipe(st) != 0)
        return -2;
    snprintf(tfile, sizeof(tfile), "%s.trace", dir);
    snprintf(env0, sizeof(env0), "LLMSB_COMPILE_CACHE_TRACE=%s", tfile);
    job.compile_argv = argv;
    job.ncompile = 6;
    job.env = env;
    job.nenv = 1;
    close(sp[1]); /* the server is gone */
    if ((pid = fork()) == 0) {
        signal(SIGPIPE, SIG_DFL);
        if (dup2(sp[0], 3) < 0 || dup2(st[1], 4) < 0 || chdir(dir) != 0)
            _exit(2);
        if (fname)
            close(open(fname, O_CREAT | O_WRONLY, 0644));
        javac_child(&job, 1000);
        _exit(signal(SIGPIPE, SIG_DFL) == SIG_DFL ? 0 : 3);
    }
    close(st[1]);
    close(sp[0]);
    waitpid(pid, &status, 0);
    if (read(st[0], &word, 1) != 1)
        word = 0;
    close(st[0]);
    trace[0] = '\0';
    FILE *f = fopen(tfile, "r");
    if (f && !fgets(trace, (int)tsz, f))
        trace[0] = '\0';
    if (f)
        fclose(f);
    unlink(tfile);
    if (fname) {
        snprintf(tfile, sizeof(tfile), "%s/%s", dir, fname);
        unlink(tfile);
    }
    rmdir(dir);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? word : -1;
}

TEST(javac_child_falls_back_when_the_server_is_gone)
{
    char trace[256];

    ASSERT_EQ(javac_child_word(NULL, trace, sizeof(trace)), 'S');
    ASSERT_STR(trace, "fallback (the server is gone)\n");
}

/* files plain javac's JVM reads in its working directory (and warns it
 * ignores): the warm path must not be taken */
TEST(javac_child_falls_back_on_hotspot_files)
{
    static const char *const odd[] = {".hotspotrc", ".hotspot_compiler", "META-INF"};
    char trace[256], want[256];

    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        ASSERT_EQ(javac_child_word(odd[i], trace, sizeof(trace)), 'P');
        snprintf(want, sizeof(want), "fallback (%s)\n", odd[i]);
        ASSERT_STR(trace, want);
    }
}

/* ---- the per-case state restore (snapshot.c), run as root: a throwaway
 * uid owns a work dir and a tmp dir below a fresh base ---- */

#define SNAP_UID 64999

struct snap_dirs {
    char base[32], work[64], tmp[64];
    struct agent_conf conf;
};

/* Fails, saying why, when not root: the snapshot's children change uid
 * (make test runs as root; a skip would count as a pass). */
static int snap_setup(struct snap_dirs *d)
{
    if (geteuid() != 0) {
        fprintf(stderr, "  needs root: the snapshot runs its children as uid %d\n", SNAP_UID);
        return -1;
    }
    snprintf(d->base, sizeof(d->base), "/tmp/llmsb-snap-XXXXXX");
    if (!mkdtemp(d->base) || chmod(d->base, 0755) != 0)
        return -1;
    snprintf(d->work, sizeof(d->work), "%s/work", d->base);
    snprintf(d->tmp, sizeof(d->tmp), "%s/tmp", d->base);
    if (mkdir(d->work, 0755) != 0 || mkdir(d->tmp, 0777) != 0 ||
        chown(d->work, SNAP_UID, SNAP_UID) != 0 || chown(d->tmp, SNAP_UID, SNAP_UID) != 0)
        return -1;
    memset(&d->conf, 0, sizeof(d->conf));
    d->conf.uid = SNAP_UID;
    d->conf.gid = SNAP_UID;
    d->conf.work_dir = d->work;
    d->conf.wipe_dirs[0] = d->work;
    d->conf.wipe_dirs[1] = d->tmp;
    return 0;
}

static void snap_teardown(struct snap_dirs *d)
{
    char cmd[80];

    snprintf(cmd, sizeof(cmd), "rm -rf %s", d->base);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", d->base);
}

/* Runs sh as the sandbox uid in the work dir, as a job would. */
static int snap_sh(const struct snap_dirs *d, const char *sh)
{
    char cmd[4096];

    snprintf(cmd, sizeof(cmd), "cd %s && setpriv --reuid=%d --regid=%d --clear-groups sh -c '%s'",
             d->work, SNAP_UID, SNAP_UID, sh);
    return system(cmd);
}

/* Under dir: n nested dirs of 59-byte names, file at the bottom holding
 * text (written when text is not NULL, else chmod u+w and "changed"), all
 * the sandbox uid's. */
static int snap_deep(const char *dir, int n, const char *text)
{
    char name[60];
    int fd = open(dir, O_RDONLY | O_DIRECTORY), rc = 0;

    memset(name, 'd', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    for (int i = 0; fd >= 0 && i < n; i++) {
        int next;
        if (text && mkdirat(fd, name, 0755) != 0)
            rc = -1;
        if (text && fchownat(fd, name, SNAP_UID, SNAP_UID, 0) != 0)
            rc = -1;
        next = openat(fd, name, O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = next;
    }
    if (fd < 0)
        return -1;
    if (!text)
        rc |= fchmodat(fd, "bottom.txt", 0644, 0);
    int f = openat(fd, "bottom.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (f < 0 || write(f, text ? text : "changed", strlen(text ? text : "changed")) < 0 ||
        fchown(f, SNAP_UID, SNAP_UID) != 0)
        rc = -1;
    if (f >= 0)
        close(f);
    close(fd);
    return rc;
}

/* What the job did (a kept library file changed) and what is the agent's
 * (a file the sandbox user cannot remove) are told apart: 1 against -1,
 * the job's verdict against an internal_error retried. */
TEST(restore_tells_the_jobs_doing_from_ours)
{
    struct snap_dirs d;
    struct agent_snapshot s;
    char msg[512] = "", cmd[256];

    ASSERT_EQ(snap_setup(&d), 0);
    ASSERT_EQ(snap_sh(&d, "mkdir -p .llmsb-lib/pkg && echo A > .llmsb-lib/pkg/lib.txt && "
                          "echo D > data.txt"),
              0);
    ASSERT_EQ(agent_snapshot_take(&d.conf, &s, msg, sizeof(msg)), 0);
    /* a case changes its data and makes a file: put back */
    ASSERT_EQ(snap_sh(&d, "echo X > data.txt && echo new > new.txt"), 0);
    ASSERT_EQ(agent_snapshot_restore(&d.conf, &s, msg, sizeof(msg)), 0);
    /* what the agent cannot remove (a root-owned dir with a file): ours */
    snprintf(cmd, sizeof(cmd), "mkdir %s/rootdir && touch %s/rootdir/f", d.tmp, d.tmp);
    ASSERT_EQ(system(cmd), 0);
    msg[0] = '\0';
    ASSERT_EQ(agent_snapshot_restore(&d.conf, &s, msg, sizeof(msg)), -1);
    ASSERT_CONTAINS(msg, "cannot remove");
    snprintf(cmd, sizeof(cmd), "rm -rf %s/rootdir", d.tmp);
    ASSERT_EQ(system(cmd), 0);
    /* a library file a case changed: the job's */
    ASSERT_EQ(snap_sh(&d, "chmod u+w .llmsb-lib/pkg/lib.txt && echo B > .llmsb-lib/pkg/lib.txt"),
              0);
    msg[0] = '\0';
    ASSERT_EQ(agent_snapshot_restore(&d.conf, &s, msg, sizeof(msg)), 1);
    ASSERT_CONTAINS(msg, ".llmsb-lib/pkg/lib.txt changed");
    agent_snapshot_release(&s);
    snap_teardown(&d);
}

/* An installed library is one kept root: nested deeper than 64 dirs, with
 * paths over 4095 bytes and many files, it is taken (read-only, not
 * copied), an unchanged one restores, and a change deep down is seen. */
TEST(snapshot_keeps_a_library_of_any_shape)
{
    struct snap_dirs d;
    struct agent_snapshot s;
    char msg[512] = "";
    struct stat st;
    char path[256];

    ASSERT_EQ(snap_setup(&d), 0);
    /* 100 dirs of 60 bytes each: a path of 6000 bytes */
    ASSERT_EQ(snap_sh(&d, "mkdir -p .llmsb-lib/many && cd .llmsb-lib/many && "
                          "for i in $(seq 1 3000); do echo $i > f$i; done"),
              0);
    snprintf(path, sizeof(path), "%s/.llmsb-lib", d.work);
    ASSERT_EQ(snap_deep(path, 100, "deep"), 0);
    ASSERT_EQ(agent_snapshot_take(&d.conf, &s, msg, sizeof(msg)), 0);
    snprintf(path, sizeof(path), "%s/.llmsb-lib/many/f7", d.work);
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ(st.st_mode & 0222, 0); /* read-only to the cases */
    ASSERT_EQ(agent_snapshot_restore(&d.conf, &s, msg, sizeof(msg)), 0);
    snprintf(path, sizeof(path), "%s/.llmsb-lib", d.work);
    ASSERT_EQ(snap_deep(path, 100, NULL), 0);
    msg[0] = '\0';
    ASSERT_EQ(agent_snapshot_restore(&d.conf, &s, msg, sizeof(msg)), 1);
    ASSERT_CONTAINS(msg, "bottom.txt changed");
    agent_snapshot_release(&s);
    snap_teardown(&d);
}

/* ---- the run step started ahead (prespawn.c), run as root like the
 * snapshot's tests: a python3 program stands for node and its hook, saying
 * "R" on PRESPAWN_READY_FD and reading its go when W holds "wait" ---- */

#define PRE_PROGRAM                              \
    "import os, sys\n"                           \
    "w = os.environ.get('W', '')\n"              \
    "if 'wait' in w:\n"                          \
    "    if 'die' in w: sys.exit(3)\n"           \
    "    os.write(1022, b'R')\n"                 \
    "    w += ' ' + os.read(1023, 1).decode()\n" \
    "print(w, sys.argv[1:], os.getuid(), os.getcwd() == os.environ['WORK'], flush=True)\n"

/* A job of that program; env W=w (none when w is NULL). */
static void pre_job(struct proto_job *j, const struct snap_dirs *d, const char *w, const char *arg)
{
    char kv[128];

    proto_job_init(j);
    strlist_add(&j->run_argv, &j->nrun, "python3", 7);
    strlist_add(&j->run_argv, &j->nrun, "-c", 2);
    strlist_add(&j->run_argv, &j->nrun, PRE_PROGRAM, strlen(PRE_PROGRAM));
    if (arg)
        strlist_add(&j->run_argv, &j->nrun, arg, strlen(arg));
    strlist_add(&j->env, &j->nenv, "PATH=/usr/bin:/bin", 18);
    snprintf(kv, sizeof(kv), "WORK=%s", d->work);
    strlist_add(&j->env, &j->nenv, kv, strlen(kv));
    if (w) {
        snprintf(kv, sizeof(kv), "W=%s", w);
        strlist_add(&j->env, &j->nenv, kv, strlen(kv));
    }
    j->prespawn = strdup("W=wait");
    j->nofile = 64;
}

/* Tells the helper of j (before its files) and says whether it holds a
 * process started ahead for j's first run. */
static int pre_for_job(const struct snap_dirs *d, const struct proto_job *j)
{
    prespawn_for_job(&d->conf, j);
    return prespawn_held();
}

/* Takes the process started ahead for j's run and reads its stdout;
 * returns its exit status, -1 when there was none. */
static int pre_run(const struct proto_job *j, char *out, size_t outsz)
{
    int in = -1, o = -1, e = -1, st = 0;
    pid_t pid = prespawn_go(j->run_argv, &in, &o, &e);
    ssize_t n;
    size_t len = 0;

    if (pid < 0)
        return -1;
    close(in);
    while (len + 1 < outsz && (n = read(o, out + len, outsz - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(o);
    close(e);
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Started at a PRESTART, the job of the same spec takes it (its env with
 * the words added, the sandbox uid, the work dir); a job of another env
 * has it ended before its files, a job without TAG_PRESPAWN never gets
 * one; three failures in a row and none starts any more. */
TEST(prespawn_serves_only_the_same_spec)
{
    struct snap_dirs d;
    struct proto_job a, other, die;
    char out[512], want[256];

    ASSERT_EQ(snap_setup(&d), 0);
    pre_job(&a, &d, "x", NULL);
    pre_job(&other, &d, "secret", NULL);
    pre_job(&die, &d, "die", NULL);
    prespawn_prestart(&d.conf, &a);
    ASSERT_EQ(pre_for_job(&d, &a), 1);
    ASSERT_EQ(pre_run(&a, out, sizeof(out)), 0);
    snprintf(want, sizeof(want), "x wait g [] %d True\n", SNAP_UID);
    ASSERT_STR(out, want);
    ASSERT_EQ(pre_run(&a, out, sizeof(out)), -1); /* it was handed over */
    /* the next idle time starts the last job's spec again */
    prespawn_idle(&d.conf);
    ASSERT_EQ(pre_for_job(&d, &other), 0); /* another env: ended */
    ASSERT_EQ(pre_run(&other, out, sizeof(out)), -1);
    prespawn_idle(&d.conf); /* now other's spec */
    ASSERT_EQ(pre_for_job(&d, &other), 1);
    /* a case's args the spec does not have: ended at the go */
    strlist_add(&other.run_argv, &other.nrun, "case-arg", 8);
    ASSERT_EQ(pre_run(&other, out, sizeof(out)), -1);
    for (int i = 0; i < 3; i++) {
        prespawn_prestart(&d.conf, &die); /* exits before it waits */
        ASSERT_EQ(pre_for_job(&d, &die), 0);
    }
    prespawn_prestart(&d.conf, &a);
    ASSERT_EQ(pre_for_job(&d, &a), 0); /* three failures: no more */
    prespawn_idle(&d.conf);
    ASSERT_EQ(pre_for_job(&d, &a), 0);
    prespawn_stop();
    proto_job_release(&a);
    proto_job_release(&other);
    proto_job_release(&die);
    snap_teardown(&d);
}

/* ---- a live step with a worker that reads late: the frames' reader
 * sleeps, then parses what came (whole OUTPUT frames, offsets in order) */

struct late_reader {
    int fd, delay_ms, frames, bad;
    size_t next_off; /* where the next stdout chunk must start */
};

static void *late_read(void *arg)
{
    struct late_reader *r = arg;
    struct timespec ts = {r->delay_ms / 1000, (r->delay_ms % 1000) * 1000000L};
    struct buf in;
    char chunk[65536];
    ssize_t n;

    nanosleep(&ts, NULL);
    buf_init(&in, (size_t)64 << 20);
    while ((n = read(r->fd, chunk, sizeof(chunk))) > 0) {
        struct proto_frame f;
        struct proto_chunk c;
        struct llmsb_err err;
        size_t used;
        buf_append(&in, chunk, (size_t)n);
        while (proto_frame_parse(in.data, in.len, &f, &used, &err) == 1) {
            if (f.type != PROTO_OUTPUT || proto_chunk_decode(f.payload, f.len, &c, &err) != 0 ||
                c.fd != 1 || c.offset != r->next_off)
                r->bad++;
            else
                r->next_off += c.len;
            r->frames++;
            memmove(in.data, in.data + used, in.len - used);
            in.len -= used;
        }
    }
    if (in.len)
        r->bad++; /* a frame cut short */
    buf_release(&in);
    return NULL;
}

/* The program writes 600000 bytes at once and exits well inside its 2 s;
 * the worker reads the agent's stdout only after 3 s.  The step's verdict
 * must not wait on the chunks: ok, exit 0, all of stdout, in well under
 * the timeout; the frames that went out are whole and in order. */
TEST(live_step_never_waits_on_a_slow_worker)
{
    struct snap_dirs d;
    struct proto_job j;
    struct proto_result r;
    struct late_reader lr = {-1, 3000, 0, 0, 0};
    pthread_t th;
    sigset_t chld, old;
    int p[2], saved = -1;
    int64_t t0, took;

    ASSERT_EQ(snap_setup(&d), 0);
    proto_job_init(&j);
    strlist_add(&j.run_argv, &j.nrun, "/bin/sh", 7);
    strlist_add(&j.run_argv, &j.nrun, "-c", 2);
    strlist_add(&j.run_argv, &j.nrun, "head -c 600000 /dev/zero", 24);
    strlist_add(&j.env, &j.nenv, "PATH=/usr/bin:/bin", 18);
    j.timeout_ms = 2000;
    j.output_limit = 1 << 20;
    j.live = 1;
    proto_result_init(&r, PROTO_MAX_OUTPUT);
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    ASSERT_EQ(pipe(p), 0);
    lr.fd = p[0];
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    dup2(p[1], STDOUT_FILENO);
    close(p[1]);
    pthread_create(&th, NULL, late_read, &lr);
    t0 = clock_mono_ms();
    agent_job_run(&d.conf, &j, &r);
    took = clock_mono_ms() - t0;
    dup2(saved, STDOUT_FILENO); /* the reader sees EOF */
    close(saved);
    pthread_join(th, NULL);
    close(p[0]);
    sigprocmask(SIG_SETMASK, &old, NULL);
    fprintf(
        stderr,
        "  live step, reader 3 s late: status %s exit %lld stdout %zu B, step %lld ms (wall %lld ms), "
        "%d frames (%zu B)\n",
        status_name(r.status), (long long)r.exit_code, r.out.len, (long long)r.duration_ms,
        (long long)took, lr.frames, lr.next_off);
    ASSERT_EQ(r.status, STATUS_OK);
    ASSERT_EQ(r.exit_code, 0);
    ASSERT_EQ(r.out.len, (size_t)600000);
    ASSERT(r.duration_ms < 1500);
    ASSERT_EQ(lr.bad, 0);
    ASSERT(lr.frames > 0 && lr.next_off == 600000);
    proto_result_release(&r);
    proto_job_release(&j);
    snap_teardown(&d);
}

/* ---- the zygote's library for R and Ruby (agent/zygote_lib.c, built as
 * bin/llmsb_zygote.so and loaded as the interpreters load it): a process
 * forked ahead takes a request only when its numbers are whole numbers in
 * range, else it says "fail" on the control pipe and the agent starts the
 * job plainly ---- */

typedef void (*zlib_fn)(int *, int *, int *, int *, int *);

/* The library beside the test binaries' dir (bin/tests/.. or
 * bin/tests-san/..), as `make` builds it for the images. */
static void *zlib_open(void)
{
    char exe[4096], path[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    char *slash;
    void *h;

    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    if ((slash = strrchr(exe, '/')))
        *slash = '\0';
    snprintf(path, sizeof(path), "%s/../llmsb_zygote.so", exe);
    if (!(h = dlopen(path, RTLD_NOW)))
        fprintf(stderr, "  cannot load %s: %s\n", path, dlerror());
    return h;
}

/* The zygote (a child of the test): says "R" on sock, then forks a
 * process ahead of each request, which takes it and tells its pid, until
 * the socket closes.  Exits 0 then, non-zero when the library failed. */
static int zlib_zygote(int sock)
{
    void *h = zlib_open();
    zlib_fn init = h ? (zlib_fn)dlsym(h, "llmsb_z_init") : NULL;
    void (*ready)(int *) = h ? (void (*)(int *))dlsym(h, "llmsb_z_ready") : NULL;
    void (*zfork)(int *) = h ? (void (*)(int *))dlsym(h, "llmsb_z_fork") : NULL;
    void (*take)(int *) = h ? (void (*)(int *))dlsym(h, "llmsb_z_take") : NULL;
    void (*tell)(int *) = h ? (void (*)(int *))dlsym(h, "llmsb_z_tell") : NULL;
    void (*zwait)(int *, int *) = h ? (void (*)(int *, int *))dlsym(h, "llmsb_z_wait") : NULL;
    int uid = SNAP_UID, session = 0, rc = -1, pid, plain = 0;

    if (!init || !ready || !zfork || !take || !tell || !zwait)
        return 2;
    init(&sock, &uid, &uid, &session, &rc);
    if (rc != 0)
        return 3;
    ready(&rc);
    if (rc != 0)
        return 4;
    for (;;) {
        zfork(&pid);
        if (pid == 0) {
            take(&rc);
            tell(&plain); /* only a request it took gets here */
            _exit(0);
        }
        zwait(&pid, &rc); /* exits when the socket closed */
    }
}

/* Sends the agent's request of fields (NUL-separated, as zygote.c writes
 * them) with /dev/null as the job's streams; returns what the process
 * forked ahead said on the control pipe (its first line) in line. */
static int zlib_ask(int sock, const char *const *fields, size_t n, char *line, size_t linesz)
{
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(4 * sizeof(int))];
    } ctl;
    char msg[512], answer[160];
    size_t len = 0, got = 0;
    struct iovec iov;
    struct msghdr m = {0};
    struct cmsghdr *c;
    int ctlp[2], null = open("/dev/null", O_RDWR | O_CLOEXEC), fds[4];
    ssize_t r;

    for (size_t i = 0; i < n; i++) {
        size_t fl = strlen(fields[i]) + 1;
        if (len + fl > sizeof(msg))
            return -1;
        memcpy(msg + len, fields[i], fl);
        len += fl;
    }
    if (null < 0 || pipe2(ctlp, O_CLOEXEC) != 0)
        return -1;
    fds[0] = fds[1] = fds[2] = null, fds[3] = ctlp[1];
    iov.iov_base = msg;
    iov.iov_len = len;
    memset(&ctl, 0, sizeof(ctl));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl.space;
    m.msg_controllen = sizeof(ctl.space);
    c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(4 * sizeof(int));
    memcpy(CMSG_DATA(c), fds, sizeof(fds));
    r = sendmsg(sock, &m, MSG_NOSIGNAL);
    close(ctlp[1]);
    close(null);
    while (r == (ssize_t)len && got + 1 < linesz &&
           (r = read(ctlp[0], line + got, linesz - 1 - got)) > 0)
        got += (size_t)r;
    line[got] = '\0';
    line[strcspn(line, "\n")] = '\0';
    close(ctlp[0]);
    /* the zygote's word on the process's end, so that the next request
     * is the next process's */
    return recv(sock, answer, sizeof(answer), 0) > 0 ? 0 : -1;
}

TEST(zygote_lib_takes_only_whole_numbers)
{
    /* version, uid, gid, the agent's pid, RLIMIT_FSIZE, RLIMIT_NOFILE,
     * RLIMIT_NPROC, the work dir, argc, argv */
    static const struct {
        const char *f[10];
        int takes;
    } cases[] = {
        {{"1", "64999", "64999", "1", "0", "64", "0", "/tmp", "1", "prog"}, 1},
        {{"1", "64999x", "64999", "1", "0", "64", "0", "/tmp", "1", "prog"}, 0},
        {{"1", "64999", " 64999", "1", "0", "64", "0", "/tmp", "1", "prog"}, 0},
        {{"1", "64999", "64999", "1", "0", "64k", "0", "/tmp", "1", "prog"}, 0},
        {{"1", "64999", "64999", "1", "-1", "64", "0", "/tmp", "1", "prog"}, 0},
        {{"1", "64999", "64999", "1", "0", "64", "", "/tmp", "1", "prog"}, 0},
        {{"1", "64999", "64999", "1", "0", "64", "99999999999999999999", "/tmp", "1", "prog"}, 0},
        {{"1", "64999", "64999", "1", "0", "64", "0", "/tmp", "+1", "prog"}, 0},
    };
    int sv[2], st = 0, bad = 0;
    char line[160], r = 0;
    pid_t z;

    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    fflush(stdout);
    if ((z = fork()) == 0) {
        close(sv[0]);
        _exit(zlib_zygote(sv[1]));
    }
    close(sv[1]);
    ASSERT(z > 0);
    ASSERT_EQ(recv(sv[0], &r, 1, 0), 1);
    ASSERT_EQ(r, 'R');
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int took;
        if (zlib_ask(sv[0], cases[i].f, 10, line, sizeof(line)) != 0) {
            fprintf(stderr, "  case %zu: no answer from the zygote\n", i);
            bad++;
            continue;
        }
        took = strstr(line, " zygote") != NULL;
        if (took != cases[i].takes || (!took && strcmp(line, "fail bad request") != 0)) {
            fprintf(stderr,
                    "  case %zu (uid \"%s\" gid \"%s\" limits \"%s\" \"%s\" \"%s\" argc \"%s\"): "
                    "said \"%s\"\n",
                    i, cases[i].f[1], cases[i].f[2], cases[i].f[4], cases[i].f[5], cases[i].f[6],
                    cases[i].f[8], line);
            bad++;
        }
    }
    close(sv[0]);
    waitpid(z, &st, 0);
    ASSERT_EQ(bad, 0);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- the agent's own confinement (confine.c) ------------------------------ */

#if defined(__x86_64__)
/* An i386 system call (int 0x80) from this x86_64 process: numbers and
 * an arch of their own, which a filter of x86_64 numbers alone lets by. */
static long int80(long nr, long a)
{
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a) : "memory");
    return ret;
}
#endif

static void *thread_fn(void *arg)
{
    return arg;
}

/* In a child: the number of the first check that failed, 0 when all
 * held (a line number would not fit an exit status). */
#define CHECK(cond)      \
    do {                 \
        step++;          \
        if (!(cond))     \
            return step; \
    } while (0)

/* In a child with the filter. */
static int ns_filter_checks(void)
{
    static char zero[88];
    pthread_t t;
    pid_t pid;
    int st = 0, step = 0;
    long rc;

    CHECK(agent_confine_ns_filter() == 0);
    CHECK(syscall(SYS_unshare, CLONE_NEWUSER) == -1 && errno == EPERM);
    CHECK(syscall(SYS_unshare, CLONE_FS) == -1 && errno == EPERM);
    if ((rc = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)) == 0)
        _exit(0);
    CHECK(rc == -1 && errno == EPERM);
    if ((rc = syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0)) == 0)
        _exit(0);
    CHECK(rc == -1 && errno == EPERM);
    CHECK(syscall(SYS_setns, 0, CLONE_NEWUSER) == -1 && errno == EPERM);
    CHECK(syscall(SYS_clone3, zero, sizeof(zero)) == -1 && errno == ENOSYS);
#if defined(__x86_64__)
    /* x32's numbers carry a bit of their own on the same arch */
    CHECK(syscall(0x40000000 | SYS_unshare, CLONE_NEWUSER) == -1 && errno == EPERM);
#endif
    /* what every program needs still works: fork, threads (glibc's
     * pthread_create falls back from clone3 to clone) */
    if ((pid = fork()) == 0)
        _exit(7);
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7);
    CHECK(pthread_create(&t, NULL, thread_fn, NULL) == 0 && pthread_join(t, NULL) == 0);
    return 0;
}

/* Runs fn in a child; its exit status (-1: it died by a signal). */
static int in_child(int (*fn)(void))
{
    int st = 0;
    pid_t pid = fork();

    if (pid == 0)
        _exit(fn());
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -2;
    if (!WIFEXITED(st))
        return -1;
    if (WEXITSTATUS(st))
        fprintf(stderr, "  check %d failed in the child\n", WEXITSTATUS(st));
    return WEXITSTATUS(st);
}

TEST(confine_filter_denies_namespaces_and_keeps_fork_and_threads)
{
    ASSERT_EQ(in_child(ns_filter_checks), 0);
}

/* The i386 ABI: unshare (310), setns (346), clone (120) with a namespace
 * flag answer EPERM under the filter.  A kernel without i386 emulation
 * kills the call (SIGSEGV) before any filter: no namespace can come from
 * it there, and the test says so. */
TEST(confine_filter_covers_i386_calls)
{
#if defined(__x86_64__)
    int st = 0;
    pid_t pid = fork();

    ASSERT(pid >= 0);
    if (pid == 0) {
        if (agent_confine_ns_filter() != 0)
            _exit(2);
        _exit(int80(310, CLONE_NEWUSER) == -EPERM && int80(346, 0) == -EPERM &&
                      int80(120, CLONE_NEWUSER | SIGCHLD) == -EPERM
                  ? 0
                  : 1);
    }
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) {
        fprintf(stderr, "  no i386 system calls on this kernel: none to filter\n");
        return;
    }
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
#endif
}

TEST(confine_env_ready_only_as_the_agent_runs_itself_again)
{
    char guard[3 * 4096];
    char *docker[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LLMSB_AGENT_UID=10001",
                      "PIP_INDEX_URL=https://u:secret@mirror/simple", NULL};
    char *ready[] = {guard, "LLMSB_AGENT_UID=10001", NULL};
    char *alone[] = {guard, NULL};
    char *two[] = {guard, "LLMSB_AGENT_UID=1", "LLMSB_AGENT_UID=2", NULL};
    char *more[] = {guard, "LLMSB_AGENT_UID=1", "HOSTNAME=x", NULL};
    char *none[] = {NULL};

    snprintf(guard, sizeof(guard), "%s", AGENT_CONFINE_GUARD);
    memset(guard + strlen(guard), 'x', 2 * 4096);
    guard[strlen(AGENT_CONFINE_GUARD) + 2 * 4096] = '\0';
    ASSERT_EQ(agent_confine_env_ready(docker, 4096), 0);
    ASSERT_EQ(agent_confine_env_ready(ready, 4096), 1);
    ASSERT_EQ(agent_confine_env_ready(alone, 4096), 1);
    ASSERT_EQ(agent_confine_env_ready(two, 4096), 0);
    ASSERT_EQ(agent_confine_env_ready(more, 4096), 0);
    ASSERT_EQ(agent_confine_env_ready(none, 4096), 0);
    ASSERT_EQ(agent_confine_env_ready(ready, 8192), 0); /* a guard under two pages */
}

TEST(confine_pages_are_the_whole_pages_inside)
{
    uintptr_t lo, hi;

    agent_confine_pages((const char *)4096, 8192, 4096, &lo, &hi);
    ASSERT(lo == 4096 && hi == 12288);
    agent_confine_pages((const char *)4097, 8192, 4096, &lo, &hi);
    ASSERT(lo == 8192 && hi == 12288);
    agent_confine_pages((const char *)4097, 4096, 4096, &lo, &hi);
    ASSERT(lo == hi); /* no whole page */
}

/* In a child: the guard's whole page unreadable (a write from it fails
 * with EFAULT, as gVisor's read of /proc/PID/environ does), the bytes
 * around it and the kept entry still there, environ without the guard. */
static int env_guard_checks(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *mem = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *guard = mem + 100, *env[3];
    size_t len = strlen(AGENT_CONFINE_GUARD) + 2 * page; /* ends in the third page */
    const char *uid;
    int p[2], step = 0;

    CHECK(mem != MAP_FAILED && pipe(p) == 0);
    memcpy(guard, AGENT_CONFINE_GUARD, strlen(AGENT_CONFINE_GUARD));
    memset(guard + strlen(AGENT_CONFINE_GUARD), 'x', len - strlen(AGENT_CONFINE_GUARD));
    guard[len] = '\0';
    env[0] = guard;
    env[1] = "LLMSB_AGENT_UID=4242";
    env[2] = NULL;
    CHECK(agent_confine_env_guard(env, page) == 0);
    CHECK((uid = getenv("LLMSB_AGENT_UID")) && strcmp(uid, "4242") == 0 && !environ[1]);
    CHECK(write(p[1], mem + page, 1) == -1 && errno == EFAULT);
    CHECK(write(p[1], mem + 2 * page - 1, 1) == -1 && errno == EFAULT);
    CHECK(write(p[1], mem + page - 1, 1) == 1 && write(p[1], mem + 2 * page, 1) == 1);
    return 0;
}

TEST(confine_env_guard_makes_its_pages_unreadable)
{
    ASSERT_EQ(in_child(env_guard_checks), 0);
}

TEST_MAIN("agent", T(rm_tree_does_not_follow_symlinks), T(rm_tree_removes_a_tree_of_any_depth),
          T(oom_count_reads_or_reports_unknown), T(zygote_env_sensitive_names),
          T(javac_env_ok_only_the_sandbox_env), T(javac_child_falls_back_when_the_server_is_gone),
          T(javac_child_falls_back_on_hotspot_files), T(restore_tells_the_jobs_doing_from_ours),
          T(snapshot_keeps_a_library_of_any_shape), T(prespawn_serves_only_the_same_spec),
          T(live_step_never_waits_on_a_slow_worker), T(zygote_lib_takes_only_whole_numbers),
          T(confine_filter_denies_namespaces_and_keeps_fork_and_threads),
          T(confine_filter_covers_i386_calls),
          T(confine_env_ready_only_as_the_agent_runs_itself_again),
          T(confine_pages_are_the_whole_pages_inside),
          T(confine_env_guard_makes_its_pages_unreadable))
