/* snapshot.c - the state each test case of a job starts from (docs/jobs.md,
 * `cases`): right after the compile step, what the work dir, /tmp,
 * /var/tmp and /dev/shm hold is read into the agent's memory, out of the
 * job's reach (by a child as the sandbox user, through a pipe: the agent's
 * root has no DAC override).  Before each later case a child as the
 * sandbox user removes what is not in it, writes back what a case changed
 * (a file is unchanged while its inode, times and size are the snapshot's
 * and so are its contents: a write through a shared mapping moves no time)
 * and removes the uid's SysV IPC objects
 * and POSIX message queues, so each case sees what a separate run of the
 * same binary would.  The libraries a job installed (the work dir's
 * .llmsb-lib, one kept root of any size and depth: see lib_walk), and the
 * files past the first AGENT_SNAPSHOT_MAX bytes (caches an install step
 * left in /tmp, say), are kept as they are, never read.  What a restore
 * cannot put back is the job's doing only when the job changed or removed
 * a kept file (restore_fn says which). */
#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define LIB_DIR ".llmsb-lib" /* where a job's libraries go (languages.c) */
#define MQUEUE_MAGIC 0x19800202
#define SNAP_MAX_DEPTH 64
#define LIB_MAX_DEPTH 4096 /* the libraries', bounded by the walk's stack */
#define SNAP_PATH_MAX 4096
#define SNAP_ENTRIES_MAX ((size_t)16 << 20) /* bytes of entries, contents aside */
#define SNAP_ROOTS (sizeof(((struct agent_conf *)0)->wipe_dirs) / sizeof(char *))

/* SNAP_LIB: the dir LIB_DIR, kept; its data the newest ctime below it
 * (two int64_t: seconds, nanoseconds). */
enum { SNAP_DIR = 1, SNAP_FILE, SNAP_LINK, SNAP_KEEP, SNAP_LIB };

/* What a restore could not do: what the job did (a kept file changed or
 * removed), or what failed on our side (the job's verdict would be wrong). */
enum { R_OURS = 1, R_JOB = 2 };
#define RESTORE_JOB_EXIT 3 /* restore_fn's exit with R_JOB (1 is agent_as_user's own failure) */

/* One entry as the child writes it: this header, the path relative to its
 * root (path_len bytes, NUL included), then data_len bytes: a file's
 * contents, a link's target (NUL included). */
struct snap_hdr {
    uint32_t root, type, mode, path_len;
    uint64_t data_len, ino, size;
    int64_t ctime_s, ctime_ns, mtime_s, mtime_ns;
};

struct agent_snapshot_entry {
    struct snap_hdr h;
    const char *path;
    const char *data;
};

/* A DIR over a copy of fd (fd stays open), NULL past the depth or on
 * failure. */
static DIR *dir_of(int fd, int depth)
{
    DIR *d;
    int dfd;

    if (depth > SNAP_MAX_DEPTH || (dfd = dup(fd)) < 0)
        return NULL;
    if (!(d = fdopendir(dfd)))
        close(dfd);
    return d;
}

/* path (plen bytes) + "/" + name, or -1 when it is too long. */
static int join(char *path, size_t plen, const char *name)
{
    if (plen + 1 + strlen(name) >= SNAP_PATH_MAX)
        return -1;
    snprintf(path + plen, SNAP_PATH_MAX - plen, "%s%s", plen ? "/" : "", name);
    return 0;
}

/* Makes name in dirfd (st its lstat) read-only to the job, st updated
 * (one the job does not own it could not chmod back either). */
static int read_only(int dirfd, const char *name, struct stat *st)
{
    if ((st->st_mode & 0222) && !S_ISLNK(st->st_mode) && st->st_uid == geteuid() &&
        fchmodat(dirfd, name, st->st_mode & 07555, 0) != 0)
        return -1;
    return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW);
}

/* ---- the installed libraries (in either child) ----------------------------------- */

/* The tree below the cwd (LIB_DIR), walked with no cap on its entries or
 * path lengths, and to LIB_MAX_DEPTH: the walk holds no fd or path per
 * level, it moves its cwd down and up.  The take (take set) makes each
 * entry read-only and notes the newest ctime (mark); the check before a
 * case finds an entry whose ctime is past it.  Anything a case changes
 * below moves a ctime no job can set back: a file's own (the chmod it
 * needs before a write, a shared mmap's among them, also through a hard
 * link elsewhere), a dir's for an entry added, removed or renamed.  One
 * lstat per entry per case; no entry is held. */
struct lib_walk {
    int take, too_deep;
    int64_t mark_s, mark_ns;
    char *path; /* check: the changed entry's, below LIB_DIR */
    size_t len, cap;
};

static int ctime_after(const struct stat *st, int64_t s, int64_t ns)
{
    return st->st_ctim.tv_sec > s || (st->st_ctim.tv_sec == s && st->st_ctim.tv_nsec > ns);
}

/* Appends "/" and name to w->path; -1 when out of memory. */
static int lib_path(struct lib_walk *w, const char *name)
{
    size_t n = strlen(name) + 2;

    if (w->len + n > w->cap) {
        size_t nc = (w->len + n) * 2;
        char *np = realloc(w->path, nc);
        if (!np)
            return -1;
        w->path = np;
        w->cap = nc;
    }
    w->len += (size_t)snprintf(w->path + w->len, n, "/%s", name);
    return 0;
}

/* The names in the cwd, each NUL-ended, in *names (len bytes); -1 on
 * failure. */
static int lib_names(char **names, size_t *len)
{
    DIR *d = opendir(".");
    struct dirent *e;
    size_t cap = 0;

    *names = NULL;
    *len = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name) + 1;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*len + n > cap) {
            size_t nc = (*len + n) * 2;
            char *np = realloc(*names, nc);
            if (!np) {
                closedir(d);
                return -1;
            }
            *names = np;
            cap = nc;
        }
        memcpy(*names + *len, e->d_name, n);
        *len += n;
    }
    closedir(d);
    return 0;
}

/* Returns 0, 1 when the check found a changed entry (its path in w), -1
 * when it failed (w->too_deep past LIB_MAX_DEPTH). */
static int lib_walk(struct lib_walk *w, int depth)
{
    char *names;
    size_t len, plen = w->len;
    int rc = 0;

    if (depth > LIB_MAX_DEPTH) {
        w->too_deep = 1;
        return -1;
    }
    if (lib_names(&names, &len) != 0)
        return -1;
    for (size_t off = 0; rc == 0 && off < len; off += strlen(names + off) + 1) {
        const char *name = names + off;
        struct stat st;
        int fd;

        if (fstatat(AT_FDCWD, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            (w->take && read_only(AT_FDCWD, name, &st) != 0) || lib_path(w, name) != 0) {
            rc = -1;
            break;
        }
        if (!w->take && ctime_after(&st, w->mark_s, w->mark_ns)) {
            rc = 1; /* w->path names it */
            break;
        }
        if (w->take && ctime_after(&st, w->mark_s, w->mark_ns)) {
            w->mark_s = st.st_ctim.tv_sec;
            w->mark_ns = st.st_ctim.tv_nsec;
        }
        if (S_ISDIR(st.st_mode)) {
            fd = open(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0 || fchdir(fd) != 0)
                rc = -1;
            if (fd >= 0)
                close(fd);
            if (rc == 0 && (rc = lib_walk(w, depth + 1)) != 1 && chdir("..") != 0)
                rc = -1;
        }
        if (rc == 0)
            w->len = plen, w->path[plen] = '\0';
    }
    free(names);
    return rc;
}

/* lib_walk of the dir name in dirfd. */
static int lib_walk_at(struct lib_walk *w, int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc = -1;

    if (fd >= 0 && fchdir(fd) == 0)
        rc = lib_walk(w, 0);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* ---- taking it (the child, as the sandbox user) -------------------------------- */

/* The contents of the regular file name in dirfd, size bytes, after h. */
static int put_file(int out, int dirfd, const char *name, const struct snap_hdr *h,
                    const char *path)
{
    char chunk[16384];
    uint64_t left = h->data_len;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc = 0;

    if (fd < 0)
        return -1;
    if (agent_write_all(out, h, sizeof(*h)) != 0 || agent_write_all(out, path, h->path_len) != 0)
        rc = -1;
    while (rc == 0 && left) {
        ssize_t n = read(fd, chunk, left < sizeof(chunk) ? (size_t)left : sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || agent_write_all(out, chunk, (size_t)n) != 0)
            rc = -1; /* nothing runs that could change it: a short file is a failure */
        else
            left -= (uint64_t)n;
    }
    close(fd);
    return rc;
}

/* Entries below fd into t->out; file contents while t->budget lasts.
 * What is not copied (a file past the budget) is a SNAP_KEEP entry: made
 * read-only to the job (it owns it: a case must chmod it, which moves its
 * ctime, before any write, a shared mmap's among them), and its stat taken
 * after that, for the restore to see whether a case changed it.  The
 * installed libraries (the dir LIB_DIR) are one SNAP_LIB entry, the same
 * for the dir itself, lib_walk for all below it. */
struct take {
    int out;
    uint64_t budget;
    int too_deep; /* a dir past SNAP_MAX_DEPTH, a path past SNAP_PATH_MAX */
};

static int take_dir(struct take *t, int fd, uint32_t root, int libs_here, char *path, size_t plen,
                    int depth);

/* The entries below the dir name in fd. */
static int take_sub(struct take *t, int fd, const char *name, uint32_t root, char *path, int depth)
{
    int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;

    if (sub < 0)
        return -1;
    rc = take_dir(t, sub, root, 0, path, strlen(path), depth + 1);
    close(sub);
    return rc;
}

static int take_dir(struct take *t, int fd, uint32_t root, int libs_here, char *path, size_t plen,
                    int depth)
{
    int out = t->out;
    DIR *d = dir_of(fd, depth);
    struct dirent *e;
    int rc = 0;

    if (!d) {
        t->too_deep = depth > SNAP_MAX_DEPTH;
        return -1;
    }
    while (rc == 0 && (e = readdir(d)) != NULL) {
        struct snap_hdr h = {0};
        struct stat st;
        char target[SNAP_PATH_MAX];
        ssize_t tn;
        int kept, lib;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (join(path, plen, e->d_name) != 0) {
            t->too_deep = 1;
            rc = -1;
            break;
        }
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        lib = libs_here && depth == 0 && strcmp(e->d_name, LIB_DIR) == 0 && S_ISDIR(st.st_mode);
        kept = (libs_here && depth == 0 && strcmp(e->d_name, LIB_DIR) == 0) ||
               (S_ISREG(st.st_mode) && (uint64_t)st.st_size > t->budget);
        if (kept && read_only(fd, e->d_name, &st) != 0) {
            rc = -1;
            break;
        }
        h.root = root;
        h.mode = st.st_mode & 07777;
        h.path_len = (uint32_t)strlen(path) + 1;
        h.ino = st.st_ino;
        h.size = (uint64_t)st.st_size;
        h.ctime_s = st.st_ctim.tv_sec, h.ctime_ns = st.st_ctim.tv_nsec;
        h.mtime_s = st.st_mtim.tv_sec, h.mtime_ns = st.st_mtim.tv_nsec;
        if (lib) {
            struct lib_walk w = {.take = 1};
            int64_t mark[2];
            if (lib_walk_at(&w, fd, e->d_name) != 0) {
                t->too_deep = w.too_deep;
                rc = -1;
                break;
            }
            mark[0] = w.mark_s, mark[1] = w.mark_ns;
            h.type = SNAP_LIB;
            h.mode = st.st_mode;
            h.data_len = sizeof(mark);
            rc = agent_write_all(out, &h, sizeof(h)) || agent_write_all(out, path, h.path_len) ||
                 agent_write_all(out, mark, sizeof(mark));
        } else if (kept) {
            h.type = SNAP_KEEP; /* contents not held: the restore checks its stat */
            h.mode = st.st_mode;
            rc = agent_write_all(out, &h, sizeof(h)) || agent_write_all(out, path, h.path_len);
        } else if (S_ISDIR(st.st_mode)) {
            h.type = SNAP_DIR;
            rc = agent_write_all(out, &h, sizeof(h)) || agent_write_all(out, path, h.path_len) ||
                 take_sub(t, fd, e->d_name, root, path, depth);
        } else if (S_ISREG(st.st_mode)) {
            h.type = SNAP_FILE;
            h.data_len = h.size;
            t->budget -= h.size;
            rc = put_file(out, fd, e->d_name, &h, path);
        } else if (S_ISLNK(st.st_mode) &&
                   (tn = readlinkat(fd, e->d_name, target, sizeof(target) - 1)) >= 0) {
            target[tn] = '\0';
            h.type = SNAP_LINK;
            h.data_len = (uint64_t)tn + 1;
            rc = agent_write_all(out, &h, sizeof(h)) || agent_write_all(out, path, h.path_len) ||
                 agent_write_all(out, target, (size_t)tn + 1);
        } /* a FIFO or socket: a case starts without it */
        path[plen] = '\0';
    }
    closedir(d);
    return rc ? -1 : 0;
}

/* 1 when fd's file system is POSIX message queues (nothing to keep). */
static int is_mqueue(int fd)
{
    struct statfs sf;

    return fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == MQUEUE_MAGIC;
}

static int take_fn(const struct agent_conf *conf, const void *arg, int out)
{
    struct take t = {out, AGENT_SNAPSHOT_MAX, 0};
    char path[SNAP_PATH_MAX] = "";
    int rc = 0;

    (void)arg;
    for (uint32_t i = 0; rc == 0 && i < SNAP_ROOTS && conf->wipe_dirs[i]; i++) {
        int fd = open(conf->wipe_dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue; /* a dir the image lacks holds nothing */
        if (!is_mqueue(fd))
            rc = take_dir(&t, fd, i, strcmp(conf->wipe_dirs[i], conf->work_dir) == 0, path, 0, 0);
        close(fd);
    }
    return rc == 0 ? 0 : t.too_deep ? 3 : 2;
}

static int by_root_path(const void *a, const void *b)
{
    const struct agent_snapshot_entry *x = *(const struct agent_snapshot_entry *const *)a;
    const struct agent_snapshot_entry *y = *(const struct agent_snapshot_entry *const *)b;

    if (x->h.root != y->h.root)
        return x->h.root < y->h.root ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* The entries of s->data (our own child's, checked all the same). */
static int parse(struct agent_snapshot *s)
{
    size_t off = 0, cap = 0;

    while (off < s->data.len) {
        struct agent_snapshot_entry e;
        if (s->data.len - off < sizeof(e.h))
            return -1;
        memcpy(&e.h, s->data.data + off, sizeof(e.h));
        off += sizeof(e.h);
        if (e.h.root >= SNAP_ROOTS || e.h.path_len == 0 || e.h.path_len > s->data.len - off ||
            e.h.data_len > s->data.len - off - e.h.path_len ||
            s->data.data[off + e.h.path_len - 1] != '\0')
            return -1;
        e.path = s->data.data + off;
        e.data = s->data.data + off + e.h.path_len;
        off += e.h.path_len + e.h.data_len;
        if (s->n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct agent_snapshot_entry *ne = realloc(s->entries, nc * sizeof(*ne));
            if (!ne)
                return -1;
            s->entries = ne;
            cap = nc;
        }
        s->entries[s->n++] = e;
    }
    if (s->n && !(s->index = malloc(s->n * sizeof(*s->index))))
        return -1;
    for (size_t i = 0; i < s->n; i++)
        s->index[i] = &s->entries[i];
    if (s->n)
        qsort(s->index, s->n, sizeof(*s->index), by_root_path);
    return 0;
}

int agent_snapshot_take(const struct agent_conf *conf, struct agent_snapshot *s, char *msg,
                        size_t msgsz)
{
    struct timespec tick;
    int over = 0, kept = 0, rc;

    memset(s, 0, sizeof(*s));
    buf_init(&s->data, AGENT_SNAPSHOT_MAX + SNAP_ENTRIES_MAX);
    rc = agent_as_user(conf, take_fn, NULL, &s->data, &over);
    if (over)
        snprintf(msg, msgsz,
                 "cases: the work dir, /tmp and /dev/shm hold too many files after the compile "
                 "step (each case starts from a copy of them)");
    else if (rc == 3)
        snprintf(msg, msgsz,
                 "cases: the work dir, /tmp and /dev/shm nest dirs deeper than %d (the installed "
                 "libraries: %d), or paths longer than %d bytes outside the libraries, after the "
                 "compile step (each case starts from a copy of them)",
                 SNAP_MAX_DEPTH, LIB_MAX_DEPTH, SNAP_PATH_MAX - 1);
    if (over || rc == 3) {
        agent_snapshot_release(s);
        return 1;
    }
    if (rc != 0 || parse(s) != 0) {
        snprintf(msg, msgsz, "agent: cases: could not read the state after the compile step");
        agent_snapshot_release(s);
        return -1;
    }
    /* a ctime is the coarse clock's: a case that changed a kept file
     * within the tick of our chmod would leave it as we saw it */
    for (size_t i = 0; i < s->n; i++)
        kept |= s->entries[i].h.type == SNAP_KEEP || s->entries[i].h.type == SNAP_LIB;
    if (kept && clock_getres(CLOCK_REALTIME_COARSE, &tick) == 0) {
        tick.tv_nsec = tick.tv_nsec * 2 + 1000000;
        nanosleep(&tick, NULL);
    }
    return 0;
}

void agent_snapshot_release(struct agent_snapshot *s)
{
    buf_release(&s->data);
    free(s->entries);
    free(s->index);
    memset(s, 0, sizeof(*s));
}

/* ---- restoring it (the child, as the sandbox user) ----------------------------- */

static const struct agent_snapshot_entry *find(const struct agent_snapshot *s, uint32_t root,
                                               const char *path)
{
    struct agent_snapshot_entry key = {.h = {.root = root}, .path = path}, *kp = &key;
    struct agent_snapshot_entry **hit;

    if (!s->n)
        return NULL;
    hit = bsearch(&kp, s->index, s->n, sizeof(*s->index), by_root_path);
    return hit ? *hit : NULL;
}

/* 1 when st is the inode x's stat saw, as it saw it. */
static int same_stat(const struct agent_snapshot_entry *x, const struct stat *st)
{
    return st->st_ino == x->h.ino && (uint64_t)st->st_size == x->h.size &&
           st->st_ctim.tv_sec == x->h.ctime_s && st->st_ctim.tv_nsec == x->h.ctime_ns &&
           st->st_mtim.tv_sec == x->h.mtime_s && st->st_mtim.tv_nsec == x->h.mtime_ns;
}

/* 1 when the regular file name in dirfd holds x's contents.  Its stat
 * alone cannot tell: a write through a shared mmap moves no time on tmpfs. */
static int same_contents(const struct agent_snapshot_entry *x, int dirfd, const char *name)
{
    char chunk[16384];
    uint64_t off = 0;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return 0;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0 && (uint64_t)n <= x->h.data_len - off &&
           memcmp(chunk, x->data + off, (size_t)n) == 0)
        off += (uint64_t)n;
    close(fd);
    return n == 0 && off == x->h.data_len;
}

/* 1 when name (st) in dirfd is still x as the snapshot saw it. */
static int unchanged(const struct agent_snapshot_entry *x, const struct stat *st, int dirfd,
                     const char *name)
{
    char target[SNAP_PATH_MAX];
    ssize_t n;

    if (x->h.type == SNAP_FILE)
        return S_ISREG(st->st_mode) && same_stat(x, st) && same_contents(x, dirfd, name);
    if (x->h.type == SNAP_KEEP || x->h.type == SNAP_LIB)
        return st->st_mode == x->h.mode && same_stat(x, st);
    if (x->h.type != SNAP_LINK || !S_ISLNK(st->st_mode) ||
        (n = readlinkat(dirfd, name, target, sizeof(target) - 1)) < 0)
        return 0;
    target[n] = '\0';
    return strcmp(target, x->data) == 0;
}

static int clean_dir(const struct agent_snapshot *s, int fd, uint32_t root, char *path, size_t plen,
                     int depth, int msgfd);

/* clean_dir of the dir name in fd. */
static int clean_sub(const struct agent_snapshot *s, int fd, const char *name, uint32_t root,
                     char *path, int depth, int msgfd)
{
    int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;

    if (sub < 0)
        return R_OURS;
    rc = clean_dir(s, sub, root, path, strlen(path), depth + 1, msgfd);
    close(sub);
    return rc;
}

/* The SNAP_LIB entry x, the dir name in fd (path), as the take left it:
 * 0, else R_JOB or R_OURS, said on msgfd. */
static int check_lib(const struct agent_snapshot_entry *x, int fd, const char *name,
                     const char *path, int msgfd)
{
    struct lib_walk w = {0};
    int64_t mark[2];
    int rc;

    memcpy(mark, x->data, sizeof(mark));
    w.mark_s = mark[0], w.mark_ns = mark[1];
    rc = lib_walk_at(&w, fd, name);
    if (rc == 1) /* a long path by its end (the message is short) */
        dprintf(msgfd, "%s%s%s changed, and the copy does not hold it; ", path,
                w.len > 100 ? "/..." : "", w.path + (w.len > 100 ? w.len - 100 : 0));
    else if (rc != 0)
        dprintf(msgfd, "cannot read %s: %s; ", path, strerror(errno));
    free(w.path);
    return rc == 0 ? 0 : rc == 1 ? R_JOB : R_OURS;
}

/* Removes what is below fd and not in s, or changed since.  Returns 0,
 * else R_JOB (a SNAP_KEEP or SNAP_LIB entry changed: it cannot be put
 * back) and/or R_OURS (what could not be removed), said on msgfd. */
static int clean_dir(const struct agent_snapshot *s, int fd, uint32_t root, char *path, size_t plen,
                     int depth, int msgfd)
{
    DIR *d = dir_of(fd, depth);
    struct dirent *e;
    int rc = 0;

    if (!d)
        return R_OURS;
    while ((e = readdir(d)) != NULL) {
        const struct agent_snapshot_entry *x;
        struct stat st;
        int joined;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        /* a path too long for the copy is not in it */
        joined = join(path, plen, e->d_name) == 0;
        x = joined ? find(s, root, path) : NULL;
        if (x && (x->h.type == SNAP_KEEP || x->h.type == SNAP_LIB)) {
            if (!unchanged(x, &st, fd, e->d_name)) {
                dprintf(msgfd, "%s changed, and the copy does not hold it; ", path);
                rc |= R_JOB;
            } else if (x->h.type == SNAP_LIB) {
                rc |= check_lib(x, fd, e->d_name, path, msgfd);
            }
        } else if (x && x->h.type == SNAP_DIR && S_ISDIR(st.st_mode)) {
            if (fchmodat(fd, e->d_name, x->h.mode | 0700, 0) != 0)
                rc |= R_OURS;
            else
                rc |= clean_sub(s, fd, e->d_name, root, path, depth, msgfd);
        } else if (!(x && unchanged(x, &st, fd, e->d_name)) &&
                   agent_rm_at(fd, e->d_name, &st) != 0) {
            dprintf(msgfd, "cannot remove %s%s%s: %s; ", path, joined ? "" : "/",
                    joined ? "" : e->d_name, strerror(errno));
            rc |= R_OURS;
        }
        path[plen] = '\0';
    }
    closedir(d);
    return rc;
}

/* Writes entry x back under rootfd when it is not there. */
static int make_entry(int rootfd, const struct agent_snapshot_entry *x)
{
    struct timespec times[2] = {{0, UTIME_OMIT}, {x->h.mtime_s, x->h.mtime_ns}};
    struct stat st;
    int fd, rc = 0;

    if (fstatat(rootfd, x->path, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return x->h.type == SNAP_DIR ? fchmodat(rootfd, x->path, x->h.mode | 0700, 0) : 0;
    if (errno != ENOENT || x->h.type == SNAP_KEEP || x->h.type == SNAP_LIB)
        return -1; /* one the copy does not hold is gone for good */
    switch (x->h.type) {
    case SNAP_DIR:
        return mkdirat(rootfd, x->path, 0700);
    case SNAP_LINK:
        return symlinkat(x->data, rootfd, x->path);
    case SNAP_FILE:
        fd = openat(rootfd, x->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return -1;
        if (agent_write_all(fd, x->data, (size_t)x->h.data_len) != 0 ||
            fchmod(fd, x->h.mode) != 0 || futimens(fd, times) != 0)
            rc = -1;
        close(fd);
        return rc;
    }
    return 0;
}

/* Exits 0, RESTORE_JOB_EXIT when what the job did cannot be put back (a
 * kept entry it changed or removed), 2 when we failed. */
static int restore_fn(const struct agent_conf *conf, const void *arg, int msgfd)
{
    const struct agent_snapshot *s = arg;
    int rootfd[SNAP_ROOTS], rc = agent_remove_ipc(conf, msgfd) != 0 ? R_OURS : 0;
    char path[SNAP_PATH_MAX] = "";

    for (uint32_t i = 0; i < SNAP_ROOTS; i++) {
        rootfd[i] = conf->wipe_dirs[i]
                        ? open(conf->wipe_dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                        : -1;
        if (rootfd[i] >= 0)
            rc |= clean_dir(s, rootfd[i], i, path, 0, 0, msgfd);
    }
    /* a dir before its contents; its own mode once they are in */
    for (size_t i = 0; i < s->n; i++) {
        const struct agent_snapshot_entry *x = &s->entries[i];
        if (rootfd[x->h.root] >= 0 && make_entry(rootfd[x->h.root], x) != 0) {
            if (x->h.type == SNAP_KEEP || x->h.type == SNAP_LIB) {
                dprintf(msgfd, "%s/%s was removed, and the copy does not hold it; ",
                        conf->wipe_dirs[x->h.root], x->path);
                rc |= R_JOB;
            } else {
                dprintf(msgfd, "cannot write %s/%s back: %s; ", conf->wipe_dirs[x->h.root], x->path,
                        strerror(errno));
                rc |= R_OURS;
            }
        }
    }
    for (size_t i = s->n; i-- > 0;) {
        const struct agent_snapshot_entry *x = &s->entries[i];
        if (x->h.type == SNAP_DIR && rootfd[x->h.root] >= 0 &&
            fchmodat(rootfd[x->h.root], x->path, x->h.mode, 0) != 0) {
            dprintf(msgfd, "cannot chmod %s/%s back: %s; ", conf->wipe_dirs[x->h.root], x->path,
                    strerror(errno));
            rc |= R_OURS;
        }
    }
    for (uint32_t i = 0; i < SNAP_ROOTS; i++)
        if (rootfd[i] >= 0)
            close(rootfd[i]);
    return rc & R_JOB ? RESTORE_JOB_EXIT : rc ? 2 : 0;
}

int agent_snapshot_restore(const struct agent_conf *conf, const struct agent_snapshot *s, char *msg,
                           size_t msgsz)
{
    struct buf why;
    int rc;

    buf_init(&why, 200);
    rc = agent_as_user(conf, restore_fn, s, &why, NULL);
    while (why.len >= 2 && memcmp(why.data + why.len - 2, "; ", 2) == 0)
        why.len -= 2; /* each reason ends so */
    if (rc != 0 && why.len)
        snprintf(msg, msgsz, "%.*s", (int)why.len, why.data);
    else if (rc != 0)
        snprintf(msg, msgsz, "the child failed (exit %d)", rc);
    buf_release(&why);
    return rc == 0 ? 0 : rc == RESTORE_JOB_EXIT ? 1 : -1;
}
