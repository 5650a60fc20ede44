/* test_scheduler.c - every decision of the scheduler, alone: admission of
 * a delivered job, what an attempt's outcome leads to, the back-off and
 * its bound, deadlines, the claim budget and timers; plus the status table
 * the decisions rest on. */
#include "test.h"

#include "common/status.h"
#include "scheduler/scheduler.h"

static const struct sched_backoff backoff = {1000, 15000};

TEST(final_results_are_never_retried)
{
    for (long long attempt = 1; attempt <= 5; attempt++) {
        struct sched_decision d = scheduler_decide(SCHED_OUT_FINAL, attempt, 3, &backoff);
        ASSERT_EQ(d.action, SCHED_FINISH);
        d = scheduler_decide(SCHED_OUT_CANCELLED, attempt, 3, &backoff);
        ASSERT_EQ(d.action, SCHED_FINISH);
    }
}

TEST(infrastructure_failure_retries_then_dead_letters)
{
    struct sched_decision d = scheduler_decide(SCHED_OUT_FAILED, 1, 3, &backoff);
    ASSERT_EQ(d.action, SCHED_RETRY);
    ASSERT_EQ(d.delay_ms, 1000);
    d = scheduler_decide(SCHED_OUT_FAILED, 2, 3, &backoff);
    ASSERT_EQ(d.action, SCHED_RETRY);
    ASSERT_EQ(d.delay_ms, 2000);
    d = scheduler_decide(SCHED_OUT_FAILED, 3, 3, &backoff);
    ASSERT_EQ(d.action, SCHED_DEAD_LETTER);
    d = scheduler_decide(SCHED_OUT_FAILED, 1, 1, &backoff); /* max_attempts 1: no retry */
    ASSERT_EQ(d.action, SCHED_DEAD_LETTER);
    d = scheduler_decide(SCHED_OUT_FAILED, 9, 3, &backoff); /* past the max (a reclaim) */
    ASSERT_EQ(d.action, SCHED_DEAD_LETTER);
}

TEST(abort_gives_back_without_counting)
{
    struct sched_decision d = scheduler_decide(SCHED_OUT_ABORTED, 3, 3, &backoff);
    ASSERT_EQ(d.action, SCHED_GIVE_BACK);
    ASSERT_EQ(d.delay_ms, 0);
}

/* an engine outage is the worker's: whatever the count, pause and give back */
TEST(engine_outage_pauses_and_never_dead_letters)
{
    struct sched_decision d = scheduler_decide(SCHED_OUT_UNAVAILABLE, 3, 3, &backoff);
    ASSERT_EQ(d.action, SCHED_PAUSE);
    d = scheduler_decide(SCHED_OUT_UNAVAILABLE, 1, 1, &backoff);
    ASSERT_EQ(d.action, SCHED_PAUSE);
}

TEST(backoff_doubles_and_is_bounded)
{
    const struct sched_backoff unbounded = {1000, 0};
    ASSERT_EQ(scheduler_backoff_ms(1, &backoff), 1000);
    ASSERT_EQ(scheduler_backoff_ms(2, &backoff), 2000);
    ASSERT_EQ(scheduler_backoff_ms(3, &backoff), 4000);
    ASSERT_EQ(scheduler_backoff_ms(4, &backoff), 8000);
    ASSERT_EQ(scheduler_backoff_ms(5, &backoff), 15000); /* max_ms */
    ASSERT_EQ(scheduler_backoff_ms(1000, &backoff), 15000);
    ASSERT_EQ(scheduler_backoff_ms(0, &backoff), 1000); /* never below the base */
    ASSERT_EQ(scheduler_backoff_ms(-5, &backoff), 1000);
    ASSERT_EQ(scheduler_backoff_ms(1000, &unbounded), 1000 << SCHED_BACKOFF_DOUBLINGS);
}

TEST(admission_of_a_delivered_job)
{
    ASSERT_EQ(scheduler_admit(1, 3, 0, 0, 0), SCHED_ADMIT_RUN);
    ASSERT_EQ(scheduler_admit(3, 3, 0, 0, 0), SCHED_ADMIT_RUN); /* the last try */
    ASSERT_EQ(scheduler_admit(4, 3, 0, 0, 0), SCHED_ADMIT_DEAD_LETTER);
    ASSERT_EQ(scheduler_admit(1, 3, 0, 0, 1), SCHED_ADMIT_CANCEL);
}

/* A duplicate delivery of a finished id is acknowledged without running,
 * whatever else is true of it: the first final result stands. */
TEST(duplicate_delivery_of_a_finished_id)
{
    ASSERT_EQ(scheduler_admit(1, 3, 1, 0, 0), SCHED_ADMIT_ACK);
    ASSERT_EQ(scheduler_admit(7, 3, 1, 0, 0), SCHED_ADMIT_ACK);
    ASSERT_EQ(scheduler_admit(1, 3, 1, 0, 1), SCHED_ADMIT_ACK);
}

/* An entry whose id another entry runs waits for that run (given back
 * uncounted), whatever its count or a cancel request; a final result
 * still stands first. */
TEST(another_run_of_the_id_waits)
{
    ASSERT_EQ(scheduler_admit(1, 3, 0, 1, 0), SCHED_ADMIT_WAIT);
    ASSERT_EQ(scheduler_admit(4, 3, 0, 1, 0), SCHED_ADMIT_WAIT);
    ASSERT_EQ(scheduler_admit(1, 3, 0, 1, 1), SCHED_ADMIT_WAIT);
    ASSERT_EQ(scheduler_admit(1, 3, 1, 1, 0), SCHED_ADMIT_ACK);
}

/* Cancel before the start is admission's; cancel while running is the
 * outcome CANCELLED, a final result. */
TEST(cancel_before_and_while_running)
{
    ASSERT_EQ(scheduler_admit(2, 3, 0, 0, 1), SCHED_ADMIT_CANCEL);
    ASSERT_EQ(scheduler_decide(SCHED_OUT_CANCELLED, 1, 3, &backoff).action, SCHED_FINISH);
}

/* An agent that reports internal_error is an infrastructure failure: the
 * status table says so, so the sandbox turns it into SCHED_OUT_FAILED and
 * the scheduler retries it, then dead-letters it. */
TEST(agent_internal_error_is_ours)
{
    const struct status_info *si = status_info(STATUS_INTERNAL_ERROR);
    ASSERT_EQ(si->fault, FAULT_INFRA);
    ASSERT(si->from_agent);
    ASSERT_EQ(scheduler_decide(SCHED_OUT_FAILED, 1, 2, &backoff).action, SCHED_RETRY);
    ASSERT_EQ(scheduler_decide(SCHED_OUT_FAILED, 2, 2, &backoff).action, SCHED_DEAD_LETTER);
}

TEST(backstop_adds_every_step_and_the_grace)
{
    ASSERT_EQ(scheduler_backstop_ms(10000, 0, 0, 10000), 20000);
    ASSERT_EQ(scheduler_backstop_ms(10000, 60000, 180000, 10000), 260000);
}

TEST(claim_budget_never_negative)
{
    ASSERT_EQ(scheduler_claim_budget(4, 1, 1), 2);
    ASSERT_EQ(scheduler_claim_budget(4, 4, 0), 0);
    ASSERT_EQ(scheduler_claim_budget(2, 2, 3), 0);
}

TEST(timers_fire_once_per_period)
{
    struct sched_timer t = {1000, 0};
    ASSERT_EQ(sched_timer_due(&t, 5000), 1); /* at once the first time */
    ASSERT_EQ(sched_timer_due(&t, 5500), 0);
    ASSERT_EQ(sched_timer_due(&t, 5999), 0);
    ASSERT_EQ(sched_timer_due(&t, 6000), 1);
    ASSERT_EQ(sched_timer_due(&t, 6001), 0);
}

TEST(status_table_parses_every_name_and_nothing_else)
{
    enum job_status st;
    for (int i = STATUS_NONE + 1; i < STATUS_COUNT; i++) {
        const char *n = status_name((enum job_status)i);
        ASSERT_EQ(status_parse(n, strlen(n), &st), 0);
        ASSERT_EQ(st, (enum job_status)i);
    }
    ASSERT(status_parse("", 0, &st) != 0);
    ASSERT(status_parse("OK", 2, &st) != 0);
    ASSERT(status_parse("ok ", 3, &st) != 0);
    ASSERT(status_parse("o", 1, &st) != 0);
    ASSERT_STR(status_name((enum job_status)999), "");
    ASSERT(!status_final(STATUS_RUNNING));
    ASSERT(status_final(STATUS_CANCELLED));
    ASSERT_EQ(status_info(STATUS_TIMEOUT)->run_exit, 124);
    ASSERT_EQ(status_info(STATUS_OK)->run_exit, STATUS_EXIT_PROGRAM);
    ASSERT(!status_info(STATUS_BLOCKED)->from_agent); /* only the worker blocks */
    ASSERT(!status_info(STATUS_CANCELLED)->from_agent);
}

TEST_MAIN("scheduler", T(final_results_are_never_retried),
          T(infrastructure_failure_retries_then_dead_letters), T(abort_gives_back_without_counting),
          T(engine_outage_pauses_and_never_dead_letters), T(backoff_doubles_and_is_bounded),
          T(admission_of_a_delivered_job), T(duplicate_delivery_of_a_finished_id),
          T(another_run_of_the_id_waits), T(cancel_before_and_while_running),
          T(agent_internal_error_is_ours), T(backstop_adds_every_step_and_the_grace),
          T(claim_budget_never_negative), T(timers_fire_once_per_period),
          T(status_table_parses_every_name_and_nothing_else))
