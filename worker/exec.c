/* exec.c - the worker's side of the agent protocol.  Bytes from the
 * attached stream are demultiplexed (Docker framing) into the protocol
 * buffer (stdout) and a capped agent log (stderr).  Every wait has a
 * deadline and wakes every 100 ms to look at the interrupt flag. */
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t exec_interrupted;

#define POLL_SLICE_MS 100
#define READY_TIMEOUT_MS 30000

static char host_label[256];
static char worker_label[160];
static char kind_label[16] = "run";
static char pid_label[24];

static void identity_init(void)
{
    if (host_label[0])
        return;
    if (gethostname(host_label, sizeof(host_label) - 1) != 0)
        snprintf(host_label, sizeof(host_label), "unknown");
    if (!worker_label[0])
        snprintf(worker_label, sizeof(worker_label), "%s-%d", host_label, (int)getpid());
    snprintf(pid_label, sizeof(pid_label), "%d", (int)getpid());
}

void exec_identity(const char *worker_name, const char *kind)
{
    identity_init();
    if (worker_name)
        snprintf(worker_label, sizeof(worker_label), "%s", worker_name);
    if (kind)
        snprintf(kind_label, sizeof(kind_label), "%s", kind);
}

const char *exec_worker_name(void)
{
    identity_init();
    return worker_label;
}

void exec_labels(struct container_spec *spec)
{
    identity_init();
    spec->nlabels = 0;
    spec->labels[spec->nlabels][0] = "llmsb.managed";
    spec->labels[spec->nlabels++][1] = "1";
    spec->labels[spec->nlabels][0] = "llmsb.host";
    spec->labels[spec->nlabels++][1] = host_label;
    spec->labels[spec->nlabels][0] = "llmsb.worker";
    spec->labels[spec->nlabels++][1] = worker_label;
    spec->labels[spec->nlabels][0] = "llmsb.kind";
    spec->labels[spec->nlabels++][1] = kind_label;
    spec->labels[spec->nlabels][0] = "llmsb.pid";
    spec->labels[spec->nlabels++][1] = pid_label;
}

void exec_spec_key(const struct container_spec *s, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s|%s|m%lld|c%.3f|p%lld|f%lld|u%lld|w%lld|t%lld|n%d|%s", s->image,
             s->runtime ? s->runtime : "", (long long)s->memory_bytes, s->cpus, (long long)s->pids,
             (long long)s->nofile, (long long)s->nproc, (long long)s->work_tmpfs_bytes,
             (long long)s->tmp_tmpfs_bytes, s->network,
             s->network && s->network_name ? s->network_name : "");
}

void exec_spec_for_job(struct container_spec *spec, const struct config *cfg,
                       const struct job *j, const char *image)
{
    memset(spec, 0, sizeof(*spec));
    spec->image = image;
    spec->runtime = cfg->runtime[0] ? cfg->runtime : NULL;
    spec->memory_bytes = j->limits.memory_mb << 20;
    spec->cpus = j->limits.cpus;
    spec->pids = j->limits.pids;
    spec->nofile = j->limits.nofile;
    spec->nproc = j->limits.nproc;
    spec->work_tmpfs_bytes = j->limits.work_mb << 20;
    spec->tmp_tmpfs_bytes = j->limits.tmp_mb << 20;
    spec->shm_bytes = 64 << 20;
    spec->network = j->network;
    spec->network_name = j->network ? EGRESS_NETWORK : NULL;
    spec->agent_uid = cfg->sandbox_uid;
    exec_labels(spec);
}

static int on_stream(void *ud, int stream, const char *data, size_t len)
{
    struct sandbox *s = ud;

    if (stream == 1)
        return buf_append(&s->in, data, len) ? -1 : 0;
    if (buf_append_some(&s->agent_log, data, len) < len)
        buf_reset(&s->agent_log);   /* keep the newest, bounded */
    return 0;
}

/* Waits for a frame whose type is in the mask want (1 << type; others
 * are skipped) until deadline_ms.  On success the frame sits at the head
 * of s->in; consume *used after. */
static int wait_frames(struct sandbox *s, unsigned want, int64_t deadline_ms,
                       struct proto_frame *f, size_t *used, struct llmsb_err *err)
{
    char chunk[65536];

    for (;;) {
        int rc = proto_frame_parse(s->in.data ? s->in.data : "", s->in.len, f, used, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            if (f->type >= 0 && f->type < 32 && (want & (1u << f->type)))
                return 0;
            buf_consume(&s->in, *used);
            continue;
        }
        if (exec_interrupted || (s->cancel && *s->cancel))
            return llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted");
        int64_t left = deadline_ms - clock_mono_ms();
        if (left <= 0)
            return llmsb_err_set(err, LLMSB_ERR_TIMEOUT, "agent: no answer in time");
        ssize_t n = http_conn_recv(&s->conn, chunk, sizeof(chunk),
                                   left < POLL_SLICE_MS ? (int)left : POLL_SLICE_MS, err);
        if (n == LLMSB_ERR_TIMEOUT)
            continue;
        if (n == 0)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "agent: the container's stream closed");
        if (n < 0)
            return (int)n;
        if (demux_feed(&s->demux, chunk, (size_t)n, on_stream, s) != 0)
            return llmsb_err_set(err, LLMSB_ERR_PROTO,
                                 "agent: malformed stream or output over the protocol cap");
    }
}

static int wait_frame(struct sandbox *s, int want, int64_t deadline_ms, struct proto_frame *f,
                      size_t *used, struct llmsb_err *err)
{
    return wait_frames(s, 1u << want, deadline_ms, f, used, err);
}

static int send_empty_frame(struct sandbox *s, int type, struct llmsb_err *err)
{
    struct buf frame;
    int rc;

    buf_init(&frame, 64);
    proto_frame_append(&frame, type, "", 0);
    rc = http_conn_send(&s->conn, frame.data, frame.len, err);
    buf_release(&frame);
    return rc;
}

/* The agent installed the job's libraries and waits: take the container
 * off the install network, then let it go on.  Such a container is not
 * handed to another job. */
static int after_install(struct sandbox *s, struct llmsb_err *err)
{
    int rc = 0;

    s->healthy = 0;
    if (s->spec.network && s->spec.network_name) {
        if (!s->be->ops->network_disconnect)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "%s: cannot take a container off a "
                                                         "network", s->be->ops->name);
        rc = s->be->ops->network_disconnect(s->be, s->spec.network_name, s->id, err);
        if (rc != 0)
            return llmsb_err_wrap(err, "after the library install");
    }
    return send_empty_frame(s, PROTO_CONTINUE, err);
}

int sandbox_open(struct sandbox *s, struct backend *be, const struct container_spec *spec,
                 int64_t start_timeout_ms, struct llmsb_err *err)
{
    struct container_spec labelled;
    struct proto_frame f;
    size_t used;
    int rc;

    memset(s, 0, sizeof(*s));
    s->conn.fd = -1;
    if ((rc = backend_open(&s->own, be->ops->name, be->host, err)) != 0)
        return rc;
    s->be = &s->own;
    demux_init(&s->demux);
    buf_init(&s->in, PROTO_MAX_PAYLOAD + PROTO_HEADER_LEN);
    buf_init(&s->agent_log, 64 * 1024);
    snprintf(s->image, sizeof(s->image), "%s", spec->image);
    s->memory_bytes = spec->memory_bytes;
    s->spec = *spec;
    s->spec.image = s->image;
    s->spec.nlabels = 0;
    labelled = *spec;
    exec_labels(&labelled);   /* every container says whose it is (DESIGN §6) */
    s->born_ms = clock_mono_ms();
    if ((rc = s->be->ops->create(s->be, &labelled, s->id, sizeof(s->id), err)) != 0)
        goto fail;
    s->open = 1;
    /* attach before start so the agent's HELLO cannot be missed */
    if ((rc = s->be->ops->attach(s->be, s->id, &s->conn, err)) != 0)
        goto fail;
    if ((rc = s->be->ops->start(s->be, s->id, err)) != 0)
        goto fail;
    if ((rc = wait_frame(s, PROTO_HELLO, clock_mono_ms() + start_timeout_ms, &f, &used, err)) != 0) {
        llmsb_err_wrap(err, "container %.12s from %s did not start its agent", s->id, s->image);
        goto fail;
    }
    buf_consume(&s->in, used);
    s->healthy = 1;
    log_debug("sandbox %.12s ready in %lld ms", s->id, (long long)(clock_mono_ms() - s->born_ms));
    return 0;
fail:
    sandbox_close(s);
    return rc;
}

/* Reads the READY that follows a job's RESULT (the agent's cleanup). */
static int await_ready(struct sandbox *s, struct llmsb_err *err)
{
    struct proto_frame f;
    size_t used;
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    uint64_t clean = 0;
    int rc;

    if (!s->need_ready)
        return 0;
    if ((rc = wait_frame(s, PROTO_READY, clock_mono_ms() + READY_TIMEOUT_MS, &f, &used, err)))
        return llmsb_err_wrap(err, "agent cleanup");
    while (proto_tlv_next(f.payload, f.len, &off, &tag, &v, &n) == 1)
        if (tag == TAG_CLEAN)
            proto_get_u64(v, n, &clean);
    buf_consume(&s->in, used);
    s->need_ready = 0;
    if (!clean) {
        s->healthy = 0;
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "agent: cleanup after the last job failed");
    }
    return 0;
}

/* The container went away or went silent: decide what the job gets. */
static void classify_loss(struct sandbox *s, struct proto_result *res, int timed_out)
{
    struct container_state st;
    struct llmsb_err e = {0};

    if (s->be->ops->inspect(s->be, s->id, &st, &e) == 0 && st.oom_killed) {
        snprintf(res->status, sizeof(res->status), "memory_limit");
        snprintf(res->error, sizeof(res->error), "the container hit its memory limit");
        return;
    }
    if (timed_out) {
        snprintf(res->status, sizeof(res->status), "timeout");
        snprintf(res->error, sizeof(res->error),
                 "the agent did not answer within the backstop; container destroyed");
    }
}

int sandbox_run(struct sandbox *s, const struct proto_job *pj, int64_t backstop_ms,
                struct proto_result *res, struct llmsb_err *err)
{
    struct buf payload, frame;
    struct proto_frame f;
    size_t used;
    int rc;

    if (!s->open || !s->healthy)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "sandbox: container is not usable");
    if ((rc = await_ready(s, err)) != 0)
        return rc;
    buf_init(&payload, PROTO_MAX_PAYLOAD);
    buf_init(&frame, PROTO_MAX_PAYLOAD + PROTO_HEADER_LEN);
    rc = proto_job_encode(pj, &payload);
    if (rc == 0)
        rc = proto_frame_append(&frame, PROTO_JOB, payload.data, payload.len);
    buf_release(&payload);
    if (rc != 0) {
        buf_release(&frame);
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "job: over the %zu byte protocol cap",
                             PROTO_MAX_PAYLOAD);
    }
    rc = http_conn_send(&s->conn, frame.data, frame.len, err);
    buf_release(&frame);
    if (rc != 0) {
        s->healthy = 0;
        return llmsb_err_wrap(err, "sandbox %.12s: send job", s->id);
    }
    s->jobs++;
    int64_t deadline = clock_mono_ms() + backstop_ms;
    unsigned want = 1u << PROTO_RESULT | (pj->install_pause ? 1u << PROTO_INSTALLED : 0);
    while ((rc = wait_frames(s, want, deadline, &f, &used, err)) == 0 &&
           f.type == PROTO_INSTALLED) {
        buf_consume(&s->in, used);
        want &= ~(1u << PROTO_INSTALLED);
        if ((rc = after_install(s, err)) != 0) {
            s->healthy = 0;
            return rc;
        }
    }
    if (rc == LLMSB_ERR_TIMEOUT || rc == LLMSB_ERR_BACKEND) {
        s->healthy = 0;
        snprintf(res->status, sizeof(res->status), "%s", "");
        classify_loss(s, res, rc == LLMSB_ERR_TIMEOUT);
        if (res->status[0])
            return 0;
        return llmsb_err_wrap(err, "sandbox %.12s", s->id);
    }
    if (rc != 0) {
        s->healthy = 0;
        return rc;
    }
    rc = proto_result_decode(f.payload, f.len, res, err);
    buf_consume(&s->in, used);
    if (rc != 0) {
        s->healthy = 0;
        return rc;
    }
    s->need_ready = 1;
    /* A job killed by the clock may have left the agent mid-cleanup of a
     * runaway; the pool destroys such containers rather than reuse them. */
    if (strcmp(res->status, "timeout") == 0)
        s->healthy = 0;
    return 0;
}

void sandbox_close(struct sandbox *s)
{
    struct llmsb_err e = {0};

    if (s->conn.curl)
        http_conn_close(&s->conn);
    if (s->open && s->be) {
        if (s->be->ops->remove(s->be, s->id, &e) != 0)
            log_warn("cannot remove container %.12s: %s", s->id, e.msg);
    }
    s->open = 0;
    buf_release(&s->in);
    buf_release(&s->agent_log);
    backend_close(&s->own);
    s->be = NULL;
}

int sandbox_ping(struct sandbox *s, int64_t timeout_ms, struct llmsb_err *err)
{
    struct proto_frame f;
    size_t used;
    int rc;

    if (!s->open || !s->healthy)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "sandbox: container is not usable");
    if ((rc = await_ready(s, err)) != 0)
        return rc;
    rc = send_empty_frame(s, PROTO_PING, err);
    if (rc == 0)
        rc = wait_frame(s, PROTO_PONG, clock_mono_ms() + timeout_ms, &f, &used, err);
    if (rc != 0) {
        s->healthy = 0;
        return rc;
    }
    buf_consume(&s->in, used);
    return 0;
}

int64_t exec_backstop_ms(const struct config *cfg, const struct job *j)
{
    return j->limits.timeout_ms + (j->lang->compile[0] ? j->limits.compile_timeout_ms : 0) +
           (j->nlibraries ? cfg->libraries_timeout_ms : 0) + cfg->backstop_grace_ms;
}
