/* http_gate.h - the front door of the host's HTTP servers (MCP over HTTP,
 * the worker's metrics): it listens and accepts, and holds each new
 * connection, with no thread of its own, until the header block of its
 * first request is in; only then is the socket handed over to the server
 * (libmicrohttpd's MHD_add_connection), whose connection cap therefore
 * counts no client that has not even sent a request.  A connection whose
 * header block is not complete within a deadline from its accept (however
 * it dribbles) is answered 408 and closed; when the waiting room is full a
 * new connection takes the place of the oldest waiting one (503), the
 * oldest of its own address once that address holds a quarter of the
 * room.  A header block over the cap is answered 431.  The gate counts the
 * connections it handed over that the server has not closed yet (the
 * server says so: http_gate_closed) and answers 503 to one more past
 * admitted_max, so that the server's own connection cap (libmicrohttpd's,
 * set well above it, a backstop) is never what refuses one: libmicrohttpd
 * 0.9.75 deadlocks on a connection handed to it past its cap.  docs/mcp.md and
 * docs/operations.md say what this defends and what it does not.
 * Apart from common.h: the static agent serves nothing. */
#ifndef LLMSB_HTTP_GATE_H
#define LLMSB_HTTP_GATE_H

#include <netdb.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "common/common.h"

#define HTTP_GATE_HEAD_MAX 16384 /* a first request's header block, at most */

struct http_gate_opts {
    const char *what;         /* for logs and errors: "--http \"ADDR\"", ... */
    int waiting_max;          /* connections held before their header block is in */
    int64_t head_deadline_ms; /* the whole header block's time from the accept */
    int admitted_max;         /* connections handed over and not closed yet, at most */
    /* Takes a connection whose header block is in (consumes fd, which is
     * non-blocking; sa: the peer's address): 0, or -1 when it did not take
     * it (fd closed).  On the gate's thread: quick. */
    int (*admit)(void *ud, int fd, const struct sockaddr *sa, socklen_t salen);
    void *ud;
};

struct http_gate;

/* Listens on ai (ai_addr, ai_family) and serves the door on a thread of
 * its own.  *out is the caller's to http_gate_stop.  Returns 0, or a
 * negative code with err naming o->what and why (bind, listen). */
int http_gate_start(const struct addrinfo *ai, const struct http_gate_opts *o,
                    struct http_gate **out, struct llmsb_err *err);
/* A connection the gate handed over is closed (the server's notice of
 * each one admit took, from any thread). */
void http_gate_closed(struct http_gate *g);
/* The port it listens on (the kernel's pick for port 0). */
unsigned http_gate_port(const struct http_gate *g);
/* Stops accepting, closes the connections still waiting and the listening
 * socket, and frees g; NULL is a no-op.  Connections admitted are the
 * server's. */
void http_gate_stop(struct http_gate *g);

/* The length of the header block at the start of p (n bytes of a request
 * as read so far): through the empty line that ends it (CRLF or a bare LF
 * either way), empty lines before the request line not counting as its
 * end; 0 while it has not ended.  Pure: untrusted input, fuzzed. */
size_t http_head_end(const char *p, size_t n);

#endif
