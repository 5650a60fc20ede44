/* clock.c - a sleep that a signal does not cut short (see clock.h). */
#include "common/clock.h"

#include <errno.h>
#include <time.h>

void clock_sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}
