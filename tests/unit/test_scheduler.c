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

/* ---- picking a lane ---------------------------------------------------------- */

/* k picks over lanes (sorted, as queue_lanes_list gives them) with left[i]
 * jobs in lane i (-1: endless): each pick takes from the first lane of the
 * order with a job, as the read script does; out gets the tag of each
 * lane picked ('.' when none had one). */
static void picks(const char *weights, const struct lane *lanes, size_t n, int *left, int k,
                  const char *tags, char *out)
{
    struct sched_pick p;
    struct llmsb_err err = {0};
    size_t order[8];

    ASSERT_EQ(sched_pick_init(&p, weights, &err), 0);
    for (int i = 0; i < k; i++) {
        size_t pos = n;
        sched_pick_order(&p, lanes, n, order);
        for (size_t at = 0; at < n && pos == n; at++)
            if (left[order[at]] != 0)
                pos = at;
        out[i] = pos < n ? tags[order[pos]] : '.';
        if (pos < n && left[order[pos]] > 0)
            left[order[pos]]--;
        sched_pick_done(&p, lanes, order, n, pos);
    }
    out[k] = '\0';
}

static int count_of(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static const struct lane three[] = {{LANE_HIGH, ""}, {LANE_NORMAL, ""}, {LANE_LOW, ""}};

TEST(lane_pick_weighted_round_robin_over_classes)
{
    int left[3] = {-1, -1, -1};
    char seq[40];

    picks("8,4,1", three, 3, left, 39, "HNL", seq);
    /* each window of 13 picks: the weights exactly, high first */
    for (int w = 0; w < 3; w++) {
        char win[14];
        snprintf(win, sizeof(win), "%.13s", seq + 13 * w);
        ASSERT_EQ(count_of(win, 'H'), 8);
        ASSERT_EQ(count_of(win, 'N'), 4);
        ASSERT_EQ(count_of(win, 'L'), 1);
    }
    ASSERT_EQ(seq[0], 'H');
    ASSERT(strstr(seq, "HHHHHHHHH") == NULL); /* smooth: high never takes 9 in a row */
}

TEST(lane_pick_strict_serves_high_first)
{
    int left[3] = {5, 3, 2};
    char seq[16];

    picks("strict", three, 3, left, 11, "HNL", seq);
    ASSERT_STR(seq, "HHHHHNNNLL.");
}

TEST(lane_pick_falls_through_and_low_is_not_starved)
{
    /* 50 low and 5 high queued: the high ones all in the first 6 picks
     * (low's weight gives it one of them), strict: the first 5 */
    int left[3] = {5, 0, 50};
    char seq[16];
    picks("8,4,1", three, 3, left, 8, "HNL", seq);
    ASSERT_STR(seq, "HHLHHHLL");
    int left1[3] = {5, 0, 50};
    picks("strict", three, 3, left1, 8, "HNL", seq);
    ASSERT_STR(seq, "HHHHHLLL");

    /* high empty (a lane of it exists): normal and low at 4:1, not 12:1 */
    int left2[3] = {0, -1, -1};
    char seq2[101];
    picks("8,4,1", three, 3, left2, 100, "HNL", seq2);
    ASSERT_EQ(count_of(seq2, 'L'), 20);
    ASSERT_EQ(count_of(seq2, 'N'), 80);

    /* an idle class saves up no credit: no burst when it comes back */
    struct sched_pick p;
    struct llmsb_err err = {0};
    size_t order[3];
    ASSERT_EQ(sched_pick_init(&p, NULL, &err), 0);
    for (int i = 0; i < 50; i++) { /* 50 picks with high empty */
        sched_pick_order(&p, three, 3, order);
        sched_pick_done(&p, three, order, 3, order[0] == 0 ? 1 : 0);
    }
    ASSERT(p.credit[0] == 0);
}

TEST(lane_pick_concurrent_slots_each_count)
{
    /* two slots order before either records (every class busy): both
     * take high, and both picks are paid for (8,4,1: high 8 - 13 twice) */
    struct sched_pick p;
    struct llmsb_err err = {0};
    size_t o1[3], o2[3];

    ASSERT_EQ(sched_pick_init(&p, "8,4,1", &err), 0);
    sched_pick_order(&p, three, 3, o1);
    sched_pick_order(&p, three, 3, o2);
    ASSERT_EQ(o1[0], 0);
    ASSERT_EQ(o2[0], 0);
    sched_pick_done(&p, three, o1, 3, 0);
    sched_pick_done(&p, three, o2, 3, 0);
    ASSERT(p.credit[LANE_HIGH] == -10);
    ASSERT(p.credit[LANE_NORMAL] == 8);
    ASSERT(p.credit[LANE_LOW] == 2);

    /* slot A takes high; slot B, ordered at the same time, found high
     * empty and took normal: high keeps A's debt */
    ASSERT_EQ(sched_pick_init(&p, "8,4,1", &err), 0);
    sched_pick_order(&p, three, 3, o1);
    sched_pick_order(&p, three, 3, o2);
    sched_pick_done(&p, three, o1, 3, 0);
    sched_pick_done(&p, three, o2, 3, 1);
    ASSERT(p.credit[LANE_HIGH] == -5);
    ASSERT(p.credit[LANE_NORMAL] == 3); /* 4, + 4, - (4 + 1) */
    ASSERT(p.credit[LANE_LOW] == 2);
}

TEST(lane_pick_round_robin_over_tenants)
{
    /* normal: the default lane, tenant a (300 jobs), tenant b (10) */
    const struct lane lanes[] = {{LANE_NORMAL, ""}, {LANE_NORMAL, "a"}, {LANE_NORMAL, "b"}};
    int left[3] = {0, 300, 10};
    char seq[41];

    picks("8,4,1", lanes, 3, left, 40, "-ab", seq);
    ASSERT_STR(seq, "ababababababababababaaaaaaaaaaaaaaaaaaaa");

    /* and within high too, each class with its own cursor */
    const struct lane mix[] = {{LANE_HIGH, "x"}, {LANE_HIGH, "y"}, {LANE_NORMAL, ""}};
    int left2[3] = {-1, -1, 0};
    picks("strict", mix, 3, left2, 6, "xy-", seq);
    ASSERT_STR(seq, "xyxyxy");
}

TEST(lane_weights_parse_and_refuse)
{
    int w[LANE_CLASSES], strict;
    struct llmsb_err err = {0};

    ASSERT_EQ(lane_weights_parse("8,4,1", w, &strict, &err), 0);
    ASSERT(w[0] == 8 && w[1] == 4 && w[2] == 1 && !strict);
    ASSERT_EQ(lane_weights_parse(NULL, w, &strict, &err), 0);
    ASSERT(w[0] == 8 && w[2] == 1);
    ASSERT_EQ(lane_weights_parse("strict", w, &strict, &err), 0);
    ASSERT(strict);
    const char *bad[] = {"0,4,1",  "8,4",  "8,4,1,2",  "a,b,c",
                         "8,4,1 ", "8,,1", "8,4,1001", "Strict"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ASSERT(lane_weights_parse(bad[i], w, &strict, &err) != 0);
        ASSERT_CONTAINS(err.msg, "high,normal,low");
    }
}

TEST(lane_names_parse_and_refuse)
{
    struct lane l;
    char name[LANE_NAME_MAX];
    struct llmsb_err err = {0};
    struct fields f;

    ASSERT_EQ(lane_parse("high", 4, &l), 0);
    ASSERT(l.cls == LANE_HIGH && !l.tenant[0]);
    ASSERT_EQ(lane_parse("normal:acme.co-1", 16, &l), 0);
    lane_name(&l, name);
    ASSERT_STR(name, "normal:acme.co-1");
    ASSERT_EQ(lane_parse("normal", 6, &l), -1); /* the default lane is prefix:jobs */
    ASSERT_EQ(lane_parse("high:", 5, &l), -1);
    ASSERT_EQ(lane_parse("urgent", 6, &l), -1);
    ASSERT_EQ(lane_parse("low:a/b", 7, &l), -1);
    ASSERT_EQ(lane_parse("low:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 37, &l), -1); /* 33 bytes */
    fields_init(&f, 8);
    fields_adds(&f, "priority", "urgent");
    ASSERT(lane_of_fields(&f, &l, &err) != 0);
    ASSERT_CONTAINS(err.msg, "priority: \"urgent\" is not a priority (high, normal or low)");
    fields_release(&f);
    fields_init(&f, 8);
    fields_adds(&f, "tenant", "a b");
    ASSERT(lane_of_fields(&f, &l, &err) != 0);
    ASSERT_CONTAINS(err.msg, "tenant: \"a b\" must be 1 to 32");
    fields_release(&f);
    fields_init(&f, 8);
    fields_adds(&f, "priority", "normal");
    ASSERT_EQ(lane_of_fields(&f, &l, &err), 0);
    ASSERT(lane_is_default(&l));
    fields_release(&f);
}

TEST_MAIN("scheduler", T(final_results_are_never_retried),
          T(infrastructure_failure_retries_then_dead_letters), T(abort_gives_back_without_counting),
          T(engine_outage_pauses_and_never_dead_letters), T(backoff_doubles_and_is_bounded),
          T(admission_of_a_delivered_job), T(duplicate_delivery_of_a_finished_id),
          T(another_run_of_the_id_waits), T(cancel_before_and_while_running),
          T(agent_internal_error_is_ours), T(backstop_adds_every_step_and_the_grace),
          T(claim_budget_never_negative), T(timers_fire_once_per_period),
          T(status_table_parses_every_name_and_nothing_else),
          T(lane_pick_weighted_round_robin_over_classes), T(lane_pick_strict_serves_high_first),
          T(lane_pick_falls_through_and_low_is_not_starved),
          T(lane_pick_concurrent_slots_each_count), T(lane_pick_round_robin_over_tenants),
          T(lane_weights_parse_and_refuse), T(lane_names_parse_and_refuse))
