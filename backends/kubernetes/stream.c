/* stream.c - the agent stream over a Kubernetes attach/exec WebSocket:
 * RFC 6455 by hand on a raw connection from http.c (Debian's libcurl 7.88
 * has no WebSocket).  Server frames are decoded incrementally and their
 * payloads streamed through, so a frame of any size up to the cap passes
 * whole and in order with bounded memory; our frames are masked and at
 * most 64 KiB. */
#include "stream.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backends/http/websocket.h"
#include "common/base64.h"
#include "common/random.h"

#define WS_CLIENT_FRAME_MAX ((size_t)64 << 10) /* payload of each frame we send */
#define RX_CHUNK ((size_t)64 << 10)            /* bytes taken from the connection at once */
#define STATUS_JSON_CAP ((size_t)64 << 10)     /* channel 3: a metav1.Status */
#define STATUS_MSG_CAP ((size_t)4 << 10)
#define PROTO_V5 "v5.channel.k8s.io"
#define PROTO_V4 "v4.channel.k8s.io"
#define CLOSE_NORMAL 1000

enum { CH_STDIN = 0, CH_STDOUT = 1, CH_STDERR = 2, CH_STATUS = 3 };

/* ---- the stream ---------------------------------------------------------- */

struct kubernetes_stream {
    struct backend_stream base;
    struct http_conn conn;
    struct ws_dec dec;
    int protocol;     /* 5 or 4 */
    int eof;          /* a close frame, the Status or a clean end came */
    int failed;       /* fail holds why; every later read returns it */
    int close_sent;   /* our close frame went out */
    int stdin_closed; /* v5: channel 0 closed */
    struct llmsb_err fail;
    uint64_t rng;         /* frame masks (no security boundary, never constant) */
    struct buf out;       /* stdout not yet read: at most one RX_CHUNK */
    struct buf status_js; /* channel 3 of the message being read */
    char *status;         /* the Status's message, NULL before it */
    int exit_code;
    char rx[RX_CHUNK];
    unsigned char tx[WS_MAX_HEADER + WS_CLIENT_FRAME_MAX];
};

static const struct backend_stream_ops kubernetes_stream_ops;

/* splitmix64 */
static uint64_t rng_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int rng_seed(struct kubernetes_stream *s, struct llmsb_err *err)
{
    return random_bytes(&s->rng, sizeof(s->rng), "k8s attach: the WebSocket masks' seed", err);
}

/* Sends one masked frame (FIN set) whose payload is pre then p. */
static int stream_send(struct kubernetes_stream *s, int opcode, const char *pre, size_t npre,
                       const char *p, size_t n, struct llmsb_err *err)
{
    unsigned char *h = s->tx, key[4];
    size_t len = npre + n, hl;
    uint64_t r = rng_next(&s->rng);

    if (len > WS_CLIENT_FRAME_MAX)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "k8s attach: a frame of %zu bytes", len);
    for (int i = 0; i < 4; i++)
        key[i] = (unsigned char)(r >> (8 * i));
    hl = ws_client_header(h, opcode, len, key);
    ws_mask_copy(h + hl, pre, npre, key, 0);
    ws_mask_copy(h + hl + npre, p, n, key, npre);
    return http_conn_send(&s->conn, (const char *)h, hl + len, err);
}

static int stream_send_close(struct kubernetes_stream *s, int code, struct llmsb_err *err)
{
    char pl[2] = {(char)(code >> 8), (char)code};

    s->close_sent = 1;
    return stream_send(s, WS_OP_CLOSE, pl, sizeof(pl), NULL, 0, err);
}

/* Remembers err as the stream's failure: later reads and writes return it. */
static int stream_fail(struct kubernetes_stream *s, struct llmsb_err *err)
{
    if (!err->code)
        err->code = LLMSB_ERR_BACKEND;
    s->failed = 1;
    s->fail = *err;
    return err->code;
}

static int status_exit_code(const cJSON *j)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(j, "details");
    const cJSON *cause;
    long long code;

    if (cJSON_IsString(st) && strcmp(st->valuestring, "Success") == 0)
        return 0;
    cJSON_ArrayForEach(cause, cJSON_GetObjectItemCaseSensitive(details, "causes")) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(cause, "reason");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(cause, "message");
        if (cJSON_IsString(r) && strcmp(r->valuestring, "ExitCode") == 0 && cJSON_IsString(m) &&
            parse_ll(m->valuestring, 0, 255, &code) == 0)
            return (int)code;
    }
    return -1;
}

/* The Status's message, else its status, else the text if it is not JSON. */
static const char *status_text(const cJSON *j, const struct buf *raw)
{
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(j, "message");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");

    if (cJSON_IsString(msg) && *msg->valuestring)
        return msg->valuestring;
    if (cJSON_IsString(st))
        return st->valuestring;
    return j || !raw->data ? "" : raw->data;
}

/* Channel 3 ended a message: the remote process is gone.  Keeps the
 * Status's message (or the text, if it is not JSON) and logs it. */
static void status_take(struct kubernetes_stream *s)
{
    struct buf *b = &s->status_js;
    cJSON *j = cJSON_ParseWithLength(b->data, b->len);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(j, "reason");
    const char *text = status_text(j, b);
    size_t tl = strnlen(text, STATUS_MSG_CAP);
    char line[STATUS_MSG_CAP + 128];
    int ok = cJSON_IsString(st) && strcmp(st->valuestring, "Success") == 0;

    free(s->status);
    s->status = xstrndup(text, tl);
    s->exit_code = j ? status_exit_code(j) : -1;
    if (!ok) {
        llmsb_fmt(line, sizeof(line), "k8s: %s%s%s%s: %.*s\n",
                  cJSON_IsString(st) ? st->valuestring : "status",
                  cJSON_IsString(reason) ? " (" : "",
                  cJSON_IsString(reason) ? reason->valuestring : "",
                  cJSON_IsString(reason) ? ")" : "", (int)tl, text);
        backend_stream_log(&s->base, line, strlen(line));
    }
    cJSON_Delete(j);
    buf_reset(b);
}

/* The server's close frame: answered with its code, then the stream ends. */
static void close_take(struct kubernetes_stream *s, const char *p, size_t n)
{
    struct llmsb_err e = {0};
    int code = n >= 2 ? (unsigned char)p[0] << 8 | (unsigned char)p[1] : CLOSE_NORMAL;
    char line[200];

    if (code != CLOSE_NORMAL) {
        llmsb_fmt(line, sizeof(line), "k8s: the server closed the stream: code %d %.*s\n", code,
                  (int)(n > 2 ? n - 2 : 0), p + 2);
        backend_stream_log(&s->base, line, strlen(line));
    }
    if (!s->close_sent)
        stream_send_close(s, code >= 1000 && code < 5000 ? code : CLOSE_NORMAL, &e);
}

static int on_event(void *ud, enum ws_event ev, int channel, const char *p, size_t n,
                    struct llmsb_err *err)
{
    struct kubernetes_stream *s = ud;

    switch (ev) {
    case WS_EV_DATA:
        if (channel == CH_STDOUT && buf_append(&s->out, p, n) != 0)
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "k8s attach: out of memory");
        if (channel == CH_STDERR)
            backend_stream_log(&s->base, p, n);
        if (channel == CH_STATUS)
            buf_append_some(&s->status_js, p, n);
        return 0;
    case WS_EV_END:
        if (channel != CH_STATUS || s->status_js.len == 0) /* the first frames are empty */
            return 0;
        status_take(s);
        return 1;
    case WS_EV_PING:
        return stream_send(s, WS_OP_PONG, p, n, NULL, 0, err)
                   ? llmsb_err_wrap(err, "k8s attach: pong")
                   : 0;
    case WS_EV_PONG:
        return 0;
    case WS_EV_CLOSE:
        close_take(s, p, n);
        return 1;
    }
    return 0;
}

/* Takes one read's worth from the connection through the decoder. */
static int stream_pull(struct kubernetes_stream *s, int wait_ms, struct llmsb_err *err)
{
    ssize_t got = http_conn_recv(&s->conn, s->rx, sizeof(s->rx), wait_ms, err);
    const char *cut;
    int rc;

    if (got == LLMSB_ERR_TIMEOUT)
        return LLMSB_ERR_TIMEOUT;
    if (got < 0) {
        llmsb_err_wrap(err, "k8s attach");
        return stream_fail(s, err);
    }
    if (got == 0) {
        if ((cut = ws_dec_cut(&s->dec)) == NULL) {
            s->eof = 1;
            return 0;
        }
        if (s->dec.in_frame)
            llmsb_err_set(err, LLMSB_ERR_BACKEND,
                          "k8s attach: the connection ended in the middle of a frame (%llu of "
                          "its %llu payload bytes missing)",
                          (unsigned long long)s->dec.left, (unsigned long long)s->dec.f.len);
        else
            llmsb_err_set(err, LLMSB_ERR_BACKEND,
                          "k8s attach: the connection ended in the middle of %s", cut);
        return stream_fail(s, err);
    }
    rc = ws_dec_feed(&s->dec, s->rx, (size_t)got, on_event, s, err);
    if (rc < 0 && s->dec.broken) /* the decoder's own: it names the fault only */
        llmsb_err_wrap(err, "k8s attach");
    if (rc > 0)
        s->eof = 1; /* what came after the Status or close frame is dropped */
    return rc < 0 ? stream_fail(s, err) : 0;
}

static int ms_left(int64_t deadline)
{
    int64_t now = clock_mono_ms();
    if (deadline < 0)
        return -1;
    return deadline > now ? (int)(deadline - now) : 0;
}

static ssize_t stream_read(struct backend_stream *bs, char *p, size_t n, int timeout_ms,
                           struct llmsb_err *err)
{
    struct kubernetes_stream *s = (struct kubernetes_stream *)bs;
    int64_t deadline = timeout_ms < 0 ? -1 : clock_mono_ms() + timeout_ms;
    struct llmsb_err local;
    int rc;

    if (!err)
        err = &local;
    while (s->out.len == 0) {
        if (s->failed) {
            *err = s->fail;
            return s->fail.code;
        }
        if (s->eof)
            return 0;
        rc = stream_pull(s, ms_left(deadline), err);
        /* frames without stdout (stderr, pings) do not extend the wait */
        if (rc == 0 && s->out.len == 0 && !s->eof && deadline >= 0 && ms_left(deadline) == 0)
            rc = LLMSB_ERR_TIMEOUT;
        if (rc == LLMSB_ERR_TIMEOUT)
            return llmsb_err_set(err, LLMSB_ERR_TIMEOUT, "k8s attach: no output in %d ms",
                                 timeout_ms);
        if (rc < 0)
            return rc;
    }
    size_t k = s->out.len < n ? s->out.len : n;
    memcpy(p, s->out.data, k);
    buf_consume(&s->out, k);
    return (ssize_t)k;
}

static int stream_write(struct backend_stream *bs, const char *p, size_t n, struct llmsb_err *err)
{
    struct kubernetes_stream *s = (struct kubernetes_stream *)bs;
    const char ch = CH_STDIN;
    struct llmsb_err local;

    if (!err)
        err = &local;
    if (s->failed) {
        *err = s->fail;
        return s->fail.code;
    }
    if (s->close_sent || s->stdin_closed)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "k8s attach: stdin: already closed");
    while (n > 0) {
        size_t k = n < WS_CLIENT_FRAME_MAX - 1 ? n : WS_CLIENT_FRAME_MAX - 1;
        if (stream_send(s, WS_OP_BINARY, &ch, 1, p, k, err) != 0) {
            llmsb_err_wrap(err, "k8s attach: stdin");
            return stream_fail(s, err); /* a frame may be cut: nothing more can go */
        }
        p += k;
        n -= k;
    }
    return 0;
}

int kubernetes_stream_close_stdin(struct backend_stream *bs, struct llmsb_err *err)
{
    struct kubernetes_stream *s = (struct kubernetes_stream *)bs;
    const char msg[2] = {(char)0xff, CH_STDIN};

    if (!s || s->base.ops != &kubernetes_stream_ops)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "k8s attach: not a Kubernetes stream");
    if (s->protocol < 5)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "k8s attach: %s cannot close stdin alone (needs %s)", PROTO_V4,
                             PROTO_V5);
    if (s->stdin_closed || s->close_sent)
        return 0;
    if (s->failed)
        return llmsb_err_set(err, s->fail.code, "%s", s->fail.msg);
    s->stdin_closed = 1;
    if (stream_send(s, WS_OP_BINARY, msg, sizeof(msg), NULL, 0, err) != 0) {
        llmsb_err_wrap(err, "k8s attach: close stdin");
        return stream_fail(s, err);
    }
    return 0;
}

static void stream_close(struct backend_stream *bs)
{
    struct kubernetes_stream *s = (struct kubernetes_stream *)bs;
    struct llmsb_err e = {0};

    if (!s)
        return;
    /* best effort: the server may be gone already */
    if (s->conn.curl && !s->failed && !s->close_sent) {
        if (s->protocol >= 5)
            kubernetes_stream_close_stdin(bs, &e);
        if (!s->failed)
            stream_send_close(s, CLOSE_NORMAL, &e);
    }
    http_conn_close(&s->conn);
    buf_release(&s->out);
    buf_release(&s->status_js);
    buf_release(&s->base.log);
    free(s->status);
    free(s);
}

static const struct backend_stream_ops kubernetes_stream_ops = {stream_read, stream_write,
                                                                stream_close};

/* http.c says "attach: ..." for what it saw on the connection. */
static int open_err(struct llmsb_err *err)
{
    char old[sizeof(err->msg)];

    if (strncmp(err->msg, "attach: ", 8) != 0)
        return llmsb_err_wrap(err, "k8s attach");
    memcpy(old, err->msg, sizeof(old));
    llmsb_fmt(err->msg, sizeof(err->msg), "k8s %s", old);
    return err->code;
}

/* The 101's headers: the upgrade, our key's accept and a protocol we offered. */
static int handshake_check(struct kubernetes_stream *s, const char *key, struct llmsb_err *err)
{
    char want[29], v[128], shown[160];

    if (s->conn.status != 101)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND,
                             "k8s attach: HTTP %ld where a WebSocket upgrade (101) was expected",
                             s->conn.status);
    http_conn_header(&s->conn, "Upgrade", v, sizeof(v));
    if (strcasecmp(v, "websocket") != 0) {
        llmsb_escape(shown, sizeof(shown), v, strlen(v));
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "k8s attach: the 101 upgrades to \"%s\", not websocket", shown);
    }
    ws_accept_key(key, want);
    http_conn_header(&s->conn, "Sec-WebSocket-Accept", v, sizeof(v));
    if (strcmp(v, want) != 0) {
        llmsb_escape(shown, sizeof(shown), v, strlen(v));
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "k8s attach: bad Sec-WebSocket-Accept \"%s\" (expected \"%s\")", shown,
                             want);
    }
    http_conn_header(&s->conn, "Sec-WebSocket-Protocol", v, sizeof(v));
    if (strcmp(v, PROTO_V5) == 0 || strcmp(v, PROTO_V4) == 0) {
        s->protocol = v[1] - '0';
        return 0;
    }
    llmsb_escape(shown, sizeof(shown), v, strlen(v));
    return llmsb_err_set(err, LLMSB_ERR_PROTO,
                         "k8s attach: the server chose subprotocol \"%s\" (we offered %s and %s)",
                         shown, PROTO_V5, PROTO_V4);
}

int kubernetes_stream_open(struct http_client *c, const char *path, struct backend_stream **out,
                           struct llmsb_err *err)
{
    struct kubernetes_stream *s = calloc(1, sizeof(*s));
    unsigned char nonce[16];
    char *key = NULL, hdrs[512];
    int rc;

    *out = NULL;
    if (!s)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "k8s attach: out of memory");
    s->base.ops = &kubernetes_stream_ops;
    s->exit_code = -1;
    buf_init(&s->base.log, BACKEND_STREAM_LOG_CAP);
    buf_init(&s->out, RX_CHUNK);
    buf_init(&s->status_js, STATUS_JSON_CAP);
    ws_dec_init(&s->dec, 1);
    s->conn.fd = -1;
    if ((rc = rng_seed(s, err)) != 0)
        goto out;
    for (size_t i = 0; i < sizeof(nonce); i++)
        nonce[i] = (unsigned char)rng_next(&s->rng);
    if (!(key = base64_encode(nonce, sizeof(nonce), NULL))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "k8s attach: out of memory");
        goto out;
    }
    snprintf(hdrs, sizeof(hdrs),
             "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
             "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Protocol: %s, %s\r\n",
             key, PROTO_V5, PROTO_V4);
    if ((rc = http_upgrade(c, path, hdrs, &s->conn, err)) != 0) {
        rc = open_err(err);
        goto out;
    }
    rc = handshake_check(s, key, err);
out:
    free(key);
    if (rc != 0) {
        s->failed = 1; /* nothing to say goodbye to */
        stream_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

int kubernetes_stream_protocol(const struct backend_stream *bs)
{
    const struct kubernetes_stream *s = (const struct kubernetes_stream *)bs;
    return s && s->base.ops == &kubernetes_stream_ops ? s->protocol : 0;
}

const char *kubernetes_stream_status(const struct backend_stream *bs)
{
    const struct kubernetes_stream *s = (const struct kubernetes_stream *)bs;
    return s && s->base.ops == &kubernetes_stream_ops && s->status ? s->status : "";
}

int kubernetes_stream_exit_code(const struct backend_stream *bs)
{
    const struct kubernetes_stream *s = (const struct kubernetes_stream *)bs;
    return s && s->base.ops == &kubernetes_stream_ops ? s->exit_code : -1;
}
