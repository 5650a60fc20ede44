/* stream.c - the agent stream over a Kubernetes attach/exec WebSocket:
 * RFC 6455 by hand on a raw connection from http.c (Debian's libcurl 7.88
 * has no WebSocket).  Server frames are decoded incrementally and their
 * payloads streamed through, so a frame of any size up to the cap passes
 * whole and in order with bounded memory; our frames are masked and at
 * most 64 KiB. */
#include "stream.h"

#include <cjson/cJSON.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/base64.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11" /* RFC 6455 1.3 */
#define RX_CHUNK ((size_t)64 << 10)                    /* bytes taken from the connection at once */
#define STATUS_JSON_CAP ((size_t)64 << 10)             /* channel 3: a metav1.Status */
#define STATUS_MSG_CAP ((size_t)4 << 10)
#define PROTO_V5 "v5.channel.k8s.io"
#define PROTO_V4 "v4.channel.k8s.io"
#define CLOSE_NORMAL 1000

enum { CH_STDIN = 0, CH_STDOUT = 1, CH_STDERR = 2, CH_STATUS = 3 };

/* ---- frame parsing ------------------------------------------------------- */

int ws_frame_parse(const char *p, size_t n, struct ws_frame *f, size_t *used, struct llmsb_err *err)
{
    const unsigned char *u = (const unsigned char *)p;
    size_t need = 2;
    uint64_t len;
    int op;

    if (n < 2)
        return 0;
    op = u[0] & 0x0f;
    if (u[0] & 0x70)
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "k8s attach: a frame with reserved bits set (first byte 0x%02x)",
                             u[0]);
    if ((op > WS_OP_BINARY && op < WS_OP_CLOSE) || op > WS_OP_PONG)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "k8s attach: a frame with reserved opcode %d",
                             op);
    if (u[1] & 0x80)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "k8s attach: a masked frame from the server");
    len = u[1] & 0x7f;
    need = len == 126 ? 4 : len == 127 ? 10 : 2;
    if (n < need)
        return 0;
    if (len == 126) {
        len = (uint64_t)u[2] << 8 | u[3];
    } else if (len == 127) {
        len = 0;
        for (size_t i = 2; i < 10; i++)
            len = len << 8 | u[i];
    }
    if (op >= WS_OP_CLOSE && (!(u[0] & 0x80) || len > WS_MAX_CONTROL))
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "k8s attach: a control frame (opcode %d) %s", op,
                             len > WS_MAX_CONTROL ? "over 125 bytes" : "that is fragmented");
    if (len > WS_MAX_PAYLOAD)
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "k8s attach: a frame of %llu bytes (the cap is %llu)",
                             (unsigned long long)len, (unsigned long long)WS_MAX_PAYLOAD);
    f->fin = (u[0] & 0x80) != 0;
    f->opcode = op;
    f->len = len;
    *used = need;
    return 1;
}

/* ---- incremental decoding ------------------------------------------------ */

void ws_dec_init(struct ws_dec *d)
{
    memset(d, 0, sizeof(*d));
    d->channel = -1;
}

static int dec_fail(struct ws_dec *d, struct llmsb_err *err, const char *what)
{
    d->broken = 1;
    return llmsb_err_set(err, LLMSB_ERR_PROTO, "k8s attach: %s", what);
}

/* Takes a frame header from *p (joining a cut one).  Returns 1 when a frame
 * begins (d->f set), 0 when all of *p went into a partial header, or <0. */
static int dec_header(struct ws_dec *d, const char **p, size_t *n, struct llmsb_err *err)
{
    size_t used = 0, old = d->hdr_len, take;
    int rc;

    if (old == 0) {
        rc = ws_frame_parse(*p, *n, &d->f, &used, err);
        if (rc == 0) { /* *n < 10 here */
            memcpy(d->hdr, *p, *n);
            d->hdr_len = *n;
            *n = 0;
        }
    } else {
        take = sizeof(d->hdr) - old < *n ? sizeof(d->hdr) - old : *n;
        memcpy(d->hdr + old, *p, take);
        rc = ws_frame_parse((const char *)d->hdr, old + take, &d->f, &used, err);
        if (rc == 0) {
            d->hdr_len = old + take;
            *n = 0;
        } else if (rc == 1) {
            used -= old; /* the part that came from *p */
        }
    }
    if (rc < 0) {
        d->broken = 1;
        return rc;
    }
    if (rc == 1) {
        *p += used;
        *n -= used;
        d->hdr_len = 0;
    }
    return rc;
}

/* Checks where the new frame d->f falls among messages and starts it. */
static int dec_begin(struct ws_dec *d, struct llmsb_err *err)
{
    if (d->f.opcode == WS_OP_CONT) {
        if (!d->in_message)
            return dec_fail(d, err, "a continuation frame outside a fragmented message");
    } else if (d->f.opcode < WS_OP_CLOSE) {
        if (d->in_message)
            return dec_fail(d, err, "a new message inside a fragmented one");
        d->in_message = 1;
        d->channel = -1;
    }
    d->ctl_len = 0;
    d->left = d->f.len;
    d->in_frame = 1;
    return 0;
}

static int dec_end(struct ws_dec *d, ws_event_cb cb, void *ud, struct llmsb_err *err)
{
    static const enum ws_event ctl_ev[] = {WS_EV_CLOSE, WS_EV_PING, WS_EV_PONG};
    int ch = d->channel;

    d->in_frame = 0;
    if (d->f.opcode >= WS_OP_CLOSE)
        return cb(ud, ctl_ev[d->f.opcode - WS_OP_CLOSE], -1, d->ctl, d->ctl_len, err);
    if (!d->f.fin)
        return 0;
    d->in_message = 0;
    d->channel = -1;
    return cb(ud, WS_EV_END, ch, NULL, 0, err);
}

/* Passes up to *n payload bytes of the current frame on. */
static int dec_payload(struct ws_dec *d, const char **p, size_t *n, ws_event_cb cb, void *ud,
                       struct llmsb_err *err)
{
    size_t take = d->left < *n ? (size_t)d->left : *n;
    const char *q = *p;
    int rc = 0;

    *p += take;
    *n -= take;
    d->left -= take;
    if (d->f.opcode >= WS_OP_CLOSE) {
        memcpy(d->ctl + d->ctl_len, q, take); /* len <= 125 was checked */
        d->ctl_len += take;
        return 0;
    }
    if (take && d->channel < 0) {
        d->channel = (unsigned char)*q++;
        take--;
    }
    if (take)
        rc = cb(ud, WS_EV_DATA, d->channel, q, take, err);
    return rc;
}

int ws_dec_feed(struct ws_dec *d, const char *p, size_t n, ws_event_cb cb, void *ud,
                struct llmsb_err *err)
{
    int rc;

    if (d->broken)
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "k8s attach: the stream is unusable after a protocol error");
    while (n > 0 || (d->in_frame && d->left == 0)) {
        if (!d->in_frame) {
            if ((rc = dec_header(d, &p, &n, err)) <= 0)
                return rc;
            if ((rc = dec_begin(d, err)) != 0)
                return rc;
        }
        if ((rc = dec_payload(d, &p, &n, cb, ud, err)) != 0)
            return rc;
        if (d->left == 0 && (rc = dec_end(d, cb, ud, err)) != 0)
            return rc;
    }
    return 0;
}

const char *ws_dec_cut(const struct ws_dec *d)
{
    if (d->hdr_len)
        return "a frame header";
    if (d->in_frame)
        return "a frame";
    if (d->in_message)
        return "a fragmented message";
    return NULL;
}

void ws_accept_key(const char *key, char out[29])
{
    unsigned char md[SHA_DIGEST_LENGTH];
    char in[128];
    char *b64;

    snprintf(in, sizeof(in), "%s%s", key, WS_GUID);
    SHA1((const unsigned char *)in, strlen(in), md);
    b64 = base64_encode(md, sizeof(md), NULL);
    snprintf(out, 29, "%s", b64 ? b64 : "");
    free(b64);
}

/* ---- the stream ---------------------------------------------------------- */

struct k8s_stream {
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

static const struct backend_stream_ops k8s_stream_ops;

/* splitmix64 */
static uint64_t rng_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(struct k8s_stream *s)
{
    if (getrandom(&s->rng, sizeof(s->rng), GRND_NONBLOCK) != (ssize_t)sizeof(s->rng))
        s->rng = (uint64_t)clock_mono_us() ^ (uint64_t)(uintptr_t)s ^ (uint64_t)getpid() << 40;
}

static void mask_copy(unsigned char *dst, const char *src, size_t n, const unsigned char key[4],
                      size_t off)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (unsigned char)src[i] ^ key[(off + i) & 3];
}

/* Sends one masked frame (FIN set) whose payload is pre then p. */
static int ks_send(struct k8s_stream *s, int opcode, const char *pre, size_t npre, const char *p,
                   size_t n, struct llmsb_err *err)
{
    unsigned char *h = s->tx, key[4];
    size_t len = npre + n, hl;
    uint64_t r = rng_next(&s->rng);

    if (len > WS_CLIENT_FRAME_MAX)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "k8s attach: a frame of %zu bytes", len);
    h[0] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        h[1] = (unsigned char)(0x80 | len);
        hl = 2;
    } else if (len <= 0xffff) {
        h[1] = 0x80 | 126;
        h[2] = (unsigned char)(len >> 8);
        h[3] = (unsigned char)len;
        hl = 4;
    } else {
        h[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++)
            h[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
        hl = 10;
    }
    for (int i = 0; i < 4; i++)
        key[i] = (unsigned char)(r >> (8 * i));
    memcpy(h + hl, key, 4);
    hl += 4;
    mask_copy(h + hl, pre, npre, key, 0);
    mask_copy(h + hl + npre, p, n, key, npre);
    return http_conn_send(&s->conn, (const char *)h, hl + len, err);
}

static int ks_send_close(struct k8s_stream *s, int code, struct llmsb_err *err)
{
    char pl[2] = {(char)(code >> 8), (char)code};

    s->close_sent = 1;
    return ks_send(s, WS_OP_CLOSE, pl, sizeof(pl), NULL, 0, err);
}

/* Remembers err as the stream's failure: later reads and writes return it. */
static int ks_fail(struct k8s_stream *s, struct llmsb_err *err)
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
static void status_take(struct k8s_stream *s)
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
static void close_take(struct k8s_stream *s, const char *p, size_t n)
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
        ks_send_close(s, code >= 1000 && code < 5000 ? code : CLOSE_NORMAL, &e);
}

static int on_event(void *ud, enum ws_event ev, int channel, const char *p, size_t n,
                    struct llmsb_err *err)
{
    struct k8s_stream *s = ud;

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
        return ks_send(s, WS_OP_PONG, p, n, NULL, 0, err) ? llmsb_err_wrap(err, "k8s attach: pong")
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
static int ks_pull(struct k8s_stream *s, int wait_ms, struct llmsb_err *err)
{
    ssize_t got = http_conn_recv(&s->conn, s->rx, sizeof(s->rx), wait_ms, err);
    const char *cut;
    int rc;

    if (got == LLMSB_ERR_TIMEOUT)
        return LLMSB_ERR_TIMEOUT;
    if (got < 0) {
        llmsb_err_wrap(err, "k8s attach");
        return ks_fail(s, err);
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
        return ks_fail(s, err);
    }
    rc = ws_dec_feed(&s->dec, s->rx, (size_t)got, on_event, s, err);
    if (rc > 0)
        s->eof = 1; /* what came after the Status or close frame is dropped */
    return rc < 0 ? ks_fail(s, err) : 0;
}

static int ms_left(int64_t deadline)
{
    int64_t now = clock_mono_ms();
    if (deadline < 0)
        return -1;
    return deadline > now ? (int)(deadline - now) : 0;
}

static ssize_t ks_read(struct backend_stream *bs, char *p, size_t n, int timeout_ms,
                       struct llmsb_err *err)
{
    struct k8s_stream *s = (struct k8s_stream *)bs;
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
        rc = ks_pull(s, ms_left(deadline), err);
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

static int ks_write(struct backend_stream *bs, const char *p, size_t n, struct llmsb_err *err)
{
    struct k8s_stream *s = (struct k8s_stream *)bs;
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
        if (ks_send(s, WS_OP_BINARY, &ch, 1, p, k, err) != 0) {
            llmsb_err_wrap(err, "k8s attach: stdin");
            return ks_fail(s, err); /* a frame may be cut: nothing more can go */
        }
        p += k;
        n -= k;
    }
    return 0;
}

int k8s_stream_close_stdin(struct backend_stream *bs, struct llmsb_err *err)
{
    struct k8s_stream *s = (struct k8s_stream *)bs;
    const char msg[2] = {(char)0xff, CH_STDIN};

    if (!s || s->base.ops != &k8s_stream_ops)
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
    if (ks_send(s, WS_OP_BINARY, msg, sizeof(msg), NULL, 0, err) != 0) {
        llmsb_err_wrap(err, "k8s attach: close stdin");
        return ks_fail(s, err);
    }
    return 0;
}

static void ks_close(struct backend_stream *bs)
{
    struct k8s_stream *s = (struct k8s_stream *)bs;
    struct llmsb_err e = {0};

    if (!s)
        return;
    /* best effort: the server may be gone already */
    if (s->conn.curl && !s->failed && !s->close_sent) {
        if (s->protocol >= 5)
            k8s_stream_close_stdin(bs, &e);
        if (!s->failed)
            ks_send_close(s, CLOSE_NORMAL, &e);
    }
    http_conn_close(&s->conn);
    buf_release(&s->out);
    buf_release(&s->status_js);
    buf_release(&s->base.log);
    free(s->status);
    free(s);
}

static const struct backend_stream_ops k8s_stream_ops = {ks_read, ks_write, ks_close};

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
static int handshake_check(struct k8s_stream *s, const char *key, struct llmsb_err *err)
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

int k8s_stream_open(struct http_client *c, const char *path, struct backend_stream **out,
                    struct llmsb_err *err)
{
    struct k8s_stream *s = calloc(1, sizeof(*s));
    unsigned char nonce[16];
    char *key = NULL, hdrs[512];
    int rc;

    *out = NULL;
    if (!s)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "k8s attach: out of memory");
    s->base.ops = &k8s_stream_ops;
    s->exit_code = -1;
    buf_init(&s->base.log, BACKEND_STREAM_LOG_CAP);
    buf_init(&s->out, RX_CHUNK);
    buf_init(&s->status_js, STATUS_JSON_CAP);
    ws_dec_init(&s->dec);
    rng_seed(s);
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
    s->conn.fd = -1;
    if ((rc = http_upgrade(c, path, hdrs, &s->conn, err)) != 0) {
        rc = open_err(err);
        goto out;
    }
    rc = handshake_check(s, key, err);
out:
    free(key);
    if (rc != 0) {
        s->failed = 1; /* nothing to say goodbye to */
        ks_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

int k8s_stream_protocol(const struct backend_stream *bs)
{
    const struct k8s_stream *s = (const struct k8s_stream *)bs;
    return s && s->base.ops == &k8s_stream_ops ? s->protocol : 0;
}

const char *k8s_stream_status(const struct backend_stream *bs)
{
    const struct k8s_stream *s = (const struct k8s_stream *)bs;
    return s && s->base.ops == &k8s_stream_ops && s->status ? s->status : "";
}

int k8s_stream_exit_code(const struct backend_stream *bs)
{
    const struct k8s_stream *s = (const struct k8s_stream *)bs;
    return s && s->base.ops == &k8s_stream_ops ? s->exit_code : -1;
}
