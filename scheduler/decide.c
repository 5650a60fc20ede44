/* decide.c - the scheduler's decisions: pure functions of their
 * arguments, so every rule can be tested alone (tests/unit/test_scheduler.c)
 * and the Redis worker and `submit --local` follow the same ones. */
#include "decide.h"

int64_t scheduler_backoff_ms(long long attempt, const struct sched_backoff *b)
{
    long long shift = attempt <= 1 ? 0 : attempt - 1;
    int64_t d;

    if (shift > SCHED_BACKOFF_DOUBLINGS)
        shift = SCHED_BACKOFF_DOUBLINGS;
    d = b->base_ms << shift;
    if (b->max_ms > 0 && d > b->max_ms)
        d = b->max_ms;
    return d < 0 ? 0 : d;
}

struct sched_decision scheduler_decide(enum sched_outcome o, long long attempt, int max_attempts,
                                       const struct sched_backoff *b)
{
    struct sched_decision d = {SCHED_FINISH, 0};

    switch (o) {
    case SCHED_OUT_FINAL:
    case SCHED_OUT_CANCELLED:
        break; /* user-code failures are results, never retries */
    case SCHED_OUT_ABORTED:
        d.action = SCHED_GIVE_BACK;
        break;
    case SCHED_OUT_UNAVAILABLE:
        d.action = SCHED_PAUSE;
        break;
    case SCHED_OUT_ELSEWHERE:
        d.action = SCHED_HAND_OVER;
        break;
    case SCHED_OUT_FAILED:
        if (attempt >= max_attempts) {
            d.action = SCHED_DEAD_LETTER;
        } else {
            d.action = SCHED_RETRY;
            d.delay_ms = scheduler_backoff_ms(attempt, b);
        }
        break;
    }
    return d;
}

enum sched_admit scheduler_admit(long long deliveries, int max_attempts, int already_final,
                                 int another_runs, int cancel_requested)
{
    if (already_final)
        return SCHED_ADMIT_ACK;
    if (another_runs) /* no attempt of its own yet: its count and a cancel wait too */
        return SCHED_ADMIT_WAIT;
    if (deliveries > max_attempts)
        return SCHED_ADMIT_DEAD_LETTER;
    if (cancel_requested)
        return SCHED_ADMIT_CANCEL;
    return SCHED_ADMIT_RUN;
}

int64_t scheduler_backstop_ms(int64_t run_ms, int64_t compile_ms, int64_t install_ms,
                              int64_t grace_ms)
{
    return run_ms + compile_ms + install_ms + grace_ms;
}

int scheduler_claim_budget(int slots, int busy, int held)
{
    int free_slots = slots - busy - held;
    return free_slots > 0 ? free_slots : 0;
}

int sched_timer_due(struct sched_timer *t, int64_t now)
{
    if (now < t->next_ms)
        return 0;
    t->next_ms = now + t->every_ms;
    return 1;
}
