/* worker_int.h - what the files of the Redis worker share (worker.h is its
 * public face): the worker and its slots, the stop flag, and each file's
 * entry points.  worker.c is the life of the process (start, drain, stop),
 * entry.c one entry on a slot, gate.c a recheck running alone, live.c a
 * live job's sink, store.c the session store in Redis, janitor.c the
 * janitor thread. */
#ifndef LLMSB_WORKER_INT_H
#define LLMSB_WORKER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config/config.h"
#include "exec/runner.h"
#include "queue/queue.h"
#include "scheduler/scheduler.h"
#include "worker.h"
#include "metrics_int.h"

extern atomic_int worker_stop; /* drain: set by worker_stop_ask */

struct worker;

struct slot {
    struct worker *w;
    int index;
    pthread_t th;
    int started;
    struct queue q;
    long long client_id;
    struct backend be;
    /* the live job it runs (live_chunk) */
    struct proto_chunk_sink live_sink;
    const char *live_id;
    char live_shown[200]; /* live_id escaped, for the log */
    long long live_ttl_s, live_attempt;
    int64_t live_expire_ms; /* when a chunk last set the stream's expiry */
    int live_broken;
    struct llmsb_err live_err;
};

struct worker {
    const struct config *cfg;
    const char *name; /* rn.id.worker */
    int nslots;
    struct slot *slots;
    struct runner rn; /* the engine, the pool, who this worker is */
    struct scheduler sched;
    atomic_int janitor_stop;
    pthread_t janitor;
    int64_t started_wall_ms;
    /* the session store: who holds which session, on a connection of its own */
    pthread_mutex_t store_mu;
    struct queue store_q;
    int store_open;
    /* a recheck runs alone (gate_alone): no other slot claims or runs a job */
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int gate_active;        /* slots claiming or running a job */
    int gate_waiting;       /* rechecks waiting for the others to end */
    int gate_alone;         /* a recheck is running */
    struct metrics metrics; /* served when worker.metrics_addr is set */
};

/* worker.c: connects q to Redis (queue_connect_retry with the worker's
 * command timeout), retrying until stop is set or giveup_ms (0: never). */
int redis_connect(struct worker *w, struct queue *q, int fresh, const atomic_int *stop,
                  int64_t giveup_ms);

/* store.c: the runner's sessions recorded in Redis, on a connection of the
 * worker's own (store_q under store_mu); detach before the runner closes. */
void store_attach(struct worker *w);
void store_detach(struct worker *w);

/* gate.c: a slot enters before it claims an entry and leaves after it; a
 * recheck runs between gate_alone_begin (0, or -1 when the worker drains)
 * and gate_alone_end. */
void gate_enter(struct worker *w);
void gate_leave(struct worker *w);
int gate_alone_begin(struct worker *w);
void gate_alone_end(struct worker *w);

/* live.c: s's sink for a live job's chunks, set once; live_begin points a
 * live job j at it for this attempt (a job not live is left alone);
 * live_end writes the end entry (status) of job_id's stream after its
 * result. */
void live_sink_init(struct slot *s);
void live_begin(struct slot *s, struct job *j, long long attempt);
void live_end(struct slot *s, const char *job_id, const char *status, long long ttl_s);

/* entry.c: a slot's thread (arg: its struct slot). */
void *slot_main(void *arg);

/* janitor.c: the janitor's thread (arg: the struct worker). */
void *janitor_main(void *arg);
/* Writes the heartbeat once, before the slots read: another worker frees
 * the deliveries of a consumer without one (queue_free_dead_consumers). */
void janitor_heartbeat_first(struct worker *w, struct queue *q);

#endif
