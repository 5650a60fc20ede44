/* test_runner.c - the runner's parts that need no engine: who the process
 * is (labels, worker name, the queue label every host must agree on), the
 * pool a front end asks for, open and close over a stub engine whose ping
 * answers or fails (the stub is a test double: it runs nothing), and the
 * common sleep that a signal must not cut short. */
#include "test.h"

#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/clock.h"
#include "exec/exec.h"
#include "exec/identity.h"
#include "exec/runner.h"

/* ---- a stub engine: ping and close only ----------------------------------------- */

static int stub_ping_fails, stub_closes;

static void stub_close(struct backend *b)
{
    (void)b;
    stub_closes++;
}

static int stub_ping(struct backend *b, char *version, size_t vsz, struct llmsb_err *err)
{
    (void)b;
    if (stub_ping_fails)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "stub: the engine does not answer");
    snprintf(version, vsz, "stub 1.0");
    return 0;
}

static const struct backend_ops stub_ops = {.name = "stub", .close = stub_close, .ping = stub_ping};

/* an engine on the host's kernel (runc), for the pool config */
static const struct backend be = {.ops = &stub_ops};

static const char *label(const struct pool_config *pc, const char *key)
{
    for (int i = 0; i < pc->nlabels; i++)
        if (strcmp(pc->labels[i][0], key) == 0)
            return pc->labels[i][1];
    return NULL;
}

/* ---- identity ------------------------------------------------------------------------ */

TEST(identity_defaults_to_host_and_pid)
{
    struct identity id;
    char want[300], pid[24];

    identity_init(&id, NULL, NULL, NULL);
    snprintf(want, sizeof(want), "%.100s-%d", id.host, (int)getpid());
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    ASSERT(id.host[0] != '\0');
    ASSERT_STR(id.worker, want);
    ASSERT_STR(id.kind, "run");
    ASSERT_STR(id.pid, pid);
    ASSERT_STR(id.queue, "");
    identity_init(&id, "", "local", NULL); /* "" is no name */
    ASSERT_STR(id.worker, want);
    ASSERT_STR(id.kind, "local");
}

TEST(identity_takes_a_given_name_kind_and_queue)
{
    struct identity id;

    identity_init(&id, "w1", "worker", "q0123456789abcdef");
    ASSERT_STR(id.worker, "w1");
    ASSERT_STR(id.kind, "worker");
    ASSERT_STR(id.queue, "q0123456789abcdef");
}

/* Workers on other hosts, and older versions, compute the same label for
 * the same Redis and prefix: the reaper judges containers by it. */
TEST(queue_label_is_stable_and_scoped)
{
    char a[24], b[24], c[24];

    identity_queue_label("redis://127.0.0.1:6379", "llmsb", a);
    identity_queue_label("redis://127.0.0.1:6379", "llmsb", b);
    identity_queue_label("redis://127.0.0.1:6379", "other", c);
    ASSERT_STR(a, b);
    ASSERT(strcmp(a, c) != 0);
    ASSERT_EQ(strlen(a), 17);
    ASSERT_STR(a, "q5552856088ad5260"); /* FNV-1a of "url\nprefix" */
}

TEST(pool_labels_name_the_process)
{
    struct identity id;
    struct pool_config pc;

    memset(&pc, 0, sizeof(pc));
    identity_init(&id, "w1", "local", NULL);
    identity_pool_labels(&id, &pc);
    ASSERT_EQ(pc.nlabels, 5);
    ASSERT_STR(label(&pc, "llmsb.managed"), "1");
    ASSERT_STR(label(&pc, "llmsb.worker"), "w1");
    ASSERT_STR(label(&pc, "llmsb.kind"), "local");
    ASSERT_STR(label(&pc, "llmsb.host"), id.host);
    ASSERT_STR(label(&pc, "llmsb.pid"), id.pid);
    ASSERT(label(&pc, "llmsb.queue") == NULL);
    identity_init(&id, "w1", "worker", "qabc");
    identity_pool_labels(&id, &pc); /* again: replaced, not appended */
    ASSERT_EQ(pc.nlabels, 6);
    ASSERT_STR(label(&pc, "llmsb.queue"), "qabc");
}

/* ---- the pool a front end asks for ---------------------------------------------------- */

TEST(pool_config_sizes_from_slots_and_sessions)
{
    struct config cfg;
    struct identity id;
    struct pool_config pc;
    struct runner_opts o = {.kind = "worker", .slots = 4, .keep_warm = 1};

    config_defaults(&cfg);
    identity_init(&id, NULL, "worker", NULL);
    cfg.pool_min_idle = 2;
    cfg.sessions_max = 8;
    runner_pool_config(&cfg, &be, &o, &id, &pc);
    ASSERT_EQ(pc.min_idle, 2);
    ASSERT_EQ(pc.max_size, 4 + 1 + 8); /* a session holds a container of its own */
    ASSERT_STR(label(&pc, "llmsb.kind"), "worker");
    o.keep_warm = 0; /* run, --local, mcp: nothing warm before the first job */
    runner_pool_config(&cfg, &be, &o, &id, &pc);
    ASSERT_EQ(pc.min_idle, 0);
    cfg.pool_max_size = 3; /* the config's cap */
    runner_pool_config(&cfg, &be, &o, &id, &pc);
    ASSERT_EQ(pc.max_size, 3);
    o.max_size = 1; /* the front end's, over it (run: one container) */
    runner_pool_config(&cfg, &be, &o, &id, &pc);
    ASSERT_EQ(pc.max_size, 1);
}

TEST(pool_config_maps_on_exhausted)
{
    static const struct {
        const char *name;
        enum pool_exhausted want;
    } rows[] = {{"fail_fast", POOL_FAIL_FAST}, {"temporary", POOL_TEMPORARY}, {"wait", POOL_WAIT}};
    const struct runner_opts o = {.slots = 1};
    struct config cfg;
    struct identity id;
    struct pool_config pc;

    config_defaults(&cfg);
    identity_init(&id, NULL, NULL, NULL);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        snprintf(cfg.pool_on_exhausted, sizeof(cfg.pool_on_exhausted), "%s", rows[i].name);
        runner_pool_config(&cfg, &be, &o, &id, &pc);
        ASSERT_MSG(pc.on_exhausted == rows[i].want, rows[i].name);
    }
    ASSERT_EQ(pc.start_timeout_ms, cfg.start_timeout_ms);
    ASSERT_EQ(pc.wait_ms, cfg.pool_wait_ms);
}

/* ---- open and close ------------------------------------------------------------------- */

TEST(open_fails_when_the_engine_does_not_answer)
{
    const struct runner_opts o = {.kind = "run", .slots = 1};
    struct config cfg;
    struct runner rn;
    struct backend engine = {.ops = &stub_ops};
    struct llmsb_err err = {0};

    config_defaults(&cfg);
    stub_ping_fails = 1;
    stub_closes = 0;
    ASSERT_EQ(runner_open_engine(&rn, &cfg, &o, &engine, &err), LLMSB_ERR_BACKEND);
    ASSERT_CONTAINS(err.msg, "does not answer");
    ASSERT_EQ(stub_closes, 1); /* consumed: closed on failure, nothing left to close */
}

TEST(open_and_close_over_an_engine)
{
    const struct runner_opts o = {.kind = "local", .worker_name = "me", .slots = 2};
    struct config cfg;
    struct runner rn;
    struct backend engine = {.ops = &stub_ops};
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;

    config_defaults(&cfg);
    stub_ping_fails = 0;
    stub_closes = 0;
    ASSERT_EQ(runner_open_engine(&rn, &cfg, &o, &engine, &err), 0);
    ASSERT_STR(rn.engine_version, "stub 1.0");
    ASSERT_EQ(rn.engine_wait_ms, RUNNER_ENGINE_WAIT_MS);
    ASSERT_EQ(rn.pool.cfg.min_idle, 0);
    ASSERT_EQ(rn.pool.cfg.max_size, 2 + 1 + (int)cfg.sessions_max);
    ASSERT_STR(rn.id.kind, "local");
    job_init(&j, &cfg);
    job_result_init(&r, &j);
    runner_stamp(&rn, &r);
    ASSERT_STR(r.worker, "me");
    job_result_release(&r);
    job_release(&j);
    ASSERT_EQ(stub_closes, 0);
    runner_close(&rn, "the test ended");
    ASSERT_EQ(stub_closes, 1);
}

/* ---- the common sleep ----------------------------------------------------------------- */

static void on_alarm(int sig)
{
    (void)sig;
}

TEST(sleep_is_not_cut_short_by_a_signal)
{
    struct sigaction sa;
    struct itimerval it = {{0, 0}, {0, 20000}}; /* a signal 20 ms in */
    int64_t t0;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
    t0 = clock_mono_ms();
    clock_sleep_ms(120);
    ASSERT(clock_mono_ms() - t0 >= 119);
}

TEST_MAIN("runner", T(identity_defaults_to_host_and_pid),
          T(identity_takes_a_given_name_kind_and_queue), T(queue_label_is_stable_and_scoped),
          T(pool_labels_name_the_process), T(pool_config_sizes_from_slots_and_sessions),
          T(pool_config_maps_on_exhausted), T(open_fails_when_the_engine_does_not_answer),
          T(open_and_close_over_an_engine), T(sleep_is_not_cut_short_by_a_signal))
