/* user.h - the sandbox user's world: who jobs run as, what they may leave
 * behind and how it is all taken away again (internal to agent/; the
 * lowest of its files: it knows no job, no step and no warm helper). */
#ifndef LLMSB_AGENT_USER_H
#define LLMSB_AGENT_USER_H

#include <sys/stat.h>
#include <sys/types.h>
#include "common/common.h"

#define AGENT_DEFAULT_UID 10001
#define AGENT_WORK_DIR "/work"

struct agent_conf {
    uid_t uid; /* the unprivileged user jobs run as */
    gid_t gid;
    const char *work_dir;
    const char *wipe_dirs[6];
    /* agent.c's two callbacks (NULL where a test runs a part alone).
     * install_pause: after a successful install, when the job asks for a
     * pause; returns 0 when the worker says CONTINUE, -1 otherwise.
     * reaped: each pid the agent reaps that is no step's main process (a
     * warm helper's, maybe: warm.c). */
    int (*install_pause)(void);
    void (*reaped)(pid_t pid);
};

/* The sandbox uid (LLMSB_AGENT_UID, else AGENT_DEFAULT_UID), its work dir
 * and the dirs a cleanup empties; no callbacks.  Returns 0, -1 (said on
 * stderr) when LLMSB_AGENT_UID is not a uid a job may have. */
int agent_conf_init(struct agent_conf *conf);

/* In a child: becomes the sandbox user for good (no groups, no way back
 * to root, no new privileges).  Returns 0 or -1 (errno set). */
int agent_drop_privileges(const struct agent_conf *conf);
/* Runs fn(conf, arg, fd) as the sandbox user in a child and waits for it;
 * what the child writes to fd lands in out (up to its cap: *over set when
 * there was more, and the child's next write fails).  out may be NULL.
 * Returns the child's exit status (128 + N for signal N), -1 when it
 * could not start. */
int agent_as_user(const struct agent_conf *conf,
                  int (*fn)(const struct agent_conf *, const void *, int), const void *arg,
                  struct buf *out, int *over);
/* agent_as_user with what the child wrote (cut to msgsz) in msg; msg may
 * be NULL. */
int agent_as_user_msg(const struct agent_conf *conf,
                      int (*fn)(const struct agent_conf *, const void *, int), const void *arg,
                      char *msg, size_t msgsz);

/* How many processes of the sandbox uid /proc shows. */
int agent_uid_procs(const struct agent_conf *conf);
/* Sends SIGKILL to every process of the sandbox uid once (as that uid:
 * kill(-1)), reaching what a process-group kill misses; waits for none. */
void agent_uid_kill(const struct agent_conf *conf);
/* Kills every process of the sandbox uid and reaps the zombies (each pid
 * to conf->reaped).  Returns 0, -1 when some survive. */
int agent_uid_kill_all(const struct agent_conf *conf);
/* Kills every process of the sandbox uid, empties the wipe dirs (POSIX
 * message queues among them) and removes the SysV IPC objects the uid
 * owns.  Returns 0 when all is clean, -1 when something could not be
 * removed (said on stderr). */
int agent_wipe(const struct agent_conf *conf);
/* As the sandbox user: removes the SysV IPC objects it owns; what could
 * not be removed is written to msgfd.  Returns 0, or 1 when some is left. */
int agent_remove_ipc(const struct agent_conf *conf, int msgfd);

/* Removes everything below dirfd without following symlinks, however deep
 * (a directory past a depth is moved up to dirfd and removed from there).
 * Returns 0 or -1. */
int agent_rm_tree_at(int dirfd);
/* Removes name in dirfd (st: its lstat), a directory with all below it.
 * Returns 0 or -1 (errno set). */
int agent_rm_at(int dirfd, const char *name, const struct stat *st);

/* Reads the cgroup's OOM-kill counter; -1 when unknown. */
long long agent_oom_count(void);

/* Writes all n bytes of p to fd (EINTR retried). Returns 0 or -1. */
int agent_write_all(int fd, const void *p, size_t n);

#endif
