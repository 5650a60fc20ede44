/* http.c - `llm-sandbox mcp --http`: MCP's Streamable HTTP transport
 * (protocol 2025-03-26 and 2025-06-18) on libmicrohttpd, one endpoint,
 * /mcp.  A POST carries a message or a batch: notifications and responses
 * alone are answered 202, a request with its answer as application/json,
 * or as an SSE stream (text/event-stream) when notifications come before
 * the answer.  initialize opens an MCP session (a random Mcp-Session-Id),
 * every later request names it, DELETE or idleness ends it and the
 * sandbox sessions its calls opened.  Each request is checked before its
 * body is read: the Host and Origin (DNS rebinding), the bearer token,
 * the method, media types and protocol version (mcp/http_check.c).  A
 * thread per connection; a call runs on a thread of its own while the
 * connection's watches the socket, so a client that hangs up stops its
 * call as stdin's end does on stdio. */
#include "mcp/server_int.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/http_serve.h"
#include "common/net.h"
#include "scheduler/decide.h"
#include "mcp/http_check.h"
#include "mcp/tools.h"

#define OUT_MAX ((size_t)512 << 20) /* one request's messages: answers with files */
#define WATCH_MS 100                /* how often a waiting connection looks at its socket */
/* A body over MCP_MAX_MESSAGE is read to its end and refused (413) so the
 * client reads the answer; one announced over this is refused unread. */
#define DISCARD_MAX (8 * MCP_MAX_MESSAGE)

/* One MCP session: what one stdio server is, over the shared runner. */
struct session {
    char id[MCP_SESSION_ID_LEN + 1];
    struct mcp *m;
    pthread_mutex_t call_mu; /* its requests, one at a time */
    int refs;                /* the table's and each request's; under the server's mu */
    atomic_int ended;        /* out of the table: nothing more runs */
    int64_t used_ms;         /* its last request's start */
    atomic_int *calling;     /* the running call's cancel, NULL; under the server's mu */
};

struct server {
    const struct mcp_options *o;
    struct mcp_engine *eng;
    unsigned char token[MCP_TOKEN_HASH];
    pthread_mutex_t mu;
    struct session **s;   /* max_sessions slots */
    struct http_serve hs; /* the daemon behind the door */
};

enum mode { MODE_NONE, MODE_JSON, MODE_SSE };

/* One request; its call runs on thread th. */
struct req {
    struct server *srv;
    struct buf body;
    int too_big;
    int fd; /* the connection's socket, watched for the client leaving */
    struct session *sess;
    pthread_t th;
    int th_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    enum mode mode; /* set by the first message written */
    struct buf out; /* JSON: the answer; SSE: the events */
    size_t sent;    /* SSE: out's bytes handed to libmicrohttpd */
    int overflow;   /* out's cap was reached */
    int done;       /* the call ended */
    int ended;      /* the session ended before the call could run */
    atomic_int cancel;
    int refs; /* the connection's, the SSE response's */
};

/* ---- sessions ------------------------------------------------------------------- */

static void session_put(struct server *srv, struct session *s)
{
    int last;

    pthread_mutex_lock(&srv->mu);
    last = --s->refs == 0;
    pthread_mutex_unlock(&srv->mu);
    if (!last)
        return;
    mcp_free(s->m);
    pthread_mutex_destroy(&s->call_mu);
    free(s);
}

/* The session named id, with a reference, or NULL. */
static struct session *session_get(struct server *srv, const char *id)
{
    struct session *found = NULL;

    if (!mcp_session_id_ok(id))
        return NULL;
    pthread_mutex_lock(&srv->mu);
    for (int i = 0; i < srv->o->max_sessions && !found; i++)
        if (srv->s[i] && mcp_session_id_equal(srv->s[i]->id, id))
            found = srv->s[i];
    if (found) {
        found->refs++;
        found->used_ms = clock_mono_ms();
    }
    pthread_mutex_unlock(&srv->mu);
    return found;
}

/* A new session, with the table's reference and the caller's; NULL when
 * max_sessions are open (*full), or with err set (ENOMEM, no random bytes
 * for its id or scope: no session rather than a guessable one). */
static struct session *session_new(struct server *srv, int *full, struct llmsb_err *err)
{
    struct session *s = calloc(1, sizeof(*s));
    int slot = -1;

    *full = 0;
    if (!s) {
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (mcp_session_id_new(s->id, err) != 0 || !(s->m = mcp_new(srv->o, srv->eng, 1, err))) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->call_mu, NULL);
    s->refs = 2;
    s->used_ms = clock_mono_ms();
    pthread_mutex_lock(&srv->mu);
    for (int i = 0; i < srv->o->max_sessions && slot < 0; i++)
        if (!srv->s[i])
            slot = i;
    if (slot >= 0)
        srv->s[slot] = s;
    pthread_mutex_unlock(&srv->mu);
    if (slot < 0) {
        *full = 1;
        s->refs = 1;
        session_put(srv, s);
        return NULL;
    }
    return s;
}

/* Takes s out of the table (under mu): no request finds it any more, and
 * its running call, if any, is asked to stop (SCHED_CANCEL_USER: the
 * client ended the session, so it is cancelled, not given back). */
static void session_unlink(struct server *srv, struct session *s)
{
    for (int i = 0; i < srv->o->max_sessions; i++)
        if (srv->s[i] == s)
            srv->s[i] = NULL;
    atomic_store(&s->ended, 1);
    if (s->calling)
        atomic_store(s->calling, SCHED_CANCEL_USER);
}

/* Ends an unlinked session: once its running call stopped, closes the
 * sandbox sessions its calls opened, then drops the table's reference. */
static void session_end(struct server *srv, struct session *s, const char *why)
{
    int n;

    pthread_mutex_lock(&s->call_mu);
    n = mcp_end_sessions(s->m);
    pthread_mutex_unlock(&s->call_mu);
    log_info("mcp: MCP session %.8s... ended (%s; %d sandbox session%s closed)", s->id, why, n,
             n == 1 ? "" : "s");
    session_put(srv, s);
}

/* Ends the sessions no request used for session_idle_s. */
static void sessions_reap(struct server *srv)
{
    int64_t now = clock_mono_ms(), idle_ms = (int64_t)(srv->o->session_idle_s * 1000);
    struct session *gone[64];
    int n = 0;

    pthread_mutex_lock(&srv->mu);
    for (int i = 0; i < srv->o->max_sessions && n < 64; i++) {
        struct session *s = srv->s[i];
        if (s && s->refs == 1 && now - s->used_ms >= idle_ms) {
            session_unlink(srv, s);
            gone[n++] = s;
        }
    }
    pthread_mutex_unlock(&srv->mu);
    for (int i = 0; i < n; i++)
        session_end(srv, gone[i], "idle");
}

/* ---- a request and its call ----------------------------------------------------- */

static struct req *req_new(struct server *srv, struct MHD_Connection *conn)
{
    struct req *r = calloc(1, sizeof(*r));
    const union MHD_ConnectionInfo *ci;

    if (!r)
        return NULL;
    if (clock_cond_init(&r->cv) != 0) {
        free(r);
        return NULL;
    }
    r->srv = srv;
    buf_init(&r->body, MCP_MAX_MESSAGE);
    buf_init(&r->out, OUT_MAX);
    pthread_mutex_init(&r->mu, NULL);
    atomic_init(&r->cancel, SCHED_GO);
    ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    r->fd = ci ? ci->connect_fd : -1;
    r->refs = 1;
    return r;
}

/* Drops a reference; the last stops the call if it still runs (the
 * client left), waits for it and frees r. */
static void req_put(struct req *r)
{
    int last;

    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    last = --r->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (!last)
        return;
    if (r->th_started) {
        atomic_store(&r->cancel, SCHED_CANCEL_ABORT); /* a no-op once it ended */
        pthread_join(r->th, NULL);
    }
    if (r->sess)
        session_put(r->srv, r->sess);
    buf_release(&r->body);
    buf_release(&r->out);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* The writer of the call's messages (jsonrpc_write_fn): the first decides
 * the response's form, an SSE stream when it is a notification. */
static void on_write(void *wud, enum jsonrpc_out kind, const char *text, size_t len)
{
    struct req *r = wud;
    int rc;

    pthread_mutex_lock(&r->mu);
    if (r->mode == MODE_NONE)
        r->mode = kind == JSONRPC_OUT_NOTIFICATION ? MODE_SSE : MODE_JSON;
    if (r->mode == MODE_SSE)
        rc = buf_append_str(&r->out, "event: message\ndata: ") | buf_append(&r->out, text, len) |
             buf_append_str(&r->out, "\n\n");
    else
        rc = buf_append(&r->out, text, len);
    r->overflow |= rc != 0;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* The session's running call is r's from now (1), or the session ended
 * first (0); calling 0 after the call: none. */
static int session_calling(struct server *srv, struct session *s, struct req *r, int calling)
{
    int ok;

    pthread_mutex_lock(&srv->mu);
    ok = !atomic_load(&s->ended);
    s->calling = calling && ok ? &r->cancel : NULL;
    pthread_mutex_unlock(&srv->mu);
    return ok;
}

static void *call_main(void *arg)
{
    struct req *r = arg;
    struct session *s = r->sess;

    pthread_mutex_lock(&s->call_mu);
    if (!session_calling(r->srv, s, r, 1)) {
        r->ended = 1;
    } else {
        mcp_handle(s->m, r->body.data ? r->body.data : "", r->body.len, on_write, r, &r->cancel);
        session_calling(r->srv, s, r, 0);
    }
    pthread_mutex_unlock(&s->call_mu);
    pthread_mutex_lock(&r->mu);
    r->done = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* Waits (r->mu held) up to WATCH_MS for news of the call.  Returns -1
 * when the client hung up meanwhile: its call is asked to stop. */
static int wait_news(struct req *r)
{
    clock_cond_wait_ms(&r->cv, &r->mu, WATCH_MS);
    if (http_client_gone(r->fd)) {
        atomic_store(&r->cancel, SCHED_CANCEL_ABORT);
        return -1;
    }
    return 0;
}

/* The SSE stream's body (MHD_ContentReaderCallback): the events as the
 * call writes them, until its answer. */
static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
    struct req *r = cls;
    ssize_t n;

    (void)pos;
    pthread_mutex_lock(&r->mu);
    while (r->sent == r->out.len && !r->done)
        if (wait_news(r) != 0) {
            pthread_mutex_unlock(&r->mu);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    if (r->sent == r->out.len) {
        pthread_mutex_unlock(&r->mu);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    n = (ssize_t)(r->out.len - r->sent < max ? r->out.len - r->sent : max);
    memcpy(out, r->out.data + r->sent, (size_t)n);
    r->sent += (size_t)n;
    pthread_mutex_unlock(&r->mu);
    return n;
}

static void sse_free(void *cls)
{
    req_put(cls);
}

/* ---- responses ---------------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned code, const char *type,
                               const char *body, size_t len, const char *session_id)
{
    struct MHD_Response *res =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc;

    if (!res)
        return MHD_NO;
    if (type)
        MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (session_id)
        MHD_add_response_header(res, "Mcp-Session-Id", session_id);
    if (code == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(res, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(res, MHD_HTTP_HEADER_ALLOW, "POST, DELETE");
    /* a refused client keeps no connection: one without the token could
     * otherwise hold a place of the connection cap with a slow request */
    if (code >= 400)
        MHD_add_response_header(res, MHD_HTTP_HEADER_CONNECTION, "close");
    rc = MHD_queue_response(conn, code, res);
    MHD_destroy_response(res);
    return rc;
}

/* An HTTP error with a JSON-RPC error object (id null) saying why. */
static enum MHD_Result fail(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result fail(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
{
    char msg[512], *text;
    cJSON *m = cJSON_CreateObject(), *e;
    enum MHD_Result rc;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddNullToObject(m, "id");
    e = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(e, "code", code == MHD_HTTP_SERVICE_UNAVAILABLE ? -32000 : -32600);
    cJSON_AddStringToObject(e, "message", msg);
    text = cJSON_PrintUnformatted(m);
    cJSON_Delete(m);
    rc = respond(conn, code, "application/json", text ? text : "", text ? strlen(text) : 0, NULL);
    free(text);
    return rc;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* The checks made before a body is read; 0 when they pass, else the
 * response was queued (1) or could not be (-1). */
static int precheck(struct server *srv, struct MHD_Connection *conn, const char *url,
                    const char *method)
{
    const char *host = header(conn, MHD_HTTP_HEADER_HOST), *origin = header(conn, "Origin");
    const char *version = header(conn, "MCP-Protocol-Version");
    const char *len = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *accept = header(conn, MHD_HTTP_HEADER_ACCEPT);
    int post = strcmp(method, "POST") == 0;
    enum MHD_Result rc;
    long long n;

    if (strcmp(url, MCP_HTTP_PATH) != 0)
        rc = fail(conn, MHD_HTTP_NOT_FOUND, "Not found: the MCP endpoint is %s", MCP_HTTP_PATH);
    else if (srv->hs.loopback && !mcp_host_loopback(host))
        rc = fail(conn, MHD_HTTP_FORBIDDEN,
                  "Forbidden: the Host header is not a loopback name (DNS rebinding protection)");
    else if (!mcp_origin_ok(origin, srv->o->allow_origins))
        rc = fail(conn, MHD_HTTP_FORBIDDEN,
                  "Forbidden: Origin not allowed (loopback origins and --allow-origin ones only)");
    else if (srv->o->token &&
             !mcp_bearer_ok(header(conn, MHD_HTTP_HEADER_AUTHORIZATION), srv->token))
        rc = fail(conn, MHD_HTTP_UNAUTHORIZED,
                  "Unauthorized: Authorization: Bearer with the server's token is required");
    else if (!post && strcmp(method, "DELETE") != 0)
        rc = fail(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                  "Method Not Allowed: POST a message, DELETE a session; this server opens no "
                  "stream of its own (GET)");
    else if (version && !mcp_version_known(version))
        rc = fail(conn, MHD_HTTP_BAD_REQUEST,
                  "Bad Request: MCP-Protocol-Version is none this server speaks (2025-06-18, "
                  "2025-03-26, 2024-11-05)");
    else if (post && !mcp_content_json(header(conn, MHD_HTTP_HEADER_CONTENT_TYPE)))
        rc = fail(conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                  "Unsupported Media Type: Content-Type must be application/json");
    else if (post && (!mcp_accepts(accept, "application/json") ||
                      !mcp_accepts(accept, "text/event-stream")))
        rc = fail(conn, MHD_HTTP_NOT_ACCEPTABLE,
                  "Not Acceptable: Accept must take application/json and text/event-stream");
    else if (post && len && parse_ll(len, 0, (long long)DISCARD_MAX, &n) != 0)
        rc = fail(conn, MHD_HTTP_CONTENT_TOO_LARGE, "Content Too Large: a message over %zu bytes",
                  MCP_MAX_MESSAGE);
    else
        return 0;
    return rc == MHD_YES ? 1 : -1;
}

/* ---- POST and DELETE ---------------------------------------------------------------- */

/* 1 when msg is a request: a method and an id. */
static int is_request(const cJSON *msg)
{
    return *mcp_str_of(msg, "method") && cJSON_GetObjectItemCaseSensitive(msg, "id");
}

/* What a body holds: an initialize request alone; any request. */
static void classify(const struct buf *body, int *init, int *has_request)
{
    cJSON *msg = cJSON_ParseWithLength(body->data ? body->data : "", body->len);
    const cJSON *it;

    *init = cJSON_IsObject(msg) && is_request(msg) &&
            strcmp(mcp_str_of(msg, "method"), "initialize") == 0;
    *has_request = cJSON_IsObject(msg) && is_request(msg);
    if (cJSON_IsArray(msg))
        cJSON_ArrayForEach(it, msg)
            *has_request |= cJSON_IsObject(it) && is_request(it);
    cJSON_Delete(msg);
}

/* The session a request names: 0 with r->sess, or -1 with the error
 * queued (*rc). */
static int find_session(struct req *r, struct MHD_Connection *conn, enum MHD_Result *rc)
{
    const char *id = header(conn, "Mcp-Session-Id");

    if (!id) {
        *rc = fail(conn, MHD_HTTP_BAD_REQUEST,
                   "Bad Request: Mcp-Session-Id header required (initialize's answer gives it)");
        return -1;
    }
    if (!(r->sess = session_get(r->srv, id))) {
        *rc = fail(conn, MHD_HTTP_NOT_FOUND,
                   "Not Found: no such MCP session (it ended, or never was): initialize anew");
        return -1;
    }
    return 0;
}

static enum MHD_Result do_delete(struct req *r, struct MHD_Connection *conn)
{
    enum MHD_Result rc;
    struct session *s;
    int was;

    if (find_session(r, conn, &rc) != 0)
        return rc;
    s = r->sess;
    pthread_mutex_lock(&r->srv->mu);
    was = !atomic_load(&s->ended);
    if (was)
        session_unlink(r->srv, s);
    pthread_mutex_unlock(&r->srv->mu);
    if (was)
        session_end(r->srv, s, "DELETE");
    return respond(conn, MHD_HTTP_NO_CONTENT, NULL, "", 0, NULL);
}

/* Runs the call and waits for its answer, or for a first notification
 * (then the answer streams).  Returns -1 when the client left. */
static int run_call(struct req *r)
{
    int rc = 0;

    if (pthread_create(&r->th, NULL, call_main, r) != 0)
        return -1;
    r->th_started = 1;
    pthread_mutex_lock(&r->mu);
    while (!r->done && r->mode != MODE_SSE && rc == 0)
        rc = wait_news(r);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* The answer as an SSE stream, its events as the call writes them. */
static enum MHD_Result stream(struct req *r, struct MHD_Connection *conn, const char *sid)
{
    struct MHD_Response *res =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, sse_read, r, sse_free);
    enum MHD_Result rc;

    if (!res)
        return MHD_NO;
    pthread_mutex_lock(&r->mu);
    r->refs++; /* the stream's, dropped by sse_free */
    pthread_mutex_unlock(&r->mu);
    MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(res, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    if (sid)
        MHD_add_response_header(res, "Mcp-Session-Id", sid);
    rc = MHD_queue_response(conn, MHD_HTTP_OK, res);
    MHD_destroy_response(res);
    return rc;
}

static enum MHD_Result do_post(struct req *r, struct MHD_Connection *conn)
{
    const char *sid;
    enum MHD_Result rc;
    struct llmsb_err err = {0};
    int init, has_request, full;

    if (r->too_big)
        return fail(conn, MHD_HTTP_CONTENT_TOO_LARGE, "Content Too Large: a message over %zu bytes",
                    MCP_MAX_MESSAGE);
    classify(&r->body, &init, &has_request);
    if (init) {
        if (!(r->sess = session_new(r->srv, &full, &err)))
            return full ? fail(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                               "Service Unavailable: too many MCP sessions (%d, --max-sessions): "
                               "end one (DELETE) or wait for one to idle out",
                               r->srv->o->max_sessions)
                        : fail(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
                               "Internal Server Error: no MCP session opened: %s", err.msg);
        log_info("mcp: MCP session %.8s... opened", r->sess->id);
    } else if (find_session(r, conn, &rc) != 0) {
        return rc;
    }
    sid = init ? r->sess->id : NULL;
    if (run_call(r) != 0)
        return MHD_NO; /* the client left: its call was stopped */
    if (r->ended)
        return fail(conn, MHD_HTTP_NOT_FOUND, "Not Found: the MCP session ended meanwhile");
    if (r->overflow)
        return fail(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "the answer is over %zu bytes", OUT_MAX);
    if (r->mode == MODE_NONE) /* notifications and responses only */
        return respond(conn, MHD_HTTP_ACCEPTED, NULL, "", 0, sid);
    if (r->mode == MODE_JSON) /* no request: what came is an error about it */
        return respond(conn, has_request ? MHD_HTTP_OK : MHD_HTTP_BAD_REQUEST, "application/json",
                       r->out.data, r->out.len, sid);
    return stream(r, conn, sid);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    struct server *srv = cls;
    struct req *r = *req_cls;

    (void)version;
    if (!r) { /* the headers: checked before any body is read */
        if (!(r = req_new(srv, conn)))
            return MHD_NO;
        *req_cls = r;
        return precheck(srv, conn, url, method) < 0 ? MHD_NO : MHD_YES;
    }
    if (*upload_size) {
        if (!r->too_big && buf_append(&r->body, upload, *upload_size) != 0)
            r->too_big = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    return strcmp(method, "DELETE") == 0 ? do_delete(r, conn) : do_post(r, conn);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    req_put(*req_cls);
    *req_cls = NULL;
}

/* ---- the server ------------------------------------------------------------------- */

int mcp_serve_http(const struct mcp_options *o, struct llmsb_err *err)
{
    struct server srv = {.o = o};
    int64_t reaped = clock_mono_ms();
    int rc = 0;

    if (o->token)
        mcp_token_hash(o->token, strlen(o->token), srv.token);
    pthread_mutex_init(&srv.mu, NULL);
    if (!(srv.s = calloc((size_t)o->max_sessions, sizeof(*srv.s))) ||
        !(srv.eng = mcp_engine_new(o->max_sessions))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = http_serve_start(
             &srv.hs,
             &(struct http_serve_opts){.addr = o->http_addr,
                                       .token = o->token != NULL,
                                       .allow_no_token = o->allow_no_token,
                                       .token_from = "--token-file or LLMSB_MCP_TOKEN",
                                       .connections = MCP_HTTP_CONNECTIONS(o->max_sessions),
                                       .waiting_max = MCP_HTTP_WAITING_MAX,
                                       .head_deadline_ms = MCP_HTTP_HEAD_DEADLINE_MS,
                                       .idle_s = 600,
                                       .on_request = on_request,
                                       .on_completed = on_completed,
                                       .cls = &srv},
             err)) != 0)
        goto out;
    log_info("mcp: serving MCP over HTTP on %s%s%s", srv.hs.url, MCP_HTTP_PATH,
             o->token ? " (bearer token required)" : "");
    while (!llmsb_interrupted) {
        usleep(100 * 1000);
        if (clock_mono_ms() - reaped >= 1000) {
            sessions_reap(&srv);
            reaped = clock_mono_ms();
        }
    }
    http_serve_stop(&srv.hs); /* waits for the connections: their calls stop too */
    for (int i = 0; i < o->max_sessions; i++)
        if (srv.s[i])
            session_put(&srv, srv.s[i]); /* its sandbox sessions end with it (mcp_free) */
out:
    mcp_engine_free(srv.eng);
    free(srv.s);
    pthread_mutex_destroy(&srv.mu);
    return rc;
}
