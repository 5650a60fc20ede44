/* artifacts.c - collecting requested files out of /work after a run, and
 * the plots the language's hooks wrote to the job's plots dir.
 *
 * A child that has become the sandbox user walks /work without following
 * symlinks (openat/fstatat with O_NOFOLLOW/AT_SYMLINK_NOFOLLOW), takes
 * regular files whose path matches a glob (fnmatch; '*' also crosses
 * '/'), and skips — with the reason noted — symlinks, devices, fifos and
 * sockets, files over the per-file cap, anything past the count or total
 * cap, and directories deeper than MAX_DEPTH.  It writes TLVs to a pipe;
 * the parent reads at most the total cap plus overhead, and kills the
 * child when the time bound passes. */
#include "artifacts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_DEPTH 8
#define COLLECT_TIME_MS 5000
#define MAX_NOTES 64

struct walk {
    const struct proto_job *job;
    struct buf *out;
    uint64_t count, total;
    int notes;
    int64_t deadline;
    int stopped;
    int take_all; /* the plots dir: every regular file, flat */
};

static int wanted(const struct walk *w, const char *rel)
{
    if (w->take_all)
        return 1;
    for (size_t i = 0; i < w->job->nglobs; i++) {
        const char *g = w->job->artifact_globs[i];
        if (strncmp(g, "./", 2) == 0)
            g += 2;
        if (fnmatch(g, rel, 0) == 0)
            return 1;
    }
    return 0;
}

/* The job's total cap, never above what one RESULT frame carries. */
static uint64_t total_cap(const struct proto_job *job)
{
    return job->artifact_max_total < PROTO_MAX_ARTIFACTS ? job->artifact_max_total
                                                         : PROTO_MAX_ARTIFACTS;
}

static void note(struct walk *w, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(struct walk *w, const char *rel, const char *fmt, ...)
{
    char why[160], line[4400];
    va_list ap;

    if (w->notes++ >= MAX_NOTES)
        return; /* counted: the collector adds one line for the rest */
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "%s: %s", rel, why);
    proto_put_str(w->out, TAG_ARTIFACT_SKIPPED, line);
}

static void take_file(struct walk *w, int dirfd, const char *name, const char *rel,
                      const struct stat *st)
{
    uint64_t size = (uint64_t)st->st_size;
    struct buf data;
    char chunk[65536];
    ssize_t n;
    int fd;

    if (size > w->job->artifact_max_file) {
        note(w, rel, "%llu bytes is over the per-file cap of %llu", (unsigned long long)size,
             (unsigned long long)w->job->artifact_max_file);
        return;
    }
    if (w->count >= w->job->artifact_max_count) {
        note(w, rel, "over the count cap (%llu files)", (unsigned long long)w->count);
        return;
    }
    if (w->total + size > total_cap(w->job)) {
        note(w, rel, "would pass the total cap of %llu bytes",
             (unsigned long long)total_cap(w->job));
        return;
    }
    fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        note(w, rel, "cannot open: %s", strerror(errno));
        return;
    }
    buf_init(&data, (size_t)w->job->artifact_max_file);
    while ((n = read(fd, chunk, sizeof(chunk))) > 0)
        if (buf_append(&data, chunk, (size_t)n) != 0)
            break; /* grew past the cap while we read: keep the capped part out */
    close(fd);
    if (n != 0 || w->total + data.len > total_cap(w->job)) {
        note(w, rel, "changed or grew while being read");
    } else {
        proto_put_str(w->out, TAG_ARTIFACT_NAME, rel);
        proto_put_bytes(w->out, TAG_ARTIFACT_DATA, data.data ? data.data : "", data.len);
        w->count++;
        w->total += data.len;
    }
    buf_release(&data);
}

static void walk_dir(struct walk *w, int dirfd, const char *prefix, int depth)
{
    DIR *d;
    struct dirent *e;
    int fd = dup(dirfd);

    if (fd < 0 || !(d = fdopendir(fd))) {
        if (fd >= 0)
            close(fd);
        return;
    }
    while (!w->stopped && (e = readdir(d)) != NULL) {
        char rel[4200];
        struct stat st;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (clock_mono_ms() > w->deadline) {
            note(w, prefix[0] ? prefix : ".", "collection stopped at its %d ms time limit",
                 COLLECT_TIME_MS);
            w->stopped = 1;
            break;
        }
        snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name);
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (w->take_all)
                continue;
            if (depth + 1 > MAX_DEPTH) {
                note(w, rel, "deeper than %d levels; not searched", MAX_DEPTH);
                continue;
            }
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                walk_dir(w, sub, rel, depth + 1);
                close(sub);
            }
            continue;
        }
        if (!wanted(w, rel))
            continue;
        if (S_ISLNK(st.st_mode))
            note(w, rel, "a symbolic link; not followed");
        else if (!S_ISREG(st.st_mode))
            note(w, rel, "not a regular file (device, fifo or socket)");
        else
            take_file(w, dirfd, e->d_name, rel, &st);
    }
    closedir(d);
}

static void __attribute__((noreturn))
collector(const struct agent_conf *conf, const struct proto_job *job, int out_fd, int64_t deadline)
{
    struct buf out;
    struct walk w = {job, &out, 0, 0, 0, deadline, 0, 0};
    int root;
    size_t off = 0;

    if (setgroups(0, NULL) != 0 || setgid(conf->gid) != 0 || setuid(conf->uid) != 0)
        _exit(2);
    buf_init(&out, PROTO_MAX_ARTIFACTS + PROTO_NOTES_SLACK);
    /* plots first: the caps are shared, and a figure is what most asked for */
    if (job->plots_dir &&
        (root = open(job->plots_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
        w.take_all = 1;
        walk_dir(&w, root, "", 0);
        w.take_all = 0;
        close(root);
    }
    root = job->nglobs ? open(conf->work_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (root >= 0)
        walk_dir(&w, root, "", 0);
    if (w.notes > MAX_NOTES) {
        char line[128];
        snprintf(line, sizeof(line), "*: %d more files were left out (not listed one by one)",
                 w.notes - MAX_NOTES);
        proto_put_str(&out, TAG_ARTIFACT_SKIPPED, line);
    }
    while (off < out.len) {
        ssize_t n = write(out_fd, out.data + off, out.len - off);
        if (n <= 0)
            _exit(3);
        off += (size_t)n;
    }
    _exit(0);
}

/* 1 when path is no directory or one without entries: the collector would
 * take nothing there, and the job costs no fork.  Only whether it has an
 * entry is read here, as root; the files are read by the collector. */
static int dir_is_empty(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct dirent *e;
    DIR *d;
    int empty = 1;

    if (fd < 0)
        return errno != EACCES && errno != EPERM;
    if (!(d = fdopendir(fd))) {
        close(fd);
        return 0;
    }
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    closedir(d);
    return empty;
}

void agent_collect_artifacts(const struct agent_conf *conf, const struct proto_job *job,
                             struct proto_result *res)
{
    int64_t deadline = clock_mono_ms() + COLLECT_TIME_MS;
    int p[2];
    pid_t pid;
    char chunk[65536];

    if ((job->nglobs == 0 && (!job->plots_dir || dir_is_empty(job->plots_dir))) ||
        pipe2(p, O_CLOEXEC) != 0)
        return;
    if ((pid = fork()) < 0) {
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        close(p[0]);
        collector(conf, job, p[1], deadline);
    }
    close(p[1]);
    for (;;) {
        int64_t left = deadline + 500 - clock_mono_ms();
        struct pollfd pf = {p[0], POLLIN, 0};
        ssize_t n;
        if (left <= 0 || poll(&pf, 1, (int)left) <= 0) {
            kill(pid, SIGKILL);
            proto_put_str(&res->artifacts, TAG_ARTIFACT_SKIPPED,
                          "*: artifact collection was killed at its time limit");
            break;
        }
        if ((n = read(p[0], chunk, sizeof(chunk))) <= 0)
            break;
        if (buf_append(&res->artifacts, chunk, (size_t)n) != 0) {
            kill(pid, SIGKILL);
            buf_reset(&res->artifacts);
            proto_put_str(&res->artifacts, TAG_ARTIFACT_SKIPPED, "*: over the protocol cap");
            break;
        }
    }
    close(p[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}
