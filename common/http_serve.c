/* http_serve.c - a libmicrohttpd server behind the front door: see
 * http_serve.h. */
#include "common/http_serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "common/http_gate.h"
#include "common/net.h"

/* 1 when a is a loopback address. */
static int addr_loopback(const struct sockaddr *a)
{
    if (a->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
    if (a->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
    return 0;
}

/* A connection whose headers are in (the door's admit): libmicrohttpd's
 * from now on.  The door keeps their number within its cap;
 * libmicrohttpd's is twice that and 64 more, a backstop only. */
static int admit(void *ud, int fd, const struct sockaddr *sa, socklen_t salen)
{
    struct http_serve *s = ud;

    if (MHD_add_connection(s->d, fd, sa, salen) == MHD_YES)
        return 0;
    log_warn("http: libmicrohttpd refused a connection: %s", strerror(errno));
    return -1;
}

/* libmicrohttpd closed a connection: one more the door may hand over. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http_serve *s = cls;

    (void)conn;
    (void)socket_ctx;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED)
        http_gate_closed(s->gate);
}

int http_serve_start(struct http_serve *s, const struct http_serve_opts *o, struct llmsb_err *err)
{
    struct addrinfo *ai = NULL;
    char host[NI_MAXHOST], what[300];
    int rc, v6;

    memset(s, 0, sizeof(*s));
    if ((rc = addr_resolve_listen("--http", o->addr, 1, 0, &ai, err)) != 0)
        return rc;
    if (getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host), NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(host, sizeof(host), "?");
    s->loopback = addr_loopback(ai->ai_addr);
    snprintf(what, sizeof(what), "--http \"%s\"", o->addr);
    if (!s->loopback && !o->token && !o->allow_no_token) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: not a loopback address, and no token: give one (%s), or "
                           "--allow-no-token to serve anyone who can reach it",
                           what, o->token_from);
        goto out;
    }
    s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
                                MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC,
                            0, NULL, NULL, o->on_request, o->cls, MHD_OPTION_NOTIFY_COMPLETED,
                            o->on_completed, o->cls, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)(2 * o->connections + 64),
                            MHD_OPTION_CONNECTION_TIMEOUT, o->idle_s, MHD_OPTION_END);
    if (!s->d) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "%s: cannot start libmicrohttpd", what);
        goto out;
    }
    if ((rc = http_gate_start(ai,
                              &(struct http_gate_opts){what, o->waiting_max, o->head_deadline_ms,
                                                       o->connections, admit, s},
                              &s->gate, err)) != 0) {
        MHD_stop_daemon(s->d);
        s->d = NULL;
        goto out;
    }
    v6 = strchr(host, ':') != NULL;
    snprintf(s->url, sizeof(s->url), "http://%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "",
             http_gate_port(s->gate));
out:
    freeaddrinfo(ai);
    return rc;
}

void http_serve_stop(struct http_serve *s)
{
    http_gate_stop(s->gate);
    s->gate = NULL;
    if (s->d)
        MHD_stop_daemon(s->d); /* waits for the connections: their calls stop too */
    s->d = NULL;
}

int http_client_gone(int fd)
{
    struct pollfd p = {fd, POLLRDHUP, 0};

    return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}
