/* server.c - `llm-sandbox mcp`'s server: a Model Context Protocol server on
 * stdin and stdout (JSON-RPC 2.0, one message per line; docs/mcp.md).  Its
 * tools: execute_code, close_session, get_supported_languages,
 * get_language_details.  A call of execute_code is a job like any other:
 * the same field checks, security scan, limits, pool and statuses; it runs
 * in this process on a warm pool kept between calls (the --local path), or
 * in queue mode through Redis on the workers.  Here: the stdio loop, one
 * client's server state (struct mcp: over HTTP one per MCP session, on
 * the runner all of them share), the two ways of running a call, the
 * stdin watch that cancels it, and the dispatch to the framing
 * (mcp/jsonrpc.c) and the tools (mcp/tools.c).  The HTTP transport is
 * mcp/http.c.  A call whose client asked for progress runs as a live job:
 * each chunk of its output becomes a notifications/progress (from the
 * runner's sink in process, from the job's Redis stream in queue mode). */
#include "mcp/server_int.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/batch.h"
#include "common/json.h"
#include "common/random.h"
#include "exec/runner.h"
#include "job/job.h"
#include "job/result.h"
#include "mcp/jsonrpc.h"
#include "mcp/tools.h"
#include "queue/queue.h"

/* The in-process runner, shared by every client of the server. */
struct mcp_engine {
    pthread_mutex_t mu; /* its opening */
    int open;
    int slots;
    struct runner rn; /* opened at the first in-process call; does not move */
};

#define LIVE_CHECK_MS 5000

struct mcp {
    const struct mcp_options *o;
    const struct config *cfg;
    struct jsonrpc rpc; /* stdio's */
    struct mcp_engine *eng;
    int http;          /* one MCP session of mcp/http.c: no stdin */
    struct backend be; /* http: this client's handle on the engine, cloned */
    int be_open;
    /* queue mode */
    int queue_open;
    /* the workers' last live check (live_check_ms: when; 0 none): it scans
     * the keyspace for heartbeats, so it is reused for LIVE_CHECK_MS */
    struct queue_workers_check live_check;
    int64_t live_check_ms;
    /* with --queue: "mcp-<hex>-" before the ids and session ids it is
     * given (the workers know ids only); in process "" */
    char scope[24];
    /* in process: its sandbox sessions' names in the runner's table, none
     * of another client's (exec/session.h) */
    struct session_scope sandbox_scope;
    struct queue q;
    unsigned long calls;
    atomic_int *cancel; /* the running call's: SCHED_CANCEL_ABORT, the client left */
    atomic_int own_cancel;
    /* stdin while a call runs (watch_stdin) */
    int stdin_ended;    /* seen by the watcher: nothing more is answered */
    int stdin_file;     /* a regular file: its end is no client leaving */
    struct buf pending; /* read during a call, for the main loop */
    struct mcp_sessions sessions;
};

/* A fresh job id: "mcp-", this process's pid, the call's number and 8 hex
 * digits from the kernel's RNG (ids through Redis must not collide).
 * Returns 0, or an error (no random bytes) that fails the call. */
static int call_id(struct mcp *m, char *out, size_t outsz, struct llmsb_err *err)
{
    char rnd[9];

    if (random_hex(rnd, sizeof(rnd), 4, "mcp: the call's job id", err) != 0)
        return err->code;
    snprintf(out, outsz, "mcp-%ld-%lu-%s", (long)getpid(), ++m->calls, rnd);
    return 0;
}

/* ---- progress: a live call's output as it comes ---------------------------------- */

/* A call's progress: progress is the bytes of output so far (it only
 * grows), message the new piece (docs/mcp.md); attempts, how many began;
 * sent, the notifications' bytes, which stay within MCP_PROGRESS_MAX_BYTES. */
struct progress {
    const struct mcp_progress *to;
    unsigned long long bytes;
    struct proto_chunk_sink sink;
    long long attempts;
    size_t sent;
    size_t out[2]; /* the attempt's stdout and stderr bytes sent so far */
};

#define PROGRESS_RESTART "\n[llm-sandbox: the call is tried again; its output starts over]\n"
#define PROGRESS_STOPPED                                                                       \
    "\n[llm-sandbox: no more progress for this call (its notifications reached the cap); the " \
    "answer holds the whole output]\n"

static size_t progress_send(struct progress *p, const char *data, size_t len)
{
    cJSON *params = cJSON_CreateObject();

    cJSON_AddItemToObject(params, "progressToken", cJSON_Duplicate(p->to->token, 1));
    cJSON_AddNumberToObject(params, "progress", (double)p->bytes);
    json_add_text(params, "message", data, len);
    return jsonrpc_notify(p->to->rpc, "notifications/progress", params);
}

/* The most a notification of a message of len bytes can take: 6 bytes a
 * byte escaped (\u0001), the token escaped, the envelope. */
static size_t progress_bound(size_t len)
{
    return 6 * len + 6 * MCP_PROGRESS_TOKEN_MAX + 128;
}

/* A message.  When it might take the call's notifications past
 * MCP_PROGRESS_MAX_BYTES one says so instead, within the cap, and nothing
 * more is sent: a call's notifications are bounded whatever its output
 * and token. */
static void progress_message(struct progress *p, const char *data, size_t len)
{
    size_t room = MCP_PROGRESS_MAX_BYTES - progress_bound(strlen(PROGRESS_STOPPED));

    p->bytes += len;
    if (p->sent > room) /* stopped */
        return;
    if (p->sent + progress_bound(len) <= room) {
        p->sent += progress_send(p, data, len);
        return;
    }
    progress_send(p, PROGRESS_STOPPED, strlen(PROGRESS_STOPPED));
    p->sent = room + 1;
}

/* A piece of output (fd 1, 2), or (fd 0) an attempt that starts over. */
static void progress_piece(void *arg, int fd, const char *data, size_t len)
{
    struct progress *p = arg;

    if (fd == 0) {
        p->out[0] = p->out[1] = 0;
        progress_message(p, PROGRESS_RESTART, strlen(PROGRESS_RESTART));
        return;
    }
    p->out[fd == 2] += len;
    progress_message(p, data, len);
}

/* The call's end: what its result's stdout and stderr (out, err: their
 * bytes as the program wrote them, before any text conversion) hold past
 * what the chunks brought (the agent sends none on a slow reader rather
 * than wait, and a job run without live sends none), so that the messages
 * of the last attempt are its output, whichever way it ran.  p NULL: no
 * progress asked for. */
static void progress_finish(struct progress *p, const char *out, size_t outlen, const char *err,
                            size_t errlen)
{
    const char *v[2] = {out, err};
    size_t len[2] = {outlen, errlen};

    for (int fd = 0; p && fd < 2; fd++)
        if (v[fd] && len[fd] > p->out[fd])
            progress_piece(p, fd + 1, v[fd] + p->out[fd], len[fd] - p->out[fd]);
}

/* The in-process runner's sink (in this thread: the one that answers). */
static void progress_chunk(void *arg, const struct proto_chunk *c)
{
    progress_piece(arg, c->fd, c->data, c->len);
}

static void progress_begin(void *arg)
{
    struct progress *p = arg;

    if (p->attempts++)
        progress_piece(arg, 0, NULL, 0);
}

/* ---- in-process execution: one runner, opened at the first call --------------- */

struct mcp_engine *mcp_engine_new(int slots)
{
    struct mcp_engine *e = calloc(1, sizeof(*e));

    if (!e)
        return NULL;
    pthread_mutex_init(&e->mu, NULL);
    e->slots = slots;
    return e;
}

void mcp_engine_free(struct mcp_engine *e)
{
    if (!e)
        return;
    if (e->open)
        runner_close(&e->rn, "the MCP server that held it stopped");
    pthread_mutex_destroy(&e->mu);
    free(e);
}

/* The shared runner, opened at the first call; over HTTP this client's
 * own handle on its engine too. */
static int open_runner(struct mcp *m, struct llmsb_err *err)
{
    struct mcp_engine *e = m->eng;
    /* warm after the first call, none before it */
    const struct runner_opts o = {.kind = RUNNER_KIND_LOCAL, .slots = e->slots, .keep_warm = 0};
    int rc = 0;

    pthread_mutex_lock(&e->mu);
    if (!e->open && (rc = runner_open(&e->rn, m->cfg, &o, err)) == 0)
        e->open = 1;
    pthread_mutex_unlock(&e->mu);
    if (rc != 0)
        return rc;
    if (m->http && !m->be_open) {
        if ((rc = backend_clone(&m->be, &e->rn.be, err)) != 0)
            return rc;
        m->be_open = 1;
    }
    return 0;
}

/* In this process: the result as JSON, or NULL with err set. */
static cJSON *run_here(struct mcp *m, const struct job *j, struct progress *p,
                       struct llmsb_err *err)
{
    struct job_result r;
    cJSON *out;

    if (open_runner(m, err) != 0)
        return NULL;
    job_result_init(&r, j);
    /* stopped (the client left, or ended its MCP session): no result */
    switch (runner_run(&m->eng->rn, m->be_open ? &m->be : NULL, j, m->cancel, &r)) {
    case SCHED_OUT_ABORTED:
    case SCHED_OUT_CANCELLED:
        job_result_release(&r);
        llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted");
        return NULL;
    default:
        break;
    }
    progress_finish(p, r.r.out.data, r.r.out.len, r.r.err.data, r.r.err.len);
    out = job_result_json(&r);
    job_result_release(&r);
    return out;
}

/* The result hash of id as JSON (batch_result_get), or NULL when there is
 * none; a final one ends p's progress (progress_finish) with its stdout
 * and stderr as the program wrote them. */
static cJSON *fetch_result(struct queue *q, const char *id, struct progress *p)
{
    struct fields f; /* the hash as Redis holds it: the output's own bytes */
    cJSON *out = batch_result_get(q, id, &f);

    if (result_json_final(out)) {
        size_t olen = 0, elen = 0;
        const char *o = fields_get(&f, "stdout", &olen), *e = fields_get(&f, "stderr", &elen);
        progress_finish(p, o, olen, e, elen);
    }
    fields_release(&f);
    return out;
}

/* One wait of at most left ms for id: the job's stream (p: its chunks as
 * progress, its end entry, else its result), or its done notification.
 * 1 done, 0 not yet, or a negative code. */
static int wait_step(struct mcp *m, const char *id, struct progress *p, struct queue_follow *f,
                     int64_t left, struct llmsb_err *err)
{
    char status[32];
    int rc;

    if (!p)
        return queue_wait_done(&m->q, id, left < 1000 ? (double)left / 1000 : 1.0, status,
                               sizeof(status), err);
    if ((rc = queue_follow_step(&m->q, id, f, left < 500 ? (int)left : 500, progress_piece, p,
                                err)) < 0)
        return rc;
    if (f->ended)
        return 1;
    if (rc > 0 || (rc = queue_result_status(&m->q, id, status, sizeof(status), err)) != 1)
        return rc < 0 ? rc : 0;
    if (strcmp(status, "running") == 0)
        return 0;
    /* the entries written just before the status */
    rc = queue_follow_step(&m->q, id, f, 0, progress_piece, p, err);
    return rc < 0 ? rc : 1;
}

/* Waits up to --wait for id's end, a step at a time: when stdin ends (or a
 * signal comes) the job is cancelled on its worker, which removes its
 * container; Redis going away meanwhile (a restart, a failover) is waited
 * out within the same time.  Returns 1 done, 0 not in time, or a negative
 * code. */
static int wait_queued(struct mcp *m, const char *id, struct progress *p, struct llmsb_err *err)
{
    int64_t until = clock_mono_ms() + (int64_t)(m->o->wait_s * 1000);
    struct queue_follow f;

    int down = 0;

    queue_follow_init(&f);
    for (;;) {
        int64_t left = until - clock_mono_ms();
        int rc;
        if (left <= 0)
            return down ? err->code : 0;
        rc = wait_step(m, id, p, &f, left, err);
        if (rc < 0 && queue_err_retryable(err)) { /* two seconds at a time: a cancel is seen */
            down = queue_reconnect_wait(&m->q, left < 2000 ? left : 2000, NULL, err) != 0;
            if (!down)
                log_warn("redis: connected again while waiting for job \"%s\"", id);
            rc = 0;
        }
        if (rc != 0)
            return rc;
        if (runner_stop_asked(m->cancel)) {
            if (queue_cancel(&m->q, id, m->cfg->result_ttl_s, err) != 0)
                return llmsb_err_wrap(err, "cancel job \"%s\"", id);
            return llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted; job \"%s\" cancelled",
                                 id);
        }
    }
}

/* A live call needs every live worker to know live output (an older one
 * calls the job invalid; docs/operations.md, rolling upgrades): when one
 * does not, plain gets the fields without live, the progress says why
 * once, and *p becomes NULL (the call is waited for as one not live).
 * Returns 1 so, 0 live as asked, or a negative code. */
static int live_or_not(struct mcp *m, const struct fields *f, struct fields *plain,
                       struct progress **p, struct llmsb_err *err)
{
    struct queue_workers_check c;
    char note[700];

    if (!*p)
        return 0;
    if (!m->live_check_ms || clock_mono_ms() - m->live_check_ms >= LIVE_CHECK_MS) {
        if (queue_workers_check(&m->q, "live", &m->live_check, err) != 0)
            return err->code;
        m->live_check_ms = clock_mono_ms();
    }
    c = m->live_check;
    if (!c.lacking)
        return 0;
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i].name, "live") != 0 &&
            fields_add(plain, f->v[i].name, f->v[i].value, f->v[i].len) != 0)
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    snprintf(note, sizeof(note),
             "[llm-sandbox: no live output for this call: %d of %d live worker(s) are older than "
             "it: %s; the output comes with the result]\n",
             c.lacking, c.alive, c.lacking_names);
    log_info("%.*s", (int)strlen(note) - 1, note); /* without its newline */
    progress_message(*p, note, strlen(note));
    *p = NULL;
    return 1;
}

/* This client's Redis connection, opened at its first queued call. */
static int open_queue(struct mcp *m, struct llmsb_err *err)
{
    int rc;

    if (!m->queue_open && (rc = queue_open(&m->q, m->o->redis_url, m->o->redis_prefix, NULL,
                                           (int)(m->o->wait_s * 1000) + 5000, err)) != 0)
        return rc;
    m->queue_open = 1;
    return 0;
}

/* Through Redis: enqueued as any producer's job, then its result. */
static cJSON *run_queued(struct mcp *m, const struct fields *f, const char *id, struct progress *p,
                         struct llmsb_err *err)
{
    char entry[QUEUE_ENTRY_ID_MAX];
    struct fields plain;
    struct progress *pr = p; /* the call's, whether it runs live or not */
    cJSON *r;
    int off;

    if (open_queue(m, err) != 0)
        return NULL;
    fields_init(&plain, f->max);
    if ((off = live_or_not(m, f, &plain, &p, err)) >= 0)
        off = queue_enqueue(&m->q, off ? &plain : f, entry, sizeof(entry), err);
    fields_release(&plain);
    if (off != 0)
        return NULL;
    r = fetch_result(&m->q, id, pr);
    if (!result_json_final(r)) {
        cJSON_Delete(r);
        if (wait_queued(m, id, p, err) < 0)
            return NULL;
        r = fetch_result(&m->q, id, pr);
    }
    if (!result_json_final(r)) {
        cJSON_Delete(r);
        llmsb_err_set(err, LLMSB_ERR_TIMEOUT,
                      "no result within %.0f s; the job \"%s\" is still queued or running "
                      "(llm-sandbox result %s)",
                      m->o->wait_s, id, id);
        return NULL;
    }
    return r;
}

struct watch {
    struct mcp *m;
    pthread_t th;
    atomic_int done; /* the call ended: stop watching */
    int running;
};

/* Reads stdin while a call runs, into m->pending (up to its cap; the rest
 * waits in the pipe); at its end, asks the call to stop. */
static void *watch_stdin(void *arg)
{
    struct watch *w = arg;
    struct mcp *m = w->m;
    char chunk[65536];

    while (!atomic_load(&w->done)) {
        struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
        size_t room = m->pending.cap - m->pending.len;
        ssize_t n;
        if (room == 0)
            break;
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        n = read(STDIN_FILENO, chunk, room < sizeof(chunk) ? room : sizeof(chunk));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            m->stdin_ended = 1;
            atomic_store(m->cancel, SCHED_CANCEL_ABORT);
            break;
        }
        buf_append(&m->pending, chunk, (size_t)n); /* fits: room */
    }
    return NULL;
}

static void watch_start(struct mcp *m, struct watch *w)
{
    w->m = m;
    atomic_init(&w->done, 0);
    w->running = !m->http && !m->stdin_file && pthread_create(&w->th, NULL, watch_stdin, w) == 0;
}

static void watch_stop(struct watch *w)
{
    if (!w->running)
        return;
    atomic_store(&w->done, 1);
    pthread_join(w->th, NULL);
    if (w->m->stdin_ended)
        w->m->rpc.closed = 1; /* nothing more is answered */
}

/* Why a stopped call stopped when it was the client leaving, else NULL. */
static const char *client_left(const struct mcp *m)
{
    if (m->stdin_ended)
        return "stdin ended (the client left)";
    if (m->http && atomic_load(m->cancel) == SCHED_CANCEL_ABORT)
        return "the client disconnected";
    if (m->http && atomic_load(m->cancel) == SCHED_CANCEL_USER)
        return "the MCP session was ended (DELETE)";
    return NULL;
}

/* The fields as a job, checked as any job's, then run: its result as the
 * tool's answer (closing: one line), or a tool error.  err may say why
 * the fields could not be made. */
static cJSON *run_fields(struct mcp *m, const struct fields *f, const char *id, int closing,
                         struct progress *p, char *status, size_t statussz, struct llmsb_err *err)
{
    struct job j;
    cJSON *r = NULL, *out;

    job_init(&j, m->cfg);
    if (!err->msg[0] && job_from_fields(&j, m->cfg, f, id, err) == 0) {
        struct watch w;
        if (p) /* the fields say live: true */
            j.sink = &p->sink;
        j.session_scope = &m->sandbox_scope;
        watch_start(m, &w);
        r = m->o->queue_mode ? run_queued(m, f, id, p, err) : run_here(m, &j, p, err);
        watch_stop(&w);
    }
    snprintf(status, statussz, "%s", r ? mcp_str_of(r, "status") : "");
    if (r && closing && strcmp(mcp_str_of(r, "status"), "ok") == 0)
        out = mcp_session_closed(j.session + strlen(m->scope));
    else if (r)
        out = mcp_result_content(r);
    else
        out = mcp_call_failed(err, client_left(m));
    cJSON_Delete(r);
    job_release(&j);
    return out;
}

static cJSON *execute_code(void *ud, const cJSON *args, const struct mcp_progress *progress)
{
    struct mcp *m = ud;
    const cJSON *sess = cJSON_GetObjectItemCaseSensitive(args, "session");
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(args, "language");
    const struct mcp_session *known =
        cJSON_IsString(sess) ? mcp_session_known(&m->sessions, sess->valuestring, m->calls) : NULL;
    const struct language *l = cJSON_IsString(lang) ? language_find(lang->valuestring) : NULL;
    struct mcp_call c;
    struct llmsb_err err = {0};
    char id[64], status[32];
    struct progress p = {progress, 0, {progress_chunk, &p, progress_begin}, 0, 0, {0, 0}};
    cJSON *out;

    mcp_call_init(&c);
    /* a session's call without a language runs in the session's */
    if (call_id(m, id, sizeof(id), &err) == 0 &&
        mcp_execute_fields(&c, args, id, m->scope, known ? known->lang : "python", &err) == 0 &&
        progress && fields_adds(&c.f, "live", "true") != 0)
        llmsb_err_set(&err, LLMSB_ERR_NOMEM, "out of memory");
    out = run_fields(m, &c.f, id, 0, progress ? &p : NULL, status, sizeof(status), &err);
    if (cJSON_IsString(sess) && status[0] && strcmp(status, "invalid") != 0 &&
        strcmp(status, "session_lost") != 0)
        mcp_session_remember(&m->sessions, sess->valuestring,
                             l       ? l->name
                             : known ? known->lang
                                     : "python",
                             m->calls);
    mcp_call_release(&c);
    return out;
}

/* Ends session sid (as the client names it): close_session's answer. */
static cJSON *close_one(struct mcp *m, const char *sid)
{
    struct mcp_call c;
    struct llmsb_err err = {0};
    char id[64], status[32];
    cJSON *out;

    mcp_call_init(&c);
    if (call_id(m, id, sizeof(id), &err) == 0)
        mcp_close_fields(&c, sid, id, m->scope);
    out = run_fields(m, &c.f, id, 1, NULL, status, sizeof(status), &err);
    if (strcmp(status, "ok") == 0 || strcmp(status, "session_lost") == 0) /* it is gone */
        mcp_session_remember(&m->sessions, sid, NULL, m->calls);
    mcp_call_release(&c);
    return out;
}

static cJSON *close_session(void *ud, const cJSON *args)
{
    const cJSON *sess = cJSON_GetObjectItemCaseSensitive(args, "session");

    if (!cJSON_IsString(sess))
        return mcp_tool_error("invalid: session: required, a string (the session's id)");
    return close_one(ud, sess->valuestring);
}

/* ---- submit_jobs: a job file as one batch (batch/batch.h) ----------------------- */

/* The arguments the batch's lines name. */
static const char *const arg_names[BATCH_NAMES] = {
    [BATCH_NAME_ALLOW_INVALID] = "allow_invalid: true", [BATCH_NAME_RERUN] = "existing: \"rerun\"",
    [BATCH_NAME_REUSE] = "existing: \"reuse\"",         [BATCH_NAME_NO_DEDUP] = "dedup: false",
    [BATCH_NAME_RECHECK] = "recheck_timeouts: true",    [BATCH_NAME_OUT] = "the results below",
};

/* One submit_jobs call: what its batch said (capped) and its progress. */
struct submit_call {
    struct buf said;
    const struct mcp_progress *progress;
    size_t n;         /* the batch's jobs */
    size_t last_sent; /* the progress last notified: it only grows */
};

static void submit_say(void *ud, enum batch_say kind, const char *line)
{
    static const char *const prefix[] = {[BATCH_SAY_LINE] = "",
                                         [BATCH_SAY_NOTE] = "",
                                         [BATCH_SAY_WARNING] = "warning: ",
                                         [BATCH_SAY_ERROR] = "error: "};
    struct submit_call *c = ud;

    if (c->said.len + strlen(prefix[kind]) + strlen(line) + 1 > c->said.cap)
        return; /* past the cap the summary still tells */
    buf_printf(&c->said, "%s%s\n", prefix[kind], line);
}

/* The jobs done as progress (a recheck's after the runs': it only grows),
 * of how many, and a line saying so; from the runner's threads in process
 * (one at a time, while the call's own thread only waits). */
static void submit_progress(void *ud, const struct batch_progress *p)
{
    struct submit_call *c = ud;
    size_t base = p->recheck ? c->n : 0;
    cJSON *params;
    char msg[120];

    if (!c->progress || base + p->done <= c->last_sent)
        return;
    c->last_sent = base + p->done;
    snprintf(msg, sizeof(msg), "%zu/%zu %sdone, %zu failed", p->done, p->total,
             p->recheck ? "rechecks " : "", p->failed);
    params = cJSON_CreateObject();
    cJSON_AddItemToObject(params, "progressToken", cJSON_Duplicate(c->progress->token, 1));
    cJSON_AddNumberToObject(params, "progress", (double)(base + p->done));
    cJSON_AddNumberToObject(params, "total", (double)(base + p->total));
    cJSON_AddStringToObject(params, "message", msg);
    jsonrpc_notify(c->progress->rpc, "notifications/progress", params);
}

/* The batch through Redis: planned, sent, and (wait) waited for within
 * --wait.  *sent_only is set when it was not waited for.  Returns an enum
 * batch_end or a negative code. */
static int batch_queued(struct mcp *m, struct batch *b, int wait, int *sent_only,
                        struct llmsb_err *err)
{
    int rc;

    if ((rc = open_queue(m, err)) != 0 || (rc = queue_group_ensure(&m->q, err)) != 0) {
        b->o.say(b->o.ud, BATCH_SAY_ERROR, err->msg);
        return rc;
    }
    if ((rc = batch_queue_plan(b, &m->q, err)) != 0 ||
        (rc = batch_queue_send(b, &m->q, err)) != BATCH_DONE)
        return rc;
    if (!wait) {
        *sent_only = 1;
        return BATCH_DONE;
    }
    return batch_queue_wait(b, &m->q, err);
}

/* The batch in this process, on the server's runner. */
static int batch_here(struct mcp *m, struct batch *b, struct llmsb_err *err)
{
    int rc;

    if ((rc = open_runner(m, err)) != 0) {
        b->o.say(b->o.ud, BATCH_SAY_ERROR, err->msg);
        return rc;
    }
    b->o.runner = &m->eng->rn;
    b->o.session_scope = &m->sandbox_scope;
    if ((rc = batch_local_plan(b, err)) != 0)
        return rc;
    return batch_local_run(b, err);
}

/* The bytes of said but its last line when that line says drop (after
 * its kind's "error: ", if any): a failure the answer's first line gives. */
static size_t said_but(const char *said, size_t n, const char *drop)
{
    size_t start, dl = strlen(drop);
    const char *line;

    if (n == 0 || said[n - 1] != '\n')
        return n;
    for (start = n - 1; start > 0 && said[start - 1] != '\n'; start--)
        ;
    line = said + start;
    if (strncmp(line, "error: ", 7) == 0)
        line += 7;
    return (size_t)(said + n - 1 - line) == dl && strncmp(line, drop, dl) == 0 ? start : n;
}

/* first (a line, or NULL), what the batch said but a last line saying
 * drop (NULL: none), then with summary its summary, without the client's
 * scope.  New string or NULL. */
static char *submit_text(const struct mcp *m, const struct batch *b, const struct submit_call *c,
                         const char *first, const char *drop, int summary)
{
    const char *said = c->said.data ? c->said.data : "";
    size_t len = 0, n = drop ? said_but(said, c->said.len, drop) : c->said.len;
    char *text = NULL;
    FILE *f = open_memstream(&text, &len);

    if (!f)
        return NULL;
    if (first)
        fprintf(f, "%s\n", first);
    fwrite(said, 1, n, f);
    if (summary)
        batch_summary(b, f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    mcp_unscope(text, m->scope);
    return text;
}

/* The answer to a batch that ended (end: an enum batch_end or a negative
 * code, err saying why). */
static cJSON *submit_answer(struct mcp *m, const struct batch *b, const struct submit_call *c,
                            int end, int sent_only, const struct llmsb_err *err)
{
    cJSON **results = NULL, *out;
    char first[600], *text;

    if (end == BATCH_STOPPED) /* the client left, or the server stops */
        return mcp_call_failed(&(struct llmsb_err){LLMSB_ERR_INTERRUPTED, "interrupted"},
                               client_left(m));
    if (end < 0) { /* the lines say what, and why */
        snprintf(first, sizeof(first), "%s",
                 err->code == LLMSB_ERR_INVALID ? "invalid: " : "internal_error: ");
        llmsb_append(first, sizeof(first), "%s", err->msg[0] ? err->msg : "the batch did not run");
        text = submit_text(m, b, c, first, err->msg, 0);
        out = mcp_submit_answer(text ? text : first, NULL, 0, m->scope, 1);
    } else if (sent_only) {
        char **ids = calloc(b->n ? b->n : 1, sizeof(*ids));
        text = submit_text(m, b, c, NULL, NULL, 0);
        for (size_t i = 0; ids && i < b->n; i++)
            ids[i] = b->jobs[i].id;
        out = ids ? mcp_submit_sent(text ? text : "", ids, b->n, m->scope)
                  : mcp_tool_error("internal_error: out of memory");
        free(ids);
    } else {
        /* cut short (--wait ran out): what finished, the rest not_finished */
        snprintf(first, sizeof(first),
                 "timeout: the wait (--wait %.0f s) ran out; the unfinished jobs stay queued and "
                 "keep running",
                 m->o->wait_s);
        text = submit_text(m, b, c, end == BATCH_TIMED_OUT ? first : NULL, NULL, 1);
        if ((results = calloc(b->n ? b->n : 1, sizeof(*results))))
            for (size_t i = 0; i < b->n; i++)
                results[i] = batch_job_result(b, i);
        out = results
                  ? mcp_submit_answer(text ? text : "", results, b->n, m->scope, end != BATCH_DONE)
                  : mcp_tool_error("internal_error: out of memory");
        for (size_t i = 0; results && i < b->n; i++)
            cJSON_Delete(results[i]);
        free(results);
    }
    free(text);
    return out;
}

/* The sandbox sessions the batch's jobs used are this client's as
 * execute_code's are: remembered with their language (closed by a job
 * with session_close), so that a later call continues them and the
 * client's end closes them. */
static void submit_sessions(struct mcp *m, const struct batch *b)
{
    size_t sl = strlen(m->scope);

    for (size_t i = 0; i < b->n; i++) {
        const cJSON *job = b->jf->jobs[i], *s = cJSON_GetObjectItemCaseSensitive(job, "session");
        const char *st = mcp_str_of(b->results[i], "status");
        if (!cJSON_IsString(s) || strlen(s->valuestring) < sl || !b->results[i] ||
            strcmp(st, "invalid") == 0 || strcmp(st, "session_lost") == 0)
            continue;
        m->calls++;
        mcp_session_remember(&m->sessions, s->valuestring + sl,
                             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(job, "session_close"))
                                 ? NULL
                                 : batch_job_lang(b, i),
                             m->calls);
    }
}

static cJSON *submit_jobs(void *ud, const cJSON *args, const struct mcp_progress *progress)
{
    struct mcp *m = ud;
    struct submit_call c = {.progress = progress};
    struct llmsb_err err = {0};
    struct mcp_submit s;
    struct batch_opts bo;
    struct jobfile jf;
    struct batch b;
    struct watch w;
    int end, sent_only = 0;
    cJSON *out;

    if (mcp_submit_args(args, m->o->queue_mode, &s, &err) != 0 ||
        jobfile_load_string(&jf, s.jobs, s.len, "jobs", &err) != 0)
        return mcp_call_failed(&err, NULL);
    if (mcp_jobs_scope(&jf, m->scope, &err) != 0) {
        jobfile_release(&jf);
        return mcp_call_failed(&err, NULL);
    }
    buf_init(&c.said, MCP_SUBMIT_SAID_MAX);
    c.n = jf.n;
    bo = (struct batch_opts){.dedup = s.dedup,
                             .recheck = s.recheck,
                             .allow_invalid = s.allow_invalid,
                             .queue = m->o->queue_mode,
                             .existing = (enum batch_existing)s.existing,
                             .slots =
                                 m->eng->slots < m->cfg->slots ? m->eng->slots : (int)m->cfg->slots,
                             .timeout_s = m->o->queue_mode ? m->o->wait_s : 0,
                             .cancel = m->cancel,
                             .names = arg_names,
                             .say = submit_say,
                             .progress = submit_progress,
                             .ud = &c};
    watch_start(m, &w);
    if ((end = batch_init(&b, m->cfg, &jf, &bo, &err)) == 0 && (end = batch_check(&b, &err)) == 0)
        end = m->o->queue_mode ? batch_queued(m, &b, s.wait, &sent_only, &err)
                               : batch_here(m, &b, &err);
    watch_stop(&w);
    if (end >= 0)
        submit_sessions(m, &b);
    out = submit_answer(m, &b, &c, end, sent_only, &err);
    batch_release(&b);
    jobfile_release(&jf);
    buf_release(&c.said);
    return out;
}

/* The methods (jsonrpc_method_fn): MCP's, the calls that run a job here. */
static void method(void *ud, struct jsonrpc *rpc, const cJSON *id, const char *name,
                   const cJSON *params)
{
    struct mcp *m = ud;
    const struct mcp_runner run = {execute_code, close_session, submit_jobs, m};

    mcp_method(m->cfg, &run, rpc, id, name, params);
}

/* Reads stdin to its end (or a signal), first what was read during a call;
 * nothing more is answered once stdin ended during a call. */
static void serve(struct mcp *m)
{
    char chunk[65536];

    while (!llmsb_interrupted && !m->stdin_ended) {
        ssize_t n;
        if (m->pending.len) {
            size_t len = m->pending.len;
            char *data = buf_steal(&m->pending);
            jsonrpc_feed(&m->rpc, data, len);
            free(data);
            continue;
        }
        n = read(STDIN_FILENO, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        jsonrpc_feed(&m->rpc, chunk, (size_t)n);
    }
    if (!m->stdin_ended && !llmsb_interrupted)
        jsonrpc_finish(&m->rpc);
}

struct mcp *mcp_new(const struct mcp_options *o, struct mcp_engine *eng, int http,
                    struct llmsb_err *err)
{
    struct mcp *m = calloc(1, sizeof(*m));
    char token[17];

    if (!m) {
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "mcp: out of memory");
        return NULL;
    }
    m->o = o;
    m->cfg = o->cfg;
    m->eng = eng;
    m->http = http;
    /* in process each client's sandbox sessions are its own by
     * sandbox_scope; through Redis the workers see nothing but the ids, so
     * there the scope is in the ids: one a client over HTTP (two clients'
     * "s1" are two sessions, and no client can name another's), one a
     * server on stdio (its ids apart from other servers') */
    if (o->queue_mode) {
        if (random_hex(token, sizeof(token), http ? 8 : 4, "mcp: the client's session scope",
                       err) != 0) {
            free(m);
            return NULL;
        }
        snprintf(m->scope, sizeof(m->scope), "mcp-%s-", token);
    }
    atomic_init(&m->own_cancel, SCHED_GO);
    m->cancel = &m->own_cancel;
    buf_init(&m->pending, 2 * MCP_MAX_MESSAGE);
    jsonrpc_init(&m->rpc, stdout, MCP_MAX_MESSAGE, method, m);
    return m;
}

void mcp_free(struct mcp *m)
{
    int open = 0;

    if (!m)
        return;
    if (m->eng) {
        pthread_mutex_lock(&m->eng->mu);
        open = m->eng->open;
        pthread_mutex_unlock(&m->eng->mu);
    }
    /* what mcp_end_sessions did not close (or could not remember) ends
     * with its client: nothing of it stays for another to meet */
    if (open)
        session_scope_end(&m->eng->rn.sessions, &m->sandbox_scope,
                          "the MCP client that held it ended");
    if (m->be_open)
        backend_close(&m->be);
    if (m->queue_open)
        queue_close(&m->q);
    jsonrpc_release(&m->rpc);
    buf_release(&m->pending);
    free(m);
}

void mcp_handle(struct mcp *m, const char *body, size_t len, jsonrpc_write_fn write, void *wud,
                atomic_int *cancel)
{
    struct jsonrpc rpc;

    jsonrpc_init(&rpc, NULL, MCP_MAX_MESSAGE, method, m);
    jsonrpc_set_writer(&rpc, write, wud);
    m->cancel = cancel;
    jsonrpc_message(&rpc, body, len);
    m->cancel = &m->own_cancel;
    jsonrpc_release(&rpc);
}

int mcp_end_sessions(struct mcp *m)
{
    int n = 0;

    for (size_t i = 0; i < MCP_SESSIONS_KEPT && !llmsb_interrupted; i++)
        if (m->sessions.s[i].sid[0]) {
            char sid[sizeof(m->sessions.s[i].sid)];
            cJSON *r;
            snprintf(sid, sizeof(sid), "%s", m->sessions.s[i].sid);
            r = close_one(m, sid);
            n += cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "isError"));
            cJSON_Delete(r);
            m->sessions.s[i].sid[0] = '\0'; /* tried once, ended or not */
        }
    return n;
}

int mcp_serve(const struct mcp_options *o, struct llmsb_err *err)
{
    struct mcp_engine *eng = mcp_engine_new(o->cfg->slots > 0 ? (int)o->cfg->slots : 1);
    struct mcp *m = eng ? mcp_new(o, eng, 0, err)
                        : (llmsb_err_set(err, LLMSB_ERR_NOMEM, "mcp: out of memory"), NULL);
    struct stat st;

    if (!m) {
        mcp_engine_free(eng);
        return err->code;
    }
    m->stdin_file = fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
    serve(m);
    mcp_free(m);
    mcp_engine_free(eng);
    return 0;
}
