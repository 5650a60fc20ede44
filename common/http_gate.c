/* http_gate.c - the front door of the host's HTTP servers (http_gate.h):
 * one thread, epoll over the listening socket, a wake-up eventfd and the
 * connections waiting for their header block.  A waiting connection's
 * bytes are only peeked (MSG_PEEK), so the server reads its request from
 * the start; epoll is edge-triggered for them, since peeked bytes stay
 * readable and a level-triggered wait would spin on them. */
#include "common/http_gate.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define EV_LISTEN UINT64_MAX
#define EV_WAKE (UINT64_MAX - 1)
#define ACCEPTS_A_ROUND 64
#define LOG_EVERY_MS 60000

/* The door's own answers, each closing its connection. */
enum { CLOSED_LATE, CLOSED_EVICTED, CLOSED_BIG, CLOSED_BUSY, CLOSED_KINDS };
static const struct {
    const char *status, *body;
} answers[] = {
    [CLOSED_LATE] = {"408 Request Timeout", "the request's headers did not all come in time\n"},
    [CLOSED_EVICTED] = {"503 Service Unavailable",
                        "too many connections are waiting for their headers: try again\n"},
    [CLOSED_BIG] = {"431 Request Header Fields Too Large", "the request's headers are too long\n"},
    [CLOSED_BUSY] = {"503 Service Unavailable",
                     "the server holds as many connections as it takes: try again\n"},
};

/* A connection waiting for its header block. */
struct waiter {
    int fd;       /* -1: a free slot */
    uint32_t gen; /* the slot's use: an event of an earlier one is stale */
    int64_t accepted_ms;
    struct sockaddr_storage sa;
    socklen_t salen;
};

struct http_gate {
    struct http_gate_opts o;
    int lfd, ep, wake;
    pthread_t th;
    int th_started;
    struct waiter *w; /* o.waiting_max slots */
    char *peek;       /* HTTP_GATE_HEAD_MAX bytes */
    atomic_int admitted; /* handed over, not closed yet (http_gate_closed) */
    /* closed since the last log line: late (408), evicted (503), too big
     * (431), the server full (503) */
    long closed[CLOSED_KINDS];
    int64_t logged_ms;
};

size_t http_head_end(const char *p, size_t n)
{
    size_t i = 0;

    while (i < n && (p[i] == '\r' || p[i] == '\n')) /* before the request line */
        i++;
    for (; i < n; i++) {
        size_t k = i + 1;
        if (p[i] != '\n')
            continue;
        if (k < n && p[k] == '\r')
            k++;
        if (k < n && p[k] == '\n')
            return k + 1;
    }
    return 0;
}

/* Sends the door's answer why (best effort, never blocking; -1: none),
 * reads what waits so that the close is a FIN rather than a reset that
 * could drop the answer, and closes. */
static void answer_close(struct http_gate *g, int fd, int why)
{
    char text[256];
    int n;

    if (why >= 0) {
        n = snprintf(text, sizeof(text),
                     "HTTP/1.1 %s\r\nConnection: close\r\nContent-Type: text/plain\r\n"
                     "%sContent-Length: %zu\r\n\r\n%s",
                     answers[why].status,
                     /* a 503 is for now: the client may come back in a second */
                     answers[why].status[0] == '5' ? "Retry-After: 1\r\n" : "",
                     strlen(answers[why].body), answers[why].body);
        (void)!send(fd, text, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
        shutdown(fd, SHUT_WR);
        (void)!recv(fd, g->peek, HTTP_GATE_HEAD_MAX, MSG_DONTWAIT);
    }
    close(fd);
}

/* Frees slot i: its connection handed over (keep), or closed with the
 * answer why, counted (-1: none, the client left). */
static void release(struct http_gate *g, int i, int keep, int why)
{
    int fd = g->w[i].fd;

    epoll_ctl(g->ep, EPOLL_CTL_DEL, fd, NULL);
    g->w[i].fd = -1;
    if (why >= 0)
        g->closed[why]++;
    if (!keep)
        answer_close(g, fd, why);
}

static int same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->ss_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return 0;
}

/* A slot for a new connection from sa: a free one, else the one whose
 * connection gives way: the oldest of sa's own address once that address
 * holds a quarter of the room (one address cannot push the others out),
 * else the oldest of all (the newest, which a real client's is while it
 * sends its headers, stays). */
static int slot_for(struct http_gate *g, const struct sockaddr_storage *sa)
{
    int oldest = -1, oldest_same = -1, same = 0;

    for (int i = 0; i < g->o.waiting_max; i++) {
        if (g->w[i].fd < 0)
            return i;
        if (oldest < 0 || g->w[i].accepted_ms < g->w[oldest].accepted_ms)
            oldest = i;
        if (same_host(&g->w[i].sa, sa)) {
            same++;
            if (oldest_same < 0 || g->w[i].accepted_ms < g->w[oldest_same].accepted_ms)
                oldest_same = i;
        }
    }
    if (same * 4 >= g->o.waiting_max)
        oldest = oldest_same;
    release(g, oldest, 0, CLOSED_EVICTED);
    return oldest;
}

/* The oldest waiting connection, closed to free a descriptor (EMFILE);
 * 0 when there was none. */
static int drop_oldest(struct http_gate *g)
{
    int oldest = -1;

    for (int i = 0; i < g->o.waiting_max; i++)
        if (g->w[i].fd >= 0 && (oldest < 0 || g->w[i].accepted_ms < g->w[oldest].accepted_ms))
            oldest = i;
    if (oldest >= 0)
        release(g, oldest, 0, CLOSED_EVICTED);
    return oldest >= 0;
}

static void accept_some(struct http_gate *g)
{
    for (int n = 0; n < ACCEPTS_A_ROUND; n++) {
        struct sockaddr_storage sa;
        socklen_t salen = sizeof(sa);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET};
        int fd = accept4(g->lfd, (struct sockaddr *)&sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC), i;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            if (!drop_oldest(g)) { /* none of ours to free: the server holds them all */
                struct timespec ts = {0, 50 * 1000000L};
                nanosleep(&ts, NULL);
            }
            return;
        }
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0 && (errno == ECONNABORTED || errno == EPROTO))
            continue;
        if (fd < 0)
            return; /* EAGAIN: no more for now */
        i = slot_for(g, &sa);
        g->w[i] = (struct waiter){fd, g->w[i].gen + 1, clock_mono_ms(), sa, salen};
        ev.data.u64 = (uint64_t)g->w[i].gen << 32 | (uint64_t)i;
        if (epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            g->w[i].fd = -1;
            close(fd);
        }
    }
}

/* Slot i's connection has news: its header block is in (handed over),
 * too big (431), the client left, or it waits on. */
static void look_at(struct http_gate *g, int i, uint32_t events)
{
    ssize_t k = recv(g->w[i].fd, g->peek, HTTP_GATE_HEAD_MAX, MSG_PEEK);
    int ended = (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;

    if (k < 0 && (errno == EAGAIN || errno == EINTR) && !ended)
        return;
    if (k > 0 && http_head_end(g->peek, (size_t)k)) {
        struct waiter w = g->w[i];
        if (atomic_load(&g->admitted) >= g->o.admitted_max) {
            release(g, i, 0, CLOSED_BUSY);
            return;
        }
        release(g, i, 1, -1);
        atomic_fetch_add(&g->admitted, 1); /* before: its close may come first */
        if (g->o.admit(g->o.ud, w.fd, (const struct sockaddr *)&w.sa, w.salen) != 0)
            atomic_fetch_sub(&g->admitted, 1);
    } else if (k >= HTTP_GATE_HEAD_MAX) {
        release(g, i, 0, CLOSED_BIG);
    } else if (k <= 0 || ended) { /* no request will come: the client left */
        release(g, i, 0, -1);
    }
}

/* Closes the connections past their deadline; returns the ms to the next
 * one (at most a second). */
static int expire(struct http_gate *g)
{
    int64_t now = clock_mono_ms(), next = 1000;

    for (int i = 0; i < g->o.waiting_max; i++) {
        int64_t left;
        if (g->w[i].fd < 0)
            continue;
        left = g->w[i].accepted_ms + g->o.head_deadline_ms - now;
        if (left <= 0)
            release(g, i, 0, CLOSED_LATE);
        else if (left < next)
            next = left;
    }
    return (int)next;
}

/* At most once a minute: what the door closed meanwhile. */
static void log_closed(struct http_gate *g)
{
    int64_t now = clock_mono_ms();

    if (g->closed[0] + g->closed[1] + g->closed[2] + g->closed[3] == 0 ||
        now - g->logged_ms < LOG_EVERY_MS)
        return;
    log_warn("%s: closed before their first request: %ld connection(s) whose headers did not "
             "all come within %lld ms (408), %ld the oldest waiting when %d waited (503), %ld "
             "with headers over %d bytes (431), %ld while the server held %d (503); next count "
             "in a minute",
             g->o.what, g->closed[CLOSED_LATE], (long long)g->o.head_deadline_ms,
             g->closed[CLOSED_EVICTED], g->o.waiting_max, g->closed[CLOSED_BIG],
             HTTP_GATE_HEAD_MAX, g->closed[CLOSED_BUSY], g->o.admitted_max);
    memset(g->closed, 0, sizeof(g->closed));
    g->logged_ms = now;
}

static void *gate_main(void *arg)
{
    struct http_gate *g = arg;
    struct epoll_event ev[64];

    for (;;) {
        int n = epoll_wait(g->ep, ev, 64, expire(g));
        for (int k = 0; k < n; k++) {
            uint64_t tag = ev[k].data.u64;
            int i = (int)(tag & 0xffffffffu);
            if (tag == EV_WAKE)
                return NULL;
            if (tag == EV_LISTEN)
                accept_some(g);
            /* an event of a connection an earlier one of this batch evicted
             * is not the news of the one in its slot now */
            else if (g->w[i].fd >= 0 && g->w[i].gen == (uint32_t)(tag >> 32))
                look_at(g, i, ev[k].events);
        }
        log_closed(g);
    }
}

static int listen_socket(const struct addrinfo *ai, const char *what, struct llmsb_err *err)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    const char *step = "socket";

    if (fd < 0)
        goto fail;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ai->ai_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    step = "bind";
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0)
        goto fail;
    step = "listen";
    if (listen(fd, SOMAXCONN) != 0)
        goto fail;
    return fd;
fail:
    llmsb_err_set(err, LLMSB_ERR_SYS, "%s: cannot listen there: %s: %s", what, step,
                  strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

static int watch(int ep, int fd, uint64_t tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};

    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

int http_gate_start(const struct addrinfo *ai, const struct http_gate_opts *o,
                    struct http_gate **out, struct llmsb_err *err)
{
    struct http_gate *g = calloc(1, sizeof(*g));
    int rc = 0;

    *out = NULL;
    if (!g || !(g->w = calloc((size_t)o->waiting_max, sizeof(*g->w))) ||
        !(g->peek = malloc(HTTP_GATE_HEAD_MAX))) {
        if (g)
            free(g->w);
        free(g);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", o->what);
    }
    g->o = *o;
    atomic_init(&g->admitted, 0);
    g->ep = g->wake = -1;
    for (int i = 0; i < o->waiting_max; i++)
        g->w[i].fd = -1;
    if ((g->lfd = listen_socket(ai, o->what, err)) < 0) {
        rc = err->code;
        goto out;
    }
    if ((g->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (g->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 || watch(g->ep, g->lfd, EV_LISTEN) ||
        watch(g->ep, g->wake, EV_WAKE)) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "%s: cannot start serving: %s", o->what,
                           strerror(errno));
        goto out;
    }
    *out = g; /* before the thread: the server tells it of closes from then on */
    if (pthread_create(&g->th, NULL, gate_main, g) != 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "%s: cannot start serving: %s", o->what,
                           strerror(errno));
        *out = NULL;
        goto out;
    }
    g->th_started = 1;
out:
    if (rc != 0)
        http_gate_stop(g);
    return rc;
}

void http_gate_closed(struct http_gate *g)
{
    if (g)
        atomic_fetch_sub(&g->admitted, 1);
}

unsigned http_gate_port(const struct http_gate *g)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);

    if (getsockname(g->lfd, (struct sockaddr *)&sa, &len) != 0)
        return 0;
    if (sa.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&sa)->sin_port);
    if (sa.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
    return 0;
}

void http_gate_stop(struct http_gate *g)
{
    uint64_t one = 1;

    if (!g)
        return;
    if (g->th_started) {
        (void)!write(g->wake, &one, sizeof(one));
        pthread_join(g->th, NULL);
    }
    for (int i = 0; i < g->o.waiting_max; i++)
        if (g->w[i].fd >= 0)
            close(g->w[i].fd);
    if (g->wake >= 0)
        close(g->wake);
    if (g->ep >= 0)
        close(g->ep);
    if (g->lfd >= 0)
        close(g->lfd);
    free(g->peek);
    free(g->w);
    free(g);
}
