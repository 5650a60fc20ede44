/* routes.h - the HTTP front's route sets: the APIs of SandboxFusion
 * (front/fusion.c), Judge0 CE (front/judge0.c) and Piston v2
 * (front/piston.c), each a thin mapping of a peer's request onto our job
 * fields (docs/jobs.md) and of our result (docs/statuses.md) onto the
 * peer's answer.  The server (front/server.c) has checked the request
 * (token, Host and Origin, body size, rate) before a route sees it, and
 * runs what a route asks through a host (front/exec.c: in this process on
 * a warm pool, or through Redis on the workers).  A route never runs,
 * reads or writes anything itself but through the host, so a unit test
 * drives it with a host of its own. */
#ifndef LLMSB_FRONT_ROUTES_H
#define LLMSB_FRONT_ROUTES_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include "common/common.h"
#include "common/fields.h"
#include "config/config.h"

#define FRONT_ID_MAX 96 /* a job id the host or a route makes */

/* One HTTP request, as a route sees it: text from the network, checked
 * for size only. */
struct front_req {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* the URL's path (percent-decoded), no query */
    const char *body;   /* NUL-terminated at len; "" for none */
    size_t len;
    /* A query argument's value (percent-decoded), or NULL when absent. */
    const char *(*arg)(const struct front_req *r, const char *name);
    void *arg_ud;
};

/* The answer a route writes: an HTTP status and a JSON body. */
struct front_answer {
    int status;        /* HTTP status: 200, 201, 400, 404, 422, ... */
    cJSON *json;       /* the body (owned by the answer), or NULL: none */
    int retry_after_s; /* > 0: a Retry-After header */
};

/* What a job has come to, for a lookup. */
enum front_state {
    FRONT_UNKNOWN = 0, /* no such job (or its result expired) */
    FRONT_QUEUED,      /* sent, not started */
    FRONT_RUNNING,     /* started, no final result yet */
    FRONT_DONE         /* its final result is there */
};

/* Renders the body of a callback from a job's final result (a new cJSON);
 * ud is the route's, freed by ud_free after the last use. */
typedef cJSON *(*front_render_fn)(const cJSON *result, void *ud);

/* What a route may ask of the host.  Job fields are docs/jobs.md's as a
 * job file gives them (values as text, JSON text for arrays and objects);
 * a route leaves "id" out unless it needs a job found again later (then an
 * id it made of FRONT_ID_MAX bytes at most, which the host may refuse when
 * it is not unguessable).  A result is result_fields_json's object; a job
 * the host could not run gets a result too, status internal_error (or
 * invalid when its fields were refused) with error saying why, so every
 * job of a call has one. */
struct front_host {
    const struct config *cfg;
    /* Runs jobs[0..n) and waits for every one: results[i] gets job i's
     * result (new; caller deletes).  Identical jobs may share one run.
     * Returns 0, or a negative code with err when the call as a whole
     * could not be run (the server is stopping, the client left:
     * LLMSB_ERR_INTERRUPTED; results then all NULL). */
    int (*run)(void *ud, const struct fields *jobs, size_t n, cJSON **results,
               struct llmsb_err *err);
    /* Starts jobs[0..n) without waiting (each must carry its "id").
     * callback: NULL, or a URL each job's rendered result is sent to with
     * PUT once it is final (render(result, rud); the host checks the URL
     * against the server's allowlist: refused, nothing is started and err
     * names the URL).  Returns 0, or a negative code with err. */
    int (*start)(void *ud, const struct fields *jobs, size_t n, const char *callback,
                 front_render_fn render, void *rud, void (*rud_free)(void *),
                 struct llmsb_err *err);
    /* Job id's state; its final result when FRONT_DONE (*result: new,
     * caller deletes), else *result NULL. */
    enum front_state (*lookup)(void *ud, const char *id, cJSON **result);
    /* Fills buf with n random bytes as 2n lower-case hex digits (the
     * kernel's RNG); returns 0, or a negative code with err. */
    int (*random_hex)(void *ud, char *buf, size_t bufsz, size_t n, struct llmsb_err *err);
    int queue;    /* 1: jobs run through Redis (a result outlives this server) */
    int max_jobs; /* the most jobs one call may start (a batch's cap) */
    void *ud;
};

/* A route set: each answers the requests whose path is its own.  Returns
 * 1 when the path is its own (a is filled, whatever the outcome), 0 when
 * not (a untouched).  Called from many threads at once. */
typedef int (*front_route_fn)(const struct front_host *h, const struct front_req *r,
                              struct front_answer *a);

int fusion_route(const struct front_host *h, const struct front_req *r, struct front_answer *a);
int judge0_route(const struct front_host *h, const struct front_req *r, struct front_answer *a);
int piston_route(const struct front_host *h, const struct front_req *r, struct front_answer *a);
/* POST /llm-sandbox/run: one job as docs/jobs.md's fields, our result. */
int native_route(const struct front_host *h, const struct front_req *r, struct front_answer *a);

/* Helpers every route set uses (front/routes.c). */
/* a's body is {"error": message} with status (printf-style). */
void front_error(struct front_answer *a, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same under another key: {"message": ...} for Piston. */
void front_error_key(struct front_answer *a, int status, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The request's body as a JSON object, or NULL with a filled 400 answer
 * naming why (not JSON, not an object). */
cJSON *front_body_object(const struct front_req *r, struct front_answer *a);

#endif
