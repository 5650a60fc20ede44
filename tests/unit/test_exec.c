/* test_exec.c - the executor (exec/exec.c: exec_job) and the runner's retry policy (exec/runner.c: runner_run) over
 * the fake engine, no container engine: a final result, a failed attempt
 * retried, attempts used up, an engine outage that is not counted, an
 * agent's internal_error, cancel and abort; the phases an agent without
 * TAG_PHASES leaves (the host's only). */
#include <pthread.h>
#include <time.h>

#include "fake_test.h"

/* One attempt of code; the result in r (released by the caller). */
static enum sched_outcome attempt(struct fake_exec *x, const char *code, atomic_int *cancel,
                                  struct job_result *r, struct llmsb_err *err)
{
    struct job j;
    enum sched_outcome o = SCHED_OUT_FAILED;

    if (fake_exec_job(&j, r, &x->cfg, "t1", code, NULL) == 0)
        o = exec_job(&x->rn, &x->rn.be, &j, cancel, r, err);
    job_release(&j);
    return o;
}

/* code with the scheduler's retries, at most max_attempts counted. */
static enum sched_outcome retrying(struct fake_exec *x, const char *code, int max_attempts,
                                   atomic_int *cancel, struct job_result *r)
{
    struct job j;
    enum sched_outcome o = SCHED_OUT_FAILED;

    if (fake_exec_job(&j, r, &x->cfg, "t2", code, NULL) == 0) {
        j.max_attempts = max_attempts;
        o = runner_run(&x->rn, NULL, &j, cancel, r);
    }
    job_release(&j);
    return o;
}

FAKE_TEST(final_result)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;
    struct llmsb_err err = {0};
    int idle;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    ASSERT_EQ(attempt(&x, "echo hi; exit 4", NULL, &r, &err), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_RUNTIME_ERROR);
    ASSERT_EQ(r.r.exit_code, 4);
    ASSERT(r.r.out.len == 3 && memcmp(r.r.out.data, "hi\n", 3) == 0);
    ASSERT_STR(r.backend, "fake");
    ASSERT_CONTAINS(r.image, "llmsb/python");
    ASSERT(r.finished_at >= r.started_at && r.started_at > 0);
    job_result_release(&r);
    /* its container went back to the pool, and the next job gets it */
    ASSERT_EQ(pool_size(&x.rn.pool, &idle), 1);
    ASSERT_EQ(idle, 1);
    ASSERT_EQ(attempt(&x, "echo again", NULL, &r, &err), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_OK);
    job_result_release(&r);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 1);
    fake_exec_release(&x);
}

/* The host's phases of an agent that sends none (the fake one, as an
 * agent older than TAG_PHASES): a cold acquire, then a warm one; the
 * agent's turn inside the total; no step of the agent's. */
FAKE_TEST(phases_of_an_agent_without_them)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;
    struct llmsb_err err = {0};
    cJSON *o, *ph;
    const char *kinds[] = {"cold", "warm"};

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(attempt(&x, "sleep 0.2", NULL, &r, &err), SCHED_OUT_FINAL);
        o = job_result_json(&r);
        ph = cJSON_GetObjectItem(o, "phases");
        ASSERT_STR(cJSON_GetObjectItem(ph, "acquire")->valuestring, kinds[i]);
        ASSERT(cJSON_GetObjectItem(ph, "agent_ms")->valueint >= 200);
        ASSERT(cJSON_GetObjectItem(ph, "total_ms")->valueint >=
               cJSON_GetObjectItem(ph, "prepare_ms")->valueint +
                   cJSON_GetObjectItem(ph, "acquire_ms")->valueint +
                   cJSON_GetObjectItem(ph, "agent_ms")->valueint +
                   cJSON_GetObjectItem(ph, "finish_ms")->valueint);
        ASSERT(!cJSON_GetObjectItem(ph, "run_ms") && !cJSON_GetObjectItem(ph, "compile_ms"));
        cJSON_Delete(o);
        job_result_release(&r);
    }
    fake_exec_release(&x);
}

FAKE_TEST(failed_attempt_is_retried)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    fake_engine_fail(fe, FAKE_OP_CREATE, 1);
    ASSERT_EQ(retrying(&x, "echo ok", 3, NULL, &r), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_OK);
    ASSERT_EQ(r.attempts, 2);
    ASSERT_EQ(r.error[0], '\0'); /* the failed attempt's word is not the result's */
    job_result_release(&r);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 2);
    fake_exec_release(&x);
}

FAKE_TEST(attempts_used_up_is_internal_error)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    fake_engine_fail(fe, FAKE_OP_CREATE, -1);
    ASSERT_EQ(retrying(&x, "echo ok", 2, NULL, &r), SCHED_OUT_FAILED);
    ASSERT_EQ(r.r.status, STATUS_INTERNAL_ERROR);
    ASSERT_EQ(r.attempts, 2);
    ASSERT_CONTAINS(r.error, "infrastructure failed 2 times");
    ASSERT_CONTAINS(r.error, "create failed");
    job_result_release(&r);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 2);
    fake_exec_release(&x);
}

FAKE_TEST(agent_internal_error_is_retried_then_internal_error)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    fake_engine_agent(fe, 1, 0);
    ASSERT_EQ(retrying(&x, "echo ok", 2, NULL, &r), SCHED_OUT_FAILED);
    ASSERT_EQ(r.r.status, STATUS_INTERNAL_ERROR);
    ASSERT_CONTAINS(r.error, "could not fork");
    job_result_release(&r);
    /* a container whose agent failed is not reused */
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 2);
    ASSERT_CONTAINERS(&x.rn.pool, 0);
    fake_exec_release(&x);
}

FAKE_TEST(engine_outage_is_not_counted)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    /* the create fails and the engine does not answer a ping: the
     * attempt is the outage's, not the job's (one attempt allowed) */
    fake_engine_fail(fe, FAKE_OP_CREATE, 1);
    fake_engine_fail(fe, FAKE_OP_PING, 1);
    ASSERT_EQ(retrying(&x, "echo ok", 1, NULL, &r), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_OK);
    ASSERT_EQ(r.attempts, 1);
    job_result_release(&r);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 2);
    ASSERT(fake_engine_calls(fe, FAKE_OP_PING) >= 2);
    fake_exec_release(&x);
}

struct flagger {
    atomic_int *flag;
    int value;
};

static void *flag_soon(void *ud)
{
    struct flagger *f = ud;
    struct timespec ts = {0, 300 * 1000000};

    nanosleep(&ts, NULL);
    atomic_store(f->flag, f->value);
    return NULL;
}

/* code stopped by value through the cancel flag 300 ms in. */
static enum sched_outcome stopped(struct fake_exec *x, int value, int retry, struct job_result *r,
                                  int64_t *took_ms)
{
    atomic_int cancel = SCHED_GO;
    struct flagger f = {&cancel, value};
    struct llmsb_err err = {0};
    enum sched_outcome o;
    int64_t t0 = clock_mono_ms();
    pthread_t th;

    pthread_create(&th, NULL, flag_soon, &f);
    o = retry ? retrying(x, "sleep 30", 3, &cancel, r) : attempt(x, "sleep 30", &cancel, r, &err);
    pthread_join(th, NULL);
    *took_ms = clock_mono_ms() - t0;
    return o;
}

FAKE_TEST(cancel_and_abort)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;
    int64_t took;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    ASSERT_EQ(stopped(&x, SCHED_CANCEL_USER, 0, &r, &took), SCHED_OUT_CANCELLED);
    ASSERT_EQ(r.r.status, STATUS_CANCELLED);
    ASSERT(took < 10000); /* not the sleep's 30 s */
    job_result_release(&r);
    ASSERT_CONTAINERS(&x.rn.pool, 0); /* a cancelled job's container goes */
    ASSERT_EQ(stopped(&x, SCHED_CANCEL_ABORT, 0, &r, &took), SCHED_OUT_ABORTED);
    ASSERT_EQ(r.r.status, STATUS_NONE); /* given back: no result */
    job_result_release(&r);
    ASSERT_EQ(stopped(&x, SCHED_CANCEL_USER, 1, &r, &took), SCHED_OUT_CANCELLED);
    ASSERT_EQ(r.r.status, STATUS_CANCELLED);
    ASSERT_EQ(r.attempts, 1);
    job_result_release(&r);
    ASSERT_EQ(stopped(&x, SCHED_CANCEL_ABORT, 1, &r, &took), SCHED_OUT_ABORTED);
    ASSERT(took < 10000);
    job_result_release(&r);
    ASSERT_EQ(pool_settle(&x.rn.pool, 10000), 0);
    ASSERT_EQ(fake_engine_running(fe), 0);
    fake_exec_release(&x);
}

FAKE_TEST(runner_stamps_its_worker_name)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    ASSERT_EQ(retrying(&x, "echo ok", 1, NULL, &r), SCHED_OUT_FINAL);
    ASSERT(r.worker[0]);
    ASSERT_STR(r.worker, x.rn.id.worker);
    job_result_release(&r);
    fake_exec_release(&x);
}

FAKE_TEST(runner_attempt_in_an_outage_is_unavailable)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job j;
    struct job_result r;
    struct llmsb_err err = {0};

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    /* a failed create while the engine answers is the attempt's failure;
     * while it does not answer, the worker's (not counted, queue paused) */
    ASSERT_EQ(fake_exec_job(&j, &r, &x.cfg, "t3", "echo ok", NULL), 0);
    fake_engine_fail(fe, FAKE_OP_CREATE, 1);
    ASSERT_EQ(runner_attempt(&x.rn, NULL, &j, NULL, &r, &err), SCHED_OUT_FAILED);
    job_result_release(&r);
    job_result_init(&r, &j);
    fake_engine_fail(fe, FAKE_OP_CREATE, 1);
    fake_engine_fail(fe, FAKE_OP_PING, 1);
    ASSERT_EQ(runner_attempt(&x.rn, NULL, &j, NULL, &r, &err), SCHED_OUT_UNAVAILABLE);
    job_result_release(&r);
    job_release(&j);
    fake_exec_release(&x);
}

FAKE_TEST(runner_gives_up_on_a_lost_engine_after_its_wait)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;
    int64_t t0;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    fake_engine_fail(fe, FAKE_OP_CREATE, -1);
    fake_engine_fail(fe, FAKE_OP_PING, -1);
    t0 = clock_mono_ms();
    ASSERT_EQ(retrying(&x, "echo ok", 3, NULL, &r), SCHED_OUT_FAILED);
    /* engine_wait_ms is 2 s here: it waited, then said why */
    ASSERT(clock_mono_ms() - t0 >= 1900);
    ASSERT_EQ(r.r.status, STATUS_INTERNAL_ERROR);
    ASSERT(r.error && r.error[0]);
    job_result_release(&r);
    fake_engine_fail(fe, FAKE_OP_CREATE, 0);
    fake_engine_fail(fe, FAKE_OP_PING, 0);
    fake_exec_release(&x);
}

TEST_MAIN("exec", T(final_result), T(phases_of_an_agent_without_them), T(failed_attempt_is_retried),
          T(attempts_used_up_is_internal_error),
          T(agent_internal_error_is_retried_then_internal_error), T(engine_outage_is_not_counted),
          T(cancel_and_abort), T(runner_stamps_its_worker_name),
          T(runner_attempt_in_an_outage_is_unavailable),
          T(runner_gives_up_on_a_lost_engine_after_its_wait))
