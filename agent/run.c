/* run.c - how the agent runs one job and leaves nothing behind.
 *
 * Each step (compile, run) is a child in its own session, as the sandbox
 * uid, with rlimits, no new privileges and a raised OOM score so the kernel
 * picks the job, not the agent.  The parent multiplexes stdin, stdout,
 * stderr and a signalfd for SIGCHLD in one poll loop against a deadline.
 * Killing is done by uid (a child that becomes the sandbox user and sends
 * kill(-1, SIGKILL)), which reaches double-forked and setsid'ed leftovers
 * that a process-group kill would miss.  A run step may instead take the
 * process prespawn.c started ahead of the job (with this file's child
 * setup), which it then supervises the same way from its go. */
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/compare.h"
#include "job_limits.h"
#include "javac.h"
#include "prespawn.h"
#include "zygote.h"

extern char **environ;

#define EXIT_GRACE_MS 200  /* leftovers holding a pipe after main exits */
#define KILL_GRACE_MS 2000 /* after SIGKILL, stop waiting for EOF */
#define RM_MAX_DEPTH 128   /* past it a dir is moved up (agent_rm_tree_at) */

/* A job's case left what the agent could not undo: the cleanup after it
 * says the container is not clean, whatever it manages (not reused). */
static int leave_dirty;

struct step {
    char *const *argv;
    char *const *env;
    const char *stdin_data;
    size_t stdin_len;
    uint64_t timeout_ms;
    size_t out_cap;  /* stdout + stderr together */
    int kill_on_cap; /* run step: cap reached = output_limit */
    int zygote;      /* run step: started through the zygote when it can */
    int javac;       /* compile step: asks the warm javac first (javac.c) */
    int live;        /* run step: OUTPUT frames as it goes (TAG_LIVE) */
    struct buf *out;
    struct buf *err; /* == out to merge the streams */
    const struct proto_job *job;
};

struct outcome {
    int exited;
    int exit_code;
    int signal;
    int timed_out;
    int over_output;
    int out_trunc;
    int err_trunc;
    int64_t duration_ms;
    struct rusage ru;
    int zygote;      /* forked by the zygote */
    int zygote_lost; /* which died before it answered for the job */
    int prespawned;  /* started ahead of the job (prespawn.c) */
};

int agent_conf_init(struct agent_conf *conf)
{
    const char *s = getenv("LLMSB_AGENT_UID");
    long long uid = AGENT_DEFAULT_UID;

    if (s && parse_ll(s, 1, 65533, &uid) != 0) {
        fprintf(stderr, "llmsb-agent: LLMSB_AGENT_UID must be 1..65533 (got \"%s\")\n", s);
        return -1;
    }
    conf->uid = (uid_t)uid;
    conf->gid = (gid_t)uid;
    conf->work_dir = AGENT_WORK_DIR;
    conf->wipe_dirs[0] = AGENT_WORK_DIR;
    conf->wipe_dirs[1] = "/tmp";
    conf->wipe_dirs[2] = "/var/tmp";
    conf->wipe_dirs[3] = "/dev/shm";    /* POSIX shared memory and semaphores */
    conf->wipe_dirs[4] = "/dev/mqueue"; /* POSIX message queues */
    conf->wipe_dirs[5] = NULL;
    return 0;
}

static int drop_privileges(const struct agent_conf *conf)
{
    if (setgroups(0, NULL) != 0 || setgid(conf->gid) != 0 || setuid(conf->uid) != 0)
        return -1;
    if (getuid() != conf->uid || geteuid() != conf->uid || setuid(0) == 0)
        return -1;
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

int agent_as_user(const struct agent_conf *conf,
                  int (*fn)(const struct agent_conf *, const void *, int), const void *arg,
                  struct buf *out, int *over)
{
    int p[2], status = 0;
    pid_t pid;
    ssize_t n;
    char chunk[16384];

    if (over)
        *over = 0;
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        if (drop_privileges(conf) != 0) {
            dprintf(p[1], "cannot switch to uid %u: %s", (unsigned)conf->uid, strerror(errno));
            _exit(1);
        }
        _exit(fn(conf, arg, p[1]));
    }
    close(p[1]);
    while (out && (n = read(p[0], chunk, sizeof(chunk))) != 0) {
        size_t room = out->cap > out->len ? out->cap - out->len : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (buf_append(out, chunk, (size_t)n < room ? (size_t)n : room) != 0 || (size_t)n > room) {
            if (over)
                *over = 1;
            break; /* the child's next write fails: it ends */
        }
    }
    close(p[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* agent_as_user with the child's message (cut to msgsz) in msg. */
static int as_sandbox_user(const struct agent_conf *conf,
                           int (*fn)(const struct agent_conf *, const void *, int), const void *arg,
                           char *msg, size_t msgsz)
{
    struct buf b;
    int rc;

    if (!msg || !msgsz)
        return agent_as_user(conf, fn, arg, NULL, NULL);
    buf_init(&b, msgsz - 1);
    rc = agent_as_user(conf, fn, arg, &b, NULL);
    snprintf(msg, msgsz, "%s", b.len ? b.data : "");
    buf_release(&b);
    return rc;
}

static int kill_fn(const struct agent_conf *conf, const void *arg, int msgfd)
{
    (void)conf, (void)arg, (void)msgfd;
    /* The kernel walks the task list under a lock: a fork bomb cannot
     * outrun one kill(-1). The caller does it twice anyway. */
    kill(-1, SIGKILL);
    return 0;
}

static void kill_all(const struct agent_conf *conf)
{
    as_sandbox_user(conf, kill_fn, NULL, NULL, 0);
}

static int count_uid_procs(uid_t uid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        char path[300];
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s", e->d_name);
        if (stat(path, &st) == 0 && st.st_uid == uid)
            n++;
    }
    closedir(d);
    return n;
}

/* pid, not a step's main process, was reaped: the zygote's or the
 * process started ahead, maybe */
static void reaped(pid_t pid)
{
    zygote_reaped(pid);
    prespawn_reaped(pid);
    javac_reaped(pid);
}

static void reap_all(void)
{
    pid_t p;

    while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
        reaped(p);
}

/* ---- tree removal ------------------------------------------------------ */

/* Opens the subdirectory name of dirfd (st its stat) to empty it, making
 * it ours to search and write first; -1 when it cannot be. */
static int open_to_empty(int dirfd, const char *name, const struct stat *st)
{
    int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (sub < 0 && errno == EACCES && fchmodat(dirfd, name, 0700, 0) == 0)
        sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub >= 0 && (st->st_mode & 0700) != 0700)
        fchmod(sub, 0700);
    return sub;
}

/* Moves the directory name of dirfd to top under a fresh name, for a
 * later pass to remove; 0 or -1. */
static int move_up(int top, int dirfd, const char *name)
{
    static unsigned seq;

    for (int tries = 0; tries < 100; tries++) {
        char fresh[64];
        snprintf(fresh, sizeof(fresh), ".llmsb-rm-%d-%u", (int)getpid(), seq++);
        if (renameat2(dirfd, name, top, fresh, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* Removes what is below dirfd, depth levels under top: a directory deeper
 * than RM_MAX_DEPTH is moved up to top instead (*moved set), so neither
 * the stack nor the open descriptors grow with the tree's depth. */
static int rm_tree(int top, int dirfd, int depth, int *moved)
{
    DIR *d;
    struct dirent *e;
    int rc = 0, fd;

    if ((fd = dup(dirfd)) < 0)
        return -1;
    if (!(d = fdopendir(fd))) {
        close(fd);
        return -1;
    }
    rewinddir(d); /* the copy shares the offset an earlier pass moved */
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        int sub;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (!S_ISDIR(st.st_mode)) {
            if (unlinkat(dirfd, e->d_name, 0) != 0 && errno != ENOENT)
                rc = -1;
            continue;
        }
        if (unlinkat(dirfd, e->d_name, AT_REMOVEDIR) == 0)
            continue; /* it was empty */
        if ((sub = open_to_empty(dirfd, e->d_name, &st)) < 0) {
            rc = -1;
            continue;
        }
        if (depth >= RM_MAX_DEPTH) {
            close(sub);
            if (move_up(top, dirfd, e->d_name) != 0)
                rc = -1;
            else
                *moved = 1;
            continue;
        }
        if (rm_tree(top, sub, depth + 1, moved) != 0)
            rc = -1;
        close(sub);
        if (unlinkat(dirfd, e->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT)
            rc = -1;
    }
    closedir(d);
    return rc;
}

int agent_rm_tree_at(int dirfd)
{
    int rc, moved;

    /* each pass leaves what it moved up at depth 1, where the next one
     * starts: every move shortens some path, so the passes end */
    do {
        moved = 0;
        rc = rm_tree(dirfd, dirfd, 0, &moved);
    } while (rc == 0 && moved);
    return rc;
}

int agent_rm_at(int dirfd, const char *name, const struct stat *st)
{
    int sub;

    if (!S_ISDIR(st->st_mode))
        return unlinkat(dirfd, name, 0) != 0 && errno != ENOENT ? -1 : 0;
    if ((sub = open_to_empty(dirfd, name, st)) >= 0) {
        agent_rm_tree_at(sub);
        close(sub);
    }
    return unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT ? -1 : 0;
}

/* SysV IPC: /proc/sysvipc/<kind> lists the objects of the container's IPC
 * namespace, a header naming the columns first. */
struct sysv_kind {
    const char *list;   /* /proc/sysvipc/shm */
    const char *id_col; /* "shmid" */
    int (*rm)(int id);
};

static int rm_shm(int id)
{
    return shmctl(id, IPC_RMID, NULL);
}

static int rm_msg(int id)
{
    return msgctl(id, IPC_RMID, NULL);
}

static int rm_sem(int id)
{
    return semctl(id, 0, IPC_RMID);
}

/* The column of name in a whitespace-separated header line, or -1. */
static int column_of(const char *header, const char *name)
{
    char copy[512], *save = NULL;
    int col = 0;

    snprintf(copy, sizeof(copy), "%s", header);
    for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save), col++)
        if (strcmp(t, name) == 0)
            return col;
    return -1;
}

/* Removes the objects of one kind that uid owns. Runs as uid: an owner may
 * IPC_RMID its objects, with no capability needed. Returns how many could
 * not be removed. */
static int remove_sysv(const struct sysv_kind *k, uid_t uid, int msgfd)
{
    FILE *f = fopen(k->list, "re");
    char line[512];
    int id_col, uid_col, left = 0;

    if (!f)
        return 0; /* no SysV IPC in this kernel: nothing can be left */
    if (!fgets(line, sizeof(line), f) || (id_col = column_of(line, k->id_col)) < 0 ||
        (uid_col = column_of(line, "uid")) < 0) {
        fclose(f);
        dprintf(msgfd, "%s: unknown format; ", k->list);
        return 1;
    }
    while (fgets(line, sizeof(line), f)) {
        char *save = NULL;
        long long id = -1, owner = -1;
        int col = 0;
        for (char *t = strtok_r(line, " \t\n", &save); t;
             t = strtok_r(NULL, " \t\n", &save), col++) {
            if (col == id_col)
                parse_ll(t, 0, 1LL << 31, &id);
            else if (col == uid_col)
                parse_ll(t, 0, 1LL << 32, &owner);
        }
        if (id >= 0 && owner == (long long)uid && k->rm((int)id) != 0 && errno != EINVAL &&
            errno != EIDRM) {
            dprintf(msgfd, "%s id %lld: %s; ", k->list, id, strerror(errno));
            left++;
        }
    }
    fclose(f);
    return left;
}

int agent_remove_ipc(const struct agent_conf *conf, int msgfd)
{
    static const struct sysv_kind sysv[] = {{"/proc/sysvipc/shm", "shmid", rm_shm},
                                            {"/proc/sysvipc/msg", "msqid", rm_msg},
                                            {"/proc/sysvipc/sem", "semid", rm_sem}};
    int rc = 0;

    for (size_t i = 0; i < sizeof(sysv) / sizeof(sysv[0]); i++)
        if (remove_sysv(&sysv[i], conf->uid, msgfd) != 0)
            rc = 1;
    return rc;
}

static int wipe_fn(const struct agent_conf *conf, const void *arg, int msgfd)
{
    int rc = agent_remove_ipc(conf, msgfd);

    (void)arg;
    for (int i = 0; conf->wipe_dirs[i]; i++) {
        int fd = open(conf->wipe_dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue; /* a dir the image lacks is clean by definition */
        if (agent_rm_tree_at(fd) != 0) {
            dprintf(msgfd, "could not empty %s; ", conf->wipe_dirs[i]);
            rc = 1;
        }
        close(fd);
    }
    return rc;
}

/* Kills every process of the sandbox uid; -1 when some survive. */
static int kill_uid_procs(const struct agent_conf *conf)
{
    int tries;

    /* only the agent starts processes of the sandbox uid: with none left
     * (a job that left nothing running) there is nothing to kill */
    reap_all();
    for (tries = 0; tries < 5 && count_uid_procs(conf->uid) > 0; tries++) {
        kill_all(conf);
        kill_all(conf);
        reap_all();
        if (count_uid_procs(conf->uid) == 0)
            break;
        usleep(20000);
    }
    reap_all();
    if (tries == 5) {
        fprintf(stderr, "llmsb-agent: processes of uid %u survive cleanup\n", (unsigned)conf->uid);
        return -1;
    }
    return 0;
}

int agent_cleanup(const struct agent_conf *conf)
{
    char msg[512];
    int dirty = leave_dirty;

    leave_dirty = 0;
    if (kill_uid_procs(conf) != 0)
        return -1;
    if (as_sandbox_user(conf, wipe_fn, NULL, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "llmsb-agent: cleanup: %s\n", msg);
        return -1;
    }
    return dirty ? -1 : 0;
}

/* ---- files --------------------------------------------------------------- */

/* Opens (creating as needed) the directory that holds path's last part. */
static int open_parent(int root, const char *path, const char **base)
{
    char part[256];
    const char *p = path, *slash;
    int fd = dup(root);

    while (fd >= 0 && (slash = strchr(p, '/')) != NULL) {
        size_t n = (size_t)(slash - p);
        int next;
        memcpy(part, p, n); /* proto_path_check bounds parts to 255 */
        part[n] = '\0';
        if (mkdirat(fd, part, 0755) != 0 && errno != EEXIST) {
            close(fd);
            return -1;
        }
        next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
        p = slash + 1;
    }
    *base = p;
    return fd;
}

static int unpack_fn(const struct agent_conf *conf, const void *arg, int msgfd)
{
    const struct proto_job *job = arg;
    int root = open(conf->work_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    umask(022);
    if (root < 0) {
        dprintf(msgfd, "open %s: %s", conf->work_dir, strerror(errno));
        return 2;
    }
    /* readable by the agent (root without DAC capabilities), which looks
     * whether anything was drawn before it forks a collector */
    if (job->plots_dir && mkdir(job->plots_dir, 0755) != 0 && errno != EEXIST) {
        dprintf(msgfd, "mkdir %s: %s", job->plots_dir, strerror(errno));
        close(root);
        return 2;
    }
    for (size_t i = 0; i < job->nfiles; i++) {
        const struct proto_file *f = &job->files[i];
        const char *base, *p = f->data;
        size_t left = f->len;
        int dir = open_parent(root, f->path, &base), fd = -1;

        /* a session's call replaces what an earlier call left under the
         * same name (its program's file, first of all) */
        if (dir >= 0 && job->session && unlinkat(dir, base, 0) != 0 && errno != ENOENT &&
            errno != EISDIR) {
            dprintf(msgfd, "replace \"%s\": %s", f->path, strerror(errno));
            close(dir);
            close(root);
            return 1;
        }
        if (dir >= 0)
            fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        f->mode ? f->mode : 0644);
        while (fd >= 0 && left > 0) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            p += w;
            left -= (size_t)w;
        }
        if (fd < 0 || left > 0) {
            int e = errno;
            dprintf(msgfd, "write file \"%s\": %s", f->path, strerror(e));
            return (e == ENOSPC || e == EDQUOT || e == EFBIG || e == EEXIST) ? 1 : 2;
        }
        close(fd);
        close(dir);
    }
    close(root);
    return 0;
}

/* ---- oom counter --------------------------------------------------------- */

static long long read_keyed(const char *path, const char *key)
{
    char line[256];
    size_t kl = strlen(key);
    long long v = -1;
    FILE *f = fopen(path, "re");

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
            line[strcspn(line, "\n")] = '\0';
            if (parse_ll(line + kl + 1, 0, (long long)1 << 62, &v) != 0)
                v = -1;
            break;
        }
    fclose(f);
    return v;
}

long long agent_oom_count(void)
{
    long long v = read_keyed("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill");
    if (v < 0)
        v = read_keyed("/sys/fs/cgroup/memory.events", "oom_kill");
    return v;
}

/* ---- one step -------------------------------------------------------------- */

/* wait_fds: NULL, or the ready and go pipes of a run step started ahead
 * (prespawn.c), kept as PRESPAWN_READY_FD and PRESPAWN_GO_FD */
static void __attribute__((noreturn))
child_exec(const struct agent_conf *conf, const struct step *s, int in_fd, int out_fd, int err_fd,
           const int *wait_fds)
{
    sigset_t none;

    setsid();
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        _exit(127);
    if (wait_fds &&
        (dup2(wait_fds[0], PRESPAWN_READY_FD) < 0 || dup2(wait_fds[1], PRESPAWN_GO_FD) < 0 ||
         close_range(3, PRESPAWN_READY_FD - 1, 0) != 0))
        _exit(127);
    if (wait_fds)
        closefrom(PRESPAWN_GO_FD + 1);
    else /* the compile step's connection to the warm javac: fd 3, 4 */
        closefrom(s->javac ? javac_child_fds(3) : 3);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    job_limits(s->job->fsize_limit, s->job->nofile, s->job->nproc);
    job_oom_first(); /* best effort: the cgroup limit still holds */
    if (drop_privileges(conf) != 0) {
        dprintf(2, "llmsb-agent: cannot switch to uid %u: %s\n", (unsigned)conf->uid,
                strerror(errno));
        _exit(127);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (chdir(conf->work_dir) != 0)
        _exit(127);
    if (s->javac)
        javac_child(s->job, s->timeout_ms); /* returns when plain javac must run */
    environ = (char **)s->env;
    execvp(s->argv[0], s->argv);
    dprintf(2, "llmsb-agent: cannot run \"%s\": %s\n", s->argv[0], strerror(errno));
    _exit(127);
}

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Reads what is there from fd into dst, counting against the shared cap.
 * Returns 0 at EOF (fd closed by the caller), 1 otherwise. */
static int drain(int fd, struct buf *dst, const struct step *s, struct outcome *o, int *trunc)
{
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof(chunk));

    if (n < 0)
        return (errno == EAGAIN || errno == EINTR) ? 1 : 0;
    if (n == 0)
        return 0;
    size_t used = s->out->len + (s->err != s->out ? s->err->len : 0);
    size_t room = s->out_cap > used ? s->out_cap - used : 0;
    size_t take = (size_t)n < room ? (size_t)n : room;
    /* what the buffer does not take is cut too: it must show */
    if (take && buf_append_some(dst, chunk, take) < take)
        take = 0;
    if (take < (size_t)n) {
        *trunc = 1;
        o->over_output = 1;
    }
    return 1;
}

/* A live step's chunks: how much of each stream went out, when the last
 * chunk did, and the one frame written in part.  Chunks are optional (the
 * RESULT carries everything), so the step never waits on them: fd 1 is
 * non-blocking while the step runs, a frame the worker is slow to read
 * waits in `frame` (written as poll says fd 1 takes more), and new output
 * meanwhile coalesces behind sent[] into the next frame. */
struct live {
    size_t sent[2]; /* of s->out, s->err: in a frame already */
    int64_t last_ms;
    int broken;       /* a write to the worker failed: no more chunks */
    int fl;           /* fd 1's flags before the step (-1: not changed) */
    struct buf frame; /* header + payload of the frame being written */
    size_t frame_off; /* how much of it went out */
};

#define LIVE_FRAME_MAX ((size_t)256 << 10) /* bytes of one OUTPUT frame's chunk */

static void live_init(const struct step *s, struct live *lv)
{
    memset(lv, 0, sizeof(*lv));
    lv->fl = -1;
    buf_init(&lv->frame, LIVE_FRAME_MAX + 128);
    if (s->live && (lv->fl = fcntl(STDOUT_FILENO, F_GETFL)) >= 0 &&
        fcntl(STDOUT_FILENO, F_SETFL, lv->fl | O_NONBLOCK) != 0)
        lv->fl = -1;
}

/* Writes what it can of the pending frame.  Returns 1 when none is
 * pending any more, 0 when fd 1 takes no more now. */
static int live_write(struct live *lv)
{
    while (!lv->broken && lv->frame_off < lv->frame.len) {
        ssize_t w =
            write(STDOUT_FILENO, lv->frame.data + lv->frame_off, lv->frame.len - lv->frame_off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return 0;
        if (w <= 0)
            lv->broken = 1;
        else
            lv->frame_off += (size_t)w;
    }
    buf_reset(&lv->frame);
    lv->frame_off = 0;
    return 1;
}

/* Puts the next chunk of stream k (0 stdout, 1 stderr) in the frame.
 * Returns 1 when it did. */
static int live_next(struct live *lv, int k, const struct buf *b)
{
    struct buf payload;
    size_t n = b->len - lv->sent[k];
    struct proto_chunk c = {k + 1, lv->sent[k], b->data + lv->sent[k],
                            n < LIVE_FRAME_MAX ? n : LIVE_FRAME_MAX};

    if (lv->broken || !n)
        return 0;
    buf_init(&payload, LIVE_FRAME_MAX + 64);
    if (proto_chunk_encode(&c, &payload) != 0 ||
        proto_frame_append(&lv->frame, PROTO_OUTPUT, payload.data, payload.len) != 0)
        lv->broken = 1;
    buf_release(&payload);
    lv->sent[k] += c.len;
    return !lv->broken;
}

/* Bytes of the step's output not sent yet. */
static size_t live_waiting(const struct step *s, const struct live *lv)
{
    return s->out->len - lv->sent[0] + (s->err != s->out ? s->err->len - lv->sent[1] : 0);
}

/* Sends the step's new output when enough waits, enough time passed or
 * (force) the step ended, as far as fd 1 takes it without waiting.
 * Returns how long until the next send is due (ms; -1: nothing waits, or
 * a frame waits for fd 1: poll it, see live_pollfd). */
static int64_t live_flush(const struct step *s, struct live *lv, int force)
{
    int64_t now;
    size_t waiting;

    if (!s->live || lv->broken || !live_write(lv))
        return -1;
    if (!(waiting = live_waiting(s, lv)))
        return -1;
    now = clock_mono_ms();
    if (!force && waiting < PROTO_LIVE_FLUSH_BYTES && now - lv->last_ms < PROTO_LIVE_FLUSH_MS)
        return PROTO_LIVE_FLUSH_MS - (now - lv->last_ms);
    lv->last_ms = now;
    while (live_next(lv, 0, s->out) || (s->err != s->out && live_next(lv, 1, s->err)))
        if (!live_write(lv))
            break;
    return -1;
}

/* fd 1 while a frame waits for it, else -1 (poll skips it). */
static int live_pollfd(const struct live *lv)
{
    return !lv->broken && lv->frame.len > lv->frame_off ? STDOUT_FILENO : -1;
}

/* The step ended: the rest goes out, fd 1 blocking again, so that the
 * RESULT after it is written whole and after the last OUTPUT frame. */
static void live_end(const struct step *s, struct live *lv)
{
    if (lv->fl >= 0)
        fcntl(STDOUT_FILENO, F_SETFL, lv->fl);
    if (s->live) {
        live_write(lv);
        while (live_next(lv, 0, s->out) || (s->err != s->out && live_next(lv, 1, s->err)))
            live_write(lv);
    }
    buf_release(&lv->frame);
}

struct pipes {
    int in_w, out_r, err_r, sfd;
    int zsock; /* the zygote's socket while it owes the job's exit */
};

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void feed_stdin(const struct step *s, size_t *fed, int *in_w)
{
    ssize_t w = write(*in_w, s->stdin_data + *fed, s->stdin_len - *fed);
    if (w > 0)
        *fed += (size_t)w;
    if ((w < 0 && errno != EAGAIN && errno != EINTR) || *fed == s->stdin_len)
        close_fd(in_w);
}

static void main_exited(struct outcome *o, int st, const struct rusage *ru, int64_t t0)
{
    o->exited = 1;
    o->duration_ms = (clock_mono_us() - t0 + 500) / 1000;
    o->ru = *ru;
    if (WIFEXITED(st))
        o->exit_code = WEXITSTATUS(st);
    else if (WIFSIGNALED(st)) {
        o->signal = WTERMSIG(st);
        o->exit_code = 128 + o->signal;
    }
}

static void reap_main(pid_t pid, struct outcome *o, int64_t t0)
{
    struct rusage ru;
    int st;
    pid_t p;

    while ((p = wait4(-1, &st, WNOHANG, &ru)) > 0) {
        if (p == pid && !o->exited)
            main_exited(o, st, &ru, t0);
        else
            reaped(p);
    }
}

/* The zygote's word on the job it started. */
static void zygote_main(struct pipes *pp, struct outcome *o, int64_t t0)
{
    struct rusage ru;
    int st, rc = zygote_exit(&st, &ru);

    if (rc == 0)
        return;
    pp->zsock = -1;
    if (rc > 0 && !o->exited)
        main_exited(o, st, &ru, t0);
    else if (rc < 0)
        o->zygote_lost = 1; /* the job dies with it: not the job's doing */
}

/* The poll loop of one step: returns when the main process is reaped and
 * the pipes are closed, or when the kill grace runs out. */
static void supervise(const struct agent_conf *conf, const struct step *s, pid_t pid,
                      struct pipes *pp, struct outcome *o, int64_t t0)
{
    int64_t deadline = clock_mono_ms() + (int64_t)s->timeout_ms, exit_at = 0, killed_at = 0;
    size_t fed = 0;
    struct live lv;

    live_init(s, &lv);
    for (;;) {
        int64_t now = clock_mono_ms(), wait_ms = 1000, due;
        struct pollfd pf[7];
        int n = 0, killnow = 0;

        if (!o->exited && !killed_at && now >= deadline) {
            o->timed_out = 1;
            killnow = 1;
        }
        if (o->over_output && s->kill_on_cap && !killed_at)
            killnow = 1;
        if (o->exited && !exit_at)
            exit_at = now;
        /* a session's call ended: its process, and what it started, live on
         * (output after the grace is not this call's) */
        if (s->job && s->job->session && o->exited && !killed_at &&
            ((pp->out_r < 0 && pp->err_r < 0) || now - exit_at >= EXIT_GRACE_MS))
            break;
        if (o->exited && !killed_at &&
            (now - exit_at >= EXIT_GRACE_MS || (pp->out_r < 0 && pp->err_r < 0)))
            killnow = 1; /* leftovers may hold the pipes; end them */
        if (killnow) {
            kill(-pid, SIGKILL);
            /* a job that left nothing running (the common end) costs no
             * fork here; anything left is killed, as at a timeout */
            if (!o->exited || count_uid_procs(conf->uid) > 0)
                kill_all(conf);
            killed_at = now;
            if (!o->exited)
                o->duration_ms = (clock_mono_us() - t0 + 500) / 1000;
        }
        if (o->exited && pp->out_r < 0 && pp->err_r < 0)
            break;
        if (killed_at && now - killed_at >= KILL_GRACE_MS)
            break;
        /* chunks after the deadline and the kills: never before them */
        due = live_flush(s, &lv, 0);
        if (!killed_at)
            wait_ms = o->exited ? EXIT_GRACE_MS - (now - exit_at) : deadline - now;
        if (wait_ms < 0)
            wait_ms = 0;
        if (killed_at && wait_ms > 100)
            wait_ms = 100;
        if (due >= 0 && wait_ms > due)
            wait_ms = due;
        pf[n++] = (struct pollfd){pp->sfd, POLLIN, 0};
        pf[n++] = (struct pollfd){pp->out_r, POLLIN, 0};
        pf[n++] = (struct pollfd){pp->err_r, POLLIN, 0};
        pf[n++] = (struct pollfd){pp->in_w, POLLOUT, 0};
        pf[n++] = (struct pollfd){pp->zsock, POLLIN, 0};
        pf[n++] = (struct pollfd){s->javac ? javac_status_fd() : -1, POLLIN, 0};
        pf[n++] = (struct pollfd){live_pollfd(&lv), POLLOUT, 0};
        if (poll(pf, (nfds_t)n, (int)wait_ms) < 0 && errno != EINTR)
            break;
        /* the warm javac gave way to the plain one: its own deadline */
        if (pf[5].revents && javac_status_read() && !killed_at)
            deadline = clock_mono_ms() + (int64_t)s->timeout_ms;
        if (pf[4].revents)
            zygote_main(pp, o, t0);
        if (pf[0].revents) {
            struct signalfd_siginfo si;
            while (read(pp->sfd, &si, sizeof(si)) == sizeof(si))
                ;
            reap_main(pid, o, t0);
        }
        if (pf[1].revents && !drain(pp->out_r, s->out, s, o, &o->out_trunc))
            close_fd(&pp->out_r);
        if (pf[2].revents && !drain(pp->err_r, s->err, s, o, &o->err_trunc))
            close_fd(&pp->err_r);
        if (pf[3].revents)
            feed_stdin(s, &fed, &pp->in_w);
    }
    reap_main(pid, o, t0);
    live_end(s, &lv); /* the rest, before the RESULT */
}

/* Makes the step's pipes and starts its process (through the zygote when
 * it can).  Returns its pid with the parent's ends in pp, or -1 (errmsg
 * set). */
static pid_t start_step(const struct agent_conf *conf, const struct step *s, struct outcome *o,
                        struct pipes *pp, char *errmsg, size_t errsz)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    pid_t pid = -1;
    int plain = 0;

    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) ||
        (s->err != s->out && pipe2(err, O_CLOEXEC))) {
        snprintf(errmsg, errsz, "agent: pipe: %s", strerror(errno));
        goto out;
    }
    pid = s->zygote ? zygote_fork(conf, s->job, s->argv, s->env, in[0], out[1],
                                  s->err != s->out ? err[1] : out[1], &plain)
                    : -1;
    o->zygote = pid > 0 && !plain;
    if (pid > 0)
        pp->zsock = zygote_socket();
    if (pid < 0 && s->job && s->job->session) {
        snprintf(errmsg, errsz, "the session's process did not take the call");
        goto out;
    }
    if (pid < 0 && (pid = fork()) < 0) {
        snprintf(errmsg, errsz, "agent: fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0)
        child_exec(conf, s, in[0], out[1], s->err != s->out ? err[1] : out[1], NULL);
    pp->in_w = in[1], pp->out_r = out[0], pp->err_r = err[0];
    in[1] = out[0] = err[0] = -1;
out:
    for (int i = 0; i < 2; i++)
        close_fd(&in[i]), close_fd(&out[i]), close_fd(&err[i]);
    return pid;
}

pid_t agent_run_spawn(const struct agent_conf *conf, const struct proto_job *job, char *const *argv,
                      char *const *env, const int fds[5])
{
    struct step s = {0};
    pid_t pid;

    s.argv = argv;
    s.env = env;
    s.job = job;
    if ((pid = fork()) == 0)
        child_exec(conf, &s, fds[0], fds[1], fds[2], fds + 3);
    return pid;
}

static int run_step(const struct agent_conf *conf, const struct step *s, struct outcome *o,
                    char *errmsg, size_t errsz)
{
    struct pipes pp = {-1, -1, -1, -1, -1};
    sigset_t chld;
    int64_t t0;
    pid_t pid = -1;
    int rc = -1;

    memset(o, 0, sizeof(*o));
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    if ((pp.sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        snprintf(errmsg, errsz, "agent: signalfd: %s", strerror(errno));
        goto out;
    }
    /* a run step (kill_on_cap) may find its process started ahead */
    if (s->kill_on_cap && !s->zygote)
        pid = prespawn_go(s->argv, &pp.in_w, &pp.out_r, &pp.err_r);
    o->prespawned = pid > 0;
    t0 = clock_mono_us();
    if (pid < 0 && (pid = start_step(conf, s, o, &pp, errmsg, errsz)) < 0)
        goto out;
    set_nonblock(pp.in_w);
    set_nonblock(pp.out_r);
    if (pp.err_r >= 0)
        set_nonblock(pp.err_r);
    if (s->stdin_len == 0)
        close_fd(&pp.in_w);
    supervise(conf, s, pid, &pp, o, t0);
    if (pp.zsock >= 0) /* its answer would come to the next job: out of step */
        zygote_abandon();
    if (o->zygote_lost) {
        snprintf(errmsg, errsz, "agent: the zygote died during the run");
        goto out;
    }
    rc = 0;
out:
    close_fd(&pp.in_w), close_fd(&pp.out_r), close_fd(&pp.err_r), close_fd(&pp.sfd);
    return rc;
}

/* ---- the job ----------------------------------------------------------------- */

/* A step before the run (install, compile): both streams go to
 * compile_output; failing ends the job as fail_status (memory_limit when
 * the cgroup OOM-killed it and oom_status says so) with a note naming what. */
static int prep_step(const struct agent_conf *conf, const struct proto_job *job, char *const *argv,
                     char *const *env, uint64_t timeout_ms, enum job_status fail_status,
                     enum job_status oom_status, const char *what, int javac,
                     struct proto_result *res)
{
    struct step s = {0};
    struct outcome o;
    long long oom0 = agent_oom_count();

    s.argv = argv;
    s.env = env;
    s.timeout_ms = timeout_ms;
    s.out_cap = job->compile_output_limit ? job->compile_output_limit : 65536;
    if (s.out_cap > PROTO_MAX_COMPILE_OUTPUT)
        s.out_cap = PROTO_MAX_COMPILE_OUTPUT;
    s.out = s.err = &res->compile_output;
    s.job = job;
    s.javac = javac;
    int rc = run_step(conf, &s, &o, res->error, sizeof(res->error));
    if (javac)
        javac_end(rc != 0 || o.timed_out || o.signal);
    if (rc != 0) {
        res->status = STATUS_INTERNAL_ERROR;
        return -1;
    }
    if (oom0 >= 0 && agent_oom_count() > oom0) {
        res->status = oom_status;
        res->not_run = 1; /* memory_limit, of the compiler's */
        buf_printf(&res->compile_output, "\n[llm-sandbox: the %s ran out of memory]\n", what);
        return -1;
    }
    if (o.timed_out || o.exit_code != 0) {
        res->status = fail_status;
        res->exit_code = o.exit_code;
        res->signal = o.signal;
        if (o.timed_out)
            buf_printf(&res->compile_output, "\n[llm-sandbox: the %s timed out after %llu ms]\n",
                       what, (unsigned long long)timeout_ms);
        return -1;
    }
    return 0;
}

static int compile(const struct agent_conf *conf, const struct proto_job *job,
                   struct proto_result *res)
{
    return prep_step(conf, job, job->compile_argv, job->env,
                     job->compile_timeout_ms ? job->compile_timeout_ms : 30000,
                     STATUS_COMPILE_ERROR, STATUS_MEMORY_LIMIT, "compiler", javac_begin(job), res);
}

/* The library install step; extra env (registry, index) applies to it only. */
static int install(const struct agent_conf *conf, const struct proto_job *job, char *const *argv,
                   const char *what, struct proto_result *res)
{
    char **env = NULL;
    size_t nenv = 0;
    int rc = 0;

    for (size_t i = 0; i < job->nenv && rc == 0; i++)
        rc = strlist_add(&env, &nenv, job->env[i], strlen(job->env[i]));
    for (size_t i = 0; i < job->ninstall_env && rc == 0; i++)
        rc = strlist_add(&env, &nenv, job->install_env[i], strlen(job->install_env[i]));
    if (rc != 0) {
        res->status = STATUS_INTERNAL_ERROR;
        snprintf(res->error, sizeof(res->error), "agent: install env: out of memory");
    } else {
        rc = prep_step(conf, job, argv, env,
                       job->install_timeout_ms ? job->install_timeout_ms : 120000,
                       STATUS_INSTALL_ERROR, STATUS_INSTALL_ERROR, what, 0, res);
    }
    strlist_free(env, nenv);
    return rc;
}

/* What one run of the program came to. */
struct run_out {
    enum job_status status;
    int64_t exit_code, signal, duration_ms, cpu_ms, max_rss_kb;
    int out_trunc, err_trunc;
    int zygote, prespawned;
};

/* Runs the program once: argv, stdin, the job's limits; output into out
 * and err.  Returns -1 (errmsg set) when the agent itself failed. */
static int run_program(const struct agent_conf *conf, const struct proto_job *job, int zygote,
                       int live, char *const *argv, const char *in, size_t inlen, struct buf *out,
                       struct buf *err, struct run_out *ro, char *errmsg, size_t errsz)
{
    struct step s = {0};
    struct outcome o;
    long long oom0 = agent_oom_count();

    s.argv = argv;
    s.env = job->env;
    s.stdin_data = in;
    s.stdin_len = inlen;
    s.timeout_ms = job->timeout_ms ? job->timeout_ms : 10000;
    s.out_cap = job->output_limit ? job->output_limit : (1u << 20);
    if (s.out_cap > PROTO_MAX_OUTPUT)
        s.out_cap = PROTO_MAX_OUTPUT; /* the most one RESULT carries */
    s.kill_on_cap = 1;
    s.zygote = zygote;
    s.live = live;
    s.out = out;
    s.err = err;
    s.job = job;
    if (run_step(conf, &s, &o, errmsg, errsz) != 0)
        return -1;
    ro->exit_code = o.exit_code;
    ro->signal = o.signal;
    ro->out_trunc = o.out_trunc;
    ro->err_trunc = o.err_trunc;
    ro->duration_ms = o.duration_ms;
    ro->cpu_ms = ((int64_t)o.ru.ru_utime.tv_sec + o.ru.ru_stime.tv_sec) * 1000 +
                 (o.ru.ru_utime.tv_usec + o.ru.ru_stime.tv_usec) / 1000;
    ro->max_rss_kb = o.ru.ru_maxrss;
    ro->zygote = o.zygote;
    ro->prespawned = o.prespawned;
    if (o.timed_out)
        ro->status = STATUS_TIMEOUT;
    else if (o.over_output)
        ro->status = STATUS_OUTPUT_LIMIT;
    else if (oom0 >= 0 && agent_oom_count() > oom0)
        ro->status = STATUS_MEMORY_LIMIT;
    else if (o.signal || o.exit_code != 0)
        ro->status = STATUS_RUNTIME_ERROR;
    else
        ro->status = STATUS_OK;
    return 0;
}

static void set_result(struct proto_result *res, const struct run_out *ro)
{
    res->status = ro->status;
    res->exit_code = ro->exit_code;
    res->signal = ro->signal;
    res->out_truncated = ro->out_trunc;
    res->err_truncated = ro->err_trunc;
    res->zygote = ro->zygote;
    res->prespawned = ro->prespawned;
}

static void run(const struct agent_conf *conf, const struct proto_job *job, int zygote,
                struct proto_result *res)
{
    struct run_out ro = {0};

    if (run_program(conf, job, zygote, job->live == 1, job->run_argv, job->stdin_data,
                    job->stdin_len, &res->out, &res->err, &ro, res->error,
                    sizeof(res->error)) != 0) {
        /* a session's process that fails is the session's end, not ours */
        res->status = job->session ? STATUS_SESSION_LOST : STATUS_INTERNAL_ERROR;
        return;
    }
    set_result(res, &ro);
    res->duration_ms = ro.duration_ms;
    res->cpu_ms = ro.cpu_ms;
    res->max_rss_kb = ro.max_rss_kb;
}

/* One case's entry in the result: its numbers, the first PROTO_CASE_KEEP
 * bytes of each stream while the cases' share of the RESULT frame lasts
 * (truncated flags say when that is not all), passed. */
static int case_entry(struct buf *cases, const struct run_out *ro, const struct buf *out,
                      const struct buf *err, int passed)
{
    struct buf e;
    size_t left = cases->len < PROTO_MAX_CASE_OUTPUT ? (PROTO_MAX_CASE_OUTPUT - cases->len) / 2 : 0;
    size_t keep = left < PROTO_CASE_KEEP ? left : PROTO_CASE_KEEP;
    size_t on = out->len < keep ? out->len : keep;
    size_t en = err->len < keep ? err->len : keep;
    int rc = 0;

    buf_init(&e, 2 * PROTO_CASE_KEEP + 512);
    rc |= proto_put_str(&e, TAG_STATUS, status_name(ro->status));
    rc |= proto_put_u64(&e, TAG_EXIT_CODE, (uint64_t)ro->exit_code);
    rc |= proto_put_u64(&e, TAG_SIGNAL, (uint64_t)ro->signal);
    rc |= proto_put_bytes(&e, TAG_STDOUT, out->data, on);
    rc |= proto_put_bytes(&e, TAG_STDERR, err->data, en);
    rc |= proto_put_u64(&e, TAG_STDOUT_TRUNC, (uint64_t)(ro->out_trunc || on < out->len));
    rc |= proto_put_u64(&e, TAG_STDERR_TRUNC, (uint64_t)(ro->err_trunc || en < err->len));
    rc |= proto_put_u64(&e, TAG_DURATION_MS, (uint64_t)ro->duration_ms);
    rc |= proto_put_u64(&e, TAG_CPU_MS, (uint64_t)ro->cpu_ms);
    rc |= proto_put_u64(&e, TAG_MAX_RSS_KB, (uint64_t)ro->max_rss_kb);
    rc |= proto_put_u64(&e, TAG_CASE_PASSED, (uint64_t)passed);
    rc |= proto_put_bytes(cases, TAG_CASE_RESULT, e.data, e.len);
    buf_release(&e);
    return rc;
}

/* The program's argv with a case's arguments after it. */
static char **case_argv(const struct proto_job *job, const struct proto_case *c, size_t *n)
{
    char **argv = NULL;
    int rc = 0;

    *n = 0;
    for (size_t i = 0; i < job->nrun && rc == 0; i++)
        rc = strlist_add(&argv, n, job->run_argv[i], strlen(job->run_argv[i]));
    for (size_t i = 0; i < c->nargs && rc == 0; i++)
        rc = strlist_add(&argv, n, c->args[i], strlen(c->args[i]));
    if (rc != 0) {
        strlist_free(argv, *n);
        return NULL;
    }
    return argv;
}

/* After a case: nothing it started lives on, and (when another case
 * follows) the dirs hold what they held after the compile step again.
 * Returns 0; 1 when what the case did cannot be undone (why in why); -1
 * with res->error when the agent failed (an internal_error, retried). */
static int case_done(const struct agent_conf *conf, const struct agent_snapshot *snap, int last,
                     struct proto_result *res, char *why, size_t whysz)
{
    int rc;

    if (kill_uid_procs(conf) != 0) {
        snprintf(res->error, sizeof(res->error), "agent: cases: processes of a case survive");
        return -1;
    }
    if (last || (rc = agent_snapshot_restore(conf, snap, why, whysz)) == 0)
        return 0;
    if (rc < 0)
        llmsb_fmt(res->error, sizeof(res->error),
                  "agent: cases: could not put back the state after the compile step: %s", why);
    leave_dirty = 1; /* either way, what is left is not a fresh sandbox */
    return rc;
}

/* The cases end after case n of the job's, which left what cannot be
 * undone: the job does not pass (the rest did not run), and is not ours to
 * retry; its container is not reused. */
static void cases_cut(const struct proto_job *job, size_t n, const char *why,
                      struct proto_result *res)
{
    char rest[48];

    if (res->status == STATUS_OK)
        res->status = STATUS_RUNTIME_ERROR;
    if (n + 1 == job->ncases)
        snprintf(rest, sizeof(rest), "case %zu was", n + 1);
    else
        snprintf(rest, sizeof(rest), "cases %zu-%zu were", n + 1, job->ncases);
    llmsb_fmt(res->error, sizeof(res->error),
              "cases: case %zu left what cannot be put back as it was after the compile step, so "
              "%s not run: %s",
              n, rest, why);
    leave_dirty = 1;
}

/* Each test case against the one compiled program, each with the job's
 * limits, each from the state right after the compile step (snapshot.c).
 * The job's status, exit code and output are those of the first case that
 * did not pass (else the last), its times the sums, its RSS the largest. */
static void run_cases(const struct agent_conf *conf, const struct proto_job *job, int zygote,
                      struct proto_result *res)
{
    struct agent_snapshot snap = {0};
    struct buf out, err;
    char why[200];
    int shown = 0, failed = 0, prespawned = 0, rc;

    if (job->ncases > 1) {
        /* the snapshot is taken with no process of the uid but the first
         * case's, started ahead and waiting (prespawn.c), when it is the
         * only one: no compile step ran */
        int spare = prespawn_held() && count_uid_procs(conf->uid) == 1;
        rc = !spare && kill_uid_procs(conf) != 0
                 ? -1
                 : agent_snapshot_take(conf, &snap, res->error, sizeof(res->error));
        if (rc != 0) {
            if (!res->error[0])
                snprintf(res->error, sizeof(res->error),
                         "agent: cases: processes of the compile step survive");
            res->status = rc > 0 ? STATUS_INVALID : STATUS_INTERNAL_ERROR;
            return;
        }
    }
    buf_init(&out, PROTO_MAX_OUTPUT);
    buf_init(&err, PROTO_MAX_OUTPUT);
    for (size_t i = 0; i < job->ncases; i++) {
        const struct proto_case *c = &job->cases[i];
        struct run_out ro = {0};
        size_t nargv;
        char **argv = case_argv(job, c, &nargv);
        int passed;

        buf_reset(&out);
        buf_reset(&err);
        if (!argv || run_program(conf, job, zygote, 0, argv, c->stdin_data, c->stdin_len, &out,
                                 &err, &ro, res->error, sizeof(res->error)) != 0) {
            if (!argv)
                snprintf(res->error, sizeof(res->error), "agent: case argv: out of memory");
            strlist_free(argv, nargv);
            failed = 1;
            break;
        }
        strlist_free(argv, nargv);
        /* a case killed by a signal never passes, whatever its expect_exit */
        passed = !ro.signal && compare_expected(status_info(ro.status)->ran, ro.exit_code,
                                                (int64_t)c->expect_exit, &job->compare, out.data,
                                                out.len, c->expect_stdout, c->expect_len);
        if (case_entry(&res->cases, &ro, &out, &err, passed) != 0) {
            snprintf(res->error, sizeof(res->error), "agent: case results over the frame cap");
            failed = 1;
            break;
        }
        prespawned |= ro.prespawned;
        res->duration_ms += ro.duration_ms;
        res->cpu_ms += ro.cpu_ms;
        if (ro.max_rss_kb > res->max_rss_kb)
            res->max_rss_kb = ro.max_rss_kb;
        rc = case_done(conf, &snap, i + 1 == job->ncases || (!passed && job->stop_on_failure), res,
                       why, sizeof(why));
        if (!shown && (!passed || i + 1 == job->ncases || rc > 0)) {
            set_result(res, &ro);
            buf_append(&res->out, out.data, out.len);
            buf_append(&res->err, err.data, err.len);
            shown = 1;
        }
        if (rc < 0) {
            failed = 1;
            break;
        }
        if (rc > 0) {
            cases_cut(job, i + 1, why, res);
            break;
        }
        if (!passed && job->stop_on_failure)
            break;
    }
    if (failed)
        res->status = STATUS_INTERNAL_ERROR;
    res->prespawned = prespawned; /* the first case's run, whichever case shows */
    agent_snapshot_release(&snap);
    buf_release(&out);
    buf_release(&err);
}

/* Milliseconds since t0_us (clock_mono_us), rounded: a step's phase. */
static int64_t since_ms(int64_t t0_us)
{
    return (clock_mono_us() - t0_us + 500) / 1000;
}

/* The library install, the worker's CONTINUE, the offline step: its phase
 * is the two steps' time, not the wait for the worker between them. */
static int timed_install(const struct agent_conf *conf, const struct proto_job *job,
                         struct proto_result *res)
{
    int64_t t0 = clock_mono_us();
    int rc = install(conf, job, job->install_argv, "install", res);

    res->phases.install_ms = since_ms(t0);
    if (rc != 0)
        return -1;
    if (job->install_pause && (!conf->install_pause || conf->install_pause() != 0)) {
        res->status = STATUS_INTERNAL_ERROR;
        snprintf(res->error, sizeof(res->error),
                 "agent: the worker did not continue after the install");
        return -1;
    }
    /* the offline part: package code that runs at install time runs
     * here, after the worker took the network away */
    t0 = clock_mono_us();
    rc = job->nbuild ? install(conf, job, job->build_argv, "offline install step", res) : 0;
    res->phases.install_ms += since_ms(t0);
    if (rc != 0)
        return -1;
    /* the install's own lines are not the program's compile output */
    buf_reset(&res->compile_output);
    return 0;
}

void agent_job_run(const struct agent_conf *conf, const struct proto_job *job,
                   struct proto_result *res)
{
    char msg[256];
    /* before the job's files are there: a zygote still preloading reads
     * nothing of this job's */
    int zygote = job->session ? 1 : zygote_for_job(conf, job);
    int64_t t0;
    int rc;

    prespawn_for_job(conf, job); /* likewise: one that does not fit ends here */
    if (!job->session)
        javac_for_job(conf, job);
    if (job->session && zygote_session(conf, job, res->error, sizeof(res->error)) != 0) {
        res->status = STATUS_SESSION_LOST;
        res->session_ended = 1;
        return;
    }
    rc = as_sandbox_user(conf, unpack_fn, job, msg, sizeof(msg));

    if (rc != 0) {
        res->status = rc == 1 ? STATUS_INVALID : STATUS_INTERNAL_ERROR;
        llmsb_fmt(res->error, sizeof(res->error), "files: %s", msg);
        return;
    }
    if (job->ninstall && timed_install(conf, job, res) != 0)
        return;
    if (job->ncompile) {
        t0 = clock_mono_us();
        rc = compile(conf, job, res);
        res->phases.compile_ms = since_ms(t0);
        if (rc != 0)
            return;
    }
    t0 = clock_mono_us();
    if (job->ncases)
        run_cases(conf, job, zygote, res);
    else
        run(conf, job, zygote, res);
    res->phases.run_ms = since_ms(t0);
    if (res->status != STATUS_INTERNAL_ERROR) {
        t0 = clock_mono_us();
        agent_collect_artifacts(conf, job, res); /* also after a timeout: what it made */
        res->phases.collect_ms = since_ms(t0);
    }
    if (job->session && (res->status == STATUS_SESSION_LOST || !zygote_session_alive())) {
        zygote_session_end();
        res->session_ended = 1;
        if (!res->error[0])
            snprintf(res->error, sizeof(res->error),
                     "this call ended the session (its interpreter is gone: %s); later calls "
                     "are session_lost",
                     res->status == STATUS_OK || res->status == STATUS_RUNTIME_ERROR
                         ? "it exited"
                         : "killed with the call");
    }
}
