/* fake_agent.c - TEST DOUBLE of llmsb-agent, for what the real agent cannot
 * do on demand or outside a container.
 *
 * With no arguments it answers every JOB with a RESULT of status
 * internal_error (as the real agent does when the kernel refuses it a fork
 * or a pipe), then READY.  tests/queue/test_queue.sh builds it into an
 * image and checks that the worker treats that as an infrastructure
 * failure: retried, then dead-lettered, never a plain final result.
 *
 * With --shell it is the "container" of the fake engine
 * (tests/doubles/fake_engine.c), a plain process in a temp dir: it runs
 * the job's source file (the first file of the JOB, whatever the language)
 * with /bin/sh -c in its working directory, stdin from the job, stdout and
 * stderr captured, the job's timeout enforced, and answers RESULT (ok or
 * runtime_error with the exit code, timeout) then READY.  It never changes
 * uid, mounts or wipes anything, so it needs no root.  --hello-delay-ms N
 * waits N ms before the HELLO (a slow start).  --prestart: its HELLO says
 * it takes PRESTART, and the jobs after one see what it asked to start in
 * FAKE_PRESTARTED (its run argv[0], then ":" and its zygote profile).
 * --live: its HELLO says it sends live output, and a live job's stdout
 * goes out in two OUTPUT frames and its stderr in one once the program
 * ended, then a chunk out of order (which the worker must drop).
 * --gvisor: its HELLO says its kernel is gVisor's.  A job sees the
 * RLIMIT_NPROC its JOB frame asked for in FAKE_NPROC.
 * --null (with --shell): runs nothing; every JOB gets a RESULT ok with
 * no output at once (no process a job), for make bench-queue's null
 * runner, which measures the queue and the worker without a sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/proto.h"

static int shell_mode, null_mode, takes_prestart, sends_live, says_gvisor;
static char prestarted[160] = "FAKE_PRESTARTED="; /* putenv's: lives as long as the process */

static int send_frame(int type, const struct buf *payload)
{
    return proto_frame_write(STDOUT_FILENO, type, payload ? payload->data : NULL,
                             payload ? payload->len : 0);
}

static int send_ready(int type)
{
    struct buf p;
    int rc;

    buf_init(&p, 256);
    proto_put_str(&p, TAG_AGENT_VERSION, "fake");
    proto_put_u64(&p, TAG_AGENT_PID, (uint64_t)getpid());
    proto_put_u64(&p, TAG_CLEAN, 1);
    if (takes_prestart)
        proto_put_u64(&p, TAG_PRESTART, 1);
    if (sends_live)
        proto_put_u64(&p, TAG_LIVE, 1);
    if (says_gvisor)
        proto_put_u64(&p, TAG_KERNEL_GVISOR, 1);
    rc = send_frame(type, &p);
    buf_release(&p);
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static int write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -1 : 0;

    for (size_t off = 0; rc == 0 && off < len;) {
        ssize_t n = write(fd, data + off, len - off);
        if (n <= 0)
            rc = -1;
        else
            off += (size_t)n;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

static void read_file(const char *path, struct buf *into, int *truncated)
{
    char chunk[65536];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    while (fd >= 0 && (n = read(fd, chunk, sizeof(chunk))) > 0)
        if (buf_append_some(into, chunk, (size_t)n) < (size_t)n)
            *truncated = 1;
    if (fd >= 0)
        close(fd);
}

/* Runs the job's source with sh -c; fills r. */
static void run_shell(const struct proto_job *j, struct proto_result *r)
{
    int64_t start = clock_mono_ms();
    char nproc[24];
    char *code = j->nfiles ? xstrndup(j->files[0].data, j->files[0].len) : NULL;
    int status = 0;
    pid_t pid;

    if (!code || write_file("stdin", j->stdin_data ? j->stdin_data : "", j->stdin_len) != 0) {
        r->status = STATUS_INTERNAL_ERROR;
        snprintf(r->error, sizeof(r->error), "fake agent: no source file, or cannot write stdin");
        free(code);
        return;
    }
    if ((pid = fork()) == 0) {
        int in = open("stdin", O_RDONLY), out = open("stdout", O_WRONLY | O_CREAT | O_TRUNC, 0600),
            er = open("stderr", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || er < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(er, 2) < 0)
            _exit(126);
        for (size_t i = 0; i < j->nenv; i++)
            putenv(j->env[i]);
        snprintf(nproc, sizeof(nproc), "%llu", (unsigned long long)j->nproc);
        setenv("FAKE_NPROC", nproc, 1);
        if (prestarted[sizeof("FAKE_PRESTARTED=") - 1])
            putenv(prestarted);
        execl("/bin/sh", "sh", "-c", code, (char *)NULL);
        _exit(127);
    }
    free(code);
    r->status = STATUS_RUNTIME_ERROR;
    while (pid > 0 && waitpid(pid, &status, WNOHANG) == 0) {
        if (j->timeout_ms && clock_mono_ms() - start > (int64_t)j->timeout_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            r->status = STATUS_TIMEOUT;
            break;
        }
        sleep_ms(5);
    }
    if (pid < 0) {
        r->status = STATUS_INTERNAL_ERROR;
        snprintf(r->error, sizeof(r->error), "fake agent: fork: %s", strerror(errno));
    } else if (r->status != STATUS_TIMEOUT && WIFEXITED(status)) {
        r->exit_code = WEXITSTATUS(status);
        r->status = r->exit_code == 0 ? STATUS_OK : STATUS_RUNTIME_ERROR;
    } else if (r->status != STATUS_TIMEOUT && WIFSIGNALED(status)) {
        r->signal = WTERMSIG(status);
    }
    read_file("stdout", &r->out, &r->out_truncated);
    read_file("stderr", &r->err, &r->err_truncated);
    r->duration_ms = clock_mono_ms() - start;
    unlink("stdin");
    unlink("stdout");
    unlink("stderr");
}

static int send_chunk(int fd, uint64_t offset, const char *data, size_t len)
{
    struct proto_chunk c = {fd, offset, data ? data : "", len};
    struct buf p;
    int rc;

    buf_init(&p, 4 << 20);
    rc = proto_chunk_encode(&c, &p) || send_frame(PROTO_OUTPUT, &p);
    buf_release(&p);
    return rc;
}

#define LIVE_SEEN "fake agent: got TAG_LIVE\n" /* ends the RESULT's stderr of a live job */

/* A live job's output as the real agent sends it, then one chunk that
 * repeats the start of stdout (out of order). */
static void send_live(const struct proto_result *r)
{
    size_t half = r->out.len / 2;

    send_chunk(1, 0, r->out.data, half);
    send_chunk(2, 0, r->err.data, r->err.len);
    send_chunk(1, half, r->out.data + half, r->out.len - half);
    send_chunk(1, 0, r->out.data, r->out.len);
}

static int answer_job(const struct proto_frame *f)
{
    struct llmsb_err err = {0};
    struct proto_job j;
    struct proto_result r;
    struct buf p;
    int rc;

    proto_result_init(&r, 1 << 20);
    if (!shell_mode) {
        r.status = STATUS_INTERNAL_ERROR;
        snprintf(r.error, sizeof(r.error), "test double: the agent could not fork");
    } else if (proto_job_decode(f->payload, f->len, &j, &err) != 0) {
        r.status = STATUS_INTERNAL_ERROR;
        llmsb_fmt(r.error, sizeof(r.error), "fake agent: %s", err.msg);
    } else {
        if (null_mode)
            r.status = STATUS_OK;
        else
            run_shell(&j, &r);
        if (sends_live && j.live)
            send_live(&r);
        if (j.live) /* whether a job asked for chunks: the test sees it */
            buf_append(&r.err, LIVE_SEEN, strlen(LIVE_SEEN));
        proto_job_release(&j);
    }
    buf_init(&p, 4 << 20);
    rc = proto_result_encode(&r, &p) || send_frame(PROTO_RESULT, &p) || send_ready(PROTO_READY);
    buf_release(&p);
    proto_result_release(&r);
    return rc;
}

/* Remembers what a PRESTART asked to start, then READY. */
static int answer_prestart(const struct proto_frame *f)
{
    struct llmsb_err err = {0};
    struct proto_job j;
    size_t at = sizeof("FAKE_PRESTARTED=") - 1;

    if (proto_job_decode(f->payload, f->len, &j, &err) == 0) {
        snprintf(prestarted + at, sizeof(prestarted) - at, "%s:%s", j.nrun ? j.run_argv[0] : "",
                 j.zygote_profile ? j.zygote_profile : "");
        proto_job_release(&j);
    }
    return send_ready(PROTO_READY);
}

int main(int argc, char **argv)
{
    struct buf in;
    struct llmsb_err err = {0};
    char chunk[65536];

    signal(SIGPIPE, SIG_IGN);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--shell") == 0)
            shell_mode = 1;
        else if (strcmp(argv[i], "--prestart") == 0)
            takes_prestart = 1;
        else if (strcmp(argv[i], "--live") == 0)
            sends_live = 1;
        else if (strcmp(argv[i], "--gvisor") == 0)
            says_gvisor = 1;
        else if (strcmp(argv[i], "--null") == 0)
            null_mode = 1;
        else if (strcmp(argv[i], "--hello-delay-ms") == 0 && i + 1 < argc)
            sleep_ms(strtol(argv[++i], NULL, 10));
    }
    buf_init(&in, PROTO_MAX_PAYLOAD + PROTO_HEADER_LEN);
    if (send_ready(PROTO_HELLO) != 0)
        return 3;
    for (;;) {
        struct proto_frame f;
        size_t used;
        int rc = proto_frame_parse(in.data ? in.data : "", in.len, &f, &used, &err);
        if (rc < 0)
            return 3;
        if (rc == 0) {
            ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return 0;
            if (buf_append(&in, chunk, (size_t)n) != 0)
                return 3;
            continue;
        }
        if (f.type == PROTO_JOB)
            rc = answer_job(&f);
        else if (f.type == PROTO_PRESTART)
            rc = answer_prestart(&f);
        else if (f.type == PROTO_PING)
            rc = send_frame(PROTO_PONG, NULL);
        else if (f.type == PROTO_CONTINUE || f.type == PROTO_SHUTDOWN)
            rc = f.type == PROTO_SHUTDOWN ? 1 : 0;
        buf_consume(&in, used);
        if (rc != 0)
            return rc == 1 ? 0 : 3;
    }
}
