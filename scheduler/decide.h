/* decide.h - the scheduler's decisions about one job's life, pure
 * functions of their arguments with no Redis and no containers: what an
 * attempt came to (enum sched_outcome), what to do next (finish, retry
 * after a back-off, dead-letter, hand over, pause), admission, the
 * backstop, the claim budget, and the values of a slot's cancel flag.
 * The Redis worker (scheduler.h) and the in-process runner (exec/) follow
 * the same rules; tests/unit/test_scheduler.c tests each. */
#ifndef LLMSB_SCHEDULER_DECIDE_H
#define LLMSB_SCHEDULER_DECIDE_H

#include <stddef.h>
#include <stdint.h>
#include "common/common.h"
#include "common/lane.h"

/* ---- decisions ------------------------------------------------------------- */

/* What executing one attempt of a job came to. */
enum sched_outcome {
    SCHED_OUT_FINAL = 0,   /* a final result (the program's or the job's fault included) */
    SCHED_OUT_CANCELLED,   /* the user cancelled it while it ran */
    SCHED_OUT_ABORTED,     /* we stopped it (drain, lease lost): no result */
    SCHED_OUT_FAILED,      /* the infrastructure failed this attempt */
    SCHED_OUT_UNAVAILABLE, /* it failed while the engine did not answer: the worker's
                            * problem, not the job's */
    SCHED_OUT_ELSEWHERE    /* another worker holds the job's session: it runs there */
};

/* What to do with it. */
enum sched_action {
    SCHED_FINISH = 0,  /* write the result (and acknowledge) */
    SCHED_RETRY,       /* give it back to be run again after delay_ms */
    SCHED_DEAD_LETTER, /* internal_error, plus an entry on the dead stream */
    SCHED_HAND_OVER,   /* to the worker that holds the job's session */
    SCHED_GIVE_BACK,   /* give it back at once; this attempt does not count */
    SCHED_PAUSE        /* give it back uncounted and take no job until the engine answers */
};

struct sched_decision {
    enum sched_action action;
    int64_t delay_ms;
};

/* Retry back-off: base * 2^(attempt-1), at most max_ms. */
struct sched_backoff {
    int64_t base_ms;
    int64_t max_ms;
};

#define SCHED_BACKOFF_BASE_MS 1000
#define SCHED_BACKOFF_DOUBLINGS 6 /* base << 6 at most, before max_ms */

int64_t scheduler_backoff_ms(long long attempt, const struct sched_backoff *b);
/* attempt: 1 for the first try (for a stream entry, its delivery count). */
struct sched_decision scheduler_decide(enum sched_outcome o, long long attempt, int max_attempts,
                                       const struct sched_backoff *b);

/* Before a delivered job runs. */
enum sched_admit {
    SCHED_ADMIT_RUN = 0,
    SCHED_ADMIT_ACK,         /* a final result exists already: the first one stands */
    SCHED_ADMIT_DEAD_LETTER, /* delivered more times than max_attempts */
    SCHED_ADMIT_CANCEL,      /* cancelled before it started */
    SCHED_ADMIT_WAIT         /* another entry of its id runs: given back uncounted, it comes
                              * again after SCHED_WAIT_OTHER_RUN_MS (and is acknowledged
                              * once that run's result stands) */
};

/* How long an entry whose id another entry runs waits before it looks again. */
#define SCHED_WAIT_OTHER_RUN_MS 2000

/* another_runs: another entry of the job's id holds its running mark
 * (queue_mark_running's 2): one run of an id at a time. */
enum sched_admit scheduler_admit(long long deliveries, int max_attempts, int already_final,
                                 int another_runs, int cancel_requested);

/* How long the worker waits for a job's result before it destroys the
 * container: every step's limit plus the grace. */
int64_t scheduler_backstop_ms(int64_t run_ms, int64_t compile_ms, int64_t install_ms,
                              int64_t grace_ms);

/* How many more jobs a worker may take now (never below 0). */
int scheduler_claim_budget(int slots, int busy, int held);

/* A periodic timer: due once per every_ms (the first time at once). */
struct sched_timer {
    int64_t every_ms;
    int64_t next_ms;
};
/* 1 and re-armed when due at now. */
int sched_timer_due(struct sched_timer *t, int64_t now);

/* Values of a slot's cancel flag. */
enum sched_cancel {
    SCHED_GO = 0,
    SCHED_CANCEL_USER = 1, /* cancel key seen */
    SCHED_CANCEL_ABORT = 2 /* drain deadline or lease lost: give it back */
};

/* ---- picking a lane ----------------------------------------------------------- */

/* Which lane a worker reads next (docs/operations.md, priorities and
 * tenants): over the classes a smooth weighted round robin (the class
 * with the most credit goes first; every pick adds each class its
 * weight, and the class that delivered pays the weights of the classes
 * that had jobs), falling through to the other classes by credit when
 * the first has nothing; strict: high, normal, low in that order always.
 * Within a class, round robin over its lanes (its tenants) from the one
 * after the lane it delivered from last.  A class found empty keeps no
 * credit (a debt it keeps), so an idle class does not save up a burst.
 * Several slots may order, read, then record their picks in any
 * interleaving (each call under the caller's lock): sched_pick_done
 * applies its pick's changes to the credits as they are then. */
struct sched_pick {
    int weight[LANE_CLASSES];
    int strict;
    long long credit[LANE_CLASSES];
    char last[LANE_CLASSES][LANE_TENANT_MAX + 1]; /* tenant each class delivered from last */
};
/* weights: lane_weights_parse's (NULL: LANE_WEIGHTS_DEFAULT). */
int sched_pick_init(struct sched_pick *p, const char *weights, struct llmsb_err *err);
/* The order to try lanes[0..n) in (sorted by class, then tenant, as
 * queue_lanes_list gives them) into order[0..n): indices of lanes. */
void sched_pick_order(const struct sched_pick *p, const struct lane *lanes, size_t n,
                      size_t *order);
/* The lane at order[pos] delivered (pos >= n: none did; nothing changes):
 * the lanes before it were empty. */
void sched_pick_done(struct sched_pick *p, const struct lane *lanes, const size_t *order, size_t n,
                     size_t pos);

#endif
