/* server.c - `llm-sandbox serve --http`: the HTTP front door on
 * libmicrohttpd (docs/http.md).  The door (common/http_gate.h) holds each
 * connection until its headers are in; then, before any body is read, a
 * request's Host and Origin (DNS rebinding), its token (Authorization:
 * Bearer, or Judge0's X-Auth-Token), its client's rate and its announced
 * size are checked; a call that runs jobs is admitted while fewer than
 * --max-calls run and --max-waiting wait, else refused 429 with
 * Retry-After.  Its body read, a call runs on a thread of its own through
 * the route set whose path it is (front/routes.h) while the connection's
 * thread watches the socket: a client that hangs up stops its call. */
#include "front/front_int.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/http_serve.h"
#include "common/net.h"
#include "mcp/http_check.h"
#include "scheduler/decide.h"

#define WATCH_MS 100    /* how often a waiting connection looks at its socket */
#define WAITING_MAX 256 /* connections held by the door before their headers */
#define SPARE_CONNS 64  /* connections past the calls' (GETs, keep-alive) */
#define OUT_MAX_TEXT ((size_t)1 << 30)
#define OPEN_BODY_MAX 65536 /* a request answered without the token: its body, dropped */

/* The OpenAPI document (front/openapi.json), embedded at build time. */
extern const char front_openapi_json[];
__asm__(".section .rodata\n"
        ".global front_openapi_json\n"
        ".type front_openapi_json, @object\n"
        "front_openapi_json:\n"
        ".incbin \"front/openapi.json\"\n"
        ".byte 0\n"
        ".previous\n");

static const front_route_fn routes[] = {fusion_route, judge0_route, piston_route, native_route};

struct server {
    const struct front_options *o;
    struct front_exec *x;
    struct front_rate *rate;
    unsigned char token[MCP_TOKEN_HASH];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running, waiting; /* calls admitted: running, waiting to run */
    struct http_serve hs; /* the daemon behind the door */
};

/* One request. */
struct req {
    struct server *srv;
    struct MHD_Connection *conn;
    struct buf body;
    size_t seen; /* body bytes received, kept or not */
    int too_big;
    int open;     /* answered without the token: its body is never kept */
    int admitted; /* counted in running */
    int fd;
    pthread_t th;
    int th_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    atomic_int cancel;
    const char *method, *url;
    struct front_answer ans;
};

/* ---- answers --------------------------------------------------------------------- */

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned code, const char *type,
                                    const char *body, size_t len, int retry_after, int close_it,
                                    const char *origin)
{
    struct MHD_Response *res =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    char ra[16];
    enum MHD_Result rc;

    if (!res)
        return MHD_NO;
    if (type)
        MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (retry_after > 0) {
        snprintf(ra, sizeof(ra), "%d", retry_after);
        MHD_add_response_header(res, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    if (code == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(res, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (origin) { /* an Origin --allow-origin names */
        MHD_add_response_header(res, "Access-Control-Allow-Origin", origin);
        MHD_add_response_header(res, MHD_HTTP_HEADER_VARY, "Origin");
    }
    /* a client refused before its call keeps no connection: one without
     * the token could otherwise hold a place with slow requests */
    if (close_it)
        MHD_add_response_header(res, MHD_HTTP_HEADER_CONNECTION, "close");
    rc = MHD_queue_response(conn, code, res);
    MHD_destroy_response(res);
    return rc;
}

/* A refusal of the server's own: {"error": why, "message": why}, the
 * connection closed. */
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned code, int retry_after,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned code, int retry_after,
                              const char *fmt, ...)
{
    char msg[600], *text;
    cJSON *o = cJSON_CreateObject();
    enum MHD_Result rc;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cJSON_AddStringToObject(o, "error", msg);
    cJSON_AddStringToObject(o, "message", msg); /* where Piston's clients read it */
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    rc = respond_text(conn, code, "application/json", text ? text : "{}", text ? strlen(text) : 2,
                      retry_after, 1, NULL);
    free(text);
    return rc;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* The Origin to echo in Access-Control-Allow-Origin: one --allow-origin
 * names exactly (CORS is off otherwise, loopback's included). */
static const char *cors_origin(const struct server *srv, struct MHD_Connection *conn)
{
    const char *origin = header(conn, "Origin");
    const char *p = srv->o->allow_origins;
    size_t n;

    if (!origin || !p)
        return NULL;
    n = strlen(origin);
    while (*p) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, origin, n) == 0)
            return origin;
        p += k + (p[k] == ',');
    }
    return NULL;
}

/* ---- the checks before the body ----------------------------------------------------- */

/* 1 when the request carries the token: Authorization: Bearer, or
 * X-Auth-Token (Judge0's clients). */
static int token_ok(struct server *srv, struct MHD_Connection *conn)
{
    const char *x = header(conn, "X-Auth-Token");
    char bearer[600];

    if (!srv->o->token)
        return 1;
    if (mcp_bearer_ok(header(conn, MHD_HTTP_HEADER_AUTHORIZATION), srv->token))
        return 1;
    if (!x || strlen(x) > 512)
        return 0;
    snprintf(bearer, sizeof(bearer), "Bearer %s", x);
    return mcp_bearer_ok(bearer, srv->token);
}

/* 1 when a request of method to url runs a call (admitted, counted). */
static int is_call(const char *method)
{
    return strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
           strcmp(method, "DELETE") == 0;
}

/* Admits a call: running below max_calls, else waiting below max_waiting
 * until one ends.  0 admitted; -1 the server is full (or stopping, or the
 * client hung up while it waited: its place goes to the next). */
static int admit_call(struct server *srv, struct req *r)
{
    int rc = 0;

    pthread_mutex_lock(&srv->mu);
    if (srv->running >= srv->o->max_calls) {
        if (srv->waiting >= srv->o->max_waiting) {
            rc = -1;
        } else {
            srv->waiting++;
            while (srv->running >= srv->o->max_calls && !llmsb_interrupted &&
                   atomic_load(&r->cancel) == SCHED_GO) {
                clock_cond_wait_ms(&srv->cv, &srv->mu, WATCH_MS);
                if (http_client_gone(r->fd))
                    atomic_store(&r->cancel, SCHED_CANCEL_ABORT);
            }
            srv->waiting--;
            rc = srv->running >= srv->o->max_calls || atomic_load(&r->cancel) != SCHED_GO ? -1 : 0;
        }
    }
    if (rc == 0) {
        srv->running++;
        r->admitted = 1;
    }
    pthread_mutex_unlock(&srv->mu);
    return rc;
}

static void release_call(struct server *srv, struct req *r)
{
    if (!r->admitted)
        return;
    pthread_mutex_lock(&srv->mu);
    srv->running--;
    r->admitted = 0;
    pthread_cond_broadcast(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
}

/* 1 for what any client may ask without the token: a liveness probe
 * (SandboxFusion's /v1/ping), the API's description, and a CORS preflight
 * (a browser never sends Authorization with one; it answers headers only). */
static int open_request(const char *method, const char *url)
{
    return strcmp(method, "OPTIONS") == 0 ||
           (strcmp(method, "GET") == 0 &&
            (strcmp(url, "/v1/ping") == 0 || strcmp(url, "/openapi.json") == 0));
}

/* The checks made on the headers; 0 when they pass, else the refusal was
 * queued (1) or could not be (-1). */
static int precheck(struct server *srv, struct MHD_Connection *conn, const char *method,
                    const char *url)
{
    const char *host = header(conn, MHD_HTTP_HEADER_HOST), *origin = header(conn, "Origin");
    const char *len = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    enum MHD_Result rc;
    long long n;
    int wait;

    if (srv->hs.loopback && !mcp_host_loopback(host))
        rc = refuse(conn, MHD_HTTP_FORBIDDEN, 0,
                    "Forbidden: the Host header is not a loopback name (DNS rebinding protection)");
    else if (!mcp_origin_ok(origin, srv->o->allow_origins))
        rc = refuse(conn, MHD_HTTP_FORBIDDEN, 0,
                    "Forbidden: Origin \"%.200s\" not allowed (loopback origins and "
                    "--allow-origin ones only)",
                    origin);
    else if (!open_request(method, url) && !token_ok(srv, conn))
        rc = refuse(conn, MHD_HTTP_UNAUTHORIZED, 0,
                    "Unauthorized: Authorization: Bearer (or X-Auth-Token) with the server's "
                    "token is required");
    else if (len && parse_ll(len, 0, (long long)srv->o->max_body, &n) != 0)
        rc = refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, 0,
                    "Content Too Large: Content-Length \"%.40s\" is over this server's %zu bytes "
                    "(--max-body)",
                    len, srv->o->max_body);
    else if (is_call(method) &&
             (wait = front_rate_take(srv->rate, ci ? ci->client_addr : NULL, clock_mono_ms())))
        rc = refuse(conn, MHD_HTTP_TOO_MANY_REQUESTS, wait,
                    "Too Many Requests: over %g calls a second from this address (--rate); try "
                    "again in %d s",
                    srv->o->rate, wait);
    else
        return 0;
    return rc == MHD_YES ? 1 : -1;
}

/* ---- a request and its call --------------------------------------------------------- */

static const char *query_arg(const struct front_req *fr, const char *name)
{
    return MHD_lookup_connection_value(fr->arg_ud, MHD_GET_ARGUMENT_KIND, name);
}

static struct req *req_new(struct server *srv, struct MHD_Connection *conn, const char *method,
                           const char *url)
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
    r->conn = conn;
    r->method = method;
    r->url = url;
    buf_init(&r->body, srv->o->max_body);
    pthread_mutex_init(&r->mu, NULL);
    atomic_init(&r->cancel, SCHED_GO);
    ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    r->fd = ci ? ci->connect_fd : -1;
    return r;
}

static void req_free(struct req *r)
{
    if (!r)
        return;
    if (r->th_started) {
        atomic_store(&r->cancel, SCHED_CANCEL_ABORT); /* a no-op once it ended */
        pthread_join(r->th, NULL);
    }
    release_call(r->srv, r);
    cJSON_Delete(r->ans.json);
    buf_release(&r->body);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* The route whose path it is answers r (on the call's thread). */
static void *call_main(void *arg)
{
    struct req *r = arg;
    struct front_call c = {r->srv->x, &r->cancel};
    struct front_host h;
    struct front_req fr = {r->method,   r->url,    r->body.data ? r->body.data : "",
                           r->body.len, query_arg, r->conn};
    int mine = 0;

    front_exec_host(&c, &h);
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]) && !mine; i++)
        mine = routes[i](&h, &fr, &r->ans);
    if (!mine)
        front_error(&r->ans, MHD_HTTP_NOT_FOUND,
                    "Not Found: %s %.200s is none of this server's routes (GET /openapi.json "
                    "lists them)",
                    r->method, r->url);
    pthread_mutex_lock(&r->mu);
    r->done = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* Runs the call and waits for its answer.  -1 when the client left (its
 * call was asked to stop) or no thread could start. */
static int run_call(struct req *r)
{
    int rc = 0;

    if (pthread_create(&r->th, NULL, call_main, r) != 0)
        return -1;
    r->th_started = 1;
    pthread_mutex_lock(&r->mu);
    while (!r->done && rc == 0) {
        clock_cond_wait_ms(&r->cv, &r->mu, WATCH_MS);
        if (!r->done && http_client_gone(r->fd)) {
            atomic_store(&r->cancel, SCHED_CANCEL_ABORT);
            rc = -1;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static enum MHD_Result answer(struct req *r)
{
    struct server *srv = r->srv;
    const char *origin = cors_origin(srv, r->conn);
    enum MHD_Result rc;
    char *text;

    if (r->too_big)
        return refuse(r->conn, MHD_HTTP_CONTENT_TOO_LARGE, 0,
                      "Content Too Large: the body is over this server's %zu bytes (--max-body)",
                      srv->o->max_body);
    if (strcmp(r->method, "OPTIONS") == 0) { /* a CORS preflight */
        struct MHD_Response *res;
        if (!origin)
            return refuse(r->conn, MHD_HTTP_FORBIDDEN, 0,
                          "Forbidden: cross-origin calls are off (--allow-origin)");
        res = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!res)
            return MHD_NO;
        MHD_add_response_header(res, "Access-Control-Allow-Origin", origin);
        MHD_add_response_header(res, "Access-Control-Allow-Methods", "GET, POST, DELETE");
        MHD_add_response_header(res, "Access-Control-Allow-Headers",
                                "Authorization, Content-Type, X-Auth-Token");
        MHD_add_response_header(res, "Access-Control-Max-Age", "600");
        MHD_add_response_header(res, MHD_HTTP_HEADER_VARY, "Origin");
        rc = MHD_queue_response(r->conn, MHD_HTTP_NO_CONTENT, res);
        MHD_destroy_response(res);
        return rc;
    }
    if (strcmp(r->method, "GET") == 0 && strcmp(r->url, "/openapi.json") == 0)
        return respond_text(r->conn, MHD_HTTP_OK, "application/json", front_openapi_json,
                            strlen(front_openapi_json), 0, 0, origin);
    if (is_call(r->method) && admit_call(srv, r) != 0) {
        if (atomic_load(&r->cancel) != SCHED_GO)
            return MHD_NO; /* it hung up while it waited */
        return refuse(r->conn, MHD_HTTP_TOO_MANY_REQUESTS, 1,
                      "Too Many Requests: %d calls run and %d wait (--max-calls, --max-waiting); "
                      "try again in a second",
                      srv->o->max_calls, srv->o->max_waiting);
    }
    if (run_call(r) != 0)
        return MHD_NO; /* the client left: its call was stopped */
    release_call(srv, r);
    if (!r->ans.json)
        front_error(&r->ans, MHD_HTTP_INTERNAL_SERVER_ERROR, "the route gave no answer");
    text = r->ans.json ? cJSON_PrintUnformatted(r->ans.json) : NULL;
    if (!text)
        return refuse(r->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, 0, "out of memory");
    /* a route may answer a bare JSON string (SandboxFusion's ping) */
    rc = respond_text(r->conn, r->ans.status ? (unsigned)r->ans.status : MHD_HTTP_OK,
                      "application/json", text, strlen(text), r->ans.retry_after_s,
                      r->ans.status == MHD_HTTP_TOO_MANY_REQUESTS, origin);
    free(text);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    struct server *srv = cls;
    struct req *r = *req_cls;

    (void)version;
    if (!r) { /* the headers: checked before any body is read */
        if (!(r = req_new(srv, conn, method, url)))
            return MHD_NO;
        *req_cls = r;
        r->open = open_request(method, url);
        return precheck(srv, conn, method, url) < 0 ? MHD_NO : MHD_YES;
    }
    if (*upload_size && r->open) {
        /* no one's token: its body is not kept (else anyone could hold
         * --max-body bytes per connection), and a long one is dropped */
        r->seen += *upload_size;
        *upload_size = 0;
        return r->seen > OPEN_BODY_MAX ? MHD_NO : MHD_YES;
    }
    if (*upload_size) {
        r->seen += *upload_size;
        if (!r->too_big && buf_append(&r->body, upload, *upload_size) != 0)
            r->too_big = 1;
        *upload_size = 0;
        /* a body without a length that goes on past twice the cap: the
         * connection is dropped rather than read to its end */
        return r->seen > 2 * srv->o->max_body ? MHD_NO : MHD_YES;
    }
    return answer(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    req_free(*req_cls);
    *req_cls = NULL;
}

/* ---- the server ------------------------------------------------------------------- */

int front_serve(const struct front_options *o, struct llmsb_err *err)
{
    struct server srv = {.o = o};
    int rc = 0, nomem = 0;

    if (o->token)
        mcp_token_hash(o->token, strlen(o->token), srv.token);
    pthread_mutex_init(&srv.mu, NULL);
    if (clock_cond_init(&srv.cv) != 0)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    srv.rate = front_rate_new(o->rate, o->burst, &nomem);
    if (nomem || !(srv.x = front_exec_new(o, err))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = http_serve_start(
             &srv.hs,
             &(struct http_serve_opts){.addr = o->http_addr,
                                       .token = o->token != NULL,
                                       .allow_no_token = o->allow_no_token,
                                       .token_from = "--token-file or LLMSB_HTTP_TOKEN",
                                       .connections = o->max_calls + o->max_waiting + SPARE_CONNS,
                                       .waiting_max = WAITING_MAX,
                                       .head_deadline_ms = FRONT_HEAD_DEADLINE_MS,
                                       .idle_s = FRONT_IDLE_S,
                                       .on_request = on_request,
                                       .on_completed = on_completed,
                                       .cls = &srv},
             err)) != 0)
        goto out;
    log_info("http: serving on %s (%s; %s)%s", srv.hs.url,
             o->queue_mode ? "jobs through Redis" : "jobs in this process",
             "SandboxFusion /run_code, Judge0 /submissions, Piston /api/v2/execute",
             o->token ? " (token required)" : "");
    while (!llmsb_interrupted)
        usleep(100 * 1000);
    http_serve_stop(&srv.hs); /* waits for the connections: their calls stop too */
out:
    front_exec_free(srv.x);
    front_rate_free(srv.rate);
    pthread_cond_destroy(&srv.cv);
    pthread_mutex_destroy(&srv.mu);
    return rc;
}
