/* agent.c - llmsb-agent, the main process of every sandbox container.
 *
 * It reads JOB frames on stdin and answers RESULT frames on stdout (see
 * proto.h).  Per job: unpack files into /work as the sandbox user, run the
 * optional compile step and the run step each in a new session with
 * rlimits, feed stdin, read stdout/stderr through pipes up to a byte cap,
 * enforce the wall clock, collect rusage and the cgroup OOM count, answer,
 * then kill every process of the sandbox uid and wipe /work, /tmp,
 * /var/tmp and /dev/shm before saying READY.  A PRESTART before the first
 * job starts the warm helpers that job will likely use (warm.c: its
 * zygote, its run step ahead, its compile server); so does a clean idle
 * time, for the next job.  A job that asks for live output gets its run
 * step's output in OUTPUT frames as it comes (live.c), before the RESULT
 * that carries all of it.
 *
 * The files, lowest first (each includes only those before it; make
 * check-layers checks the order): confine (the agent's own process), user
 * (the sandbox user's world: no job in it), child (a job's process up to
 * its exec), snapshot and artifacts (a job's files, as the sandbox user),
 * zygote, prespawn and javac (the warm helpers), warm (their table), live
 * and step (one supervised step), run (the job), this file.
 *
 * First it confines itself (confine.c): its own environment left behind,
 * no namespace made by any process of the sandbox after it.
 * Runs as root with only CAP_SETUID, CAP_SETGID and CAP_KILL; the job never
 * runs as root and never shares the agent's uid, so it can neither signal
 * nor trace the agent.  Linked statically: no libc or loader in the image is
 * trusted or needed. */
#include "confine.h"
#include "proto/proto.h"
#include "run.h"
#include "user.h"
#include "warm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static int send_frame(int type, const struct buf *payload)
{
    return proto_frame_write(STDOUT_FILENO, type, payload ? payload->data : NULL,
                             payload ? payload->len : 0);
}

/* 1 when this kernel is gVisor's: the host retires the container after
 * one job, as gVisor keeps what no clean-up here can find (POSIX message
 * queues, SysV objects without /proc/sysvipc). */
static int on_gvisor(void)
{
    struct utsname u;

    return uname(&u) == 0 && strcmp(u.version, PROTO_GVISOR_UNAME_VERSION) == 0;
}

static void send_hello(int type, int clean)
{
    struct buf p;
    buf_init(&p, 4096);
    proto_put_str(&p, TAG_AGENT_VERSION, LLMSB_VERSION);
    proto_put_u64(&p, TAG_AGENT_PID, (uint64_t)getpid());
    proto_put_u64(&p, TAG_CLEAN, (uint64_t)clean);
    proto_put_u64(&p, TAG_PRESTART, 1);
    proto_put_u64(&p, TAG_LIVE, 1);
    proto_put_u64(&p, TAG_KERNEL_GVISOR, on_gvisor());
    if (send_frame(type, &p) != 0)
        _exit(3);
    buf_release(&p);
}

/* Reads until a whole frame stands in b at offset from (keeping any
 * surplus). Returns 1 with the frame, 0 on EOF, -1 on a protocol error. */
static int read_frame(struct buf *b, size_t from, struct proto_frame *f, size_t *used)
{
    struct llmsb_err err = {0};
    char chunk[65536];

    for (;;) {
        int rc = proto_frame_parse(b->data ? b->data + from : "", b->len - from, f, used, &err);
        if (rc != 0) {
            if (rc < 0)
                fprintf(stderr, "llmsb-agent: %s\n", err.msg);
            return rc;
        }
        ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        if (buf_append(b, chunk, (size_t)n) != 0)
            return -1;
    }
}

static struct buf in;        /* worker -> agent bytes not consumed yet */
static size_t job_frame_len; /* the JOB frame at the head of in, in use */
/* 1 while the sandbox is as a cleanup that succeeded left it and no
 * session's process lives: a zygote may start (zygote.c) */
static int idle_clean;

/* After an install: tell the worker and wait for its CONTINUE.  The JOB
 * frame still sits at the head of `in` (main consumes it when the job is
 * done), so frames read here are parsed after it and cut out from behind
 * it. */
static int install_pause(void)
{
    struct proto_frame f;
    size_t used;

    if (send_frame(PROTO_INSTALLED, NULL) != 0)
        return -1;
    while (read_frame(&in, job_frame_len, &f, &used) == 1) {
        int type = f.type;
        memmove(in.data + job_frame_len, in.data + job_frame_len + used,
                in.len - job_frame_len - used);
        in.len -= used;
        if (type == PROTO_CONTINUE)
            return 0;
        if (type == PROTO_SHUTDOWN || type == PROTO_JOB)
            return -1;
        if (type == PROTO_PING)
            send_hello(PROTO_PONG, 1);
    }
    return -1;
}

static void handle_job(const struct proto_frame *f, const struct agent_conf *conf)
{
    struct llmsb_err err = {0};
    struct proto_job job;
    struct proto_result res;
    struct buf payload;
    int clean, session;

    proto_result_init(&res, PROTO_MAX_OUTPUT);
    if (proto_job_decode(f->payload, f->len, &job, &err) != 0) {
        res.status = STATUS_INTERNAL_ERROR;
        llmsb_fmt(res.error, sizeof(res.error), "agent: %s", err.msg);
    } else {
        agent_job_run(conf, &job, &res);
    }
    buf_init(&payload, PROTO_MAX_PAYLOAD);
    if (proto_result_encode(&res, &payload) != 0 || send_frame(PROTO_RESULT, &payload) != 0)
        _exit(3);
    buf_release(&payload);
    /* a session's call leaves everything for the next: no cleanup while
     * its process lives (the worker hands the sandbox to no one else) */
    session = job.session && !res.session_ended;
    proto_result_release(&res);
    proto_job_release(&job);
    idle_clean = 0;
    if (session) {
        send_hello(PROTO_READY, 1);
        return;
    }
    idle_clean = clean = agent_cleanup(conf) == 0;
    send_hello(PROTO_READY, clean);
    if (clean) /* idle and clean: the time to preload */
        warm_idle(conf);
}

/* The warm helpers the worker expects the first job to use, started while
 * the sandbox is idle and clean (only then; else nothing starts); READY
 * once they are ready or given up, as a job would wait for them. */
static void handle_prestart(const struct proto_frame *f, const struct agent_conf *conf)
{
    struct llmsb_err err = {0};
    struct proto_job job;

    if (!idle_clean)
        fprintf(stderr, "llmsb-agent: prestart on a sandbox in use: nothing started\n");
    else if (proto_job_decode(f->payload, f->len, &job, &err) != 0)
        fprintf(stderr, "llmsb-agent: prestart: %s\n", err.msg);
    else {
        warm_prestart(conf, &job);
        proto_job_release(&job);
    }
    send_hello(PROTO_READY, 1);
}

int main(int argc, char **argv)
{
    struct agent_conf conf;
    struct proto_frame f;
    size_t used;
    int rc;

    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("llmsb-agent %s (protocol %d)\n", LLMSB_VERSION, PROTO_VERSION);
        return 0;
    }
    struct llmsb_err err = {0};
    sigset_t chld;

    /* before anything else runs (it may run itself again here, without
     * the container's environment): every process of the sandbox
     * inherits the namespace filter (confine.c) */
    if (agent_confine(argv, &err) != 0) {
        fprintf(stderr, "llmsb-agent: %s\n", err.msg);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    /* SIGCHLD is read through a signalfd in the step loop (step.c). */
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (agent_conf_init(&conf) != 0)
        return 2;
    /* Kubernetes bind-mounts a host file here, mode 0666, that no cleanup
     * empties: a job could leave data in it for the next one.  Root's own
     * file, so the agent may close it to everyone else. */
    if (chmod("/dev/termination-log", 0600) != 0 && errno != ENOENT)
        fprintf(stderr, "llmsb-agent: chmod /dev/termination-log: %s\n", strerror(errno));
    conf.install_pause = install_pause;
    conf.reaped = warm_reaped;
    /* A container restarted after a crash starts clean, too. */
    idle_clean = agent_cleanup(&conf) == 0;
    send_hello(PROTO_HELLO, 1);

    buf_init(&in, PROTO_MAX_PAYLOAD + PROTO_HEADER_LEN);
    while ((rc = read_frame(&in, 0, &f, &used)) == 1) {
        switch (f.type) {
        case PROTO_JOB:
            job_frame_len = used;
            handle_job(&f, &conf);
            break;
        case PROTO_PING:
            send_hello(PROTO_PONG, 1);
            break;
        case PROTO_PRESTART:
            handle_prestart(&f, &conf);
            break;
        case PROTO_SHUTDOWN:
            warm_stop();
            agent_cleanup(&conf);
            return 0;
        default:
            fprintf(stderr, "llmsb-agent: ignoring frame type %d\n", f.type);
        }
        buf_consume(&in, used);
    }
    warm_stop();
    agent_cleanup(&conf);
    return rc < 0 ? 4 : 0;
}
