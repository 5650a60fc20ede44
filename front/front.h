/* front.h - `llm-sandbox serve --http`: the HTTP front door that the
 * peers' clients already speak (docs/http.md): SandboxFusion's /run_code,
 * Judge0 CE's /submissions and Piston v2's /api/v2/execute, each call a
 * job run in this process on a warm pool or, with --queue, through Redis
 * on the workers.  The caller (cli/serve.c) parses the options, installs
 * the signal handlers and turns the return into an exit code. */
#ifndef LLMSB_FRONT_H
#define LLMSB_FRONT_H

#include <stddef.h>
#include "common/common.h"
#include "config/config.h"

#define FRONT_MAX_BODY_DEFAULT ((size_t)48 << 20) /* code, stdin and files as JSON */
#define FRONT_MAX_BODY_CAP ((size_t)512 << 20)
#define FRONT_WAIT_S 600        /* --queue: default wait for a result */
#define FRONT_BATCH_MAX 20      /* jobs one call may start (Judge0's batch) */
#define FRONT_CLIENTS_KEPT 4096 /* client addresses the rate limit tracks */
#define FRONT_DONE_KEPT 10000   /* in process: started jobs' results kept for lookups */
#define FRONT_DONE_BYTES ((size_t)256 << 20) /* ... holding this many bytes at most */
/* threads of jobs started without a wait (in process) and of callbacks not
 * yet delivered, at most: each holds its job's fields until it ends */
#define FRONT_BACKGROUND_MAX 1024
/* ... and the bytes of those jobs' fields (in process), at most */
#define FRONT_BACKGROUND_BYTES ((size_t)512 << 20)
#define FRONT_HEAD_DEADLINE_MS 10000
#define FRONT_IDLE_S 60 /* a keep-alive connection idle this long is closed */

struct front_options {
    const struct config *cfg; /* loaded, flags and environment applied */
    const char *http_addr;    /* HOST:PORT to listen on */
    const char *redis_url;    /* --queue: the queue's Redis */
    const char *redis_prefix;
    int queue_mode;             /* jobs through Redis, not in this process */
    double wait_s;              /* --queue: how long a call waits for its result */
    int slots;                  /* in process: jobs at a time */
    const char *token;          /* NULL: no Authorization asked */
    const char *allow_origins;  /* browser Origins beyond loopback's; NULL: none */
    int allow_no_token;         /* listening off loopback without a token was asked for */
    size_t max_body;            /* a request's body, at most (bytes) */
    int max_calls;              /* calls running at once */
    int max_waiting;            /* calls waiting for one of those; past them 429 */
    double rate;                /* per client address: calls a second (0: no limit) */
    double burst;               /* ... and the most at once */
    const char *callback_allow; /* hosts, addresses and CIDRs callbacks may go to; NULL: none */
    int dedup_window_ms;        /* identical calls within it share one run (0: while one runs) */
    int compile_once;           /* calls of one program waiting together run as one job's cases */
};

/* Serves until llmsb_interrupted.  Returns 0, or a negative code with err
 * (cannot listen, a non-loopback address without a token, ENOMEM). */
int front_serve(const struct front_options *o, struct llmsb_err *err);

#endif
