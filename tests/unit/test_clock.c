/* test_clock.c - timed waits on the monotonic clock (common/clock.h): a
 * cond of clock_cond_init waits out a deadline of clock_deadline_in_ms,
 * and the same deadline on a cond timed by the wall clock (the default,
 * PTHREAD_COND_INITIALIZER) is long past, which is why every cond waited
 * on with one is made by clock_cond_init. */
#include "test.h"

#include <errno.h>
#include <pthread.h>

#include "common/clock.h"
#include "common/common.h"

TEST(deadline_is_now_plus_ms_on_the_monotonic_clock)
{
    struct timespec now, d;
    int64_t ms;

    clock_gettime(CLOCK_MONOTONIC, &now);
    d = clock_deadline_in_ms(1999);
    ASSERT(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
    ms = (int64_t)(d.tv_sec - now.tv_sec) * 1000 + (d.tv_nsec - now.tv_nsec) / 1000000;
    ASSERT_MSG(ms >= 1999 && ms < 1999 + 1000, "the deadline 1999 ms ahead");
    d = clock_deadline_in_ms(-5); /* past: now */
    ASSERT(d.tv_sec >= now.tv_sec && d.tv_sec - now.tv_sec < 2);
}

TEST(a_wait_lasts_its_time)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv, wall = PTHREAD_COND_INITIALIZER;
    struct timespec until;
    int64_t t0;

    ASSERT_EQ(clock_cond_init(&cv), 0);
    pthread_mutex_lock(&mu);
    t0 = clock_mono_ms();
    ASSERT_EQ(clock_cond_wait_ms(&cv, &mu, 150), ETIMEDOUT);
    ASSERT_MSG(clock_mono_ms() - t0 >= 150, "a wait of 150 ms");
    /* a monotonic deadline 10 s ahead read by a wall-clock cond: decades
     * ago, no wait */
    until = clock_deadline_in_ms(10000);
    t0 = clock_mono_ms();
    ASSERT_EQ(pthread_cond_timedwait(&wall, &mu, &until), ETIMEDOUT);
    ASSERT(clock_mono_ms() - t0 < 100);
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&cv);
}

TEST_MAIN("clock", T(deadline_is_now_plus_ms_on_the_monotonic_clock), T(a_wait_lasts_its_time))
