/* scheduler.h - the decisions about a job's life and the timers that
 * drive them: admission (take only as many jobs as there are
 * free slots), lease renewal, reclaim of stale and dead workers' jobs,
 * cancellation polling, retry with back-off, dead-letter, deadlines.
 *
 * Two layers.  The decisions (scheduler_admit, scheduler_decide,
 * scheduler_backoff_ms, scheduler_backstop_ms) are pure functions of their
 * arguments, the same for the Redis worker and for `submit --local`, and
 * unit-tested one by one.  struct scheduler is the worker's side: its
 * slots' in-flight table and the timers, acting through queue/ (the only
 * module that speaks Redis), and the one writer of an entry's state there
 * (docs/architecture.md, who writes an entry's Redis state).  It knows
 * nothing of containers: the worker executes jobs and reports an outcome. */
#ifndef LLMSB_SCHEDULER_H
#define LLMSB_SCHEDULER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "common/common.h"
#include "common/fields.h"
#include "queue/queue.h"
#include "scheduler/decide.h"

/* ---- the worker's scheduler ------------------------------------------------- */

#define SCHED_JOB_ID_MAX 256 /* above JOB_ID_MAX */
#define SCHED_RECLAIM_EVERY_MS 1000
#define SCHED_MIN_OWN_IDLE_MS 5000 /* own deliveries this idle and not running are lost */
/* How long an own delivery that is not running waits before the reclaim
 * timer picks it up again: 3 blocks, at least SCHED_MIN_OWN_IDLE_MS. */
int64_t scheduler_own_idle_ms(int64_t block_ms);
#define SCHED_FINISH_GIVEUP_MS 120000 /* keep retrying a result write this long */
#define SCHED_RENEW_BATCH 256

struct sched_slot {
    atomic_int cancel;
    int busy;
    char entry_id[QUEUE_ENTRY_ID_MAX];
    char job_id[SCHED_JOB_ID_MAX];
};

struct sched_config {
    int64_t lease_ms;             /* an entry is reclaimable after this idle */
    int64_t block_ms;             /* XREADGROUP BLOCK */
    const char *worker;           /* this worker's name, for dead letters */
    const char *priority_weights; /* "H,N,L" or "strict" (sched_pick_init); NULL: the default */
};

struct scheduler {
    struct sched_config cfg;
    pthread_mutex_t mu;
    struct sched_slot *slots;
    int nslots;
    struct queue_entry *held; /* reclaimed for us, waiting for a free slot */
    size_t nheld;
    struct sched_timer renew, reclaim;
    atomic_int draining;    /* no new jobs */
    atomic_int paused;      /* the engine does not answer: no new jobs until it does */
    atomic_int alone;       /* rechecks waiting or running alone: reclaim claims nothing */
    atomic_llong done;      /* final results written */
    struct sched_pick pick; /* which lane next (under mu) */
};

int scheduler_init(struct scheduler *s, int nslots, const struct sched_config *cfg,
                   struct llmsb_err *err);
void scheduler_release(struct scheduler *s);

/* The next job for a slot: one reclaimed for us, else XREADGROUP COUNT 1
 * (blocking up to block_ms) of the default lane, or with other lanes in
 * use, the first of them in the order sched_pick_order gives (one round
 * trip) and when all are empty a blocking read over all of them (entries
 * past the first that brings go back at once, their delivery uncounted).
 * *e = NULL when none came. Caller frees *e with queue_entries_free(*e, 1). */
int scheduler_next(struct scheduler *s, struct queue *q, struct queue_entry **e,
                   struct llmsb_err *err);
/* The slot runs entry_id / job_id now (its cancel flag is cleared). */
void scheduler_begin(struct scheduler *s, int slot, const char *entry_id, const char *job_id);
void scheduler_end(struct scheduler *s, int slot);
atomic_int *scheduler_cancel_flag(struct scheduler *s, int slot);
/* Slots running a job plus jobs held for slots. */
int scheduler_busy(struct scheduler *s);
/* Slots running a job. */
int scheduler_running(struct scheduler *s);

/* One pass of the timers, from the janitor thread on its own connection:
 * cancellation polling (every call), lease renewal (lease/3) and reclaim
 * (every SCHED_RECLAIM_EVERY_MS, not while draining). Returns 0, or a
 * negative code when Redis failed (the caller reconnects). */
int scheduler_tick(struct scheduler *s, struct queue *q, int64_t now);
/* Drain deadline: every running job is told to stop and is given back. */
void scheduler_abort_all(struct scheduler *s);
/* At shutdown or pause: held entries (which never ran here) go back for
 * any worker, their delivery to us uncounted. */
void scheduler_give_back_held(struct scheduler *s, struct queue *q);
/* The engine stopped answering: no new jobs (scheduler_next returns none,
 * reclaim takes none) and held ones go back. Returns 1 if it was running. */
int scheduler_pause(struct scheduler *s, struct queue *q);
/* The engine answers again. Returns 1 if it was paused. */
int scheduler_resume(struct scheduler *s);
/* A recheck waits for the other slots, then runs alone: from _begin to
 * _end reclaim claims nothing, and held entries go back (no slot would
 * start them, nor renew their leases, meanwhile). */
void scheduler_alone_begin(struct scheduler *s, struct queue *q);
void scheduler_alone_end(struct scheduler *s);

/* ---- acting on a decision, through queue/ ----------------------------------- */

/* Every write of an entry's state in Redis is one of these (the worker
 * asks; it builds the fields, which name a job, and carries out nothing
 * itself): the running mark, the final result with its acknowledgement
 * (and its dead letter), a give-back for a retry or another worker, a
 * hand-over to a named worker, the acknowledgement of an empty entry;
 * and, from the timers above, lease renewal and reclaim. */

/* Marks e's job job_id running (queue_mark_running: running's fields and
 * c's copies, kept ttl_s).  Returns 1 marked, 3 marked with a cancel
 * request waiting, 0 a final result exists already, 2 another entry of the
 * id runs it; 1 as well when Redis failed (logged: the job runs, at least
 * once). */
int scheduler_mark_running(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                           const char *job_id, const struct fields *running,
                           const struct queue_copies *c, long long ttl_s);
/* Acknowledges and deletes e with no result (an entry with no fields:
 * nothing to run, nothing to write). */
void scheduler_ack(struct scheduler *s, struct queue *q, const struct queue_entry *e);
/* Hands e to the consumer to (a worker that holds its session or has a
 * feature it needs; this one, for a session's call that waits behind an
 * earlier one) with its delivery count set to count: to's recovery of its
 * own deliveries takes it within scheduler_own_idle_ms.  0, or a negative
 * code (err says why; e's lease expires instead). */
int scheduler_hand_over(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                        const char *to, long long count, struct llmsb_err *err);

/* Writes a final result (result + notification + XACK, atomically),
 * retrying through Redis outages up to SCHED_FINISH_GIVEUP_MS; if it gives
 * up the entry stays pending and runs again elsewhere (at-least-once).
 * Returns 1 written, 0 a final result existed already, <0 gave up. */
int scheduler_finish(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                     const char *job_id, const char *status, const struct fields *result,
                     const struct fields *dead, const struct queue_copies *c, long long ttl_s);
/* The dead-letter entry for e: its fields, then reason, attempts and
 * last_worker (owned by out; fields_release it). */
int scheduler_dead_fields(const struct scheduler *s, const struct queue_entry *e,
                          const char *reason, char attempts[24], struct fields *out);
/* Gives e back for any worker after delay_ms (0: as soon as its lease
 * says). counted 0: its delivery to us is taken back (the attempt did not
 * happen as far as max_attempts is concerned). */
void scheduler_give_back(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                         int64_t delay_ms, int counted);

/* Defers e, a job not due before due_ms, out of the stream into the
 * delayed set (queue_defer) with fields (job_due_fields's: it is never
 * deferred twice).  0, or a negative code (logged; e stays pending and its
 * lease brings it back). */
int scheduler_defer(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                    const char *job_id, int64_t due_ms, const struct fields *fields);

#endif
