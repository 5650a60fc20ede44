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
};

/* Answers stdin's messages on stdout, one at a time, in order, until stdin
 * ends or llmsb_interrupted is set; stdout carries nothing but the
 * protocol, logs go to stderr.  While a call runs stdin is still read (what
 * arrives waits for its turn): its end means the client is gone, and the
 * call is stopped, its container removed, and the server returns.
 * Returns 0 (every failure of a call is an answer to the client), or
 * LLMSB_ERR_NOMEM when the server could not start. */
int mcp_serve(const struct mcp_options *o);

#endif
