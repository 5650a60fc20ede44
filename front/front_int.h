/* front_int.h - the HTTP front's parts (front/server.c drives them): the
 * executor behind every route set's host (front/exec.c: in process over
 * one runner, or through Redis), the callbacks (front/callback.c), and
 * the per-client rate limit (front/rate.c). */
#ifndef LLMSB_FRONT_INT_H
#define LLMSB_FRONT_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include "front/front.h"
#include "front/routes.h"

struct front_exec;

/* The executor of o's jobs: in process (a runner opened at the first job,
 * o->slots jobs at a time) or through Redis (a connection per call at
 * once, kept for the next).  NULL with err (ENOMEM). */
struct front_exec *front_exec_new(const struct front_options *o, struct llmsb_err *err);
/* Waits for the jobs started without a wait and the callbacks still
 * going (each within its own time), then frees x; NULL is a no-op. */
void front_exec_free(struct front_exec *x);

/* One call's view of the executor: the host a route runs its jobs
 * through; *cancel (SCHED_CANCEL_ABORT: the client left) stops the jobs
 * the call waits for. */
struct front_call {
    struct front_exec *x;
    atomic_int *cancel;
};
void front_exec_host(struct front_call *c, struct front_host *h);

/* ---- callbacks (front/callback.c) ---- */

/* 1 when url may be called back: http or https, its host one of allow's
 * (comma separated: names, addresses, CIDRs such as 10.0.0.0/8) and every
 * address it resolves to as well; else 0 with why.  Pure but for the
 * resolver. */
int front_callback_allowed(const char *url, const char *allow, char *why, size_t wsz);
/* PUTs body (JSON text) to url with up to 3 tries, 5 s each, 1 s then
 * 2 s apart, to the address checked (no redirect followed).  Returns 0
 * when an attempt was answered 2xx, else -1 (logged). */
int front_callback_put(const char *url, const char *allow, const char *body);

/* ---- the per-client rate limit (front/rate.c) ---- */

struct front_rate;
/* rate calls a second and burst at most at once per address, over
 * FRONT_CLIENTS_KEPT addresses (the one seen least recently forgotten).
 * NULL when rate is 0 (no limit) or on ENOMEM (*nomem). */
struct front_rate *front_rate_new(double rate, double burst, int *nomem);
void front_rate_free(struct front_rate *r);
/* 0 when addr's call may go now (a token taken), else the seconds until
 * it may (at least 1). */
int front_rate_take(struct front_rate *r, const struct sockaddr *addr, int64_t now_ms);

#endif
