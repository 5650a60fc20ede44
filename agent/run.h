/* run.h - the agent's job execution and cleanup (internal to agent/). */
#ifndef LLMSB_AGENT_RUN_H
#define LLMSB_AGENT_RUN_H

#include <sys/stat.h>
#include <sys/types.h>
#include "proto/proto.h"

#define AGENT_DEFAULT_UID 10001
#define AGENT_WORK_DIR "/work"

struct agent_conf {
    uid_t uid; /* the unprivileged user jobs run as */
    gid_t gid;
    const char *work_dir;
    const char *wipe_dirs[6];
    /* Called after a successful install when the job asks for a pause:
     * returns 0 when the worker says CONTINUE, -1 otherwise. */
    int (*install_pause)(void);
};

int agent_conf_init(struct agent_conf *conf);
/* Runs one job, filling res. Never fails: every problem becomes a status. */
void agent_job_run(const struct agent_conf *conf, const struct proto_job *job,
                   struct proto_result *res);
/* Kills every process of the sandbox uid, empties the wipe dirs (POSIX
 * message queues among them) and removes the SysV IPC objects the uid
 * owns. Returns 0 when all is clean, -1 when something could not be
 * removed. */
int agent_cleanup(const struct agent_conf *conf);
/* Removes everything below dirfd without following symlinks, however deep
 * (a directory past a depth is moved up to dirfd and removed from there).
 * Returns 0 or -1. */
int agent_rm_tree_at(int dirfd);
/* Removes name in dirfd (st: its lstat), a directory with all below it.
 * Returns 0 or -1 (errno set). */
int agent_rm_at(int dirfd, const char *name, const struct stat *st);
/* Collects the files job->artifact_globs ask for into res->artifacts
 * (artifacts.c). */
void agent_collect_artifacts(const struct agent_conf *conf, const struct proto_job *job,
                             struct proto_result *res);
/* Runs fn(conf, arg, fd) as the sandbox user in a child and waits for it;
 * what the child writes to fd lands in out (up to its cap: *over set when
 * there was more, and the child's next write fails).  out may be NULL.
 * Returns the child's exit status (128 + N for signal N), -1 when it
 * could not start. */
int agent_as_user(const struct agent_conf *conf,
                  int (*fn)(const struct agent_conf *, const void *, int), const void *arg,
                  struct buf *out, int *over);
/* As the sandbox user: removes the SysV IPC objects it owns; what could
 * not be removed is written to msgfd.  Returns 0, or 1 when some is left. */
int agent_remove_ipc(const struct agent_conf *conf, int msgfd);

/* Writes all n bytes of p to fd (EINTR retried). Returns 0 or -1. */
int agent_write_all(int fd, const void *p, size_t n);

/* The state a job's test cases start from (snapshot.c). */
struct agent_snapshot {
    struct buf data;                      /* the entries as the child wrote them */
    struct agent_snapshot_entry **index;  /* by root and path */
    struct agent_snapshot_entry *entries; /* in walk order: a dir before its contents */
    size_t n;
};
/* Reads what the wipe dirs hold now (the work dir, /tmp, /var/tmp,
 * /dev/shm) into s: the contents of their files up to AGENT_SNAPSHOT_MAX
 * bytes in all, the work dir's first; later files, and the job's installed
 * libraries (one entry, of any size and depth), are kept where they are,
 * made read-only, their stat noted.  Returns 0, 1 when the rest holds too
 * many entries, or too deep, to keep (msg says so), -1 when it failed (msg
 * says why).  s is released either way on failure. */
#define AGENT_SNAPSHOT_MAX ((size_t)64 << 20)
int agent_snapshot_take(const struct agent_conf *conf, struct agent_snapshot *s, char *msg,
                        size_t msgsz);
/* Makes the wipe dirs hold what s does again (no process of the sandbox
 * uid may run), and removes the uid's SysV IPC objects and POSIX message
 * queues.  Returns 0; 1 when what the job did cannot be put back (a kept
 * file or library it changed or removed); -1 when we failed (what could
 * not be removed or written back, the child itself): msg says which. */
int agent_snapshot_restore(const struct agent_conf *conf, const struct agent_snapshot *s, char *msg,
                           size_t msgsz);
void agent_snapshot_release(struct agent_snapshot *s);

/* Starts the run step of job's limits (fsize_limit, nofile, nproc), argv
 * and env as a job's run would start (its session, rlimits, uid, cwd), on
 * fds[0..2] as stdin, stdout, stderr and fds[3], fds[4] as
 * PRESPAWN_READY_FD and PRESPAWN_GO_FD (prespawn.c): the child's ends, the
 * caller closes them.  Returns its pid, -1 when fork failed. */
pid_t agent_run_spawn(const struct agent_conf *conf, const struct proto_job *job, char *const *argv,
                      char *const *env, const int fds[5]);

/* Reads the cgroup's OOM-kill counter; -1 when unknown. */
long long agent_oom_count(void);

#endif
