/* http_serve.h - a libmicrohttpd server behind the front door
 * (http_gate.h), as the host's request servers run one (MCP over HTTP,
 * the HTTP front): the address resolved and refused off loopback without
 * a token, the daemon with a thread per connection and no socket of its
 * own, the door that accepts and hands each connection over once its
 * headers are in, and the count the door keeps of what the daemon holds.
 * The caller's handlers do the rest.  Apart from common.h: the static
 * agent serves nothing. */
#ifndef LLMSB_HTTP_SERVE_H
#define LLMSB_HTTP_SERVE_H

#include <microhttpd.h>
#include <netdb.h>
#include <stdint.h>
#include "common/common.h"

struct http_gate;

struct http_serve_opts {
    const char *addr;       /* --http's: PORT (loopback's), HOST:PORT, [V6]:PORT, :PORT */
    int token;              /* every request is asked for a token */
    int allow_no_token;     /* off loopback without one was asked for */
    const char *token_from; /* how to give one, for the refusal: "--token-file or ..." */
    int connections;        /* served at once: the door's cap (libmicrohttpd's: 2x + 64) */
    int waiting_max;        /* held by the door before their headers are in */
    int64_t head_deadline_ms;
    unsigned idle_s; /* a connection without progress this long is closed */
    MHD_AccessHandlerCallback on_request;
    MHD_RequestCompletedCallback on_completed;
    void *cls; /* both handlers' */
};

struct http_serve {
    struct MHD_Daemon *d;
    struct http_gate *gate;
    int loopback;              /* bound to a loopback address: a Host header must name it */
    char url[NI_MAXHOST + 32]; /* http://HOST:PORT, as a log line shows it */
};

/* Starts serving.  Returns 0, or a negative code with err (the address,
 * off loopback without a token: LLMSB_ERR_INVALID; cannot listen). */
int http_serve_start(struct http_serve *s, const struct http_serve_opts *o, struct llmsb_err *err);
/* Stops the door, then the daemon (which waits for its connections). */
void http_serve_stop(struct http_serve *s);
/* 1 when the client of socket fd hung up (or the socket failed). */
int http_client_gone(int fd);

#endif
