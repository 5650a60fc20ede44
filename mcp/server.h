/* server.h - `llm-sandbox mcp`'s server: the Model Context Protocol on
 * stdin and stdout (docs/mcp.md), each execute_code call a job run in this
 * process on a warm pool or, in queue mode, through Redis on the workers.
 * The caller (cli/mcp.c) parses options, installs signal handlers and turns
 * the return into an exit code. */
#ifndef LLMSB_MCP_SERVER_H
#define LLMSB_MCP_SERVER_H

#include "common/common.h"
#include "config/config.h"

#define MCP_MAX_MESSAGE ((size_t)8 << 20) /* a line: code (1 MiB) escaped, and more */
#define MCP_QUEUE_WAIT_S 600              /* queue mode: default wait for a result */

struct mcp_options {
    const struct config *cfg; /* loaded, flags and environment applied */
    const char *redis_url;    /* queue mode: the queue's Redis */
    const char *redis_prefix;
    int queue_mode; /* jobs through Redis, not in this process */
    double wait_s;  /* queue mode: how long to wait for a result */
    /* --http (mcp/http.c) */
    const char *http_addr;     /* NULL: stdio; else HOST:PORT to listen on */
    const char *token;         /* NULL: no Authorization asked */
    const char *allow_origins; /* Origins beyond loopback's, comma separated; NULL: none */
    int allow_no_token;        /* listening off loopback without a token was asked for */
    int max_sessions;          /* MCP sessions at once, and calls at once */
    double session_idle_s;     /* an MCP session unused this long ends */
};

/* Answers stdin's messages on stdout, one at a time, in order, until stdin
 * ends or llmsb_interrupted is set; stdout carries nothing but the
 * protocol, logs go to stderr.  While a call runs stdin is still read (what
 * arrives waits for its turn): its end means the client is gone, and the
 * call is stopped, its container removed, and the server returns.
 * Returns 0 (every failure of a call is an answer to the client), or a
 * negative code with err when the server could not start (ENOMEM, no
 * random bytes for --queue's session scope). */
int mcp_serve(const struct mcp_options *o, struct llmsb_err *err);

/* The front door (common/http_gate.h): connections held until their
 * first request's headers are in, and the time they have for it. */
#define MCP_HTTP_WAITING_MAX 256
/* connections served at once (the gate's cap): four for each MCP session
 * and some to spare */
#define MCP_HTTP_CONNECTIONS(max_sessions) (4 * (max_sessions) + 16)
#define MCP_HTTP_HEAD_DEADLINE_MS 10000
#define MCP_HTTP_MAX_SESSIONS 16
#define MCP_HTTP_IDLE_S 1800
#define MCP_HTTP_PATH "/mcp"

/* Serves MCP's Streamable HTTP transport on o->http_addr at MCP_HTTP_PATH
 * (docs/mcp.md, "Over HTTP") until llmsb_interrupted: each MCP session
 * its own sandbox sessions, calls of different sessions at once on one
 * runner of max_sessions slots, a session's own calls one at a time.
 * Returns 0, or a negative code with err (cannot listen, a non-loopback
 * address without a token, ENOMEM). */
int mcp_serve_http(const struct mcp_options *o, struct llmsb_err *err);

#endif
