/* clock.h - waiting on the host side (the runner, the worker, the queue):
 * a sleep that a signal does not cut short.  Apart from common.h so the
 * static agent, which has waits of its own, neither links nor sees it. */
#ifndef LLMSB_CLOCK_H
#define LLMSB_CLOCK_H

#include <stdint.h>

/* Sleeps ms milliseconds, the whole time (EINTR resumes the sleep). */
void clock_sleep_ms(int64_t ms);

#endif
