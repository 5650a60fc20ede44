/* bench_http.c - a load client for the HTTP front (llm-sandbox serve
 * --http): each line of a file is a JSON body POSTed to one URL, N calls in
 * all spread over C client threads, each with one HTTP/1.1 keep-alive
 * connection of plain blocking sockets (a new one when the server closes
 * it).  Prints calls/s, latency percentiles, counts by HTTP status and by
 * the answer's "status" field, and `lost`: calls without a 2xx answer.
 * --check compares each answer's run_result.stdout (SandboxFusion; Piston's
 * run.stdout and Judge0's stdout too) with the line's "expect" member, which
 * is taken out of the body before it is sent.
 *   bench_http --url http://HOST:PORT/PATH --body FILE.jsonl [--clients 64]
 *              [--token T] [--calls N] [--check] [--timeout S]
 * Every line printed after the first is "key value", for scripts. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench/stats.h"

#define MAX_ANSWER (16u << 20) /* an answer body larger than this is an error */
#define MAX_HEADER (64u << 10) /* the status line and headers of one answer */
#define MAX_LINE (16u << 20)   /* one line of the body file */
#define MAX_CLIENTS 1024
#define MAX_STATUSES 32 /* distinct "status" values counted by name */

struct opts {
    char host[256], port[16], path[1024];
    const char *body_file, *token;
    int clients, check, timeout_s;
    long calls;
};

/* One body to send and, with --check, the stdout its answer must carry. */
struct line {
    char *body;
    size_t len;
    char *expect; /* NULL: not checked */
};

/* The counts of the run; mu guards all but the latency array, whose slot i
 * only call i writes. */
struct tally {
    pthread_mutex_t mu;
    long http[600];            /* by HTTP status */
    long no_answer, too_large; /* no HTTP answer at all; one past MAX_ANSWER */
    long mismatch, retried;
    char *status_name[MAX_STATUSES];
    long status_count[MAX_STATUSES + 1]; /* the last: other names */
    long no_status;                      /* 2xx answers without a "status" */
    const char *first_why;               /* the first call without an answer: why */
};

struct run {
    const struct opts *o;
    struct line *lines;
    size_t nlines;
    long next; /* the next call to claim; under t.mu */
    double *lat_ms;
    struct tally t;
};

/* One answer as read off the connection. */
struct answer {
    int status;
    int close; /* the server closes the connection after it */
    char *body;
    size_t len;
    const char *why; /* no answer: why (a literal) */
};

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_http --url http://HOST:PORT/PATH --body FILE.jsonl "
                    "[--clients N] [--token T] [--calls N] [--check] [--timeout S]\n");
    exit(2);
}

/* ---- options and the body file ------------------------------------------------- */

static int parse_url(const char *url, struct opts *o)
{
    const char *p = url, *slash, *colon;
    size_t hl;

    if (strncmp(p, "http://", 7) != 0) {
        fprintf(stderr, "bench_http: --url \"%s\": only http:// URLs\n", url);
        return -1;
    }
    p += 7;
    slash = strchr(p, '/');
    if (!slash)
        slash = p + strlen(p);
    colon = memchr(p, ':', (size_t)(slash - p));
    hl = (size_t)((colon ? colon : slash) - p);
    if (hl == 0 || hl >= sizeof(o->host) ||
        (colon && ((size_t)(slash - colon - 1) >= sizeof(o->port) || slash == colon + 1)) ||
        strlen(*slash ? slash : "/") >= sizeof(o->path)) {
        fprintf(stderr, "bench_http: --url \"%s\": want http://HOST[:PORT]/PATH\n", url);
        return -1;
    }
    memcpy(o->host, p, hl);
    o->host[hl] = '\0';
    if (colon) {
        memcpy(o->port, colon + 1, (size_t)(slash - colon - 1));
        o->port[slash - colon - 1] = '\0';
    } else {
        snprintf(o->port, sizeof(o->port), "80");
    }
    snprintf(o->path, sizeof(o->path), "%s", *slash ? slash : "/");
    return 0;
}

static long parse_long(const char *name, const char *v, long min, long max)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < min || n > max) {
        fprintf(stderr, "bench_http: %s \"%s\": want a whole number from %ld to %ld\n", name, v,
                min, max);
        exit(2);
    }
    return n;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
    const char *url = NULL;

    memset(o, 0, sizeof(*o));
    o->clients = 64;
    o->timeout_s = 300;
    o->calls = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--check")) {
            o->check = 1;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--url"))
            url = v;
        else if (!strcmp(a, "--body"))
            o->body_file = v;
        else if (!strcmp(a, "--token"))
            o->token = v;
        else if (!strcmp(a, "--clients"))
            o->clients = (int)parse_long(a, v, 1, MAX_CLIENTS);
        else if (!strcmp(a, "--calls"))
            o->calls = parse_long(a, v, 1, 100000000);
        else if (!strcmp(a, "--timeout"))
            o->timeout_s = (int)parse_long(a, v, 1, 86400);
        else
            usage();
    }
    if (!url || !o->body_file || parse_url(url, o) != 0)
        usage();
    if (o->token && (strlen(o->token) > 512 || strpbrk(o->token, "\r\n"))) {
        fprintf(stderr, "bench_http: --token: over 512 bytes or has a line break\n");
        exit(2);
    }
}

/* Takes "expect" out of the line's JSON object (with --check) and keeps
 * the rest as the body to send. */
static int line_load(const char *text, size_t lineno, int check, struct line *l)
{
    cJSON *j = cJSON_Parse(text);
    int rc = -1;

    memset(l, 0, sizeof(*l));
    if (!cJSON_IsObject(j)) {
        fprintf(stderr, "bench_http: body file line %zu: not a JSON object\n", lineno);
        goto out;
    }
    cJSON *e = cJSON_DetachItemFromObjectCaseSensitive(j, "expect"); /* never sent */
    if (check) {
        if (!cJSON_IsString(e)) {
            fprintf(stderr, "bench_http: body file line %zu: --check needs a string \"expect\"\n",
                    lineno);
            cJSON_Delete(e);
            goto out;
        }
        l->expect = strdup(e->valuestring);
    }
    cJSON_Delete(e);
    l->body = cJSON_PrintUnformatted(j);
    if (!l->body || (check && !l->expect)) {
        fprintf(stderr, "bench_http: body file line %zu: out of memory\n", lineno);
        goto out;
    }
    l->len = strlen(l->body);
    rc = 0;
out:
    cJSON_Delete(j);
    return rc;
}

static int lines_load(const char *path, int check, struct line **out, size_t *n)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t cap = 0, have = 0, lineno = 0;
    ssize_t got;
    struct line *v = NULL;
    int rc = -1;

    if (!f) {
        fprintf(stderr, "bench_http: open body file \"%s\": %s\n", path, strerror(errno));
        return -1;
    }
    while ((got = getline(&buf, &cap, f)) >= 0) {
        lineno++;
        if ((size_t)got > MAX_LINE) {
            fprintf(stderr, "bench_http: %s:%zu: a line over %u bytes\n", path, lineno, MAX_LINE);
            goto out;
        }
        if (got <= 1 && (got == 0 || buf[0] == '\n'))
            continue;
        struct line *nv = realloc(v, (have + 1) * sizeof(*v));
        if (!nv)
            goto out;
        v = nv;
        if (line_load(buf, lineno, check, &v[have]) != 0)
            goto out;
        have++;
    }
    if (have == 0) {
        fprintf(stderr, "bench_http: %s: no bodies\n", path);
        goto out;
    }
    rc = 0;
out:
    free(buf);
    fclose(f);
    *out = v;
    *n = have;
    return rc;
}

/* ---- one connection ------------------------------------------------------------ */

static int conn_open(const struct opts *o)
{
    struct addrinfo hints = {0}, *ai = NULL;
    struct timeval tv = {o->timeout_s, 0};
    int fd = -1, e, one = 1;

    hints.ai_socktype = SOCK_STREAM;
    if ((e = getaddrinfo(o->host, o->port, &hints, &ai)) != 0) {
        fprintf(stderr, "bench_http: resolve \"%s\": %s\n", o->host, gai_strerror(e));
        return -1;
    }
    for (struct addrinfo *p = ai; p; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd < 0)
            continue;
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, p->ai_addr, p->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

/* flags: MSG_MORE for the head, so head and body leave in one segment. */
static int send_all(int fd, const char *p, size_t n, int flags)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | flags);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A connection's read buffer: bytes read past one answer stay for the
 * next (a server may not send more, but nothing is lost if it does). */
struct rbuf {
    char *p;
    size_t len, cap;
};

/* Reads more into b (growing it up to limit bytes); returns the bytes
 * read, 0 at the peer's close, -1 on an error or past limit (*over set). */
static ssize_t rbuf_fill(int fd, struct rbuf *b, size_t limit, int *over)
{
    if (b->len + 4096 > b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 65536;
        if (ncap > limit + 65536)
            ncap = limit + 65536;
        if (b->len + 1 >= ncap) {
            *over = 1;
            return -1;
        }
        char *np = realloc(b->p, ncap);
        if (!np)
            return -1;
        b->p = np;
        b->cap = ncap;
    }
    ssize_t r;
    do
        r = recv(fd, b->p + b->len, b->cap - b->len - 1, 0);
    while (r < 0 && errno == EINTR);
    if (r > 0) {
        b->len += (size_t)r;
        b->p[b->len] = '\0';
    }
    return r;
}

static void rbuf_consume(struct rbuf *b, size_t n)
{
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
    if (b->p)
        b->p[b->len] = '\0';
}

/* The value of header name in the header block h (lines after the status
 * line), or NULL. */
static const char *header_find(const char *h, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(h, "\r\n"); p && p[2] != '\r'; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            while (*v == ' ' || *v == '\t')
                v++;
            return v;
        }
    }
    return NULL;
}

/* Decodes a chunked body in place: body[0..*len) -> the data; returns 1
 * when complete, 0 when more is needed, -1 when malformed. */
static int chunked_done(const char *p, size_t len, size_t *data_len)
{
    size_t at = 0, total = 0;
    for (;;) {
        const char *eol = memmem(p + at, len - at, "\r\n", 2);
        if (!eol)
            return 0;
        char *end;
        errno = 0;
        unsigned long n = strtoul(p + at, &end, 16);
        if (end == p + at || errno || n > MAX_ANSWER)
            return -1;
        at = (size_t)(eol - p) + 2;
        if (n == 0)
            return memmem(p + at - 2, len - at + 2, "\r\n\r\n", 4) ? (*data_len = total, 1) : 0;
        if (len - at < n + 2)
            return 0;
        total += n;
        at += n + 2;
    }
}

static void chunked_join(char *p, size_t len)
{
    size_t at = 0, out = 0;
    for (;;) {
        unsigned long n = strtoul(p + at, NULL, 16);
        at = (size_t)((char *)memmem(p + at, len - at, "\r\n", 2) - p) + 2;
        if (n == 0)
            break;
        memmove(p + out, p + at, n);
        out += n;
        at += n + 2;
    }
    p[out] = '\0';
}

/* Reads one answer; returns 0, -1 on an I/O or protocol error, -2 when the
 * body is over MAX_ANSWER.  *got_any: whether any byte came. */
static int answer_read(int fd, struct rbuf *b, struct answer *a, int *got_any)
{
    char *hend;
    int over = 0;
    ssize_t r;

    memset(a, 0, sizeof(*a));
    *got_any = b->len > 0;
    while (!(hend = b->len ? strstr(b->p, "\r\n\r\n") : NULL)) {
        if ((r = rbuf_fill(fd, b, MAX_HEADER, &over)) <= 0) {
            a->why = over ? "a header block over 64 KiB"
                     : r  ? "recv of the status line failed (timeout or reset)"
                          : "the server closed the connection before answering";
            return -1;
        }
        *got_any = 1;
    }
    size_t hlen = (size_t)(hend - b->p) + 4;
    if (sscanf(b->p, "HTTP/1.%*d %d", &a->status) != 1 || a->status < 100 || a->status > 599) {
        a->why = "not an HTTP/1.x status line";
        return -1;
    }
    *hend = '\0'; /* header_find stops at the block's end */
    const char *cl = header_find(b->p, "Content-Length");
    const char *te = header_find(b->p, "Transfer-Encoding");
    const char *cn = header_find(b->p, "Connection");
    int chunked = te && strncasecmp(te, "chunked", 7) == 0;
    a->close = (cn && strncasecmp(cn, "close", 5) == 0) || strncmp(b->p, "HTTP/1.0", 8) == 0;
    long long want = -1;
    if (cl) {
        char *end;
        want = strtoll(cl, &end, 10);
        if (end == cl || want < 0) {
            a->why = "a bad Content-Length";
            return -1;
        }
        if (want > MAX_ANSWER) {
            a->why = "an answer over 16 MiB";
            return -2;
        }
    }
    rbuf_consume(b, hlen);
    size_t dlen = 0;
    for (;;) {
        int done;
        if (chunked)
            done = chunked_done(b->p ? b->p : "", b->len, &dlen);
        else
            done = want >= 0 && b->len >= (size_t)want;
        if (done < 0) {
            a->why = "a malformed chunked body";
            return -1;
        }
        if (done)
            break;
        r = rbuf_fill(fd, b, MAX_ANSWER + (chunked ? 65536 : 0), &over);
        if (r == 0 && want < 0 && !chunked) {
            a->close = 1; /* the body ends at the close */
            break;
        }
        if (r <= 0) {
            a->why = over ? "an answer over 16 MiB" : "the body was cut short";
            return over ? -2 : -1;
        }
    }
    size_t take = chunked ? b->len : want >= 0 ? (size_t)want : b->len;
    a->body = malloc(take + 1);
    if (!a->body) {
        a->why = "out of memory";
        return -1;
    }
    memcpy(a->body, b->p ? b->p : "", take);
    a->body[take] = '\0';
    a->len = take;
    if (chunked) {
        chunked_join(a->body, take);
        a->len = dlen;
        b->len = 0; /* nothing pipelined after a chunked answer here */
    } else {
        rbuf_consume(b, take);
    }
    return 0;
}

/* ---- counting ------------------------------------------------------------------ */

/* The answer's stdout: SandboxFusion's run_result.stdout, Piston's
 * run.stdout or Judge0's stdout; NULL when none. */
static const char *answer_stdout(const cJSON *j)
{
    const cJSON *s;
    const char *outer[] = {"run_result", "run"};
    for (size_t i = 0; i < 2; i++) {
        s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, outer[i]),
                                             "stdout");
        if (cJSON_IsString(s))
            return s->valuestring;
    }
    s = cJSON_GetObjectItemCaseSensitive(j, "stdout");
    return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* The answer's "status": a string, or Judge0's {"description": ...}. */
static const char *answer_status(const cJSON *j)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "status");
    if (cJSON_IsObject(s))
        s = cJSON_GetObjectItemCaseSensitive(s, "description");
    return cJSON_IsString(s) ? s->valuestring : NULL;
}

static void count_status(struct tally *t, const char *name)
{
    if (!name) {
        t->no_status++;
        return;
    }
    for (int i = 0; i < MAX_STATUSES; i++) {
        if (!t->status_name[i]) {
            t->status_name[i] = strndup(name, 64);
            if (!t->status_name[i])
                break;
        }
        if (!strncmp(t->status_name[i], name, 64)) {
            t->status_count[i]++;
            return;
        }
    }
    t->status_count[MAX_STATUSES]++;
}

/* Counts one call: rc of answer_read (or -1: no connection). */
static void tally_call(struct run *r, const struct line *l, int rc, const struct answer *a)
{
    cJSON *j = NULL;
    int wrong = 0;

    if (rc == 0 && a->status >= 200 && a->status < 300) {
        j = cJSON_ParseWithLength(a->body, a->len);
        const char *out = answer_stdout(j);
        wrong = l->expect && (!out || strcmp(out, l->expect) != 0);
    }
    pthread_mutex_lock(&r->t.mu);
    if (rc != 0 && !r->t.first_why)
        r->t.first_why = a->why ? a->why : "?";
    if (rc == -2)
        r->t.too_large++;
    else if (rc != 0)
        r->t.no_answer++;
    else
        r->t.http[a->status]++;
    if (rc == 0 && a->status >= 200 && a->status < 300)
        count_status(&r->t, answer_status(j));
    r->t.mismatch += wrong;
    pthread_mutex_unlock(&r->t.mu);
    cJSON_Delete(j);
}

/* ---- the clients --------------------------------------------------------------- */

/* Sends call l on *fd (a new connection when *fd < 0) and reads its answer.
 * A reused connection the server had closed before answering (no byte of
 * an answer came) is opened anew and the call sent once more, as HTTP
 * clients do with keep-alive. */
static int call_once(struct run *r, int *fd, struct rbuf *b, const struct line *l, struct answer *a)
{
    const struct opts *o = r->o;
    char head[2048];
    int n, rc = -1;

    n = snprintf(head, sizeof(head),
                 "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\n%s%s%s\r\n",
                 o->path, o->host, o->port, l->len, o->token ? "Authorization: Bearer " : "",
                 o->token ? o->token : "", o->token ? "\r\n" : "");
    if (n < 0 || (size_t)n >= sizeof(head))
        return -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        int reused = *fd >= 0, got_any = 0;
        if (*fd < 0 && (*fd = conn_open(o)) < 0) {
            a->why = "connect failed";
            return -1;
        }
        b->len = 0;
        if (send_all(*fd, head, (size_t)n, MSG_MORE) == 0 && send_all(*fd, l->body, l->len, 0) == 0)
            rc = answer_read(*fd, b, a, &got_any);
        else
            rc = -1;
        if (rc != 0 && !a->why)
            a->why = "send failed (the server closed the connection?)";
        if (rc != 0 || a->close) {
            close(*fd);
            *fd = -1;
        }
        if (rc == 0 || rc == -2 || !reused || got_any)
            return rc;
        free(a->body);
        a->body = NULL;
        pthread_mutex_lock(&r->t.mu);
        r->t.retried++;
        pthread_mutex_unlock(&r->t.mu);
    }
    return rc;
}

static void *client_thread(void *arg)
{
    struct run *r = arg;
    struct rbuf b = {0};
    int fd = -1;

    for (;;) {
        pthread_mutex_lock(&r->t.mu);
        long i = r->next < r->o->calls ? r->next++ : -1;
        pthread_mutex_unlock(&r->t.mu);
        if (i < 0)
            break;
        const struct line *l = &r->lines[(size_t)i % r->nlines];
        struct answer a = {0};
        int64_t t0 = now_us();
        int rc = call_once(r, &fd, &b, l, &a);
        r->lat_ms[i] = (double)(now_us() - t0) / 1000.0;
        tally_call(r, l, rc, &a);
        free(a.body);
    }
    if (fd >= 0)
        close(fd);
    free(b.p);
    return NULL;
}

static void report(struct run *r, double seconds)
{
    const struct opts *o = r->o;
    long ok = 0;
    long n = o->calls;

    printf("bench_http: POST http://%s:%s%s, %ld calls of %zu bodies, %d clients\n", o->host,
           o->port, o->path, n, r->nlines, o->clients);
    printf("calls %ld\nseconds %.3f\ncalls_per_s %.1f\n", n, seconds, (double)n / seconds);
    printf("p50_ms %.1f\np90_ms %.1f\np99_ms %.1f\nmax_ms %.1f\n",
           bench_pct(r->lat_ms, (int)n, 0.5), bench_pct(r->lat_ms, (int)n, 0.9),
           bench_pct(r->lat_ms, (int)n, 0.99), bench_pct(r->lat_ms, (int)n, 1.0));
    for (int s = 100; s < 600; s++) {
        if (r->t.http[s])
            printf("http_%d %ld\n", s, r->t.http[s]);
        if (s >= 200 && s < 300)
            ok += r->t.http[s];
    }
    if (r->t.no_answer)
        printf("http_none %ld\n", r->t.no_answer);
    if (r->t.too_large)
        printf("http_too_large %ld\n", r->t.too_large);
    for (int i = 0; i < MAX_STATUSES && r->t.status_name[i]; i++) {
        for (char *c = r->t.status_name[i]; *c; c++)
            if (*c <= ' ' || *c == 0x7f)
                *c = '_'; /* one word, as a key: Judge0's "Wrong Answer" */
        printf("status_%s %ld\n", r->t.status_name[i], r->t.status_count[i]);
    }
    if (r->t.status_count[MAX_STATUSES])
        printf("status_(other) %ld\n", r->t.status_count[MAX_STATUSES]);
    if (r->t.no_status)
        printf("status_(none) %ld\n", r->t.no_status);
    printf("retried %ld\n", r->t.retried);
    if (o->check)
        printf("mismatch %ld\n", r->t.mismatch);
    printf("lost %ld\n", n - ok);
    if (r->t.first_why)
        fprintf(stderr, "bench_http: the first call without an answer: %s\n", r->t.first_why);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct run r = {0};
    pthread_t th[MAX_CLIENTS];
    int started = 0, rc = 1;

    parse_opts(argc, argv, &o);
    signal(SIGPIPE, SIG_IGN);
    if (lines_load(o.body_file, o.check, &r.lines, &r.nlines) != 0)
        goto out;
    if (o.calls < 0)
        o.calls = (long)r.nlines;
    r.o = &o;
    pthread_mutex_init(&r.t.mu, NULL);
    r.lat_ms = calloc((size_t)o.calls, sizeof(double));
    if (!r.lat_ms) {
        fprintf(stderr, "bench_http: out of memory for %ld latencies\n", o.calls);
        goto out;
    }
    int64_t t0 = now_us();
    for (; started < o.clients; started++) {
        if (pthread_create(&th[started], NULL, client_thread, &r) != 0) {
            fprintf(stderr, "bench_http: start client thread %d: %s\n", started, strerror(errno));
            break;
        }
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (started == 0)
        goto out;
    report(&r, (double)(now_us() - t0) / 1e6);
    rc = 0;
out:
    for (size_t i = 0; i < r.nlines; i++) {
        cJSON_free(r.lines[i].body);
        free(r.lines[i].expect);
    }
    free(r.lines);
    free(r.lat_ms);
    for (int i = 0; i < MAX_STATUSES; i++)
        free(r.t.status_name[i]);
    return rc;
}
