/* clock.c - a sleep that a signal does not cut short, and monotonic
 * deadlines for condition variables (see clock.h). */
#include "common/clock.h"

#include <errno.h>

void clock_sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int clock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);

    if (rc != 0)
        return rc;
    if ((rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)) == 0)
        rc = pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}

struct timespec clock_deadline_in_ms(int64_t ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail: a valid clock, a valid pointer */
    if (ms <= 0)
        return ts;
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

int clock_cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t ms)
{
    struct timespec until = clock_deadline_in_ms(ms);

    return pthread_cond_timedwait(cv, mu, &until);
}
