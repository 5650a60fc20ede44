/* test_k8s_stream.c - the Kubernetes attach WebSocket stream, and its frame
 * decoder under every split.  The server here is a TEST DOUBLE of the API
 * server's attach endpoint (a small RFC 6455 server in a thread on
 * 127.0.0.1): it produces on demand what a real one cannot - frames cut at
 * any byte, masked or fragmented frames, a connection dropped mid-frame -
 * and checks the frames the stream sends it. */
#include "test.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/sha.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "backends/http/websocket.h"
#include "backends/kubernetes/stream.h"
#include "common/base64.h"

#define PATH "/api/v1/namespaces/llmsb/pods/p1/attach?container=agent&stdin=true&stdout=true"
#define V5 "v5.channel.k8s.io"
#define V4 "v4.channel.k8s.io"
#define MiB ((size_t)1 << 20)

/* ---- server frames ------------------------------------------------------- */

enum { F_MASK = 1, F_LEN64 = 2, F_RSV1 = 4 };

/* Appends a frame as a server sends it: payload [channel] (none when
 * channel < 0) then p[0..n); flags add faults or a long length form. */
static void sframe(struct buf *b, int fin, int op, int channel, const void *p, size_t n, int flags)
{
    unsigned char h[14], key[4] = {0x12, 0x34, 0x56, 0x78};
    size_t len = n + (channel >= 0), hl = 2;

    h[0] = (unsigned char)((fin ? 0x80 : 0) | (flags & F_RSV1 ? 0x40 : 0) | op);
    h[1] = flags & F_MASK ? 0x80 : 0;
    if (len < 126 && !(flags & F_LEN64)) {
        h[1] |= (unsigned char)len;
    } else if (len <= 0xffff && !(flags & F_LEN64)) {
        h[1] |= 126;
        h[2] = (unsigned char)(len >> 8);
        h[3] = (unsigned char)len;
        hl = 4;
    } else {
        h[1] |= 127;
        for (int i = 0; i < 8; i++)
            h[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
        hl = 10;
    }
    if (flags & F_MASK) {
        memcpy(h + hl, key, 4);
        hl += 4;
    }
    buf_append(b, h, hl);
    size_t at = b->len;
    if (channel >= 0) {
        unsigned char c = (unsigned char)channel;
        buf_append(b, &c, 1);
    }
    buf_append(b, p, n);
    for (size_t i = 0; (flags & F_MASK) && i < len; i++)
        b->data[at + i] ^= (char)key[i & 3];
}

/* A data frame (FIN, binary) on channel ch. */
static void chan(struct buf *b, int ch, const char *s)
{
    sframe(b, 1, WS_OP_BINARY, ch, s, strlen(s), 0);
}

/* ---- the test double ----------------------------------------------------- */

struct srv;
typedef void (*srv_script)(struct srv *v, int fd);

struct srv {
    int lfd, port;
    pthread_t th;
    /* how it answers */
    const char *proto;  /* Sec-WebSocket-Protocol; NULL: none */
    int bad_accept;     /* a wrong Sec-WebSocket-Accept */
    const char *answer; /* a whole non-101 answer instead */
    struct buf early;   /* frames sent in the same write as the 101 head */
    struct buf frames;  /* then these, cut into pieces of 1..split bytes (0: whole) */
    size_t split;
    srv_script script; /* then this (NULL: end the connection) */
    /* what it saw */
    char offered[256]; /* the client's Sec-WebSocket-Protocol */
    char path[512];
    struct buf seq;   /* client frames: D data (runs as one), S stdin close, C close, P pong */
    struct buf got;   /* stdin bytes */
    struct buf pong;  /* the last pong's payload */
    int ndata;        /* stdin frames */
    int unmasked;     /* frames without a mask */
    int bad_channel;  /* data frames not on channel 0 */
    int mask_changes; /* frames whose key differs from the one before */
    size_t max_payload;
    int close_code;
};

static int read_full(int fd, void *p, size_t n)
{
    char *q = p;
    while (n > 0) {
        ssize_t k = recv(fd, q, n, 0);
        if (k <= 0)
            return -1;
        q += k;
        n -= (size_t)k;
    }
    return 0;
}

static int send_full(int fd, const void *p, size_t n)
{
    const char *q = p;
    while (n > 0) {
        ssize_t k = send(fd, q, n, MSG_NOSIGNAL);
        if (k <= 0)
            return -1;
        q += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Sends b in pieces of 1..split bytes (a fixed pseudo-random sequence). */
static void send_cut(int fd, const struct buf *b, size_t split)
{
    uint32_t r = 12345;
    for (size_t at = 0; at < b->len;) {
        size_t k = b->len - at;
        r = r * 1103515245u + 12345u;
        if (split && k > 1 + (r >> 8) % split)
            k = 1 + (r >> 8) % split;
        if (send_full(fd, b->data + at, k) != 0)
            return;
        at += k;
    }
}

struct cframe {
    int fin, op, masked;
    unsigned char key[4];
    struct buf pl;
};

/* Reads one client frame, unmasked. */
static int cframe_read(int fd, struct cframe *f)
{
    unsigned char h[8];
    uint64_t len;

    if (read_full(fd, h, 2) != 0)
        return -1;
    f->fin = h[0] >> 7;
    f->op = h[0] & 15;
    f->masked = h[1] >> 7;
    len = h[1] & 127;
    if (len == 126) {
        if (read_full(fd, h, 2) != 0)
            return -1;
        len = (uint64_t)h[0] << 8 | h[1];
    } else if (len == 127) {
        if (read_full(fd, h, 8) != 0)
            return -1;
        len = 0;
        for (int i = 0; i < 8; i++)
            len = len << 8 | h[i];
    }
    if (len > 8 * MiB)
        return -1;
    memset(f->key, 0, 4);
    if (f->masked && read_full(fd, f->key, 4) != 0)
        return -1;
    buf_reset(&f->pl);
    char *p = malloc(len + 1);
    if (!p || read_full(fd, p, len) != 0) {
        free(p);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        p[i] ^= (char)f->key[i & 3];
    buf_append(&f->pl, p, len);
    free(p);
    return 0;
}

static void seq_add(struct srv *v, char c)
{
    if (c == 'D' && v->seq.len && v->seq.data[v->seq.len - 1] == 'D')
        return;
    buf_append(&v->seq, &c, 1);
}

static void note_frame(struct srv *v, const struct cframe *f, const unsigned char last[4],
                       int first)
{
    unsigned char *d = (unsigned char *)f->pl.data;

    v->unmasked += !f->masked;
    v->mask_changes += !first && memcmp(f->key, last, 4) != 0;
    if (f->pl.len > v->max_payload)
        v->max_payload = f->pl.len;
    if (f->op == WS_OP_BINARY && f->pl.len == 2 && d[0] == 0xff && d[1] == 0) {
        seq_add(v, 'S');
    } else if (f->op == WS_OP_BINARY && f->pl.len >= 1) {
        v->bad_channel += d[0] != 0;
        v->ndata++;
        buf_append(&v->got, d + 1, f->pl.len - 1);
        seq_add(v, 'D');
    } else if (f->op == WS_OP_CLOSE) {
        v->close_code = f->pl.len >= 2 ? d[0] << 8 | d[1] : -1;
        seq_add(v, 'C');
    } else if (f->op == WS_OP_PONG) {
        buf_reset(&v->pong);
        buf_append(&v->pong, d, f->pl.len);
        seq_add(v, 'P');
    } else {
        seq_add(v, '?');
    }
}

/* Records the client's frames until its close frame (or a pong, with
 * until_pong) or the end of the connection. */
static void srv_recv(struct srv *v, int fd, int until_pong)
{
    struct cframe f = {0};
    unsigned char last[4] = {0};
    int first = 1;

    buf_init(&f.pl, 16 * MiB);
    while (cframe_read(fd, &f) == 0) {
        note_frame(v, &f, last, first);
        memcpy(last, f.key, 4);
        first = 0;
        if (f.op == WS_OP_CLOSE || (until_pong && f.op == WS_OP_PONG))
            break;
    }
    buf_release(&f.pl);
}

static void script_recv(struct srv *v, int fd)
{
    srv_recv(v, fd, 0);
}

/* The pong, then the end of the server's side; still records the rest. */
static void script_pong_then_end(struct srv *v, int fd)
{
    srv_recv(v, fd, 1);
    shutdown(fd, SHUT_WR);
    srv_recv(v, fd, 0);
}

/* The value of header name in the request head h. */
static void req_header(const char *h, const char *name, char *out, size_t outsz)
{
    size_t nl = strlen(name);
    out[0] = '\0';
    for (const char *p = strstr(h, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
            const char *val = p + 3 + nl + strspn(p + 3 + nl, " ");
            snprintf(out, outsz, "%.*s", (int)strcspn(val, "\r\n"), val);
            return;
        }
    }
}

static void srv_answer(struct srv *v, int fd, const char *req)
{
    char key[128], in[200], *acc;
    unsigned char md[SHA_DIGEST_LENGTH];
    struct buf a;

    buf_init(&a, 0);
    sscanf(req, "GET %511s", v->path);
    req_header(req, "Sec-WebSocket-Protocol", v->offered, sizeof(v->offered));
    req_header(req, "Sec-WebSocket-Key", key, sizeof(key));
    snprintf(in, sizeof(in), "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    SHA1((unsigned char *)in, strlen(in), md);
    if (v->bad_accept)
        md[0] ^= 1;
    acc = base64_encode(md, sizeof(md), NULL);
    if (v->answer)
        buf_append_str(&a, v->answer);
    else
        buf_printf(&a,
                   "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n%s%s%s\r\n",
                   acc, v->proto ? "Sec-WebSocket-Protocol: " : "", v->proto ? v->proto : "",
                   v->proto ? "\r\n" : "");
    buf_append(&a, v->early.data, v->early.len); /* one write: one segment */
    send_full(fd, a.data, a.len);
    free(acc);
    buf_release(&a);
}

static void *srv_main(void *arg)
{
    struct srv *v = arg;
    struct pollfd pf = {v->lfd, POLLIN, 0};
    struct timeval tv = {10, 0};
    char req[16384], junk[4096];
    size_t n = 0;
    int fd, one = 1;

    if (poll(&pf, 1, 10000) != 1 || (fd = accept(v->lfd, NULL, NULL)) < 0)
        return NULL;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    while (n < sizeof(req) - 1) { /* the head: byte by byte, nothing past it */
        if (recv(fd, req + n, 1, 0) != 1)
            break;
        req[++n] = '\0';
        if (n >= 4 && memcmp(req + n - 4, "\r\n\r\n", 4) == 0) {
            srv_answer(v, fd, req);
            send_cut(fd, &v->frames, v->split);
            if (v->script)
                v->script(v, fd);
            break;
        }
    }
    shutdown(fd, SHUT_WR); /* then wait for the client to go: no RST */
    while (recv(fd, junk, sizeof(junk), 0) > 0)
        ;
    close(fd);
    return NULL;
}

/* A server, on the heap: a test that fails early leaves it to its thread,
 * which gives up on its own (10 s timeouts). */
static struct srv *srv_new(const char *proto)
{
    struct srv *v = calloc(1, sizeof(*v));

    v->lfd = -1;
    v->proto = proto;
    buf_init(&v->early, 0);
    buf_init(&v->frames, 0);
    buf_init(&v->seq, 0);
    buf_init(&v->got, 0);
    buf_init(&v->pong, 0);
    return v;
}

static int srv_start(struct srv *v)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);

    if ((v->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(v->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(v->lfd, 1) != 0 ||
        getsockname(v->lfd, (struct sockaddr *)&a, &al) != 0)
        return -1;
    v->port = ntohs(a.sin_port);
    return pthread_create(&v->th, NULL, srv_main, v) == 0 ? 0 : -1;
}

static void srv_join(struct srv *v)
{
    pthread_join(v->th, NULL);
    close(v->lfd);
}

static void srv_free(struct srv *v)
{
    buf_release(&v->early);
    buf_release(&v->frames);
    buf_release(&v->seq);
    buf_release(&v->got);
    buf_release(&v->pong);
    free(v);
}

/* ---- the client side ----------------------------------------------------- */

struct cli {
    struct http_client c;
    struct backend_stream *s;
    struct llmsb_err err;
    int rc;
};

static int cli_open(struct cli *k, struct srv *v)
{
    char host[64];

    memset(k, 0, sizeof(*k));
    if (srv_start(v) != 0)
        return -1;
    snprintf(host, sizeof(host), "tcp://127.0.0.1:%d", v->port);
    if (http_client_init(&k->c, host, "", &k->err) != 0)
        return -1;
    k->rc = kubernetes_stream_open(&k->c, PATH, &k->s, &k->err);
    return k->rc;
}

static void cli_close(struct cli *k, struct srv *v)
{
    if (k->s)
        k->s->ops->close(k->s);
    k->s = NULL;
    http_client_release(&k->c);
    srv_join(v);
}

/* Reads until EOF or an error, chunk bytes at a time, into out; returns the
 * last read's result. */
static ssize_t read_all(struct cli *k, struct buf *out, size_t chunk)
{
    char *p = malloc(chunk);
    ssize_t n;

    while ((n = k->s->ops->read(k->s, p, chunk, 5000, &k->err)) > 0)
        buf_append(out, p, (size_t)n);
    free(p);
    return n;
}

/* Reads exactly n bytes (reads may return fewer); the count or the failing
 * read's result. */
static ssize_t read_n(struct cli *k, char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = k->s->ops->read(k->s, p + got, n - got, 5000, &k->err);
        if (r <= 0)
            return r;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* ---- handshake ------------------------------------------------------------ */

TEST(handshake_picks_v5)
{
    struct srv *v;
    struct cli k;

    v = srv_new(V5);
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(kubernetes_stream_protocol(k.s), 5);
    ASSERT_STR(kubernetes_stream_status(k.s), "");
    ASSERT_EQ(kubernetes_stream_exit_code(k.s), -1);
    cli_close(&k, v);
    ASSERT_STR(v->offered, V5 ", " V4);
    ASSERT_STR(v->path, PATH);
    srv_free(v);
}

TEST(handshake_picks_v4)
{
    struct srv *v;
    struct cli k;

    v = srv_new(V4);
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(kubernetes_stream_protocol(k.s), 4);
    cli_close(&k, v);
    srv_free(v);
}

TEST(handshake_refuses_bad_accept)
{
    struct srv *v;
    struct cli k;

    v = srv_new(V5);
    v->bad_accept = 1;
    ASSERT_EQ(cli_open(&k, v), LLMSB_ERR_PROTO);
    ASSERT(k.s == NULL);
    ASSERT_CONTAINS(k.err.msg, "k8s attach: bad Sec-WebSocket-Accept");
    cli_close(&k, v);
    srv_free(v);
}

TEST(handshake_refuses_missing_protocol)
{
    struct srv *v;
    struct cli k;

    v = srv_new(NULL);
    ASSERT_EQ(cli_open(&k, v), LLMSB_ERR_PROTO);
    ASSERT_CONTAINS(k.err.msg, "chose subprotocol \"\"");
    cli_close(&k, v);
    srv_free(v);
}

TEST(handshake_http_error_names_status)
{
    struct srv *v;
    struct cli k;

    v = srv_new(V5);
    v->answer = "HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n"
                "{\"kind\":\"Status\",\"message\":\"pods \\\"p1\\\" is forbidden\"}";
    ASSERT(cli_open(&k, v) < 0);
    ASSERT_CONTAINS(k.err.msg, "k8s attach: HTTP 403");
    ASSERT_CONTAINS(k.err.msg, "is forbidden");
    cli_close(&k, v);
    srv_free(v);

    v = srv_new(V5);
    v->answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    ASSERT(cli_open(&k, v) < 0);
    ASSERT_CONTAINS(k.err.msg, "k8s attach: HTTP 200 where a WebSocket upgrade (101)");
    cli_close(&k, v);
    srv_free(v);
}

/* ---- reading ---------------------------------------------------------------- */

static void fill_pattern(char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)('a' + (i * 7 + seed + i / 251) % 26);
}

TEST(stdout_many_small_frames_in_order)
{
    struct srv *v;
    struct cli k;
    struct buf want, got;
    char tmp[40000];

    v = srv_new(V5);
    buf_init(&want, 0);
    buf_init(&got, 0);
    /* what a server sends first: empty frames, with the 101 head */
    for (int ch = 1; ch <= 3; ch++)
        sframe(&v->early, 1, WS_OP_BINARY, ch, "", 0, 0);
    chan(&v->early, 1, "first ");
    buf_append_str(&want, "first ");
    for (unsigned i = 0; i < 6000; i++) {
        size_t n = i % 500 == 499 ? sizeof(tmp) : (i * 7919u) % 257; /* 16-bit lengths too */
        fill_pattern(tmp, n, i);
        sframe(&v->frames, 1, WS_OP_BINARY, 1, tmp, n, i % 333 == 5 ? F_LEN64 : 0);
        buf_append(&want, tmp, n);
        if (i % 97 == 0) {
            snprintf(tmp, sizeof(tmp), "e%u\n", i);
            chan(&v->frames, 2, tmp);
        }
    }
    v->split = 3000; /* frames cut across TCP reads at every kind of place */
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(read_all(&k, &got, 777), 0);
    ASSERT(want.len > 1 * MiB);
    ASSERT_EQ(got.len, want.len);
    ASSERT(memcmp(got.data, want.data, want.len) == 0);
    ASSERT_CONTAINS(k.s->log.data, "e0\ne97\ne194\n");
    ASSERT_CONTAINS(k.s->log.data, "e5917\n");
    cli_close(&k, v);
    buf_release(&want);
    buf_release(&got);
    srv_free(v);
}

TEST(stdout_one_5mib_frame_whole)
{
    struct srv *v;
    struct cli k;
    struct buf got;
    size_t n = 5 * MiB;
    char *big = malloc(n);

    v = srv_new(V5);
    buf_init(&got, 0);
    fill_pattern(big, n, 3);
    sframe(&v->frames, 1, WS_OP_BINARY, 1, big, n, 0); /* a 64-bit length */
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(read_all(&k, &got, 65536), 0);
    ASSERT_EQ(got.len, n); /* not cut at 32 KiB, nor anywhere */
    ASSERT(memcmp(got.data, big, n) == 0);
    cli_close(&k, v);
    buf_release(&got);
    free(big);
    srv_free(v);
}

TEST(stderr_goes_to_the_log)
{
    struct srv *v;
    struct cli k;
    struct buf got;

    v = srv_new(V5);
    buf_init(&got, 0);
    chan(&v->frames, 2, "warning: low disk\n");
    chan(&v->frames, 1, "out");
    chan(&v->frames, 2, "bye\n");
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(read_all(&k, &got, 100), 0);
    ASSERT_STR(got.data, "out");
    ASSERT_STR(k.s->log.data, "warning: low disk\nbye\n");
    cli_close(&k, v);
    buf_release(&got);
    srv_free(v);
}

TEST(fragmented_messages)
{
    struct srv *v;
    struct cli k;
    struct buf got;
    char one = 1;

    v = srv_new(V5);
    buf_init(&got, 0);
    sframe(&v->frames, 0, WS_OP_BINARY, 1, "ab", 2, 0);
    sframe(&v->frames, 1, WS_OP_PING, -1, "mid", 3, 0); /* control frames may come between */
    sframe(&v->frames, 0, WS_OP_CONT, -1, "cd", 2, 0);
    sframe(&v->frames, 1, WS_OP_CONT, -1, "ef", 2, 0);
    sframe(&v->frames, 0, WS_OP_BINARY, -1, "", 0, 0); /* channel byte in the 2nd fragment */
    sframe(&v->frames, 0, WS_OP_CONT, -1, &one, 1, 0);
    sframe(&v->frames, 1, WS_OP_CONT, -1, "gh", 2, 0);
    sframe(&v->frames, 0, WS_OP_BINARY, 2, "std", 3, 0);
    sframe(&v->frames, 1, WS_OP_CONT, -1, "err", 3, 0);
    v->script = script_pong_then_end;
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(read_all(&k, &got, 3), 0);
    ASSERT_STR(got.data, "abcdefgh");
    ASSERT_STR(k.s->log.data, "stderr");
    cli_close(&k, v);
    ASSERT_STR(v->seq.data, "PSC");
    ASSERT_STR(v->pong.data, "mid");
    buf_release(&got);
    srv_free(v);
}

static void script_ping(struct srv *v, int fd)
{
    struct buf b;

    buf_init(&b, 0);
    srv_recv(v, fd, 1);   /* the pong ... */
    chan(&b, 1, "after"); /* ... then more output */
    send_full(fd, b.data, b.len);
    buf_release(&b);
    srv_recv(v, fd, 0);
}

TEST(ping_gets_pong)
{
    struct srv *v;
    struct cli k;
    char p[64];

    v = srv_new(V4);
    sframe(&v->frames, 1, WS_OP_PONG, -1, "unasked", 7, 0); /* ignored */
    sframe(&v->frames, 1, WS_OP_PING, -1, "are you there", 13, 0);
    chan(&v->frames, 1, "before");
    v->script = script_ping;
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(read_n(&k, p, 6), 6);
    ASSERT(memcmp(p, "before", 6) == 0);
    ASSERT_EQ(read_n(&k, p, 5), 5); /* comes after the pong */
    ASSERT(memcmp(p, "after", 5) == 0);
    cli_close(&k, v);
    ASSERT_STR(v->seq.data, "PC");
    ASSERT_STR(v->pong.data, "are you there");
    ASSERT_EQ(v->unmasked, 0);
    srv_free(v);
}

#define FAILURE                                                                               \
    "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"command terminated with non-zero " \
    "exit code: error executing command [sh -c exit 3], exit code 3\",\"reason\":"            \
    "\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":\"3\"}]}}"

TEST(status_ends_the_stream_after_buffered_stdout)
{
    struct srv *v;
    struct cli k;
    char p[8];
    int64_t t0;

    v = srv_new(V4);
    chan(&v->frames, 1, "partial out");
    chan(&v->frames, 3, FAILURE);
    chan(&v->frames, 1, "dropped"); /* after the Status: not delivered */
    v->script = script_recv;        /* keeps the connection open */
    ASSERT_EQ(cli_open(&k, v), 0);
    t0 = clock_mono_ms();
    ASSERT_EQ(k.s->ops->read(k.s, p, 4, 3000, &k.err), 4);
    ASSERT(memcmp(p, "part", 4) == 0);
    ASSERT_EQ(k.s->ops->read(k.s, p, 4, 3000, &k.err), 4);
    ASSERT_EQ(k.s->ops->read(k.s, p, 4, 3000, &k.err), 3);
    ASSERT(memcmp(p, "out", 3) == 0);
    ASSERT_EQ(k.s->ops->read(k.s, p, 4, 3000, &k.err), 0);
    ASSERT_EQ(k.s->ops->read(k.s, p, 4, 3000, &k.err), 0);
    ASSERT(clock_mono_ms() - t0 < 2000); /* EOF without waiting for the TCP end */
    ASSERT_STR(kubernetes_stream_status(k.s),
               "command terminated with non-zero exit code: error executing command [sh -c exit "
               "3], exit code 3");
    ASSERT_EQ(kubernetes_stream_exit_code(k.s), 3);
    ASSERT_CONTAINS(k.s->log.data, "k8s: Failure (NonZeroExitCode): command terminated");
    cli_close(&k, v);
    ASSERT_STR(v->seq.data, "C");
    srv_free(v);
}

TEST(status_success)
{
    struct srv *v;
    struct cli k;
    struct buf got;

    v = srv_new(V5);
    buf_init(&got, 0);
    chan(&v->frames, 1, "done\n");
    chan(&v->frames, 3, "{\"metadata\":{},\"status\":\"Success\"}");
    v->script = script_recv;
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(read_all(&k, &got, 100), 0);
    ASSERT_STR(got.data, "done\n");
    ASSERT_STR(kubernetes_stream_status(k.s), "Success");
    ASSERT_EQ(kubernetes_stream_exit_code(k.s), 0);
    ASSERT_EQ(k.s->log.len, 0);
    cli_close(&k, v);
    buf_release(&got);
    srv_free(v);
}

TEST(status_not_json_is_kept_as_text)
{
    struct srv *v;
    struct cli k;
    char p[8];

    v = srv_new(V4);
    sframe(&v->frames, 0, WS_OP_BINARY, 3, "exec fail", 9, 0); /* fragmented, too */
    sframe(&v->frames, 1, WS_OP_CONT, -1, "ed: no such file", 16, 0);
    v->script = script_recv;
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(k.s->ops->read(k.s, p, sizeof(p), 3000, &k.err), 0);
    ASSERT_STR(kubernetes_stream_status(k.s), "exec failed: no such file");
    ASSERT_EQ(kubernetes_stream_exit_code(k.s), -1);
    ASSERT_CONTAINS(k.s->log.data, "k8s: status: exec failed: no such file\n");
    cli_close(&k, v);
    srv_free(v);
}

TEST(close_frame_is_eof_and_answered)
{
    struct srv *v;
    struct cli k;
    struct buf got;

    v = srv_new(V5);
    buf_init(&got, 0);
    chan(&v->frames, 1, "last");
    sframe(&v->frames, 1, WS_OP_CLOSE, -1, "\x03\xe8", 2, 0);
    v->script = script_recv;
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(read_all(&k, &got, 100), 0);
    ASSERT_STR(got.data, "last");
    cli_close(&k, v);
    ASSERT_STR(v->seq.data, "C"); /* the answer only: no stdin close after it */
    ASSERT_EQ(v->close_code, 1000);
    buf_release(&got);
    srv_free(v);
}

TEST(clean_tcp_end_between_frames_is_eof)
{
    struct srv *v;
    struct cli k;
    struct buf got;

    v = srv_new(V4);
    buf_init(&got, 0);
    chan(&v->frames, 1, "bye");
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(read_all(&k, &got, 100), 0);
    ASSERT_STR(got.data, "bye");
    cli_close(&k, v);
    buf_release(&got);
    srv_free(v);
}

TEST(drop_mid_frame_is_an_error)
{
    static const struct {
        const char *what, *cut;
        int keep; /* bytes of the frame sent before the end */
    } cases[] = {
        {"in the payload", "the middle of a frame (", 4 + 10},
        {"in the header", "the middle of a frame header", 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct srv *v;
        struct cli k;
        struct buf got, fr;
        char pl[300];

        v = srv_new(V5);
        buf_init(&got, 0);
        buf_init(&fr, 0);
        memset(pl, 'x', sizeof(pl));
        chan(&v->frames, 1, "ok");
        sframe(&fr, 1, WS_OP_BINARY, 1, pl, sizeof(pl), 0);
        buf_append(&v->frames, fr.data, (size_t)cases[i].keep);
        ASSERT_MSG(cli_open(&k, v) == 0, cases[i].what);
        ssize_t rc = read_all(&k, &got, 100);
        ASSERT_MSG(rc < 0 && rc != LLMSB_ERR_TIMEOUT, cases[i].what);
        ASSERT_MSG(strncmp(got.data, "ok", 2) == 0, cases[i].what);
        ASSERT_CONTAINS(k.err.msg, "k8s attach: the connection ended in");
        ASSERT_CONTAINS(k.err.msg, cases[i].cut);
        ASSERT_MSG(k.s->ops->read(k.s, pl, 10, 100, &k.err) == rc, cases[i].what); /* stays */
        cli_close(&k, v);
        buf_release(&got);
        buf_release(&fr);
        srv_free(v);
    }
}

TEST(masked_server_frame_is_refused)
{
    struct srv *v;
    struct cli k;
    char p[16];

    v = srv_new(V5);
    sframe(&v->frames, 1, WS_OP_BINARY, 1, "sneaky", 6, F_MASK);
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(k.s->ops->read(k.s, p, sizeof(p), 5000, &k.err), LLMSB_ERR_PROTO);
    ASSERT_CONTAINS(k.err.msg, "k8s attach: a masked frame from the server");
    cli_close(&k, v);
    srv_free(v);
}

TEST(read_times_out)
{
    struct srv *v;
    struct cli k;
    char p[16];
    int64_t t0;

    v = srv_new(V5);
    chan(&v->frames, 2, "only stderr\n"); /* frames without stdout do not reset the wait */
    v->script = script_recv;
    ASSERT_EQ(cli_open(&k, v), 0);
    t0 = clock_mono_ms();
    ASSERT_EQ(k.s->ops->read(k.s, p, sizeof(p), 300, &k.err), LLMSB_ERR_TIMEOUT);
    ASSERT(clock_mono_ms() - t0 >= 250 && clock_mono_ms() - t0 < 3000);
    ASSERT_EQ(k.s->ops->read(k.s, p, sizeof(p), 0, &k.err), LLMSB_ERR_TIMEOUT);
    ASSERT_STR(k.s->log.data, "only stderr\n");
    cli_close(&k, v);
    srv_free(v);
}

/* ---- writing and closing ------------------------------------------------------ */

static void write_then_close(const char *proto, const char *want_seq)
{
    struct srv *v;
    struct cli k;
    size_t n = 1 * MiB;
    char *data = malloc(n);

    v = srv_new(proto);
    fill_pattern(data, n, 9);
    v->script = script_recv;
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(k.s->ops->write(k.s, "hi", 2, &k.err), 0);
    ASSERT_EQ(k.s->ops->write(k.s, data, n, &k.err), 0);
    cli_close(&k, v);
    ASSERT_STR(v->seq.data, want_seq);
    ASSERT_EQ(v->close_code, 1000);
    ASSERT_EQ(v->unmasked, 0);
    ASSERT_EQ(v->bad_channel, 0);
    ASSERT(v->max_payload <= 65536);
    ASSERT_EQ(v->ndata, 1 + 17); /* 1 MiB in frames of 65535 + the channel byte */
    ASSERT(v->mask_changes >= v->ndata - 1);
    ASSERT_EQ(v->got.len, 2 + n);
    ASSERT(memcmp(v->got.data, "hi", 2) == 0 && memcmp(v->got.data + 2, data, n) == 0);
    free(data);
    srv_free(v);
}

TEST(write_v5_frames_then_stdin_close)
{
    write_then_close(V5, "DSC"); /* [0xFF, 0x00] before the close frame */
}

TEST(write_v4_frames_then_close)
{
    write_then_close(V4, "DC");
}

TEST(close_stdin_v5_only)
{
    struct srv *v;
    struct cli k;

    v = srv_new(V4);
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(kubernetes_stream_close_stdin(k.s, &k.err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(k.err.msg, "v4.channel.k8s.io cannot close stdin");
    cli_close(&k, v);
    srv_free(v);

    v = srv_new(V5);
    v->script = script_recv;
    ASSERT_EQ(cli_open(&k, v), 0);
    ASSERT_EQ(kubernetes_stream_close_stdin(k.s, &k.err), 0);
    ASSERT_EQ(k.s->ops->write(k.s, "x", 1, &k.err), LLMSB_ERR_INVALID);
    cli_close(&k, v);
    ASSERT_STR(v->seq.data, "SC");
    srv_free(v);
}

/* ---- the decoder alone ------------------------------------------------------ */

TEST(accept_key_rfc6455_example)
{
    char out[29];

    ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", out);
    ASSERT_STR(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(frame_parse_lengths)
{
    static const size_t lens[] = {0, 5, 125, 126, 300, 65535, 65536, 5 << 20};
    struct llmsb_err err = {0};

    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        struct buf b;
        struct ws_frame f;
        size_t used = 0, hl = lens[i] < 126 ? 2 : lens[i] <= 0xffff ? 4 : 10;
        char *pl = calloc(1, lens[i] + 1);

        buf_init(&b, 0);
        sframe(&b, 1, WS_OP_BINARY, -1, pl, lens[i], 0);
        for (size_t cut = 0; cut < hl; cut++)
            ASSERT_EQ(ws_frame_parse(b.data, cut, &f, &used, &err), 0);
        ASSERT_EQ(ws_frame_parse(b.data, b.len, &f, &used, &err), 1);
        ASSERT_EQ(used, hl);
        ASSERT_EQ(f.len, lens[i]);
        ASSERT_EQ(f.opcode, WS_OP_BINARY);
        ASSERT_EQ(f.fin, 1);
        buf_release(&b);
        free(pl);
    }
}

struct sink {
    struct buf ch[4];
    int ends, pings, closes;
};

static int collect(void *ud, enum ws_event ev, int channel, const char *p, size_t n,
                   struct llmsb_err *err)
{
    struct sink *k = ud;

    (void)err;
    if (ev == WS_EV_DATA && channel >= 0 && channel < 4)
        buf_append(&k->ch[channel], p, n);
    k->ends += ev == WS_EV_END;
    k->pings += ev == WS_EV_PING;
    k->closes += ev == WS_EV_CLOSE;
    return 0;
}

TEST(decoder_every_split_point)
{
    struct buf w;
    char one = 1;

    buf_init(&w, 0);
    sframe(&w, 1, WS_OP_BINARY, 1, "", 0, 0);
    chan(&w, 1, "out");
    chan(&w, 2, "err");
    sframe(&w, 0, WS_OP_BINARY, -1, "", 0, 0);
    sframe(&w, 1, WS_OP_PING, -1, "p", 1, 0);
    sframe(&w, 0, WS_OP_CONT, -1, &one, 1, 0);
    sframe(&w, 1, WS_OP_CONT, -1, "frag", 4, 0);
    sframe(&w, 1, WS_OP_BINARY, 1, "16", 2, F_LEN64);
    sframe(&w, 1, WS_OP_CLOSE, -1, "", 0, 0);
    for (size_t a = 0; a <= w.len; a++) {
        for (size_t b = a; b <= w.len; b++) {
            struct ws_dec d;
            struct sink k = {0};
            struct llmsb_err err = {0};

            for (int i = 0; i < 4; i++)
                buf_init(&k.ch[i], 0);
            ws_dec_init(&d, 1);
            ASSERT_EQ(ws_dec_feed(&d, w.data, a, collect, &k, &err), 0);
            ASSERT_EQ(ws_dec_feed(&d, w.data + a, b - a, collect, &k, &err), 0);
            ASSERT_EQ(ws_dec_feed(&d, w.data + b, w.len - b, collect, &k, &err), 0);
            ASSERT_STR(k.ch[1].data, "outfrag16");
            ASSERT_STR(k.ch[2].data, "err");
            ASSERT_EQ(k.ends, 5);
            ASSERT_EQ(k.pings, 1);
            ASSERT_EQ(k.closes, 1);
            ASSERT(ws_dec_cut(&d) == NULL);
            for (int i = 0; i < 4; i++)
                buf_release(&k.ch[i]);
        }
    }
    buf_release(&w);
}

TEST(decoder_refuses_bad_frames)
{
    static const unsigned char big[] = {0x82, 127, 0, 0, 0, 0, 0x04, 0, 0, 1}; /* 64 MiB + 1 */
    static const unsigned char huge[] = {0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0};
    static const struct {
        const char *what;
        int fin, op, flags;
        size_t n;
        const char *msg;
    } cases[] = {
        {"masked", 1, WS_OP_BINARY, F_MASK, 3, "masked frame"},
        {"rsv1", 1, WS_OP_BINARY, F_RSV1, 3, "reserved bits"},
        {"opcode 3", 1, 3, 0, 3, "reserved opcode 3"},
        {"opcode 0xB", 1, 0xB, 0, 3, "reserved opcode 11"},
        {"ping over 125", 1, WS_OP_PING, 0, 126, "over 125 bytes"},
        {"close over 125", 1, WS_OP_CLOSE, 0, 200, "over 125 bytes"},
        {"fragmented ping", 0, WS_OP_PING, 0, 3, "fragmented"},
        {"lone continuation", 1, WS_OP_CONT, 0, 3, "continuation frame outside"},
    };
    char pl[200] = {0};
    struct llmsb_err err = {0};
    struct sink k = {0};
    struct ws_dec d;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct buf b;
        buf_init(&b, 0);
        sframe(&b, cases[i].fin, cases[i].op, -1, pl, cases[i].n, cases[i].flags);
        ws_dec_init(&d, 1);
        ASSERT_MSG(ws_dec_feed(&d, b.data, b.len, collect, &k, &err) == LLMSB_ERR_PROTO,
                   cases[i].what);
        ASSERT_CONTAINS(err.msg, cases[i].msg);
        ASSERT_MSG(ws_dec_feed(&d, "", 1, collect, &k, &err) == LLMSB_ERR_PROTO,
                   cases[i].what); /* stays broken */
        buf_release(&b);
    }
    ws_dec_init(&d, 1);
    ASSERT_EQ(ws_dec_feed(&d, (const char *)big, sizeof(big), collect, &k, &err), LLMSB_ERR_PROTO);
    ASSERT_CONTAINS(err.msg, "a frame of 67108865 bytes");
    ws_dec_init(&d, 1);
    ASSERT_EQ(ws_dec_feed(&d, (const char *)huge, sizeof(huge), collect, &k, &err),
              LLMSB_ERR_PROTO);

    struct buf b;
    buf_init(&b, 0);
    sframe(&b, 0, WS_OP_BINARY, 1, "a", 1, 0);
    sframe(&b, 1, WS_OP_BINARY, 1, "b", 1, 0);
    ws_dec_init(&d, 1);
    ASSERT_EQ(ws_dec_feed(&d, b.data, b.len, collect, &k, &err), LLMSB_ERR_PROTO);
    ASSERT_CONTAINS(err.msg, "a new message inside a fragmented one");
    buf_release(&b);
    for (int i = 0; i < 4; i++)
        buf_release(&k.ch[i]);
}

TEST(decoder_says_where_it_was_cut)
{
    struct ws_dec d;
    struct sink k = {0};
    struct llmsb_err err = {0};
    struct buf b;

    buf_init(&b, 0);
    sframe(&b, 0, WS_OP_BINARY, 1, "abc", 3, 0);
    ws_dec_init(&d, 1);
    ASSERT(ws_dec_cut(&d) == NULL);
    ASSERT_EQ(ws_dec_feed(&d, b.data, 1, collect, &k, &err), 0);
    ASSERT_STR(ws_dec_cut(&d), "a frame header");
    ASSERT_EQ(ws_dec_feed(&d, b.data + 1, 3, collect, &k, &err), 0);
    ASSERT_STR(ws_dec_cut(&d), "a frame");
    ASSERT_EQ(ws_dec_feed(&d, b.data + 4, b.len - 4, collect, &k, &err), 0);
    ASSERT_STR(ws_dec_cut(&d), "a fragmented message");
    buf_release(&b);
    for (int i = 0; i < 4; i++)
        buf_release(&k.ch[i]);
}

/* channels 0 (a WebSocket without the channel.k8s.io byte): every payload
 * byte is data, a first byte of 1 included, and channel is -1 throughout;
 * fragments and an empty message as with channels. */
struct plain {
    struct buf data;
    int ends, channeled;
};

static int collect_plain(void *ud, enum ws_event ev, int channel, const char *p, size_t n,
                         struct llmsb_err *err)
{
    struct plain *k = ud;

    (void)err;
    k->channeled += channel != -1;
    if (ev == WS_EV_DATA)
        buf_append(&k->data, p, n);
    k->ends += ev == WS_EV_END;
    return 0;
}

TEST(decoder_without_channel_byte)
{
    struct buf w;

    buf_init(&w, 0);
    sframe(&w, 1, WS_OP_BINARY, -1, "\001out", 4, 0);
    sframe(&w, 0, WS_OP_TEXT, -1, "\002a", 2, 0);
    sframe(&w, 1, WS_OP_CONT, -1, "bc", 2, 0);
    sframe(&w, 1, WS_OP_BINARY, -1, "", 0, 0);
    for (size_t a = 0; a <= w.len; a++) {
        struct ws_dec d;
        struct plain k = {0};
        struct llmsb_err err = {0};

        buf_init(&k.data, 0);
        ws_dec_init(&d, 0);
        ASSERT_EQ(ws_dec_feed(&d, w.data, a, collect_plain, &k, &err), 0);
        ASSERT_EQ(ws_dec_feed(&d, w.data + a, w.len - a, collect_plain, &k, &err), 0);
        ASSERT_EQ(k.data.len, 8);
        ASSERT(memcmp(k.data.data, "\001out\002abc", 8) == 0);
        ASSERT_EQ(k.ends, 3);
        ASSERT_EQ(k.channeled, 0);
        ASSERT(ws_dec_cut(&d) == NULL);
        buf_release(&k.data);
    }
    buf_release(&w);
}

TEST_MAIN("k8s_stream", T(handshake_picks_v5), T(handshake_picks_v4),
          T(handshake_refuses_bad_accept), T(handshake_refuses_missing_protocol),
          T(handshake_http_error_names_status), T(stdout_many_small_frames_in_order),
          T(stdout_one_5mib_frame_whole), T(stderr_goes_to_the_log), T(fragmented_messages),
          T(ping_gets_pong), T(status_ends_the_stream_after_buffered_stdout), T(status_success),
          T(status_not_json_is_kept_as_text), T(close_frame_is_eof_and_answered),
          T(clean_tcp_end_between_frames_is_eof), T(drop_mid_frame_is_an_error),
          T(masked_server_frame_is_refused), T(read_times_out), T(write_v5_frames_then_stdin_close),
          T(write_v4_frames_then_close), T(close_stdin_v5_only), T(accept_key_rfc6455_example),
          T(frame_parse_lengths), T(decoder_every_split_point), T(decoder_refuses_bad_frames),
          T(decoder_says_where_it_was_cut), T(decoder_without_channel_byte))
