/* sandbox.c - the worker's side of the agent protocol (see sandbox.h).
 * Frames arrive through the backend's stream; every wait has a deadline
 * and wakes every POLL_SLICE_MS to look at the interrupt and cancel
 * flags. */
#include "sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strlist.h"

#define POLL_SLICE_MS 100
#define READY_TIMEOUT_MS 30000
/* a READY younger than this stands for a health check */
#define READY_FRESH_MS 200
#define CHUNK 65536

void sandbox_spec_key(const struct container_spec *s, char *out, size_t outsz)
{
    /* the image comes first and is the only long part: a key cut short
     * still tells images apart up to outsz */
    snprintf(out, outsz, "%s|%s%s|m%lld|c%.3f|p%lld|f%lld|u%lld|w%lld|t%lld|n%d|%s", s->image,
             s->runtime ? s->runtime : "", s->engine_seccomp ? "|engine-seccomp" : "",
             (long long)s->memory_bytes, s->cpus, (long long)s->pids, (long long)s->nofile,
             (long long)s->nproc, (long long)s->work_tmpfs_bytes, (long long)s->tmp_tmpfs_bytes,
             s->network, s->network && s->network_name ? s->network_name : "");
}

/* The u64 field want of a hello, pong or ready frame; 0 when absent. */
static uint64_t tag_u64(const struct proto_frame *f, uint16_t want)
{
    size_t off = 0;
    uint16_t tag;
    const char *v;
    uint32_t n;
    uint64_t val = 0;

    while (proto_tlv_next(f->payload, f->len, &off, &tag, &v, &n) == 1)
        if (tag == want)
            proto_get_u64(v, n, &val);
    return val;
}

static int stop_asked(const struct sandbox *s)
{
    return llmsb_interrupted || (s->cancel && atomic_load(s->cancel) != SANDBOX_GO);
}

/* Waits for a frame whose type is in the mask want (1 << type; others
 * are skipped) until deadline_ms.  On success the frame sits at the head
 * of s->in; consume *used after. */
static int wait_frames(struct sandbox *s, unsigned want, int64_t deadline_ms, struct proto_frame *f,
                       size_t *used, struct llmsb_err *err)
{
    char chunk[CHUNK];

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
        if (stop_asked(s))
            return llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted");
        int64_t left = deadline_ms - clock_mono_ms();
        if (left <= 0)
            return llmsb_err_set(err, LLMSB_ERR_TIMEOUT, "agent: no answer in time");
        ssize_t n = s->stream->ops->read(s->stream, chunk, sizeof(chunk),
                                         left < POLL_SLICE_MS ? (int)left : POLL_SLICE_MS, err);
        if (n == LLMSB_ERR_TIMEOUT)
            continue;
        if (n == 0)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "agent: the container's stream closed");
        if (n < 0)
            return (int)n;
        if (buf_append(&s->in, chunk, (size_t)n) != 0)
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "agent: a frame over the protocol cap");
    }
}

static int wait_frame(struct sandbox *s, int want, int64_t deadline_ms, struct proto_frame *f,
                      size_t *used, struct llmsb_err *err)
{
    return wait_frames(s, 1u << want, deadline_ms, f, used, err);
}

static int send_frame(struct sandbox *s, int type, const char *payload, size_t len,
                      struct llmsb_err *err)
{
    struct buf frame;
    int rc;

    buf_init(&frame, PROTO_MAX_PAYLOAD + PROTO_HEADER_LEN);
    if (proto_frame_append(&frame, type, payload, len) != 0)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "job: over the %zu byte protocol cap",
                           PROTO_MAX_PAYLOAD);
    else
        rc = s->stream->ops->write(s->stream, frame.data, frame.len, err);
    buf_release(&frame);
    return rc;
}

/* The agent installed the job's libraries and waits: take the container
 * off the install network, then let it go on.  Such a container is not
 * handed to another job. */
static int after_install(struct sandbox *s, struct llmsb_err *err)
{
    s->healthy = 0;
    if (s->spec.network && s->spec.network_name &&
        s->be.ops->network_disconnect(&s->be, s->spec.network_name, s->id, err) != 0)
        return llmsb_err_wrap(err, "after the library install");
    return send_frame(s, PROTO_CONTINUE, "", 0, err);
}

/* The sandbox's profile from its agent's HELLO (or PONG) f: the engine's,
 * checked against what the agent says of its kernel.  An agent on gVisor
 * where the engine said otherwise (a wrapper script, a cluster whose
 * default runtime is gVisor) gets gVisor's: one job, its RLIMIT_NPROC at
 * its pids limit; its container's limits were set before it spoke (the
 * pids cgroup stays the job's pids). */
static void hello_profile(struct sandbox *s, const struct proto_frame *f)
{
    s->runtime = s->be.runtime;
    if (tag_u64(f, TAG_KERNEL_GVISOR) != 1 || s->runtime.kind == BACKEND_RUNTIME_GVISOR)
        return;
    log_warn("sandbox %.12s runs on gVisor, which its engine did not say of runtime "
             "\"%s\": one job per container; docs/security.md#gvisor-runsc",
             s->id, s->spec.runtime ? s->spec.runtime : "");
    s->runtime = *runtime_profile_of(BACKEND_RUNTIME_GVISOR);
}

int sandbox_open(struct sandbox *s, const struct backend *tmpl, const struct container_spec *spec,
                 int64_t start_timeout_ms, struct llmsb_err *err)
{
    struct proto_frame f;
    size_t used;
    int rc;

    memset(s, 0, sizeof(*s));
    if ((rc = backend_clone(&s->be, tmpl, err)) != 0)
        return rc;
    buf_init(&s->in, PROTO_MAX_PAYLOAD + PROTO_HEADER_LEN);
    if (snprintf(s->image, sizeof(s->image), "%s", spec->image) >= (int)sizeof(s->image)) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "image name over %zu bytes", sizeof(s->image));
        goto fail;
    }
    s->spec = *spec;
    s->spec.image = s->image;
    s->spec.nlabels = 0;
    s->born_ms = clock_mono_ms();
    if ((rc = s->be.ops->create(&s->be, spec, s->id, sizeof(s->id), err)) != 0)
        goto fail;
    s->open = 1;
    /* attach before start so the agent's HELLO cannot be missed (where
     * the engine allows it) */
    if ((rc = s->be.ops->attach(&s->be, s->id, &s->stream, err)) != 0)
        goto fail;
    if ((rc = s->be.ops->start(&s->be, s->id, err)) != 0)
        goto fail;
    /* a stream opened on a running container missed the HELLO: a PING
     * brings the same answer as a PONG */
    if (s->be.ops->attach_after_start && (rc = send_frame(s, PROTO_PING, "", 0, err)) != 0)
        goto fail;
    if ((rc = wait_frames(
             s, 1u << PROTO_HELLO | (s->be.ops->attach_after_start ? 1u << PROTO_PONG : 0u),
             clock_mono_ms() + start_timeout_ms, &f, &used, err)) != 0) {
        llmsb_err_wrap(err, "container %.12s from %s did not start its agent", s->id, s->image);
        goto fail;
    }
    /* both came (the stream was in time for the HELLO): take the PONG too,
     * so no stale answer waits for a later PING */
    if (s->be.ops->attach_after_start && f.type == PROTO_HELLO) {
        buf_consume(&s->in, used);
        if ((rc = wait_frame(s, PROTO_PONG, clock_mono_ms() + start_timeout_ms, &f, &used, err)) !=
            0)
            goto fail;
    }
    s->prestart = tag_u64(&f, TAG_PRESTART) == 1;
    s->live = tag_u64(&f, TAG_LIVE) == 1;
    hello_profile(s, &f);
    buf_consume(&s->in, used);
    s->healthy = 1;
    log_debug("sandbox %.12s ready in %lld ms", s->id, (long long)(clock_mono_ms() - s->born_ms));
    return 0;
fail:
    sandbox_close(s);
    return rc;
}

/* Reads the READY that follows a job's RESULT (the agent's cleanup) or a
 * PRESTART. */
static int await_ready(struct sandbox *s, struct llmsb_err *err)
{
    struct proto_frame f;
    size_t used;
    uint64_t clean;
    int rc;

    if (!s->need_ready)
        return 0;
    if ((rc = wait_frame(s, PROTO_READY, clock_mono_ms() + READY_TIMEOUT_MS, &f, &used, err)))
        return llmsb_err_wrap(err, "agent cleanup");
    clean = tag_u64(&f, TAG_CLEAN);
    buf_consume(&s->in, used);
    s->need_ready = 0;
    s->ready_ms = clock_mono_ms();
    if (!clean) {
        s->healthy = 0;
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "agent: cleanup after the last job failed");
    }
    return 0;
}

/* A usable container whose agent finished cleaning up after its last job. */
static int ready_for_next(struct sandbox *s, struct llmsb_err *err)
{
    if (!s->open || !s->healthy)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "sandbox: container is not usable");
    return await_ready(s, err);
}

/* The container went away or went silent: the engine's OOM flag makes it
 * the job's memory_limit; a silent agent past the backstop is a timeout;
 * anything else is ours (returns 0 when res now holds the job's status). */
static int classify_loss(struct sandbox *s, struct proto_result *res, int timed_out)
{
    struct container_state st;
    struct llmsb_err e = {0};

    /* the agent's RESULT never came: whether the program ran, and how it
     * ended, is unknown (exit_code null) */
    if (s->be.ops->inspect(&s->be, s->id, &st, &e) == 0 && st.oom_killed) {
        res->status = STATUS_MEMORY_LIMIT;
        res->not_run = 1;
        snprintf(res->error, sizeof(res->error), "the container hit its memory limit");
        return 0;
    }
    if (timed_out) {
        res->status = STATUS_TIMEOUT;
        res->not_run = 1;
        snprintf(res->error, sizeof(res->error),
                 "the agent did not answer within the backstop; container destroyed");
        return 0;
    }
    return -1;
}

/* A live job's chunks as they reach the sink: each stream's in order,
 * never past the job's output limit in all. */
struct live_in {
    uint64_t next[2]; /* where the next chunk of stdout, stderr starts */
    uint64_t cap;     /* the job's output limit */
    int off;          /* an OUTPUT frame was malformed: no more chunks */
};

/* Hands an OUTPUT frame's chunk to the sink, or drops it: one the agent
 * should not have sent (malformed, out of order, past the cap) ends the
 * job's chunks; its RESULT still says all. */
static void live_chunk(struct sandbox *s, struct live_in *li, const struct proto_frame *f)
{
    struct llmsb_err e = {0};
    struct proto_chunk c;

    if (li->off)
        return;
    if (proto_chunk_decode(f->payload, f->len, &c, &e) != 0 || c.offset != li->next[c.fd - 1] ||
        c.len > li->cap - (li->next[0] + li->next[1])) {
        log_debug("sandbox %.12s: live output stopped: %s", s->id,
                  e.msg[0] ? e.msg : "a chunk out of order or past the output limit");
        li->off = 1;
        return;
    }
    li->next[c.fd - 1] += c.len;
    if (c.len)
        s->sink->fn(s->sink->arg, &c);
}

/* The RLIMIT_NPROC a job is sent with under the sandbox's profile: where
 * the agent said gVisor and the engine did not, what holds the job at its
 * pids limit (exec_job_nproc gave it the engine's profile's) */
static uint64_t sent_nproc(const struct sandbox *s, const struct proto_job *pj)
{
    return runtime_profile_nproc(&s->runtime, pj->pids, pj->nproc);
}

/* Sends the JOB frame and waits for its RESULT, handling the install
 * pause and a live job's OUTPUT frames on the way. */
static int exchange(struct sandbox *s, const struct proto_job *pj, int64_t backstop_ms,
                    struct proto_frame *f, size_t *used, struct llmsb_err *err)
{
    struct buf payload;
    struct proto_job sent = *pj; /* a view: TAG_LIVE only where it is taken */
    unsigned want = 1u << PROTO_RESULT | (pj->install_pause ? 1u << PROTO_INSTALLED : 0);
    struct live_in li = {{0, 0}, pj->output_limit ? pj->output_limit : PROTO_MAX_OUTPUT, 0};
    int64_t deadline;
    int rc;

    sent.live = pj->live == 1 && s->live && s->sink;
    sent.nproc = sent_nproc(s, pj);
    if (sent.live)
        want |= 1u << PROTO_OUTPUT;
    if (sent.live && s->sink->begin)
        s->sink->begin(s->sink->arg); /* this attempt's chunks start over */
    buf_init(&payload, PROTO_MAX_PAYLOAD);
    rc = proto_job_encode(&sent, &payload) != 0
             ? llmsb_err_set(err, LLMSB_ERR_INVALID, "job: over the %zu byte protocol cap",
                             PROTO_MAX_PAYLOAD)
             : send_frame(s, PROTO_JOB, payload.data, payload.len, err);
    buf_release(&payload);
    if (rc != 0)
        return rc == LLMSB_ERR_INVALID ? rc : llmsb_err_wrap(err, "sandbox %.12s: send job", s->id);
    s->jobs++;
    deadline = clock_mono_ms() + backstop_ms;
    while ((rc = wait_frames(s, want, deadline, f, used, err)) == 0 && f->type != PROTO_RESULT) {
        if (f->type == PROTO_OUTPUT) {
            live_chunk(s, &li, f);
            buf_consume(&s->in, *used);
            continue;
        }
        buf_consume(&s->in, *used);
        want &= ~(1u << PROTO_INSTALLED);
        if ((rc = after_install(s, err)) != 0)
            return rc;
    }
    return rc;
}

int sandbox_run(struct sandbox *s, const struct proto_job *pj, int64_t backstop_ms,
                struct proto_result *res, struct llmsb_err *err)
{
    struct proto_frame f;
    size_t used;
    int rc;

    if ((rc = ready_for_next(s, err)) != 0)
        return rc;
    if (!pj->session) { /* what the pool prestarts its next container of this kind with */
        proto_job_release(&s->last);
        if (sandbox_start_view(pj, &s->last) != 0)
            log_warn("sandbox %.12s: out of memory keeping the job's start view", s->id);
    }
    rc = exchange(s, pj, backstop_ms, &f, &used, err);
    if (rc == LLMSB_ERR_INVALID)
        return rc; /* nothing was sent; the sandbox is as good as before */
    if (rc == LLMSB_ERR_TIMEOUT || rc == LLMSB_ERR_BACKEND) {
        s->healthy = 0;
        res->status = STATUS_NONE;
        if (classify_loss(s, res, rc == LLMSB_ERR_TIMEOUT) == 0)
            return 0;
        return llmsb_err_wrap(err, "sandbox %.12s", s->id);
    }
    if (rc == 0)
        rc = proto_result_decode(f.payload, f.len, res, err);
    if (rc != 0) {
        s->healthy = 0;
        return rc;
    }
    buf_consume(&s->in, used);
    s->need_ready = 1;
    if (!status_info(res->status)->from_agent) {
        s->healthy = 0;
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "agent: status \"%s\" is not one an agent "
                             "may report",
                             status_name(res->status));
    }
    if (res->status == STATUS_INTERNAL_ERROR) {
        /* the agent could not do its part: ours, not the job's; the
         * container is suspect */
        char shown[160];
        s->healthy = 0;
        llmsb_escape(shown, sizeof(shown), res->error, strlen(res->error));
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "agent in %.12s: %s", s->id, shown);
    }
    /* A job killed by the clock may have left the agent mid-cleanup of a
     * runaway; the pool destroys such containers rather than reuse them. */
    if (res->status == STATUS_TIMEOUT)
        s->healthy = 0;
    return 0;
}

/* Sends view as a PRESTART and waits for its READY. */
static int send_prestart(struct sandbox *s, const struct proto_job *view, struct llmsb_err *err)
{
    struct proto_job sent = *view; /* started with the limits its job gets */
    struct buf payload;
    int rc;

    s->prestart = 0;
    if ((rc = ready_for_next(s, err)) != 0)
        return rc;
    sent.nproc = sent_nproc(s, view);
    buf_init(&payload, PROTO_MAX_PAYLOAD);
    rc = proto_job_encode(&sent, &payload) != 0
             ? llmsb_err_set(err, LLMSB_ERR_INVALID, "prestart: over the %zu byte protocol cap",
                             PROTO_MAX_PAYLOAD)
             : send_frame(s, PROTO_PRESTART, payload.data, payload.len, err);
    buf_release(&payload);
    s->need_ready = rc == 0;
    if (rc == 0)
        rc = await_ready(s, err);
    if (rc != 0) {
        s->healthy = 0;
        return llmsb_err_wrap(err, "sandbox %.12s: prestart", s->id);
    }
    return 0;
}

int sandbox_prestart(struct sandbox *s, const struct proto_job *pj, struct llmsb_err *err)
{
    struct proto_job z;

    /* a zygote or a run step started ahead: never for a job with a
     * compile step (its kills by uid would end them); the warm javac is
     * for one */
    int zygote = pj->zygote && pj->nrun && !pj->ncompile;
    int ahead = pj->prespawn && pj->nrun && !pj->ncompile;

    if (!s->prestart || s->jobs || (!zygote && !ahead && !pj->compile_server) || pj->session ||
        pj->ninstall)
        return 0;
    /* a view of pj: what its zygote, its run step or its compiler is
     * started with, nothing of the job's files or input */
    proto_job_init(&z);
    z.run_argv = pj->run_argv;
    z.nrun = pj->nrun;
    z.env = pj->env;
    z.nenv = pj->nenv;
    z.zygote = zygote ? pj->zygote : NULL;
    z.zygote_profile = zygote ? pj->zygote_profile : NULL;
    /* a process started ahead is started with the job's limits */
    z.prespawn = ahead ? pj->prespawn : NULL;
    z.fsize_limit = pj->fsize_limit;
    z.nofile = pj->nofile;
    z.nproc = pj->nproc;
    z.pids = pj->pids;
    z.compile_server = pj->compile_server;
    z.compile_argv = pj->compile_argv;
    z.ncompile = pj->ncompile;
    return send_prestart(s, &z, err);
}

int sandbox_prestart_ahead(struct sandbox *s, const struct proto_job *view, struct llmsb_err *err)
{
    if (!s->prestart || s->jobs || !view->nrun || view->session)
        return 0;
    return send_prestart(s, view, err);
}

static int str_copy(char **to, const char *from)
{
    if (from && !(*to = strdup(from)))
        return LLMSB_ERR_NOMEM;
    return 0;
}

int sandbox_start_view(const struct proto_job *pj, struct proto_job *view)
{
    int rc;

    proto_job_init(view);
    rc = strlist_add_all(&view->compile_argv, &view->ncompile, pj->compile_argv, pj->ncompile);
    rc = rc ? rc : strlist_add_all(&view->run_argv, &view->nrun, pj->run_argv, pj->nrun);
    /* never the job's own env: a view outlives its job (the pool keeps
     * it for the next container of the kind) and may hold a secret */
    rc = rc ? rc : strlist_add_all(&view->env, &view->nenv, pj->env, pj->nenv - pj->nenv_own);
    rc = rc ? rc : str_copy(&view->zygote, pj->zygote);
    rc = rc ? rc : str_copy(&view->zygote_profile, pj->zygote_profile);
    rc = rc ? rc : str_copy(&view->prespawn, pj->prespawn);
    rc = rc ? rc : str_copy(&view->compile_server, pj->compile_server);
    view->fsize_limit = pj->fsize_limit;
    view->nofile = pj->nofile;
    view->nproc = pj->nproc;
    view->pids = pj->pids;
    if (rc != 0)
        proto_job_release(view);
    return rc;
}

void sandbox_close(struct sandbox *s)
{
    struct llmsb_err e = {0};

    if (s->stream)
        s->stream->ops->close(s->stream);
    s->stream = NULL;
    if (s->open && s->be.ops && s->be.ops->remove(&s->be, s->id, &e) != 0) {
        log_warn("cannot remove container %.12s: %s", s->id, e.msg);
        s->unremoved = 1;
    }
    s->open = 0;
    buf_release(&s->in);
    proto_job_release(&s->last);
    backend_close(&s->be);
}

int sandbox_ping(struct sandbox *s, int64_t timeout_ms, struct llmsb_err *err)
{
    struct proto_frame f;
    size_t used;
    int rc;

    if ((rc = ready_for_next(s, err)) != 0)
        return rc;
    /* a READY read just now answered for the agent: no round trip more */
    if (s->ready_ms && clock_mono_ms() - s->ready_ms < READY_FRESH_MS)
        return 0;
    rc = send_frame(s, PROTO_PING, "", 0, err);
    if (rc == 0)
        rc = wait_frame(s, PROTO_PONG, clock_mono_ms() + timeout_ms, &f, &used, err);
    if (rc != 0) {
        s->healthy = 0;
        return rc;
    }
    buf_consume(&s->in, used);
    return 0;
}

void sandbox_agent_log(const struct sandbox *s, char *out, size_t outsz)
{
    const struct buf *log = s->stream ? &s->stream->log : NULL;

    if (outsz)
        out[0] = '\0';
    if (log && log->len)
        llmsb_escape(out, outsz, log->data, log->len);
}
