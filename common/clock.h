/* clock.h - waiting on the host side (the runner, the worker, the queue):
 * a sleep that a signal does not cut short, and condition variables whose
 * timed waits run on the monotonic clock.  Apart from common.h so the
 * static agent, which has waits of its own, neither links nor sees it. */
#ifndef LLMSB_CLOCK_H
#define LLMSB_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Sleeps ms milliseconds, the whole time (EINTR resumes the sleep). */
void clock_sleep_ms(int64_t ms);

/* Initialises cv with CLOCK_MONOTONIC as the clock of its timed waits, the
 * clock of clock_deadline_in_ms: a wall clock set back or forward (NTP, an
 * operator) neither stretches a wait nor ends it early.  Every cond waited
 * on with a deadline is made here (a PTHREAD_COND_INITIALIZER one times on
 * CLOCK_REALTIME).  Returns 0 or an errno value (cv not initialised);
 * pthread_cond_destroy releases it. */
int clock_cond_init(pthread_cond_t *cv);

/* The CLOCK_MONOTONIC time ms milliseconds from now (ms <= 0: now), a
 * deadline for pthread_cond_timedwait on a cond of clock_cond_init. */
struct timespec clock_deadline_in_ms(int64_t ms);

/* Waits on cv (of clock_cond_init; mu held) until woken or ms
 * milliseconds pass.  Returns pthread_cond_timedwait's answer: 0, or
 * ETIMEDOUT. */
int clock_cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t ms);

#endif
