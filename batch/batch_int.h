/* batch_int.h - what the files of batch/ share: saying a line, the dedup
 * groups (batch.c), which results a recheck runs again and what it found,
 * and a stop asked. */
#ifndef LLMSB_BATCH_INT_H
#define LLMSB_BATCH_INT_H

#include "batch/batch.h"

/* Says a line of kind through b's say callback (nothing when it has none). */
void batch__say(const struct batch *b, enum batch_say kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Says a problem (a line) while fewer than BATCH_SHOW_MAX were said;
 * counts it in *count. */
void batch__problem(const struct batch *b, size_t *count, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The front end's name of option n ("" when it gave none). */
const char *batch__name(const struct batch *b, enum batch_name n);
/* A string member of o, or dflt. */
const char *batch__str(const cJSON *o, const char *k, const char *dflt);

/* Groups the jobs by their dedup form (job/dedup.h) into runs and copies
 * (rep, next, runs, copies); through Redis (redis) a job without an id
 * runs alone.  Returns 0 or LLMSB_ERR_NOMEM (said). */
int batch__plan_dedup(struct batch *b, int redis, struct llmsb_err *err);
/* Dedup undone: every job its own run (why: workers older than it). */
void batch__undedup(struct batch *b, const char *why);

/* 1 when r is a result whose status is timeout. */
int batch__is_timeout(const cJSON *r);
/* 1 when job i's result is a timeout a recheck runs again: a run (its
 * copies follow it), not a result that stands (reuse). */
int batch__recheckable(const struct batch *b, size_t i);
/* After a recheck, over the jobs it ran again for (jobs[i].rechecked):
 * how many changed (flaky), ended internal_error, or got no recheck's
 * result (the wait ended first: their first result stands). */
void batch__count_flaky(struct batch *b);

/* 1 when a stop is asked: llmsb_interrupted, or o.cancel not SCHED_GO. */
int batch__stop_asked(const struct batch *b);
/* Tells the front end where a phase stands (p->failed counted by the caller). */
void batch__progress(const struct batch *b, const struct batch_progress *p);

#endif
