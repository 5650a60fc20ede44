/* test_sandbox.c - the worker's side of the agent protocol (sandbox/sandbox.c)
 * over the fake engine (tests/doubles/fake_engine.h), no container engine:
 * a job's round trip, a container that dies or goes silent mid-job, a slow
 * or failed start, a cancel, an agent that reports internal_error, a
 * prestart only where the agent takes it, RLIMIT_NPROC at the pids limit
 * where the agent says gVisor. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "fake_test.h"

static struct container_spec spec_of(void)
{
    struct container_spec spec = {0};
    spec.image = "llmsb/fake:latest";
    spec.memory_bytes = (int64_t)256 << 20;
    return spec;
}

static void close_sandbox(void *sb)
{
    sandbox_close(sb);
}

/* sandbox_open, and held when open (sb static in the body): closed after
 * the body however it ended (sandbox_close again after the body's own is
 * nothing). */
static int open_held(struct sandbox *sb, struct fake_engine *fe, const struct container_spec *spec,
                     int64_t start_timeout_ms, struct llmsb_err *err)
{
    int rc = sandbox_open(sb, fake_engine_backend(fe), spec, start_timeout_ms, err);

    if (rc == 0)
        fake_test_hold(close_sandbox, sb);
    return rc;
}

FAKE_TEST(round_trip_status_stdout_exit_code)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct proto_result res;
    struct llmsb_err err = {0};
    int rc, pid1;

    rc = open_held(&sb, fe, &spec, 5000, &err);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(fake_engine_running(fe), 1);
    rc = fake_test_run(&sb, "cat; echo out; echo oops >&2; exit 3", "in:", 5000, &res, &err);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(res.status, STATUS_RUNTIME_ERROR);
    ASSERT_EQ(res.exit_code, 3);
    ASSERT_EQ(res.out.len, 7u);
    ASSERT(memcmp(res.out.data, "in:out\n", 7) == 0);
    ASSERT(res.err.len == 5 && memcmp(res.err.data, "oops\n", 5) == 0);
    proto_result_release(&res);
    ASSERT_EQ(sb.healthy, 1);
    /* the next job runs in the same container, after the agent's READY */
    rc = fake_test_run(&sb, "echo $PPID", NULL, 5000, &res, &err);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(res.status, STATUS_OK);
    ASSERT_EQ(res.exit_code, 0);
    pid1 = atoi(res.out.data ? res.out.data : "0");
    proto_result_release(&res);
    ASSERT(pid1 > 0);
    ASSERT_EQ(sb.jobs, 2);
    ASSERT_EQ(sandbox_ping(&sb, 2000, &err), 0);
    sandbox_close(&sb);
    ASSERT_EQ(fake_engine_containers(fe), 0);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_REMOVE), 1);
}

FAKE_TEST(container_dies_mid_job_is_an_error_not_a_hang)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct proto_result res;
    struct llmsb_err err = {0};
    int64_t t0;
    int rc;

    ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
    t0 = clock_mono_ms();
    /* the job kills its own agent: the container's main process is gone */
    rc = fake_test_run(&sb, "kill -9 $PPID; sleep 30", NULL, 60000, &res, &err);
    proto_result_release(&res);
    ASSERT(rc < 0);
    ASSERT(clock_mono_ms() - t0 < 10000); /* not the sleep's 30 s */
    ASSERT_CONTAINS(err.msg, "stream closed");
    ASSERT_EQ(sb.healthy, 0);
    /* a sandbox that failed is not run again */
    ASSERT(fake_test_run(&sb, "true", NULL, 5000, &res, &err) < 0);
    proto_result_release(&res);
    sandbox_close(&sb);
    ASSERT_EQ(fake_engine_containers(fe), 0);
}

struct killer {
    struct fake_engine *fe;
    int oom;
};

static void *kill_soon(void *ud)
{
    struct killer *k = ud;
    struct timespec ts = {0, 300 * 1000000};

    nanosleep(&ts, NULL);
    fake_engine_kill(k->fe, NULL, k->oom);
    return NULL;
}

FAKE_TEST(oom_killed_container_is_memory_limit)
{
    struct container_spec spec = spec_of();
    struct killer k = {fe, 1};
    static struct sandbox sb; /* held: open_held */
    struct proto_result res;
    struct llmsb_err err = {0};
    pthread_t th;
    int rc;

    ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
    pthread_create(&th, NULL, kill_soon, &k);
    rc = fake_test_run(&sb, "sleep 30", NULL, 60000, &res, &err);
    pthread_join(th, NULL);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(res.status, STATUS_MEMORY_LIMIT);
    ASSERT_EQ(res.not_run, 1);
    proto_result_release(&res);
    ASSERT_EQ(sb.healthy, 0);
    sandbox_close(&sb);
}

FAKE_TEST(silent_agent_past_backstop_is_timeout)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct proto_result res;
    struct llmsb_err err = {0};
    int64_t t0;

    ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
    t0 = clock_mono_ms();
    ASSERT_EQ(fake_test_run(&sb, "sleep 30", NULL, 400, &res, &err), 0);
    ASSERT(clock_mono_ms() - t0 < 10000); /* the backstop, not the sleep */
    ASSERT_EQ(res.status, STATUS_TIMEOUT);
    ASSERT_EQ(res.not_run, 1);
    proto_result_release(&res);
    ASSERT_EQ(sb.healthy, 0);
    sandbox_close(&sb);
    ASSERT_EQ(fake_engine_containers(fe), 0);
}

FAKE_TEST(slow_start_past_start_timeout_fails_and_removes)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct llmsb_err err = {0};

    fake_engine_agent(fe, 0, 2000);
    ASSERT_EQ(open_held(&sb, fe, &spec, 300, &err), LLMSB_ERR_TIMEOUT);
    ASSERT_CONTAINS(err.msg, "did not start its agent");
    ASSERT_EQ(fake_engine_containers(fe), 0);
    /* slow, but within the timeout */
    fake_engine_agent(fe, 0, 300);
    ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
    sandbox_close(&sb);
}

FAKE_TEST(failed_create_and_start_leave_nothing)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct llmsb_err err = {0};

    fake_engine_fail(fe, FAKE_OP_CREATE, 1);
    ASSERT(open_held(&sb, fe, &spec, 5000, &err) < 0);
    ASSERT_CONTAINS(err.msg, "create failed");
    fake_engine_fail(fe, FAKE_OP_START, 1);
    ASSERT(open_held(&sb, fe, &spec, 5000, &err) < 0);
    ASSERT_CONTAINS(err.msg, "start failed");
    ASSERT_EQ(fake_engine_containers(fe), 0);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_REMOVE), 1);
}

static void *cancel_soon(void *ud)
{
    struct timespec ts = {0, 300 * 1000000};

    nanosleep(&ts, NULL);
    atomic_store((atomic_int *)ud, SANDBOX_CANCEL);
    return NULL;
}

FAKE_TEST(cancel_stops_the_wait)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct proto_result res;
    struct llmsb_err err = {0};
    atomic_int cancel = SANDBOX_GO;
    pthread_t th;
    int64_t t0;
    int rc;

    ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
    sb.cancel = &cancel;
    pthread_create(&th, NULL, cancel_soon, &cancel);
    t0 = clock_mono_ms();
    rc = fake_test_run(&sb, "sleep 30", NULL, 60000, &res, &err);
    pthread_join(th, NULL);
    proto_result_release(&res);
    ASSERT_EQ(rc, LLMSB_ERR_INTERRUPTED);
    ASSERT(clock_mono_ms() - t0 < 10000); /* not the sleep's 30 s */
    sandbox_close(&sb);
    ASSERT_EQ(fake_engine_running(fe), 0);
}

FAKE_TEST(agent_internal_error_is_ours)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct proto_result res;
    struct llmsb_err err = {0};

    fake_engine_agent(fe, 1, 0);
    ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
    ASSERT_EQ(fake_test_run(&sb, "true", NULL, 5000, &res, &err), LLMSB_ERR_BACKEND);
    proto_result_release(&res);
    ASSERT_CONTAINS(err.msg, "could not fork");
    ASSERT_EQ(sb.healthy, 0);
    sandbox_close(&sb);
}

/* The fake agent's HELLO does not say TAG_PRESTART (an agent older than
 * PROTO_PRESTART): nothing is sent to it, which would go unanswered, and
 * the job runs as before; after a job, none is sent whatever the agent
 * said. */
FAKE_TEST(prestart_only_to_an_agent_that_takes_it)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct proto_result res;
    struct proto_job pj;
    struct llmsb_err err = {0};
    int64_t t0;

    ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
    ASSERT_EQ(sb.prestart, 0);
    fake_test_job(&pj, "echo hi", NULL);
    pj.zygote = strdup("/usr/local/lib/llmsb/llmsb_zygote.py");
    t0 = clock_mono_ms();
    ASSERT_EQ(sandbox_prestart(&sb, &pj, &err), 0);
    ASSERT(clock_mono_ms() - t0 < 1000);
    ASSERT_EQ(sb.need_ready, 0);
    ASSERT_EQ(fake_test_run(&sb, "echo hi", NULL, 5000, &res, &err), 0);
    ASSERT_EQ(res.status, STATUS_OK);
    proto_result_release(&res);
    sb.prestart = 1; /* as if the HELLO had said so: the sandbox ran a job */
    ASSERT_EQ(sandbox_prestart(&sb, &pj, &err), 0);
    ASSERT_EQ(sb.prestart, 1);
    proto_job_release(&pj);
    ASSERT_EQ(sandbox_ping(&sb, 2000, &err), 0);
    ASSERT_EQ(sb.healthy, 1);
    sandbox_close(&sb);
}

/* 1 when b holds the text s. */
static int buf_contains(const struct buf *b, const char *s)
{
    return b->len >= strlen(s) && memmem(b->data, b->len, s, strlen(s)) != NULL;
}

/* What a live job's sink got: each stream's bytes in the order given. */
struct got_live {
    struct buf out, err;
    int calls, begins;
};

static void got_begin(void *arg)
{
    ((struct got_live *)arg)->begins++;
}

static void got_chunk(void *arg, const struct proto_chunk *c)
{
    struct got_live *g = arg;

    buf_append(c->fd == 1 ? &g->out : &g->err, c->data, c->len);
    g->calls++;
}

/* A live job on an agent that sends OUTPUT: its chunks reach the sink in
 * order, the one out of order after them is dropped, the RESULT is whole.
 * The sink's begin comes before the attempt.  An agent that does not say
 * TAG_LIVE (an older one) gets no TAG_LIVE (the fake agent's stderr says
 * whether it got one) and runs the job as before; nor does a job without
 * a sink. */
FAKE_TEST(live_chunks_reach_the_sink_only_from_an_agent_that_sends_them)
{
    struct container_spec spec = spec_of();
    static struct sandbox sb, old; /* held: open_held */
    static struct got_live g;
    const struct proto_chunk_sink sink = {got_chunk, &g, got_begin};
    struct proto_result res;
    struct proto_job pj;
    struct llmsb_err err = {0};

    buf_init(&g.out, 1 << 20);
    buf_init(&g.err, 1 << 20);
    fake_engine_agent_live(fe, 1);
    ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
    ASSERT_EQ(sb.live, 1);
    fake_test_job(&pj, "echo one; echo two >&2; echo three", NULL);
    pj.live = 1;
    proto_result_init(&res, 1 << 20);
    sb.sink = &sink;
    ASSERT_EQ(sandbox_run(&sb, &pj, 5000, &res, &err), 0);
    sb.sink = NULL;
    ASSERT_EQ(res.status, STATUS_OK);
    ASSERT_EQ(g.calls, 3);
    ASSERT(g.out.len == 10 && memcmp(g.out.data, "one\nthree\n", 10) == 0);
    ASSERT(g.err.len == 4 && memcmp(g.err.data, "two\n", 4) == 0);
    ASSERT(res.out.len == 10 && memcmp(res.out.data, "one\nthree\n", 10) == 0);
    ASSERT(buf_contains(&res.err, "got TAG_LIVE")); /* the fake agent saw it */
    ASSERT_EQ(g.begins, 1);                         /* before the attempt's JOB */
    proto_result_release(&res);
    /* no sink: the job goes out without TAG_LIVE, no chunk comes */
    proto_result_init(&res, 1 << 20);
    ASSERT_EQ(sandbox_run(&sb, &pj, 5000, &res, &err), 0);
    ASSERT_EQ(res.status, STATUS_OK);
    ASSERT_EQ(g.calls, 3);
    ASSERT(!buf_contains(&res.err, "got TAG_LIVE"));
    proto_result_release(&res);
    fake_engine_agent_live(fe, 0);
    ASSERT_EQ(open_held(&old, fe, &spec, 5000, &err), 0);
    ASSERT_EQ(old.live, 0);
    proto_result_init(&res, 1 << 20);
    old.sink = &sink;
    ASSERT_EQ(sandbox_run(&old, &pj, 5000, &res, &err), 0);
    ASSERT_EQ(res.status, STATUS_OK);
    ASSERT_EQ(g.calls, 3);
    ASSERT_EQ(res.out.len, 10u);
    ASSERT(!buf_contains(&res.err, "got TAG_LIVE")); /* an older agent is not asked */
    ASSERT_EQ(g.begins, 1);
    proto_result_release(&res);
    proto_job_release(&pj);
    buf_release(&g.out);
    buf_release(&g.err);
    sandbox_close(&old);
    sandbox_close(&sb);
}

/* The JOB frame's RLIMIT_NPROC: what holds the job at its pids limit where
 * the agent's HELLO says gVisor, whatever the engine said of the runtime
 * (the pids cgroup does not bound a job there; gVisor does not count the
 * job's first process: pids - 1), the job's nproc elsewhere. */
FAKE_TEST(job_nproc_at_its_pids_where_the_agent_says_gvisor)
{
    static const struct {
        int gvisor;
        uint64_t nproc, pids;
        const char *want;
    } rows[] = {
        {1, 4096, 256, "255\n"},  /* gVisor: pids - 1 */
        {1, 100, 256, "100\n"},   /* under its pids: kept */
        {1, 4096, 0, "4096\n"},   /* no pids limit */
        {1, 4096, 1, "1\n"},      /* never 0, which sets no limit */
        {0, 4096, 256, "4096\n"}, /* not gVisor */
    };
    struct container_spec spec = spec_of();
    static struct sandbox sb; /* held: open_held */
    struct proto_result res;
    struct proto_job pj;
    struct llmsb_err err = {0};

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        fake_engine_agent_gvisor(fe, rows[i].gvisor);
        ASSERT_EQ(open_held(&sb, fe, &spec, 5000, &err), 0);
        ASSERT_EQ(sb.runtime.kind == BACKEND_RUNTIME_GVISOR, rows[i].gvisor);
        fake_test_job(&pj, "echo $FAKE_NPROC", NULL);
        pj.nproc = rows[i].nproc;
        pj.pids = rows[i].pids;
        proto_result_init(&res, 1 << 20);
        ASSERT_EQ(sandbox_run(&sb, &pj, 5000, &res, &err), 0);
        ASSERT_EQ(res.status, STATUS_OK);
        ASSERT_MSG(res.out.len == strlen(rows[i].want) &&
                       memcmp(res.out.data, rows[i].want, res.out.len) == 0,
                   rows[i].want);
        ASSERT_EQ(pj.nproc, rows[i].nproc); /* the caller's job is not changed */
        proto_result_release(&res);
        proto_job_release(&pj);
        sandbox_close(&sb);
    }
    fake_engine_agent_gvisor(fe, 0);
}

TEST_MAIN("sandbox", T(round_trip_status_stdout_exit_code),
          T(container_dies_mid_job_is_an_error_not_a_hang), T(oom_killed_container_is_memory_limit),
          T(silent_agent_past_backstop_is_timeout),
          T(slow_start_past_start_timeout_fails_and_removes),
          T(failed_create_and_start_leave_nothing), T(cancel_stops_the_wait),
          T(agent_internal_error_is_ours), T(prestart_only_to_an_agent_that_takes_it),
          T(live_chunks_reach_the_sink_only_from_an_agent_that_sends_them),
          T(job_nproc_at_its_pids_where_the_agent_says_gvisor))
