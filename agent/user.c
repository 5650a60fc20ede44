/* user.c - the sandbox user's world, with no job in it: becoming the
 * sandbox uid, running a piece of work as it, killing every process it
 * has, emptying the dirs it may write (trees of any depth, without
 * following a symlink), removing its IPC objects, the cgroup's OOM
 * counter.
 *
 * Killing is done by uid (a child that becomes the sandbox user and sends
 * kill(-1, SIGKILL)), which reaches double-forked and setsid'ed leftovers
 * that a process-group kill would miss.  Every removal runs as the
 * sandbox user too: the agent's root has no DAC override, and a job's
 * symlink can lead such a child nowhere the job could not go itself. */
#include "user.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RM_MAX_DEPTH 128 /* past it a dir is moved up (agent_rm_tree_at) */

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
    conf->install_pause = NULL;
    conf->reaped = NULL;
    return 0;
}

int agent_drop_privileges(const struct agent_conf *conf)
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
        if (agent_drop_privileges(conf) != 0) {
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

int agent_as_user_msg(const struct agent_conf *conf,
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

void agent_uid_kill(const struct agent_conf *conf)
{
    agent_as_user_msg(conf, kill_fn, NULL, NULL, 0);
}

int agent_uid_procs(const struct agent_conf *conf)
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
        if (stat(path, &st) == 0 && st.st_uid == conf->uid)
            n++;
    }
    closedir(d);
    return n;
}

/* Reaps every zombie there is, each pid to conf->reaped. */
static void reap_all(const struct agent_conf *conf)
{
    pid_t p;

    while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
        if (conf->reaped)
            conf->reaped(p);
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

int agent_uid_kill_all(const struct agent_conf *conf)
{
    int tries;

    /* only the agent starts processes of the sandbox uid: with none left
     * (a job that left nothing running) there is nothing to kill */
    reap_all(conf);
    for (tries = 0; tries < 5 && agent_uid_procs(conf) > 0; tries++) {
        agent_uid_kill(conf);
        agent_uid_kill(conf);
        reap_all(conf);
        if (agent_uid_procs(conf) == 0)
            break;
        usleep(20000);
    }
    reap_all(conf);
    if (tries == 5) {
        fprintf(stderr, "llmsb-agent: processes of uid %u survive cleanup\n", (unsigned)conf->uid);
        return -1;
    }
    return 0;
}

int agent_wipe(const struct agent_conf *conf)
{
    char msg[512];

    if (agent_uid_kill_all(conf) != 0)
        return -1;
    if (agent_as_user_msg(conf, wipe_fn, NULL, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "llmsb-agent: cleanup: %s\n", msg);
        return -1;
    }
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

int agent_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}
