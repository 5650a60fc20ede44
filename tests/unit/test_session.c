/* test_session.c - sessions (exec/session.c) through exec_job over the fake
 * engine, no container engine: a session keeps its sandbox across calls,
 * a close ends it and frees its sandbox and its id, a sandbox that dies
 * ends it, idle sessions expire, closing one runner leaves another
 * runner's sessions alone, and one id is two sessions in two runners, or
 * in two scopes of one runner (two MCP clients').  Each runner has its own
 * session table. */
#include "common/clock.h"
#include "exec/session.h"
#include "fake_test.h"

/* One call of session sid in scope sc (code NULL: its session_close). */
static enum sched_outcome call_in(struct fake_exec *x, const struct session_scope *sc,
                                  const char *sid, const char *code, struct job_result *r)
{
    struct llmsb_err err = {0};
    struct job j;
    enum sched_outcome o = SCHED_OUT_FAILED;

    if (fake_exec_job(&j, r, &x->cfg, "call", code ? code : "", sid) == 0) {
        j.session_close = code == NULL;
        j.session_scope = sc;
        o = exec_job(&x->rn, &x->rn.be, &j, NULL, r, &err);
    }
    job_release(&j);
    return o;
}

/* One call of session sid in the runner's own scope. */
static enum sched_outcome call(struct fake_exec *x, const char *sid, const char *code,
                               struct job_result *r)
{
    return call_in(x, NULL, sid, code, r);
}

/* The agent's pid as a call of sid in sc sees it (its parent's), or -1. */
static long agent_pid_in(struct fake_exec *x, const struct session_scope *sc, const char *sid)
{
    struct job_result r;
    long pid = -1;

    if (call_in(x, sc, sid, "echo $PPID", &r) == SCHED_OUT_FINAL && r.r.status == STATUS_OK)
        pid = strtol(r.r.out.data, NULL, 10);
    job_result_release(&r);
    return pid;
}

static long agent_pid(struct fake_exec *x, const char *sid)
{
    return agent_pid_in(x, NULL, sid);
}

static void close_session(struct fake_exec *x, const char *sid)
{
    struct job_result r;

    call(x, sid, NULL, &r);
    job_result_release(&r);
}

FAKE_TEST(keeps_its_sandbox_across_calls)
{
    static struct fake_exec x; /* held: fake_test.h */
    long first;
    int idle;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    first = agent_pid(&x, "keep");
    ASSERT(first > 0);
    ASSERT_EQ(agent_pid(&x, "keep"), first);
    ASSERT_EQ(agent_pid(&x, "keep"), first);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 1);
    /* held by the session, never idle in the pool for another job */
    ASSERT_EQ(pool_size(&x.rn.pool, &idle), 1);
    ASSERT_EQ(idle, 0);
    /* another session gets a sandbox of its own */
    ASSERT(agent_pid(&x, "keep-2") != first);
    ASSERT_CONTAINERS(&x.rn.pool, 2);
    /* the phases say how: a later call has the session's own sandbox */
    {
        struct job_result r;
        ASSERT_EQ(call(&x, "keep-2", "true", &r), SCHED_OUT_FINAL);
        ASSERT_EQ(r.ph.acquire, RESULT_ACQUIRE_SESSION);
        ASSERT(r.ph.acquire_ms >= 0 && r.ph.agent_ms >= 0 && r.ph.held_ms >= r.ph.agent_ms);
        job_result_release(&r);
        ASSERT_EQ(call(&x, "keep-3", "true", &r), SCHED_OUT_FINAL);
        ASSERT_EQ(r.ph.acquire, RESULT_ACQUIRE_COLD); /* a first call: made for it */
        job_result_release(&r);
        close_session(&x, "keep-3");
    }
    close_session(&x, "keep");
    close_session(&x, "keep-2");
    fake_exec_release(&x);
}

FAKE_TEST(close_ends_it_and_frees_its_sandbox_and_id)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;
    long first;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    first = agent_pid(&x, "closed");
    ASSERT(first > 0);
    ASSERT_EQ(call(&x, "closed", NULL, &r), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_OK);
    ASSERT_EQ(r.r.not_run, 1);
    job_result_release(&r);
    ASSERT_CONTAINERS(&x.rn.pool, 0);
    ASSERT_EQ(pool_size(&x.rn.pool, NULL), 0);
    /* the id is free: a call starts the session afresh */
    ASSERT(agent_pid(&x, "closed") != first);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 2);
    close_session(&x, "closed");
    fake_exec_release(&x);
}

FAKE_TEST(sandbox_that_dies_ends_it)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    ASSERT(agent_pid(&x, "dies") > 0);
    ASSERT_EQ(call(&x, "dies", "kill -9 $PPID; sleep 5", &r), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_SESSION_LOST);
    ASSERT_CONTAINS(r.error, "its sandbox failed during a call");
    job_result_release(&r);
    ASSERT_CONTAINERS(&x.rn.pool, 0);
    /* later calls say so rather than start afresh */
    ASSERT_EQ(call(&x, "dies", "echo again", &r), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_SESSION_LOST);
    ASSERT_CONTAINS(r.error, "its sandbox failed during a call");
    job_result_release(&r);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 1);
    close_session(&x, "dies");
    fake_exec_release(&x);
}

FAKE_TEST(idle_session_expires)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct job_result r;

    /* idle 5 s while the test checks it is not expired yet, then 300 ms
     * with 400 ms gone: seconds of margin both ways, in half a second */
    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    x.cfg.session_idle_ms = 5000;
    ASSERT(agent_pid(&x, "idle") > 0);
    session_expire(&x.rn.sessions, &x.cfg); /* not idle long enough yet */
    ASSERT_CONTAINERS(&x.rn.pool, 1);
    x.cfg.session_idle_ms = 300;
    clock_sleep_ms(400);
    session_expire(&x.rn.sessions, &x.cfg);
    ASSERT_CONTAINERS(&x.rn.pool, 0);
    ASSERT_EQ(call(&x, "idle", "echo late", &r), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_SESSION_LOST);
    ASSERT_CONTAINS(r.error, "expired: no call");
    job_result_release(&r);
    /* past its time before the janitor came: its next call ends it */
    x.cfg.session_idle_ms = 5000;
    ASSERT(agent_pid(&x, "idle-2") > 0);
    x.cfg.session_idle_ms = 300;
    clock_sleep_ms(400);
    ASSERT_EQ(call(&x, "idle-2", "echo late", &r), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_SESSION_LOST);
    ASSERT_CONTAINS(r.error, "expired");
    job_result_release(&r);
    ASSERT_CONTAINERS(&x.rn.pool, 0);
    close_session(&x, "idle");
    close_session(&x, "idle-2");
    fake_exec_release(&x);
}

FAKE_TEST(closing_another_runner_keeps_this_ones_sessions)
{
    static struct fake_exec x, y; /* held: fake_test.h */
    long first;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    ASSERT_EQ(fake_exec_init(&y, fe), 0);
    first = agent_pid(&x, "mine");
    ASSERT(first > 0);
    /* y's close ends the sessions of y's pool only */
    fake_exec_release(&y);
    ASSERT_EQ(agent_pid(&x, "mine"), first);
    close_session(&x, "mine");
    fake_exec_release(&x);
}

/* Two runners in one process (two front ends, two tests) each have their
 * own sessions: the same id is a session in each, with a sandbox of its
 * own, and closing it in one leaves the other's running. */
FAKE_TEST(two_runners_keep_their_own_sessions_of_one_id)
{
    static struct fake_exec x, y; /* held: fake_test.h */
    struct job_result r;
    long in_x, in_y;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    ASSERT_EQ(fake_exec_init(&y, fe), 0);
    in_x = agent_pid(&x, "same");
    in_y = agent_pid(&y, "same");
    ASSERT(in_x > 0 && in_y > 0);
    ASSERT(in_x != in_y); /* two sandboxes, one a runner */
    ASSERT_EQ(session_count(&x.rn.sessions), 1);
    ASSERT_EQ(session_count(&y.rn.sessions), 1);
    ASSERT_EQ(call(&y, "same", NULL, &r), SCHED_OUT_FINAL);
    ASSERT_EQ(r.r.status, STATUS_OK);
    job_result_release(&r);
    ASSERT_EQ(session_count(&y.rn.sessions), 0);
    ASSERT_EQ(agent_pid(&x, "same"), in_x); /* x's goes on */
    ASSERT_EQ(session_count(&x.rn.sessions), 1);
    close_session(&x, "same");
    fake_exec_release(&y);
    fake_exec_release(&x);
}

/* Two scopes of one runner (two MCP clients over HTTP): the same id is
 * two sessions, neither can close the other's, and the end of one scope
 * ends its sessions only and leaves nothing of them behind. */
FAKE_TEST(two_scopes_keep_their_own_sessions_of_one_id)
{
    static struct fake_exec x; /* held: fake_test.h */
    struct session_scope a, b;
    struct job_result r;
    long in_a, in_b;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    in_a = agent_pid_in(&x, &a, "s1");
    in_b = agent_pid_in(&x, &b, "s1");
    ASSERT(in_a > 0 && in_b > 0);
    ASSERT(in_a != in_b);
    ASSERT_EQ(agent_pid(&x, "s1"), agent_pid(&x, "s1")); /* the runner's own: a third */
    ASSERT(agent_pid(&x, "s1") != in_a && agent_pid(&x, "s1") != in_b);
    ASSERT_EQ(session_count(&x.rn.sessions), 3);
    ASSERT_EQ(call_in(&x, &b, "s1", NULL, &r), SCHED_OUT_FINAL); /* b closes its own */
    job_result_release(&r);
    ASSERT_EQ(agent_pid_in(&x, &a, "s1"), in_a);
    in_b = agent_pid_in(&x, &b, "s1"); /* a new one of b's */
    ASSERT(in_b > 0 && in_b != in_a);
    /* a's end: its session goes, and so does its record (not lost: new) */
    ASSERT_EQ(session_scope_end(&x.rn.sessions, &a, "its client left"), 1);
    ASSERT_EQ(session_count(&x.rn.sessions), 2);
    ASSERT_EQ(agent_pid_in(&x, &b, "s1"), in_b);
    ASSERT(agent_pid_in(&x, &a, "s1") > 0); /* a fresh session, not session_lost */
    ASSERT_EQ(session_scope_end(&x.rn.sessions, &a, "its client left"), 1);
    ASSERT_EQ(session_scope_end(&x.rn.sessions, &b, "its client left"), 1);
    close_session(&x, "s1");
    ASSERT_EQ(session_count(&x.rn.sessions), 0);
    ASSERT_CONTAINERS(&x.rn.pool, 0);
    fake_exec_release(&x);
}

TEST_MAIN("session", T(keeps_its_sandbox_across_calls),
          T(close_ends_it_and_frees_its_sandbox_and_id), T(sandbox_that_dies_ends_it),
          T(idle_session_expires), T(closing_another_runner_keeps_this_ones_sessions),
          T(two_runners_keep_their_own_sessions_of_one_id),
          T(two_scopes_keep_their_own_sessions_of_one_id))
