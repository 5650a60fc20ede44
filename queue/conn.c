/* conn.c - the connection to Redis under queue.c: TCP, unix socket or TLS
 * (OpenSSL; Debian's hiredis 0.14 has no SSL, so the I/O is ours and
 * hiredis formats commands and parses replies), ACL users, the primary
 * found through Sentinel or the cluster's slot map, MOVED and ASK, EVAL
 * sent as EVALSHA, and WAIT after the writes a failover must not lose.
 *
 * The socket is blocking with SO_RCVTIMEO/SO_SNDTIMEO set to the queue's
 * timeout, which callers keep longer than any BLOCK they send.  A
 * connection that failed (I/O error, timeout, protocol error) stays
 * failed until queue_reconnect, which finds the primary again. */
#include "queue.h"
#include "lanes_int.h"
#include "queue_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"

#define CONN_CONNECT_MS 5000
/* One reply's bytes and elements (hiredis holds ~70 bytes an element):
 * ordinary replies carry results (fields of up to QUEUE_MAX_VALUE) and
 * batches of entries; the discovery replies (SENTINEL, ROLE, CLUSTER
 * SLOTS), from servers often unauthenticated, need a few KiB. */
#define CONN_REPLY_MAX ((size_t)1 << 30)
#define CONN_REPLY_ELEMS ((size_t)1 << 20)
#define CONN_SMALL_MAX ((size_t)1 << 20)
#define CONN_SMALL_ELEMS ((size_t)1 << 16)
#define CONN_SCRIPTS_MAX 32
#define CONN_WARN_EVERY_MS 10000 /* "not confirmed" warnings, at most one per */

/* ---- transport ------------------------------------------------------------ */

struct conn;
/* Plain or TLS: how bytes move (-1: failed, c->why says why). */
struct conn_io {
    ssize_t (*send)(struct conn *c, const char *buf, size_t len);
    ssize_t (*recv)(struct conn *c, char *buf, size_t len);
};

struct conn {
    int fd;
    SSL_CTX *tls_ctx;
    SSL *ssl;
    const struct conn_io *io;
    redisReader *rd;
    size_t fed;                   /* bytes fed since the last whole reply */
    size_t elems;                 /* elements its arrays declared so far */
    size_t fed_max, elems_max;    /* their caps (conn_caps) */
    int unanswered;               /* commands went out whose replies did not all come */
    redisReplyObjectFunctions fn; /* hiredis's, the arrays counted (reader_counted) */
    const redisReplyObjectFunctions *base;
    char peer[300]; /* host:port or the socket path */
    int answered;   /* a reply came on it */
    int code;       /* 0, or why it is failed: LLMSB_ERR_BACKEND or LLMSB_ERR_TIMEOUT */
    char why[200];
};

static void conn_fail(struct conn *c, int code, const char *why)
{
    if (!c->code) {
        c->code = code;
        snprintf(c->why, sizeof(c->why), "%s", why);
    }
}

/* errno after a failed send/recv on the socket. */
static void conn_fail_errno(struct conn *c, const char *what)
{
    char why[160];
    int timeout = errno == EAGAIN || errno == EWOULDBLOCK;

    snprintf(why, sizeof(why), "%s: %s", what, timeout ? "timed out" : strerror(errno));
    conn_fail(c, timeout ? LLMSB_ERR_TIMEOUT : LLMSB_ERR_BACKEND, why);
}

static ssize_t plain_send(struct conn *c, const char *buf, size_t len)
{
    ssize_t n;
    while ((n = send(c->fd, buf, len, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        conn_fail_errno(c, "send");
    return n;
}

static ssize_t plain_recv(struct conn *c, char *buf, size_t len)
{
    ssize_t n;
    while ((n = recv(c->fd, buf, len, 0)) < 0 && errno == EINTR)
        ;
    if (n == 0)
        conn_fail(c, LLMSB_ERR_BACKEND, "connection closed by the server");
    else if (n < 0)
        conn_fail_errno(c, "recv");
    return n > 0 ? n : -1;
}

/* What OpenSSL says went wrong with the call that returned ret. */
static void tls_why(struct conn *c, int ret, const char *what)
{
    int e = SSL_get_error(c->ssl, ret);
    unsigned long code = ERR_peek_last_error();
    long vr = SSL_get_verify_result(c->ssl);
    char why[200];

    if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && code == 0 && errno == 0)) {
        conn_fail(c, LLMSB_ERR_BACKEND, "connection closed by the server");
    } else if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_SYSCALL) {
        conn_fail_errno(c, what);
    } else if (vr != X509_V_OK) {
        snprintf(why, sizeof(why), "certificate verify failed (%s)",
                 X509_verify_cert_error_string(vr));
        conn_fail(c, LLMSB_ERR_BACKEND, why);
    } else {
        const char *r = code ? ERR_reason_error_string(code) : NULL;
        snprintf(why, sizeof(why), "%s: %s", what, r ? r : "TLS error");
        conn_fail(c, LLMSB_ERR_BACKEND, why);
    }
    ERR_clear_error();
}

/* 1 when the TLS call that returned ret was cut by a signal (SIGTERM's
 * drain, SIGCHLD): OpenSSL wants it called again with the same arguments. */
static int tls_interrupted(struct conn *c, int ret)
{
    int saved = errno, e = SSL_get_error(c->ssl, ret);

    errno = saved;
    return (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_SYSCALL) &&
           saved == EINTR;
}

/* One SSL_write (out != NULL) or SSL_read, again while a signal cut it
 * short: bytes moved, or -1 with the connection's error set. */
static ssize_t tls_move(struct conn *c, const char *out, char *in, size_t len)
{
    int n, max = len > INT32_MAX ? INT32_MAX : (int)len;

    errno = 0;
    while ((n = out ? SSL_write(c->ssl, out, max) : SSL_read(c->ssl, in, max)) <= 0 &&
           tls_interrupted(c, n))
        errno = 0;
    if (n <= 0)
        tls_why(c, n, out ? "TLS write" : "TLS read");
    return n > 0 ? n : -1;
}

static ssize_t tls_send(struct conn *c, const char *buf, size_t len)
{
    return tls_move(c, buf, NULL, len);
}

static ssize_t tls_recv(struct conn *c, char *buf, size_t len)
{
    return tls_move(c, NULL, buf, len);
}

static const struct conn_io plain_io = {plain_send, plain_recv};
static const struct conn_io tls_io = {tls_send, tls_recv};

static void conn_free(struct conn *c)
{
    if (!c)
        return;
    if (c->ssl)
        SSL_free(c->ssl);
    if (c->tls_ctx)
        SSL_CTX_free(c->tls_ctx);
    if (c->fd >= 0)
        close(c->fd);
    if (c->rd)
        redisReaderFree(c->rd);
    free(c);
}

/* A non-blocking connect to one address, waited for up to CONN_CONNECT_MS. */
static int dial_one(const struct addrinfo *ai, char *why, size_t wsz)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), soerr = 0;
    socklen_t sl = sizeof(soerr);
    struct pollfd p;

    if (fd < 0) {
        snprintf(why, wsz, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            snprintf(why, wsz, "%s", strerror(errno));
            close(fd);
            return -1;
        }
        int64_t end = clock_mono_ms() + CONN_CONNECT_MS, left;
        int pr;
        p = (struct pollfd){fd, POLLOUT, 0};
        while ((pr = poll(&p, 1, (int)((left = end - clock_mono_ms()) > 0 ? left : 0))) < 0 &&
               errno == EINTR)
            ;
        if (pr <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr) {
            snprintf(why, wsz, "%s",
                     pr == 0 ? "connect timed out" : strerror(soerr ? soerr : errno));
            close(fd);
            return -1;
        }
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* The socket to host:port (or the unix socket path) with the I/O timeout. */
static int conn_dial(struct conn *c, const char *host, int port, const char *path, int timeout_ms,
                     struct llmsb_err *err)
{
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    char why[160] = "no address", ports[16];
    int one = 1;

    if (path) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "redis: connect to %s: %s", path,
                                 strerror(errno));
    } else {
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
        snprintf(ports, sizeof(ports), "%d", port);
        int gr = getaddrinfo(host, ports, &hints, &res);
        if (gr != 0)
            snprintf(why, sizeof(why), "%s", gai_strerror(gr));
        for (struct addrinfo *ai = res; ai && c->fd < 0; ai = ai->ai_next)
            c->fd = dial_one(ai, why, sizeof(why));
        if (res)
            freeaddrinfo(res);
        if (c->fd < 0)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "redis: connect to %s: %s", c->peer, why);
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    }
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return 0;
}

/* The client context of t: the CA (or the system's), our certificate. */
static int tls_ctx_new(struct conn *c, const struct queue_tls *t, struct llmsb_err *err)
{
    const char *what = "", *file = "";

    if (!(c->tls_ctx = SSL_CTX_new(TLS_client_method())))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: TLS: out of memory");
    SSL_CTX_set_min_proto_version(c->tls_ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(c->tls_ctx, t->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    if (t->ca[0] ? SSL_CTX_load_verify_locations(c->tls_ctx, t->ca, NULL) != 1
                 : SSL_CTX_set_default_verify_paths(c->tls_ctx) != 1)
        what = "ca", file = t->ca[0] ? t->ca : "(the system store)";
    else if (t->cert[0] && SSL_CTX_use_certificate_chain_file(c->tls_ctx, t->cert) != 1)
        what = "cert", file = t->cert;
    else if (t->key[0] && (SSL_CTX_use_PrivateKey_file(c->tls_ctx, t->key, SSL_FILETYPE_PEM) != 1 ||
                           SSL_CTX_check_private_key(c->tls_ctx) != 1))
        what = "key", file = t->key;
    if (!*what)
        return 0;
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    llmsb_err_set(err, LLMSB_ERR_INVALID, "redis: TLS %s \"%s\": %s", what, file,
                  r ? r : "cannot be loaded");
    ERR_clear_error();
    return err->code;
}

/* The TLS handshake over c->fd, the server checked against host (or sni). */
static int conn_tls(struct conn *c, const struct queue_tls *t, const char *host,
                    struct llmsb_err *err)
{
    const char *name = t->sni[0] ? t->sni : host;
    unsigned char ip[16];
    int is_ip = inet_pton(AF_INET, name, ip) == 1 || inet_pton(AF_INET6, name, ip) == 1, rc;

    if ((rc = tls_ctx_new(c, t, err)) != 0)
        return rc;
    if (!(c->ssl = SSL_new(c->tls_ctx)) || SSL_set_fd(c->ssl, c->fd) != 1)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: TLS: out of memory");
    if (!is_ip)
        SSL_set_tlsext_host_name(c->ssl, name);
    if (!t->insecure && (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), name)
                               : SSL_set1_host(c->ssl, name)) != 1)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "redis: TLS: bad server name \"%s\"", name);
    if ((rc = SSL_connect(c->ssl)) != 1) {
        tls_why(c, rc, "handshake");
        return llmsb_err_set(err, c->code, "redis: TLS handshake with %s: %s", c->peer, c->why);
    }
    c->io = &tls_io;
    return 0;
}

/* hiredis's createArray, the elements counted against c's cap before
 * hiredis allocates them (a NULL fails the reader; conn_read says why). */
static void *counted_array(const redisReadTask *t, int elements)
{
    struct conn *c = t->privdata;

    if (elements > 0 && (c->elems += (size_t)elements) > c->elems_max)
        return NULL;
    return c->base->createArray(t, elements);
}

/* c's reader with its arrays counted, and the ordinary caps. */
static int reader_counted(struct conn *c)
{
    if (!(c->rd = redisReaderCreate()) || !c->rd->fn)
        return -1;
    c->base = c->rd->fn;
    c->fn = *c->base;
    c->fn.createArray = counted_array;
    c->rd->fn = &c->fn;
    c->rd->privdata = c;
    c->fed_max = CONN_REPLY_MAX, c->elems_max = CONN_REPLY_ELEMS;
    return 0;
}

/* The caps of c's next replies: small for a server's self-description. */
static void conn_caps(struct conn *c, int small)
{
    c->fed_max = small ? CONN_SMALL_MAX : CONN_REPLY_MAX;
    c->elems_max = small ? CONN_SMALL_ELEMS : CONN_REPLY_ELEMS;
}

/* A new connection to node (NULL: the unix socket) with q's TLS. */
static struct conn *conn_open(struct queue *q, const struct queue_node *node, struct llmsb_err *err)
{
    struct conn *c = calloc(1, sizeof(*c));

    if (!c || reader_counted(c) != 0) {
        if (c && c->rd)
            redisReaderFree(c->rd);
        free(c);
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
        return NULL;
    }
    c->fd = -1;
    c->io = &plain_io;
    if (node)
        snprintf(c->peer, sizeof(c->peer), strchr(node->host, ':') ? "[%s]:%d" : "%s:%d",
                 node->host, node->port);
    else
        snprintf(c->peer, sizeof(c->peer), "%s", q->unix_path);
    if (conn_dial(c, node ? node->host : NULL, node ? node->port : 0, node ? NULL : q->unix_path,
                  q->timeout_ms, err) != 0 ||
        (q->tls.on && node && conn_tls(c, &q->tls, node->host, err) != 0)) {
        conn_free(c);
        return NULL;
    }
    if (q->tls.on && q->tls.insecure)
        log_warn("redis: TLS to %s without verifying the server (insecure=1)", c->peer);
    return c;
}

static int conn_write(struct conn *c, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = c->io->send(c, buf, len);
        if (n < 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int conn_read(struct conn *c, redisReply **out)
{
    char buf[16384], why[160];
    void *r = NULL;

    for (;;) {
        if (redisReaderGetReply(c->rd, &r) != REDIS_OK) {
            if (c->elems > c->elems_max)
                snprintf(why, sizeof(why), "a reply of over %zu elements", c->elems_max);
            else
                snprintf(why, sizeof(why), "protocol error: %s", c->rd->errstr);
            conn_fail(c, LLMSB_ERR_BACKEND, why);
            return -1;
        }
        if (r) {
            c->fed = 0, c->elems = 0;
            c->answered = 1;
            *out = r;
            return 0;
        }
        ssize_t n = c->io->recv(c, buf, sizeof(buf));
        if (n < 0)
            return -1;
        if ((c->fed += (size_t)n) > c->fed_max) {
            snprintf(why, sizeof(why), "a reply over %zu bytes", c->fed_max);
            conn_fail(c, LLMSB_ERR_BACKEND, why);
            return -1;
        }
        if (redisReaderFeed(c->rd, buf, (size_t)n) != REDIS_OK) {
            conn_fail(c, LLMSB_ERR_NOMEM, "out of memory");
            return -1;
        }
    }
}

/* ---- exchanges ------------------------------------------------------------ */

/* One command: argv, or bytes formatted already (raw). */
struct conn_cmd {
    int argc;
    const char **argv;
    const size_t *lens;
    const char *raw;
    size_t rawlen;
    const char *verb;
};

static int conn_err(struct conn *c, const char *verb, struct llmsb_err *err)
{
    /* TLS 1.3: a server that wants our certificate says so after the
     * handshake, closing the connection on the first command */
    int cert = c->ssl && !c->answered && c->code != LLMSB_ERR_TIMEOUT;

    return llmsb_err_set(err, c->code ? c->code : LLMSB_ERR_BACKEND, "redis: %s on %s: %s%s", verb,
                         c->peer, c->why[0] ? c->why : "I/O error",
                         cert ? " (the server ended the connection after the TLS handshake: does "
                                "it want a client certificate, cert= and key=?)"
                              : "");
}

/* Sends the n commands in one write and reads their n replies into r
 * (NULL each one that did not come).  0, or the connection's error
 * (c->unanswered 1 when some of them went out unanswered). */
static int conn_exchange(struct conn *c, const struct conn_cmd *cmd, int n, redisReply **r,
                         struct llmsb_err *err)
{
    char *buf = NULL, *one;
    size_t len = 0;
    int rc = 0;

    for (int i = 0; i < n; i++)
        r[i] = NULL;
    if (c->code)
        return conn_err(c, cmd[0].verb, err);
    for (int i = 0; i < n && rc == 0; i++) {
        long long l = cmd[i].raw
                          ? (long long)cmd[i].rawlen
                          : redisFormatCommandArgv(&one, cmd[i].argc, cmd[i].argv, cmd[i].lens);
        char *grown = l < 0 ? NULL : realloc(buf, len + (size_t)l + 1);
        if (!grown) {
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: %s: out of memory", cmd[i].verb);
        } else {
            memcpy(grown + len, cmd[i].raw ? cmd[i].raw : one, (size_t)l);
            buf = grown, len += (size_t)l;
        }
        if (!cmd[i].raw && l >= 0)
            redisFreeCommand(one);
    }
    c->unanswered = rc == 0; /* from the first byte out, a command may run */
    if (rc == 0 && conn_write(c, buf, len) != 0)
        rc = conn_err(c, cmd[0].verb, err);
    free(buf);
    for (int i = 0; i < n && rc == 0; i++)
        if (conn_read(c, &r[i]) != 0)
            rc = conn_err(c, cmd[i].verb, err);
    if (rc == 0)
        c->unanswered = 0;
    return rc;
}

static int conn_simple(struct conn *c, int argc, const char **argv, redisReply **r,
                       struct llmsb_err *err)
{
    struct conn_cmd cmd = {argc, argv, NULL, NULL, 0, argv[0]};
    return conn_exchange(c, &cmd, 1, r, err);
}

/* ---- replies -------------------------------------------------------------- */

/* The error replies that mean "this server cannot serve now, or is not
 * the primary any more: connect again and retry". */
static int error_retryable(const char *s, size_t len)
{
    static const char *const codes[] = {"LOADING",  "BUSY",      "MASTERDOWN",  "TRYAGAIN",
                                        "READONLY", "UNBLOCKED", "CLUSTERDOWN", "NOREPLICAS",
                                        "MOVED",    "ASK"};
    size_t w = 0;

    while (w < len && s[w] != ' ')
        w++;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strlen(codes[i]) == w && memcmp(s, codes[i], w) == 0)
            return 1;
    return 0;
}

/* r as queue__cmd answers it: an error reply is freed and becomes err. */
static int reply_check(redisReply *r, const char *verb, redisReply **out, struct llmsb_err *err)
{
    if (!r)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "redis: %s: no reply", verb);
    if (r->type == REDIS_REPLY_ERROR) {
        char shown[160];
        llmsb_escape(shown, sizeof(shown), r->str, r->len);
        llmsb_err_set(err, error_retryable(r->str, r->len) ? LLMSB_ERR_BACKEND : LLMSB_ERR_INVALID,
                      "redis: %s: %s", verb, shown);
        freeReplyObject(r);
        return err->code;
    }
    *out = r;
    return 0;
}

static int is_error(const redisReply *r, const char *code)
{
    size_t n = strlen(code);
    return r && r->type == REDIS_REPLY_ERROR && r->len >= n && memcmp(r->str, code, n) == 0 &&
           (r->len == n || r->str[n] == ' ');
}

/* ---- state across connections: script SHAs, the last failure ------------- */

struct conn_state {
    struct {
        uint64_t hash;
        size_t len;
        char sha[41];
    } scripts[CONN_SCRIPTS_MAX];
    size_t nscripts;
    int unanswered;         /* the last failed call sent a command no reply came for */
    int64_t warned_ms;      /* the last "not confirmed" warning */
    unsigned long unwarned; /* the ones left out since */
};

static struct conn_state *state_of(struct queue *q)
{
    if (!q->priv)
        q->priv = calloc(1, sizeof(struct conn_state));
    return q->priv;
}

/* The SHA1 (hex) of script, from the queue's cache.  0 or -1. */
static int script_sha(struct queue *q, const char *script, size_t len, char sha[41])
{
    struct conn_state *s = state_of(q);
    uint64_t h = hash_fnv1a(0, script, len);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;

    for (size_t i = 0; s && i < s->nscripts; i++)
        if (s->scripts[i].hash == h && s->scripts[i].len == len) {
            memcpy(sha, s->scripts[i].sha, 41);
            return 0;
        }
    if (EVP_Digest(script, len, md, &mdlen, EVP_sha1(), NULL) != 1 || mdlen != 20)
        return -1;
    for (unsigned i = 0; i < 20; i++)
        snprintf(sha + 2 * i, 3, "%02x", md[i]);
    if (s && s->nscripts < CONN_SCRIPTS_MAX) {
        s->scripts[s->nscripts].hash = h;
        s->scripts[s->nscripts].len = len;
        memcpy(s->scripts[s->nscripts++].sha, sha, 41);
    }
    return 0;
}

/* A durable write applied on the primary that WAIT did not confirm (wait
 * NULL: its reply did not come): warned at most once per
 * CONN_WARN_EVERY_MS, the ones left out counted in the next warning. */
static void unconfirmed_warn(struct queue *q, const char *verb, const redisReply *wait)
{
    struct conn_state *s = state_of(q);
    int64_t now = clock_mono_ms();
    char got[96] = "no WAIT reply";

    if (s && s->warned_ms && now - s->warned_ms < CONN_WARN_EVERY_MS) {
        s->unwarned++;
        return;
    }
    if (wait && wait->type == REDIS_REPLY_INTEGER)
        snprintf(got, sizeof(got), "%lld acknowledged", wait->integer);
    else if (wait)
        snprintf(got, sizeof(got), "WAIT refused");
    if (s && s->unwarned)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "; %lu more since", s->unwarned);
    log_warn("redis: %s not confirmed by %d replica(s) within %d ms (%s): applied on the primary, "
             "but a failover now could lose it",
             verb, q->wait_replicas, q->wait_ms, got);
    if (s)
        s->warned_ms = now, s->unwarned = 0;
}

/* ---- connect: the node, its AUTH, the primary through sentinels or slots -- */

static void conn_drop(struct queue *q)
{
    conn_free(q->ctx);
    q->ctx = NULL;
}

/* AUTH [user] password on c (nothing when neither is given). */
static int conn_auth(struct conn *c, const char *user, const char *password, struct llmsb_err *err)
{
    const char *argv[3] = {"AUTH", user, password};
    redisReply *r = NULL, *ok = NULL;
    int rc;

    if (!user[0] && !password[0])
        return 0;
    if (!user[0])
        argv[1] = password;
    if ((rc = conn_simple(c, user[0] ? 3 : 2, argv, &r, err)) == 0 &&
        (rc = reply_check(r, "AUTH", &ok, err)) != 0) {
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", err->msg + strlen("redis: AUTH: "));
        if (user[0])
            llmsb_err_set(err, rc, "redis: AUTH as user \"%s\" on %s: %s", user, c->peer, why);
        else
            llmsb_err_set(err, rc, "redis: AUTH on %s: %s", c->peer, why);
    }
    freeReplyObject(ok);
    return rc;
}

/* One command on c whose reply must not be an error: 0 with *out, or err. */
static int conn_ask(struct conn *c, int argc, const char **argv, redisReply **out,
                    struct llmsb_err *err)
{
    redisReply *r = NULL;
    int rc = conn_simple(c, argc, argv, &r, err);

    *out = NULL;
    if (rc != 0) {
        freeReplyObject(r);
        return rc;
    }
    if ((rc = reply_check(r, argv[0], out, err)) != 0)
        llmsb_err_wrap(err, "on %s", c->peer);
    return rc;
}

/* The node list "h1:p1,h2:p2" for messages. */
static void nodes_shown(const struct queue *q, char *out, size_t outsz)
{
    size_t o = 0;

    out[0] = '\0';
    for (int i = 0; i < q->nnodes && o < outsz; i++) {
        int n = snprintf(out + o, outsz - o, "%s%s:%d", i ? "," : "", q->nodes[i].host,
                         q->nodes[i].port);
        o += n > 0 ? (size_t)n : 0;
    }
}

/* A discovery question to one of q's nodes (a sentinel or a seed): a new
 * connection with the small reply caps, authenticated as user, asked argv.
 * Returns the connection (NULL when it could not be opened; conn_free it)
 * with *r the reply, or *r NULL and err set when a step failed. */
static struct conn *node_ask(struct queue *q, const struct queue_node *node, const char *user,
                             const char *password, int argc, const char **argv, redisReply **r,
                             struct llmsb_err *err)
{
    struct conn *c = conn_open(q, node, err);

    *r = NULL;
    if (!c)
        return NULL;
    conn_caps(c, 1);
    if (conn_auth(c, user, password, err) == 0)
        conn_ask(c, argc, argv, r, err);
    return c;
}

/* Asks the sentinels in turn where the master is. */
static int sentinel_discover(struct queue *q, struct queue_node *out, struct llmsb_err *err)
{
    const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", q->master};
    char list[512], last[sizeof(err->msg)] = "";
    int unknown = 0;

    for (int i = 0; i < q->nnodes; i++) {
        redisReply *r = NULL;
        struct conn *c =
            node_ask(q, &q->nodes[i], q->sentinel_user, q->sentinel_password, 3, argv, &r, err);
        int found = -1;
        if (r && (found = queue__sentinel_addr_parse(r, out)) < 0)
            llmsb_err_set(err, LLMSB_ERR_PROTO,
                          "redis: sentinel %s: unexpected reply to SENTINEL "
                          "get-master-addr-by-name",
                          c->peer);
        freeReplyObject(r);
        conn_free(c);
        if (found == 1)
            return 0;
        if (found == 0)
            unknown++;
        else
            snprintf(last, sizeof(last), "%s", err->msg);
    }
    nodes_shown(q, list, sizeof(list));
    if (!last[0])
        return llmsb_err_set(err, LLMSB_ERR_BACKEND,
                             "redis: sentinels %s: none knows master \"%s\"", list, q->master);
    return llmsb_err_set(err, LLMSB_ERR_BACKEND,
                         "redis: sentinels %s: none named master \"%s\" (%d did not know it; "
                         "last error: %s)",
                         list, q->master, unknown, last);
}

/* Asks the seed nodes in turn which primary serves the prefix's slot. */
static int cluster_discover(struct queue *q, struct queue_node *out, struct llmsb_err *err)
{
    const char *argv[2] = {"CLUSTER", "SLOTS"};
    unsigned slot = queue__key_slot(q->key_prefix, strlen(q->key_prefix));
    char list[512], last[sizeof(err->msg)] = "";

    for (int i = 0; i < q->nnodes; i++) {
        redisReply *r = NULL;
        struct conn *c = node_ask(q, &q->nodes[i], q->user, q->password, 2, argv, &r, err);
        int found = -1;
        if (r && (found = queue__cluster_slots_find(r, slot, out)) <= 0)
            llmsb_err_set(err, LLMSB_ERR_BACKEND, "redis: cluster node %s: %s slot %u", c->peer,
                          found < 0 ? "unexpected CLUSTER SLOTS reply looking for"
                                    : "no primary serves",
                          slot);
        freeReplyObject(r);
        if (found == 1 && !out->host[0])
            snprintf(out->host, sizeof(out->host), "%s", q->nodes[i].host);
        conn_free(c);
        if (found == 1)
            return 0;
        snprintf(last, sizeof(last), "%s", err->msg);
    }
    nodes_shown(q, list, sizeof(list));
    return llmsb_err_set(err, LLMSB_ERR_BACKEND,
                         "redis: cluster nodes %s: none told where slot %u (prefix %s) is: %s",
                         list, slot, q->key_prefix, last);
}

/* ROLE on the node the sentinels named: a primary that is one. */
static int role_check(struct queue *q, struct conn *c, struct llmsb_err *err)
{
    const char *argv[1] = {"ROLE"};
    redisReply *r = NULL;
    char role[32] = "";
    int rc, is;

    conn_caps(c, 1);
    rc = conn_ask(c, 1, argv, &r, err);
    conn_caps(c, 0);
    if (rc != 0)
        return rc;
    is = queue__role_parse(r, role, sizeof(role));
    freeReplyObject(r);
    if (is == 1)
        return 0;
    return llmsb_err_set(err, LLMSB_ERR_BACKEND,
                         "redis: the sentinels name %s as master \"%s\", but its ROLE is \"%s\" "
                         "(a failover under way?)",
                         c->peer, q->master, is < 0 ? "unreadable" : role);
}

/* CLIENT SETNAME: refused is fine (an ACL may deny it), but not NOAUTH:
 * the server wants a password the URL does not give. */
static int conn_name(struct queue *q, struct conn *c, struct llmsb_err *err)
{
    char name[200];
    const char *argv[3] = {"CLIENT", "SETNAME", name};
    redisReply *r = NULL;
    int rc;

    snprintf(name, sizeof(name), "llmsb:%s", q->consumer[0] ? q->consumer : "client");
    for (char *s = name; *s; s++)
        if (*s == ' ' || *s == '\n')
            *s = '_';
    if ((rc = conn_simple(c, 3, argv, &r, err)) == 0 && is_error(r, "NOAUTH"))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "redis: %s asks for a password (NOAUTH): give one in the URL", c->peer);
    freeReplyObject(r);
    return rc;
}

/* Makes node (NULL: the unix socket) the queue's connection: TLS, AUTH,
 * the primary check, SELECT, the name. */
static int primary_attach(struct queue *q, const struct queue_node *node, struct llmsb_err *err)
{
    char db[16];
    const char *sel[2] = {"SELECT", db};
    redisReply *r = NULL;
    struct conn *c = conn_open(q, node, err);
    int rc;

    if (!c)
        return err->code;
    snprintf(db, sizeof(db), "%d", q->db);
    if ((rc = conn_auth(c, q->user, q->password, err)) != 0 ||
        (q->mode == QUEUE_MODE_SENTINEL && (rc = role_check(q, c, err)) != 0) ||
        (q->db && (rc = conn_ask(c, 2, sel, &r, err)) != 0) || (rc = conn_name(q, c, err)) != 0) {
        freeReplyObject(r);
        conn_free(c);
        return rc;
    }
    freeReplyObject(r);
    if (node) {
        snprintf(q->host, sizeof(q->host), "%s", node->host);
        q->port = node->port;
    }
    q->ctx = c;
    return 0;
}

static int connect_now(struct queue *q, struct llmsb_err *err)
{
    struct queue_node node = {"", 0};
    int rc = 0;

    conn_drop(q);
    if (q->mode == QUEUE_MODE_SENTINEL)
        rc = sentinel_discover(q, &node, err);
    else if (q->mode == QUEUE_MODE_CLUSTER)
        rc = cluster_discover(q, &node, err);
    else if (!q->unix_path[0])
        snprintf(node.host, sizeof(node.host), "%s", q->host), node.port = q->port;
    if (rc != 0)
        return rc;
    rc = primary_attach(q, q->unix_path[0] ? NULL : &node, err);
    if (rc == 0)
        llmsb_err_clear(err);
    return rc;
}

/* ---- commands ------------------------------------------------------------- */

/* cmd with an EVAL turned into EVALSHA of the script's SHA1 in *sent
 * (its arguments in *store, which the caller frees, sha holding the SHA);
 * anything else, or no memory, as it is. */
static void evalsha_of(struct queue *q, const struct conn_cmd *cmd, struct conn_cmd *sent,
                       void **store, char sha[41])
{
    const char **argv;
    size_t *lens;

    *sent = *cmd;
    *store = NULL;
    if (cmd->raw || cmd->argc < 3 || strcmp(cmd->argv[0], "EVAL") != 0 ||
        script_sha(q, cmd->argv[1], cmd->lens ? cmd->lens[1] : strlen(cmd->argv[1]), sha) != 0 ||
        !(*store = malloc((size_t)cmd->argc * (sizeof(*argv) + sizeof(*lens)))))
        return;
    argv = *store;
    lens = (size_t *)(argv + cmd->argc);
    for (int i = 0; i < cmd->argc; i++) {
        argv[i] = cmd->argv[i];
        lens[i] = cmd->lens ? cmd->lens[i] : strlen(cmd->argv[i]);
    }
    argv[0] = "EVALSHA", lens[0] = 7;
    argv[1] = sha, lens[1] = 40;
    sent->argv = argv, sent->lens = lens;
}

/* 1 when cmd is the WAIT of a durable pair. */
static int is_wait(const struct conn_cmd *cmd)
{
    return !cmd->raw && strcmp(cmd->verb, "WAIT") == 0;
}

/* ASK: the command once on the node named, after ASKING, with the WAIT
 * that follows it (wait: NULL, none) there too, so that it counts the
 * replicas of the node that applied it.  On a failure both replies are
 * NULL (the ASK error is no answer: the command may have run there) and
 * *unanswered says whether anything went out. */
static int ask_follow(struct queue *q, const struct queue_node *to, const struct conn_cmd *cmd,
                      const struct conn_cmd *wait, redisReply **r, redisReply **rw, int *unanswered,
                      struct llmsb_err *err)
{
    const char *asking[1] = {"ASKING"};
    struct conn_cmd three[3] = {{1, asking, NULL, NULL, 0, "ASKING"}, *cmd};
    redisReply *rr[3] = {NULL, NULL, NULL};
    struct conn *c = conn_open(q, to, err);
    int rc = c ? 0 : err->code, n = wait ? 3 : 2;

    if (wait)
        three[2] = *wait;
    if (c && (rc = conn_auth(c, q->user, q->password, err)) == 0 &&
        (rc = conn_exchange(c, three, n, rr, err)) != 0)
        *unanswered = c->unanswered;
    freeReplyObject(*r);
    *r = rc == 0 ? rr[1] : NULL, rr[1] = NULL;
    if (wait) {
        freeReplyObject(*rw);
        *rw = rc == 0 ? rr[2] : NULL, rr[2] = NULL;
    }
    for (int i = 0; i < 3; i++)
        freeReplyObject(rr[i]);
    conn_free(c);
    return rc;
}

/* NOSCRIPT: the commands the server refused so, as EVAL now, and each
 * WAIT after one of them (it ran before the write; it must run after),
 * sent again together in their order, their replies in place of the
 * first ones. */
static int noscript_again(struct queue *q, const struct conn_cmd *cmd, int n, void *const *store,
                          redisReply **r, struct llmsb_err *err)
{
    struct conn_cmd again[2];
    redisReply *rr[2];
    int at[2], m = 0, rc;

    for (int i = 0; i < n; i++)
        if ((store[i] && is_error(r[i], "NOSCRIPT")) || (m && is_wait(&cmd[i])))
            again[m] = cmd[i], at[m++] = i;
    if (!m)
        return 0;
    rc = conn_exchange(q->ctx, again, m, rr, err);
    for (int k = 0; k < m; k++) {
        freeReplyObject(r[at[k]]);
        r[at[k]] = rr[k];
    }
    return rc;
}

/* The n (up to 2) commands as sent by q_exchange, each EVAL as EVALSHA. */
static int send_once(struct queue *q, const struct conn_cmd *cmd, int n, redisReply **r,
                     struct llmsb_err *err)
{
    struct conn_cmd sent[2];
    void *store[2] = {NULL, NULL};
    char sha[2][41];
    int rc;

    for (int i = 0; i < n; i++)
        evalsha_of(q, &cmd[i], &sent[i], &store[i], sha[i]);
    rc = conn_exchange(q->ctx, sent, n, r, err);
    if (rc == 0)
        rc = noscript_again(q, cmd, n, store, r, err);
    free(store[0]);
    free(store[1]);
    return rc;
}

/* The ASK redirects among r followed (each write with its WAIT). */
static int asks_follow(struct queue *q, const struct conn_cmd *cmd, int n, redisReply **r,
                       int *unanswered, struct llmsb_err *err)
{
    for (int i = 0; i < n; i++) {
        struct queue_node to;
        int ask = 0, wait = i + 1 < n && is_wait(&cmd[i + 1]), rc;
        if (r[i]->type != REDIS_REPLY_ERROR ||
            !queue__redirect_parse(r[i]->str, r[i]->len, &ask, &to) || !ask)
            continue;
        if (!to.host[0])
            snprintf(to.host, sizeof(to.host), "%s", q->host);
        if ((rc = ask_follow(q, &to, &cmd[i], wait ? &cmd[i + 1] : NULL, &r[i],
                             wait ? &r[i + 1] : NULL, unanswered, err)) != 0)
            return rc;
        i += wait;
    }
    return 0;
}

/* Up to two commands pipelined on q's connection, following EVALSHA's
 * NOSCRIPT, a cluster's MOVED and ASK, and TRYAGAIN (a slot migrating).
 * 0 when every reply came (some may be errors), else the I/O error, with
 * the replies that came and queue_last_unanswered set. */
static int q_exchange(struct queue *q, const struct conn_cmd *cmd, int n, redisReply **r,
                      struct llmsb_err *err)
{
    struct conn_state *s = state_of(q);
    int unanswered = 0, rc = 0;

    for (int i = 0; i < n; i++)
        r[i] = NULL;
    if (!q->ctx)
        rc = llmsb_err_set(err, LLMSB_ERR_BACKEND, "redis: %s: not connected", cmd[0].verb);
    for (int tries = 0; rc == 0; tries++) {
        struct queue_node to;
        int ask = 0, moved = 0, again = 0;
        if ((rc = send_once(q, cmd, n, r, err)) != 0) {
            unanswered = q->ctx && ((struct conn *)q->ctx)->unanswered;
            break;
        }
        for (int i = 0; i < n && q->mode == QUEUE_MODE_CLUSTER; i++) {
            again |= is_error(r[i], "TRYAGAIN");
            if (r[i]->type == REDIS_REPLY_ERROR &&
                queue__redirect_parse(r[i]->str, r[i]->len, &ask, &to) && !ask)
                moved = 1;
        }
        if (q->mode == QUEUE_MODE_CLUSTER && tries < QUEUE__REDIRECTS_MAX &&
            (rc = asks_follow(q, cmd, n, r, &unanswered, err)) != 0)
            break;
        if ((!moved && !again) || tries >= QUEUE__REDIRECTS_MAX)
            break; /* the last MOVED or TRYAGAIN goes to the caller: retryable */
        for (int i = 0; i < n; i++)
            freeReplyObject(r[i]), r[i] = NULL;
        if (again)
            clock_sleep_ms(20 << tries);
        else {
            if (!to.host[0])
                snprintf(to.host, sizeof(to.host), "%s", q->host);
            log_info("redis: %s: slot moved to %s:%d", cmd[0].verb, to.host, to.port);
            conn_drop(q);
            rc = primary_attach(q, &to, err);
        }
    }
    if (s)
        s->unanswered = rc != 0 && unanswered;
    return rc;
}

int queue__cmd(struct queue *q, int argc, const char **argv, const size_t *lens, redisReply **out,
               struct llmsb_err *err)
{
    struct conn_cmd cmd = {argc, argv, lens, NULL, 0, argv[0]};
    redisReply *r = NULL;
    int rc;

    *out = NULL;
    if ((rc = q_exchange(q, &cmd, 1, &r, err)) != 0) {
        freeReplyObject(r);
        return rc;
    }
    return reply_check(r, argv[0], out, err);
}

int queue__cmd2(struct queue *q, int argc1, const char **argv1, const size_t *lens1, int argc2,
                const char **argv2, const size_t *lens2, struct llmsb_err *err)
{
    struct conn_cmd cmd[2] = {{argc1, argv1, lens1, NULL, 0, argv1[0]},
                              {argc2, argv2, lens2, NULL, 0, argv2[0]}};
    redisReply *r[2] = {NULL, NULL};
    int rc = q_exchange(q, cmd, 2, r, err);

    for (int i = 0; i < 2; i++) {
        redisReply *ok = NULL;
        int one = rc == 0 ? reply_check(r[i], cmd[i].verb, &ok, err) : 0;
        if (one && !rc)
            rc = one;
        else if (rc != 0)
            freeReplyObject(r[i]);
        freeReplyObject(ok);
    }
    return rc;
}

int queue__cmd_durable(struct queue *q, int argc, const char **argv, const size_t *lens,
                       redisReply **out, struct llmsb_err *err)
{
    char n[16], ms[16];
    const char *wv[3] = {"WAIT", n, ms};
    struct conn_cmd cmd[2] = {{argc, argv, lens, NULL, 0, argv[0]}, {3, wv, NULL, NULL, 0, "WAIT"}};
    redisReply *r[2] = {NULL, NULL};
    int rc;

    if (q->wait_replicas <= 0)
        return queue__cmd(q, argc, argv, lens, out, err);
    *out = NULL;
    snprintf(n, sizeof(n), "%d", q->wait_replicas);
    snprintf(ms, sizeof(ms), "%d", q->wait_ms);
    rc = q_exchange(q, cmd, 2, r, err);
    if (rc != 0 && (!r[0] || r[0]->type == REDIS_REPLY_ERROR)) {
        freeReplyObject(r[0]); /* not answered (perhaps applied), or refused: the caller retries */
        freeReplyObject(r[1]);
        return rc;
    }
    if ((rc = reply_check(r[0], argv[0], out, err)) != 0) { /* refused: nothing applied */
        freeReplyObject(r[1]);
        return rc;
    }
    if (!r[1] || r[1]->type != REDIS_REPLY_INTEGER || r[1]->integer < q->wait_replicas)
        unconfirmed_warn(q, argv[0], r[1]);
    freeReplyObject(r[1]);
    llmsb_err_clear(err); /* done, even when the connection broke after the write's reply */
    return 0;
}

/* ---- open, close, reconnect ---------------------------------------------- */

int queue_open(struct queue *q, const char *url, const char *prefix, const char *consumer,
               int timeout_ms, struct llmsb_err *err)
{
    const char *open, *close;

    memset(q, 0, sizeof(*q));
    if (queue__url_parse(q, url, err) != 0)
        return err->code;
    q->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
    if (q->wait_replicas > 0 && q->wait_ms > q->timeout_ms / 2) {
        /* one URL serves callers of different timeouts: clamped, not refused */
        log_warn("redis: wait_ms=%d is not under half this client's %d ms timeout "
                 "(a WAIT that long would time the connection out): %d ms used",
                 q->wait_ms, q->timeout_ms, q->timeout_ms / 2 > 0 ? q->timeout_ms / 2 : 1);
        q->wait_ms = q->timeout_ms / 2 > 0 ? q->timeout_ms / 2 : 1;
    }
    snprintf(q->prefix, sizeof(q->prefix), "%s", prefix && *prefix ? prefix : "llmsb");
    snprintf(q->consumer, sizeof(q->consumer), "%s", consumer ? consumer : "");
    snprintf(q->group, sizeof(q->group), "%s%s", q->prefix, QUEUE_GROUP_SUFFIX);
    open = strchr(q->prefix, '{');
    close = open ? strchr(open + 1, '}') : NULL;
    snprintf(q->key_prefix, sizeof(q->key_prefix),
             q->mode == QUEUE_MODE_CLUSTER && !(close && close > open + 1) ? "{%s}" : "%s",
             q->prefix);
    if (queue_key(q, "jobs", NULL, q->k_jobs, err) ||
        queue_key(q, "results", NULL, q->k_results, err) ||
        queue_key(q, "dead", NULL, q->k_dead, err))
        return err->code;
    return connect_now(q, err);
}

void queue_close(struct queue *q)
{
    queue__lanes_free(q);
    conn_drop(q);
    free(q->priv);
    q->priv = NULL;
}

int queue_reconnect(struct queue *q, struct llmsb_err *err)
{
    return connect_now(q, err);
}

int queue_connect_retry(struct queue *q, const char *url, const char *prefix, const char *consumer,
                        int timeout_ms, int fresh, const atomic_int *stop, int64_t giveup_ms,
                        struct llmsb_err *err)
{
    int64_t backoff = 100, start = clock_mono_ms();

    for (;;) {
        int rc =
            fresh ? queue_open(q, url, prefix, consumer, timeout_ms, err) : queue_reconnect(q, err);
        if (rc == 0 && (rc = queue_group_ensure(q, err)) == 0)
            return 0;
        if (rc == LLMSB_ERR_INVALID && fresh && !q->ctx)
            return rc; /* a bad URL does not get better */
        fresh = 0;
        if ((stop && atomic_load(stop)) || (giveup_ms && clock_mono_ms() - start > giveup_ms))
            return rc;
        log_warn("redis: %s; retrying in %lld ms", err->msg, (long long)backoff);
        clock_sleep_ms(backoff);
        backoff = backoff * 2 > QUEUE_RECONNECT_MAX_MS ? QUEUE_RECONNECT_MAX_MS : backoff * 2;
    }
}

int queue_last_unanswered(const struct queue *q)
{
    const struct conn_state *s = q->priv;
    return s ? s->unanswered : 0;
}

int queue_reconnect_wait(struct queue *q, int64_t giveup_ms, const volatile sig_atomic_t *stop,
                         struct llmsb_err *err)
{
    int64_t backoff = 100, start = clock_mono_ms();
    char first[sizeof(err->msg)];
    int rc = err->code;

    if (!queue_err_retryable(err))
        return rc;
    snprintf(first, sizeof(first), "%s", err->msg);
    while (!(stop && *stop) && clock_mono_ms() - start < giveup_ms) {
        clock_sleep_ms(backoff);
        backoff = backoff * 2 > QUEUE_RECONNECT_MAX_MS ? QUEUE_RECONNECT_MAX_MS : backoff * 2;
        if ((rc = queue_reconnect(q, err)) == 0)
            return 0;
        if (!queue_err_retryable(err))
            return rc;
    }
    return llmsb_err_set(err, rc ? rc : LLMSB_ERR_BACKEND, "%s (connecting again for %lld s: %s)",
                         first, (long long)((clock_mono_ms() - start) / 1000), err->msg);
}
