/* fake_engine.c - TEST DOUBLE of a container engine (see fake_engine.h).
 *
 * A container is a directory under the engine's temp dir and, once
 * started, a child process in its own process group running the
 * test-double agent (fake_agent.c --shell), not the real llmsb-agent: the
 * real one needs what a plain process cannot get (root to switch to the
 * sandbox uid, kill by uid, wipe /tmp, /var/tmp and /dev/shm of the host).
 * The agent's stdin and stdout are one end of a socket pair (so a write to
 * a dead agent fails with EPIPE instead of raising SIGPIPE), its stderr a
 * pipe kept as the stream's log.  Killing a container kills its process
 * group.  Each backend opened on the engine finds it through its host
 * string ("fake:<address>"), so backend_clone works as for a real engine
 * and the state needs no globals. */
#include "tests/doubles/fake_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

struct fake_container {
    char id[BACKEND_ID_MAX];
    char dir[PATH_MAX];
    char labels[BACKEND_MAX_LABELS][2][160];
    int nlabels;
    long long created_s;
    pid_t pid;     /* 0: not started; else the agent, leader of its process group */
    int reaped;    /* its exit status was collected */
    int wstatus;   /* with reaped */
    int oom;       /* fake_engine_kill said so */
    int child_io;  /* the agent's end of the socket pair until start, or -1 */
    int child_err; /* the write end of its stderr pipe until start, or -1 */
    struct fake_container *next;
};

struct fake_engine {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a held op let go */
    struct backend be; /* the template fake_engine_backend hands out */
    char agent[PATH_MAX];
    char root[PATH_MAX];
    int broken;
    int64_t hello_delay_ms;
    int prestart;
    int live;
    int gvisor;
    int null_jobs;
    int fail[FAKE_OP_COUNT];
    int calls[FAKE_OP_COUNT];
    int hold[FAKE_OP_COUNT];    /* calls still to be held */
    int holding[FAKE_OP_COUNT]; /* 1: held calls wait (until let go) */
    unsigned long next_id;
    struct fake_container *list;
};

struct fake_stream {
    struct backend_stream base;
    int io;  /* the agent's stdin and stdout */
    int err; /* its stderr; -1 after its end */
};

static const char *const op_names[FAKE_OP_COUNT] = {"open",   "ping",  "image_exists", "create",
                                                    "attach", "start", "inspect",      "stop",
                                                    "remove", "list",  "exec"};

/* A held call of op: waits until the test lets go, or FAKE_HOLD_MAX_MS
 * (a test gone wrong does not hang). Locked. */
#define FAKE_HOLD_MAX_MS 10000
static void held(struct fake_engine *fe, enum fake_op op)
{
    struct timespec until = clock_deadline_in_ms(FAKE_HOLD_MAX_MS);

    while (fe->holding[op])
        if (pthread_cond_timedwait(&fe->cv, &fe->mu, &until) == ETIMEDOUT) {
            fprintf(stderr, "  fake engine: a held %s was not let go within %d ms\n", op_names[op],
                    FAKE_HOLD_MAX_MS);
            break;
        }
}

/* Counts a call of op, holds it when asked and applies an injected
 * failure. */
static int enter(struct fake_engine *fe, enum fake_op op, struct llmsb_err *err)
{
    int fail;

    pthread_mutex_lock(&fe->mu);
    fe->calls[op]++;
    if (fe->hold[op] > 0) {
        fe->hold[op]--;
        held(fe, op);
    }
    fail = fe->fail[op] != 0;
    if (fe->fail[op] > 0)
        fe->fail[op]--;
    pthread_mutex_unlock(&fe->mu);
    return fail ? llmsb_err_set(err, LLMSB_ERR_BACKEND, "fake engine: %s failed (injected)",
                                op_names[op])
                : 0;
}

static struct fake_engine *engine(struct backend *b)
{
    return b->priv;
}

/* The container named id, or NULL. Locked. */
static struct fake_container *find(struct fake_engine *fe, const char *id)
{
    for (struct fake_container *c = fe->list; c; c = c->next)
        if (strcmp(c->id, id) == 0)
            return c;
    return NULL;
}

static int unknown(const char *id, struct llmsb_err *err)
{
    return llmsb_err_set(err, LLMSB_ERR_NOTFOUND, "fake engine: no container %.12s", id);
}

/* Collects the agent's exit if it ended (block: wait for it). Locked. */
static void reap(struct fake_container *c, int block)
{
    if (c->pid > 0 && !c->reaped && waitpid(c->pid, &c->wstatus, block ? 0 : WNOHANG) == c->pid)
        c->reaped = 1;
}

/* SIGKILL to the container's process group (what the agent started may
 * outlive it), then its exit collected. Locked. */
static void kill_container(struct fake_container *c)
{
    if (c->pid > 0) {
        kill(-c->pid, SIGKILL);
        reap(c, 1);
    }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Kills the container, removes its directory and frees it. Locked. */
static void drop(struct fake_container *c)
{
    kill_container(c);
    close_fd(&c->child_io);
    close_fd(&c->child_err);
    rm_tree(c->dir);
    free(c);
}

/* ---- the agent stream ------------------------------------------------------ */

static ssize_t stream_read(struct backend_stream *s, char *p, size_t n, int timeout_ms,
                           struct llmsb_err *err)
{
    struct fake_stream *fs = (struct fake_stream *)s;
    int64_t deadline = timeout_ms < 0 ? -1 : clock_mono_ms() + timeout_ms;

    for (;;) {
        struct pollfd pf[2] = {{fs->io, POLLIN, 0}, {fs->err, POLLIN, 0}};
        int left = deadline < 0 ? -1 : (int)(deadline - clock_mono_ms());
        int r = poll(pf, fs->err >= 0 ? 2 : 1, left < 0 && deadline >= 0 ? 0 : left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return llmsb_err_set(err, LLMSB_ERR_SYS, "fake engine: poll: %s", strerror(errno));
        if (r == 0)
            return LLMSB_ERR_TIMEOUT;
        if (fs->err >= 0 && pf[1].revents) {
            char chunk[4096];
            ssize_t k = read(fs->err, chunk, sizeof(chunk));
            if (k > 0)
                backend_stream_log(s, chunk, (size_t)k);
            else
                close_fd(&fs->err);
        }
        if (pf[0].revents) {
            ssize_t k = recv(fs->io, p, n, 0);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0 && errno != ECONNRESET)
                return llmsb_err_set(err, LLMSB_ERR_BACKEND, "fake engine: read from the agent: %s",
                                     strerror(errno));
            return k < 0 ? 0 : k;
        }
    }
}

static int stream_write(struct backend_stream *s, const char *p, size_t n, struct llmsb_err *err)
{
    struct fake_stream *fs = (struct fake_stream *)s;

    for (size_t off = 0; off < n;) {
        ssize_t k = send(fs->io, p + off, n - off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "fake engine: write to the agent: %s",
                                 strerror(errno));
        off += (size_t)k;
    }
    return 0;
}

static void stream_close(struct backend_stream *s)
{
    struct fake_stream *fs = (struct fake_stream *)s;

    close_fd(&fs->io);
    close_fd(&fs->err);
    buf_release(&s->log);
    free(fs);
}

static const struct backend_stream_ops fake_stream_ops = {stream_read, stream_write, stream_close};

/* ---- the ops --------------------------------------------------------------- */

static int fake_open(struct backend *b, const char *host, struct llmsb_err *err)
{
    void *p = NULL;

    if (!host || sscanf(host, "fake:%p", &p) != 1 || !p)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "fake engine: host \"%s\" is not one",
                             host ? host : "");
    b->priv = p;
    snprintf(b->host, sizeof(b->host), "%s", host);
    return enter(p, FAKE_OP_OPEN, err);
}

static void fake_close(struct backend *b)
{
    b->priv = NULL; /* the engine is the test's */
}

static int fake_ping(struct backend *b, char *version, size_t vsz, struct llmsb_err *err)
{
    if (enter(engine(b), FAKE_OP_PING, err) != 0)
        return LLMSB_ERR_BACKEND;
    snprintf(version, vsz, "fake");
    return 0;
}

static int fake_image_exists(struct backend *b, const char *image, struct llmsb_err *err)
{
    return enter(engine(b), FAKE_OP_IMAGE_EXISTS, err) != 0 ? LLMSB_ERR_BACKEND : 1;
}

static int fake_create(struct backend *b, const struct container_spec *spec, char *id, size_t idsz,
                       struct llmsb_err *err)
{
    struct fake_engine *fe = engine(b);
    struct fake_container *c;
    int rc = 0;

    if (enter(fe, FAKE_OP_CREATE, err) != 0)
        return LLMSB_ERR_BACKEND;
    if (!(c = calloc(1, sizeof(*c))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "fake engine: out of memory");
    c->child_io = c->child_err = -1;
    c->created_s = (long long)time(NULL);
    for (int i = 0; i < spec->nlabels && i < BACKEND_MAX_LABELS; i++, c->nlabels++) {
        snprintf(c->labels[i][0], sizeof(c->labels[i][0]), "%s", spec->labels[i][0]);
        snprintf(c->labels[i][1], sizeof(c->labels[i][1]), "%s", spec->labels[i][1]);
    }
    pthread_mutex_lock(&fe->mu);
    snprintf(c->id, sizeof(c->id), "fake%08lx", ++fe->next_id);
    llmsb_fmt(c->dir, sizeof(c->dir), "%s/%s", fe->root, c->id);
    if (mkdir(c->dir, 0700) != 0) {
        rc =
            llmsb_err_set(err, LLMSB_ERR_SYS, "fake engine: mkdir %s: %s", c->dir, strerror(errno));
        free(c);
    } else {
        c->next = fe->list;
        fe->list = c;
        snprintf(id, idsz, "%s", c->id);
    }
    pthread_mutex_unlock(&fe->mu);
    return rc;
}

static int fake_attach(struct backend *b, const char *id, struct backend_stream **out,
                       struct llmsb_err *err)
{
    struct fake_engine *fe = engine(b);
    struct fake_container *c;
    struct fake_stream *fs;
    int sv[2] = {-1, -1}, ep[2] = {-1, -1}, rc = 0;

    if (enter(fe, FAKE_OP_ATTACH, err) != 0)
        return LLMSB_ERR_BACKEND;
    if (!(fs = calloc(1, sizeof(*fs))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "fake engine: out of memory");
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || pipe2(ep, O_CLOEXEC) != 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "fake engine: socketpair/pipe: %s", strerror(errno));
        goto out;
    }
    pthread_mutex_lock(&fe->mu);
    if (!(c = find(fe, id)) || c->pid > 0) {
        rc = c ? llmsb_err_set(err, LLMSB_ERR_BACKEND, "fake engine: %.12s started already", id)
               : unknown(id, err);
    } else {
        close_fd(&c->child_io);
        close_fd(&c->child_err);
        c->child_io = sv[1];
        c->child_err = ep[1];
        sv[1] = ep[1] = -1;
    }
    pthread_mutex_unlock(&fe->mu);
out:
    close_fd(&sv[1]);
    close_fd(&ep[1]);
    if (rc != 0) {
        close_fd(&sv[0]);
        close_fd(&ep[0]);
        free(fs);
        return rc;
    }
    fs->base.ops = &fake_stream_ops;
    buf_init(&fs->base.log, BACKEND_STREAM_LOG_CAP);
    fs->io = sv[0];
    fs->err = ep[0];
    *out = &fs->base;
    return 0;
}

/* In the forked child: the agent on the container's stdio, in its
 * directory and its own process group.  Only async-signal-safe calls. */
static void exec_agent(const struct fake_container *c, const char *agent, char *const argv[])
{
    int null = open("/dev/null", O_RDWR);

    setpgid(0, 0);
    dup2(c->child_io >= 0 ? c->child_io : null, 0);
    dup2(c->child_io >= 0 ? c->child_io : null, 1);
    dup2(c->child_err >= 0 ? c->child_err : null, 2);
    if (chdir(c->dir) == 0)
        execv(agent, argv);
    _exit(127);
}

static int fake_start(struct backend *b, const char *id, struct llmsb_err *err)
{
    struct fake_engine *fe = engine(b);
    struct fake_container *c;
    char delay[24];
    char *argv[10] = {NULL};
    int argc = 0, rc = 0;

    if (enter(fe, FAKE_OP_START, err) != 0)
        return LLMSB_ERR_BACKEND;
    pthread_mutex_lock(&fe->mu);
    argv[argc++] = fe->agent;
    if (!fe->broken)
        argv[argc++] = "--shell";
    snprintf(delay, sizeof(delay), "%lld", (long long)fe->hello_delay_ms);
    if (fe->hello_delay_ms > 0) {
        argv[argc++] = "--hello-delay-ms";
        argv[argc++] = delay;
    }
    if (fe->prestart)
        argv[argc++] = "--prestart";
    if (fe->live)
        argv[argc++] = "--live";
    if (fe->gvisor)
        argv[argc++] = "--gvisor";
    if (fe->null_jobs)
        argv[argc++] = "--null";
    if (!(c = find(fe, id))) {
        rc = unknown(id, err);
    } else if (c->pid == 0) {
        pid_t pid = fork();
        if (pid == 0)
            exec_agent(c, fe->agent, argv);
        if (pid < 0) {
            rc = llmsb_err_set(err, LLMSB_ERR_SYS, "fake engine: fork: %s", strerror(errno));
        } else {
            setpgid(pid, pid); /* whichever of the two runs first */
            c->pid = pid;
            close_fd(&c->child_io);
            close_fd(&c->child_err);
        }
    }
    pthread_mutex_unlock(&fe->mu);
    return rc;
}

static int fake_inspect(struct backend *b, const char *id, struct container_state *st,
                        struct llmsb_err *err)
{
    struct fake_engine *fe = engine(b);
    struct fake_container *c;
    int rc = 0;

    memset(st, 0, sizeof(*st));
    if (enter(fe, FAKE_OP_INSPECT, err) != 0)
        return LLMSB_ERR_BACKEND;
    pthread_mutex_lock(&fe->mu);
    if (!(c = find(fe, id))) {
        rc = unknown(id, err);
    } else {
        reap(c, 0);
        st->running = c->pid > 0 && !c->reaped;
        st->oom_killed = c->oom;
        if (c->reaped)
            st->exit_code =
                WIFEXITED(c->wstatus) ? WEXITSTATUS(c->wstatus) : 128 + WTERMSIG(c->wstatus);
        snprintf(st->status, sizeof(st->status), "%s",
                 st->running ? "running"
                 : c->pid    ? "exited"
                             : "created");
    }
    pthread_mutex_unlock(&fe->mu);
    return rc;
}

static int fake_stop(struct backend *b, const char *id, struct llmsb_err *err)
{
    struct fake_engine *fe = engine(b);
    struct fake_container *c;
    int rc = 0;

    if (enter(fe, FAKE_OP_STOP, err) != 0)
        return LLMSB_ERR_BACKEND;
    pthread_mutex_lock(&fe->mu);
    if ((c = find(fe, id)))
        kill_container(c);
    else
        rc = unknown(id, err);
    pthread_mutex_unlock(&fe->mu);
    return rc;
}

static int fake_remove(struct backend *b, const char *id, struct llmsb_err *err)
{
    struct fake_engine *fe = engine(b);

    if (enter(fe, FAKE_OP_REMOVE, err) != 0)
        return LLMSB_ERR_BACKEND;
    pthread_mutex_lock(&fe->mu);
    for (struct fake_container **pc = &fe->list; *pc; pc = &(*pc)->next) {
        struct fake_container *c = *pc;
        if (strcmp(c->id, id) == 0) {
            *pc = c->next;
            drop(c);
            break;
        }
    }
    pthread_mutex_unlock(&fe->mu);
    return 0; /* one that is gone already is success */
}

static const char *label_of(const struct fake_container *c, const char *key)
{
    for (int i = 0; i < c->nlabels; i++)
        if (strcmp(c->labels[i][0], key) == 0)
            return c->labels[i][1];
    return "";
}

static int fake_list(struct backend *b, const char *label,
                     void (*fn)(void *ud, const struct container_info *ci), void *ud,
                     struct llmsb_err *err)
{
    struct fake_engine *fe = engine(b);
    const char *eq = strchr(label, '=');
    char key[160];

    if (enter(fe, FAKE_OP_LIST, err) != 0)
        return LLMSB_ERR_BACKEND;
    snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - label) : (int)strlen(label), label);
    pthread_mutex_lock(&fe->mu);
    for (struct fake_container *c = fe->list; c; c = c->next) {
        struct container_info ci = {c->id,
                                    label_of(c, "llmsb.worker"),
                                    label_of(c, "llmsb.kind"),
                                    label_of(c, "llmsb.pid"),
                                    label_of(c, "llmsb.host"),
                                    label_of(c, "llmsb.queue"),
                                    c->created_s};
        for (int i = 0; i < c->nlabels; i++)
            if (strcmp(c->labels[i][0], key) == 0 && (!eq || strcmp(c->labels[i][1], eq + 1) == 0))
                fn(ud, &ci);
    }
    pthread_mutex_unlock(&fe->mu);
    return 0;
}

/* Runs argv in the container's directory as a plain process (user is
 * ignored), its stdout into out. */
static int fake_exec(struct backend *b, const char *id, const char *const *argv, const char *user,
                     struct buf *out, int *exit_code, struct llmsb_err *err)
{
    struct fake_engine *fe = engine(b);
    struct fake_container *c;
    char dir[PATH_MAX], chunk[4096];
    int p[2], status = 0;
    ssize_t n;
    pid_t pid;

    if (enter(fe, FAKE_OP_EXEC, err) != 0)
        return LLMSB_ERR_BACKEND;
    pthread_mutex_lock(&fe->mu);
    c = find(fe, id);
    if (c)
        snprintf(dir, sizeof(dir), "%s", c->dir);
    pthread_mutex_unlock(&fe->mu);
    if (!c)
        return unknown(id, err);
    if (pipe2(p, O_CLOEXEC) != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "fake engine: pipe: %s", strerror(errno));
    if ((pid = fork()) == 0) {
        dup2(p[1], 1);
        if (chdir(dir) == 0)
            execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    while ((n = read(p[0], chunk, sizeof(chunk))) > 0)
        buf_append_some(out, chunk, (size_t)n);
    close(p[0]);
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "fake engine: exec %s failed", argv[0]);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 0;
}

static int no_images(struct llmsb_err *err)
{
    return llmsb_err_set(err, LLMSB_ERR_BACKEND, "fake engine: no image builds, imports or pulls");
}

static int fake_image_import(struct backend *b, const char *repo, const char *tag,
                             backend_read_cb rd, void *ud, backend_progress_cb progress, void *pud,
                             struct llmsb_err *err)
{
    return no_images(err);
}

static int fake_image_build(struct backend *b, const char *const *tags, size_t ntags,
                            backend_read_cb rd, void *ud, backend_progress_cb progress, void *pud,
                            struct llmsb_err *err)
{
    return no_images(err);
}

static int fake_image_tag(struct backend *b, const char *image, const char *repo, const char *tag,
                          struct llmsb_err *err)
{
    return no_images(err);
}

static int fake_image_pull(struct backend *b, const char *repo, const char *tag,
                           backend_progress_cb progress, void *pud, struct llmsb_err *err)
{
    return no_images(err);
}

static int fake_egress_ensure(struct backend *b, struct llmsb_err *err)
{
    return 0; /* no network to filter: the agent is a local process */
}

static int fake_network_disconnect(struct backend *b, const char *name, const char *id,
                                   struct llmsb_err *err)
{
    return 0;
}

static const struct backend_ops fake_ops = {
    .name = "fake",
    .open = fake_open,
    .close = fake_close,
    .ping = fake_ping,
    .image_exists = fake_image_exists,
    .create = fake_create,
    .attach = fake_attach,
    .start = fake_start,
    .inspect = fake_inspect,
    .stop = fake_stop,
    .remove = fake_remove,
    .list = fake_list,
    .exec = fake_exec,
    .image_import = fake_image_import,
    .image_build = fake_image_build,
    .image_tag = fake_image_tag,
    .image_pull = fake_image_pull,
    .egress_ensure = fake_egress_ensure,
    .network_disconnect = fake_network_disconnect,
};

/* ---- the engine ------------------------------------------------------------ */

/* The agent's path: given, $FAKE_AGENT, or fake-agent beside this binary. */
static int find_agent(struct fake_engine *fe, const char *agent, struct llmsb_err *err)
{
    char self[PATH_MAX];
    ssize_t n;

    if (!agent)
        agent = getenv("FAKE_AGENT");
    if (agent) {
        snprintf(fe->agent, sizeof(fe->agent), "%s", agent);
    } else if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
        self[n] = '\0';
        *strrchr(self, '/') = '\0';
        llmsb_fmt(fe->agent, sizeof(fe->agent), "%s/fake-agent", self);
    }
    if (access(fe->agent, X_OK) != 0)
        return llmsb_err_set(err, LLMSB_ERR_NOTFOUND,
                             "fake engine: no test-double agent at \"%s\" (make unit builds it)",
                             fe->agent);
    return 0;
}

struct fake_engine *fake_engine_new(const char *agent, struct llmsb_err *err)
{
    struct fake_engine *fe = calloc(1, sizeof(*fe));
    const char *tmp = getenv("TMPDIR");
    char host[64];
    int rc;

    if (!fe) {
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "fake engine: out of memory");
        return NULL;
    }
    if ((rc = clock_cond_init(&fe->cv)) != 0) {
        free(fe);
        llmsb_err_set(err, LLMSB_ERR_SYS, "fake engine: its condition variable: %s", strerror(rc));
        return NULL;
    }
    pthread_mutex_init(&fe->mu, NULL);
    snprintf(fe->root, sizeof(fe->root), "%s/llmsb-fake-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (find_agent(fe, agent, err) != 0)
        goto fail;
    if (!mkdtemp(fe->root)) {
        llmsb_err_set(err, LLMSB_ERR_SYS, "fake engine: mkdtemp %s: %s", fe->root, strerror(errno));
        goto fail;
    }
    snprintf(host, sizeof(host), "fake:%p", (void *)fe);
    fe->be.ops = &fake_ops;
    if (fake_open(&fe->be, host, err) != 0) {
        rmdir(fe->root);
        goto fail;
    }
    return fe;
fail:
    pthread_cond_destroy(&fe->cv);
    pthread_mutex_destroy(&fe->mu);
    free(fe);
    return NULL;
}

void fake_engine_free(struct fake_engine *fe)
{
    if (!fe)
        return;
    while (fe->list) {
        struct fake_container *c = fe->list;
        fe->list = c->next;
        drop(c);
    }
    rm_tree(fe->root);
    pthread_cond_destroy(&fe->cv);
    pthread_mutex_destroy(&fe->mu);
    free(fe);
}

const struct backend *fake_engine_backend(struct fake_engine *fe)
{
    return &fe->be;
}

void fake_engine_fail(struct fake_engine *fe, enum fake_op op, int n)
{
    pthread_mutex_lock(&fe->mu);
    fe->fail[op] = n;
    pthread_mutex_unlock(&fe->mu);
}

void fake_engine_hold(struct fake_engine *fe, enum fake_op op, int n)
{
    pthread_mutex_lock(&fe->mu);
    fe->hold[op] = n;
    fe->holding[op] = 1;
    pthread_mutex_unlock(&fe->mu);
}

void fake_engine_let_go(struct fake_engine *fe, enum fake_op op)
{
    pthread_mutex_lock(&fe->mu);
    fe->hold[op] = 0;
    fe->holding[op] = 0;
    pthread_cond_broadcast(&fe->cv);
    pthread_mutex_unlock(&fe->mu);
}

int fake_engine_calls(struct fake_engine *fe, enum fake_op op)
{
    int n;

    pthread_mutex_lock(&fe->mu);
    n = fe->calls[op];
    pthread_mutex_unlock(&fe->mu);
    return n;
}

int fake_engine_containers(struct fake_engine *fe)
{
    int n = 0;

    pthread_mutex_lock(&fe->mu);
    for (struct fake_container *c = fe->list; c; c = c->next)
        n++;
    pthread_mutex_unlock(&fe->mu);
    return n;
}

int fake_engine_running(struct fake_engine *fe)
{
    int n = 0;

    pthread_mutex_lock(&fe->mu);
    for (struct fake_container *c = fe->list; c; c = c->next) {
        reap(c, 0);
        n += c->pid > 0 && !c->reaped;
    }
    pthread_mutex_unlock(&fe->mu);
    return n;
}

void fake_engine_agent(struct fake_engine *fe, int broken, int64_t hello_delay_ms)
{
    pthread_mutex_lock(&fe->mu);
    fe->broken = broken;
    fe->hello_delay_ms = hello_delay_ms;
    pthread_mutex_unlock(&fe->mu);
}

void fake_engine_agent_prestart(struct fake_engine *fe, int on)
{
    pthread_mutex_lock(&fe->mu);
    fe->prestart = on;
    pthread_mutex_unlock(&fe->mu);
}

void fake_engine_agent_live(struct fake_engine *fe, int on)
{
    pthread_mutex_lock(&fe->mu);
    fe->live = on;
    pthread_mutex_unlock(&fe->mu);
}

void fake_engine_agent_gvisor(struct fake_engine *fe, int on)
{
    pthread_mutex_lock(&fe->mu);
    fe->gvisor = on;
    pthread_mutex_unlock(&fe->mu);
}

void fake_engine_agent_null(struct fake_engine *fe, int on)
{
    pthread_mutex_lock(&fe->mu);
    fe->null_jobs = on;
    pthread_mutex_unlock(&fe->mu);
}

int fake_engine_kill(struct fake_engine *fe, const char *id, int oom)
{
    int n = 0;

    pthread_mutex_lock(&fe->mu);
    for (struct fake_container *c = fe->list; c; c = c->next)
        if ((!id || strcmp(c->id, id) == 0) && c->pid > 0 && !c->reaped) {
            kill_container(c);
            c->oom = oom;
            n++;
        }
    pthread_mutex_unlock(&fe->mu);
    return n;
}
