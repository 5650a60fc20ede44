/* jsonrpc.h - JSON-RPC 2.0 framing of the MCP server: input read as lines
 * under a hard cap (stdio) or taken whole (an HTTP body), each a message
 * or a batch (answered as one array), the envelope checked, and replies,
 * errors and notifications written one per line to out, or handed to a
 * writer of the caller's (HTTP: each request's messages to its own
 * response).  No I/O of its own; the methods are the caller's (one
 * callback), so it can be driven from a string in a test or a fuzzer. */
#ifndef LLMSB_JSONRPC_H
#define LLMSB_JSONRPC_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include "common/common.h"

/* JSON-RPC 2.0 error codes */
enum jsonrpc_code {
    JSONRPC_PARSE_ERROR = -32700,
    JSONRPC_INVALID_REQUEST = -32600,
    JSONRPC_METHOD_NOT_FOUND = -32601,
    JSONRPC_INVALID_PARAMS = -32602
};

struct jsonrpc;

/* What a message written is: a notification may come before the answer
 * to the request that caused it (e.g. notifications/progress). */
enum jsonrpc_out { JSONRPC_OUT_ANSWER, JSONRPC_OUT_NOTIFICATION };
/* Takes one message's text (len bytes, no newline) as it is written. */
typedef void (*jsonrpc_write_fn)(void *wud, enum jsonrpc_out kind, const char *text, size_t len);

/* Answers one request (notifications never reach it) with exactly one
 * jsonrpc_reply or jsonrpc_error for id.  params is NULL, an object or an
 * array. */
typedef void (*jsonrpc_method_fn)(void *ud, struct jsonrpc *rpc, const cJSON *id,
                                  const char *method, const cJSON *params);

struct jsonrpc {
    FILE *out;              /* replies, one per line, flushed each (no writer set) */
    jsonrpc_write_fn write; /* NULL: to out */
    void *write_ud;         /* write's */
    jsonrpc_method_fn fn;   /* the methods */
    void *ud;               /* fn's */
    int closed;             /* set by the owner: nothing more is read or answered */
    /* private */
    size_t max_message; /* a line's cap in bytes */
    struct buf line;    /* the line being read */
    int skipping;       /* past the cap: the rest of the line is dropped */
    cJSON *batch;       /* while a batch is answered, its replies */
};

void jsonrpc_init(struct jsonrpc *rpc, FILE *out, size_t max_message, jsonrpc_method_fn fn,
                  void *ud);
void jsonrpc_release(struct jsonrpc *rpc);
/* Every message goes to write (with wud) instead of out from now on. */
void jsonrpc_set_writer(struct jsonrpc *rpc, jsonrpc_write_fn write, void *wud);

/* Reads n bytes of input: each complete line is handled as it ends (a line
 * over max_message is answered with an error and skipped to its end).
 * Stops at once when rpc->closed is set. */
void jsonrpc_feed(struct jsonrpc *rpc, const char *data, size_t n);
/* The input ended: handles a last line that had no newline. */
void jsonrpc_finish(struct jsonrpc *rpc);
/* Handles one line without its newline: a message, or a batch; a CR and
 * blanks at its end are dropped, a blank line is no message. */
void jsonrpc_line(struct jsonrpc *rpc, const char *line, size_t len);

/* Handles one whole message or batch of len bytes (an HTTP body): not
 * split at newlines, not trimmed; its size is the caller's to cap. */
void jsonrpc_message(struct jsonrpc *rpc, const char *text, size_t len);

/* Replies result (consumed) to the request id. */
void jsonrpc_reply(struct jsonrpc *rpc, const cJSON *id, cJSON *result);
/* Sends a notification (method, params consumed, may be NULL) at once,
 * even while a batch is being answered: e.g. notifications/progress
 * during a long call.  Returns the bytes of the message sent (0: none). */
size_t jsonrpc_notify(struct jsonrpc *rpc, const char *method, cJSON *params);
/* Replies an error to id (NULL: null, as for a message without a usable id). */
void jsonrpc_error(struct jsonrpc *rpc, const cJSON *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
