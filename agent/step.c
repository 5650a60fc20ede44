/* step.c - one supervised step of a job.
 *
 * The step's process (child.c) runs in its own session, as the sandbox
 * uid.  The parent multiplexes stdin, stdout, stderr and a signalfd for
 * SIGCHLD in one poll loop against a deadline; when the main process
 * exits, leftovers holding its pipes get EXIT_GRACE_MS, then everything of
 * the sandbox uid is killed.  A run step may instead take the process
 * prespawn.c started ahead of the job, or be forked by a zygote (zygote.c:
 * its exit status then comes on the zygote's socket); a compile step may
 * ask the warm javac first (javac.c: its child tells when the plain javac
 * starts, whose deadline starts anew).  A live step's output goes out as
 * it comes (live.c). */
#include "step.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "javac.h"
#include "live.h"
#include "prespawn.h"
#include "zygote.h"

#define EXIT_GRACE_MS 200  /* leftovers holding a pipe after main exits */
#define KILL_GRACE_MS 2000 /* after SIGKILL, stop waiting for EOF */

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Reads what is there from fd into dst, counting against the shared cap.
 * Returns 0 at EOF (fd closed by the caller), 1 otherwise. */
static int drain(int fd, struct buf *dst, const struct agent_step *s, struct agent_outcome *o,
                 int *trunc)
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

static void feed_stdin(const struct agent_step *s, size_t *fed, int *in_w)
{
    ssize_t w = write(*in_w, s->stdin_data + *fed, s->stdin_len - *fed);
    if (w > 0)
        *fed += (size_t)w;
    if ((w < 0 && errno != EAGAIN && errno != EINTR) || *fed == s->stdin_len)
        close_fd(in_w);
}

static void main_exited(struct agent_outcome *o, int st, const struct rusage *ru, int64_t t0)
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

/* Reaps what exited: the main process into o, any other pid to
 * conf->reaped. */
static void reap_main(const struct agent_conf *conf, pid_t pid, struct agent_outcome *o, int64_t t0)
{
    struct rusage ru;
    int st;
    pid_t p;

    while ((p = wait4(-1, &st, WNOHANG, &ru)) > 0) {
        if (p == pid && !o->exited)
            main_exited(o, st, &ru, t0);
        else if (conf->reaped)
            conf->reaped(p);
    }
}

/* The zygote's word on the job it started. */
static void zygote_main(struct pipes *pp, struct agent_outcome *o, int64_t t0)
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
static void supervise(const struct agent_conf *conf, const struct agent_step *s, pid_t pid,
                      struct pipes *pp, struct agent_outcome *o, int64_t t0)
{
    int64_t deadline = clock_mono_ms() + (int64_t)s->timeout_ms, exit_at = 0, killed_at = 0;
    size_t fed = 0;
    struct agent_live lv;

    agent_live_init(&lv, s->live, s->out, s->err);
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
            if (!o->exited || agent_uid_procs(conf) > 0)
                agent_uid_kill(conf);
            killed_at = now;
            if (!o->exited)
                o->duration_ms = (clock_mono_us() - t0 + 500) / 1000;
        }
        if (o->exited && pp->out_r < 0 && pp->err_r < 0)
            break;
        if (killed_at && now - killed_at >= KILL_GRACE_MS)
            break;
        /* chunks after the deadline and the kills: never before them */
        due = agent_live_flush(&lv, 0);
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
        pf[n++] = (struct pollfd){agent_live_pollfd(&lv), POLLOUT, 0};
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
            reap_main(conf, pid, o, t0);
        }
        if (pf[1].revents && !drain(pp->out_r, s->out, s, o, &o->out_trunc))
            close_fd(&pp->out_r);
        if (pf[2].revents && !drain(pp->err_r, s->err, s, o, &o->err_trunc))
            close_fd(&pp->err_r);
        if (pf[3].revents)
            feed_stdin(s, &fed, &pp->in_w);
    }
    reap_main(conf, pid, o, t0);
    agent_live_end(&lv); /* the rest, before the RESULT */
}

/* Makes the step's pipes and starts its process (through the zygote when
 * it can).  Returns its pid with the parent's ends in pp, or -1 (errmsg
 * set). */
static pid_t start_step(const struct agent_conf *conf, const struct agent_step *s,
                        struct agent_outcome *o, struct pipes *pp, char *errmsg, size_t errsz)
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
    if (pid == 0) {
        struct agent_child c = {s->argv, s->env, s->job, s->timeout_ms,
                                s->javac ? &javac_child_hook : NULL};
        agent_child_exec(conf, &c, in[0], out[1], s->err != s->out ? err[1] : out[1], NULL);
    }
    pp->in_w = in[1], pp->out_r = out[0], pp->err_r = err[0];
    in[1] = out[0] = err[0] = -1;
out:
    for (int i = 0; i < 2; i++)
        close_fd(&in[i]), close_fd(&out[i]), close_fd(&err[i]);
    return pid;
}

int agent_step_run(const struct agent_conf *conf, const struct agent_step *s,
                   struct agent_outcome *o, char *errmsg, size_t errsz)
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
