/* server_int.h - the MCP server's parts the HTTP transport (mcp/http.c)
 * drives: one client's state (struct mcp: its sandbox sessions' scope and
 * languages, its Redis connection, its engine handle) over the runner
 * every client shares (struct mcp_engine), a request answered through a
 * writer, and the end of a client's sandbox sessions. */
#ifndef LLMSB_MCP_SERVER_INT_H
#define LLMSB_MCP_SERVER_INT_H

#include <stdatomic.h>
#include "mcp/jsonrpc.h"
#include "mcp/server.h"

struct mcp;
struct mcp_engine;

/* The in-process runner, opened at the first call, for slots calls at a
 * time.  NULL on ENOMEM. */
struct mcp_engine *mcp_engine_new(int slots);
/* Ends the sessions it holds and removes its containers; NULL is a no-op. */
void mcp_engine_free(struct mcp_engine *e);

/* One client's server over eng (which must outlive it).  Its sandbox
 * sessions are its own: in process a scope of its own in eng's runner
 * (exec/session.h), so no other client can name them whatever ids they
 * pick; with --queue in the ids the workers see (mcp-<16 hex>- over HTTP,
 * mcp-<8 hex>- a stdio server).  NULL with err set on ENOMEM, or with
 * --queue when the kernel's RNG gave no bytes for the scope: never a
 * client with a scope another could share.  mcp_free ends the sandbox
 * sessions it still holds. */
struct mcp *mcp_new(const struct mcp_options *o, struct mcp_engine *eng, int http,
                    struct llmsb_err *err);
void mcp_free(struct mcp *m);

/* Answers one message or batch (len bytes) through write: notifications
 * as they come, then the answer.  *cancel set to SCHED_CANCEL_ABORT stops
 * a running call (the client left).  One call at a time per m. */
void mcp_handle(struct mcp *m, const char *body, size_t len, jsonrpc_write_fn write, void *wud,
                atomic_int *cancel);

/* Closes every sandbox session m's calls opened (that it still knows);
 * returns how many it ended. */
int mcp_end_sessions(struct mcp *m);

#endif
