/* fake_test.h - the fixture of the unit tests that run on the fake engine
 * (tests/doubles/fake_engine.h): FAKE_TEST(name) { ... } is a test whose
 * body gets a fresh engine as fe; what the body holds open on it (a pool,
 * a sandbox, a runner: fake_test_hold) is closed after the body, however
 * it ended, and then the engine is freed, so a failed ASSERT's return
 * leaves nothing open on a freed engine, no agent process and no temp dir
 * behind; a JOB the fake agent runs with sh -c; and for the executor, a
 * config and a runner on the engine and a job whose code the fake agent
 * runs.  A thread a body starts is joined before any ASSERT on what it did. */
#ifndef LLMSB_FAKE_TEST_H
#define LLMSB_FAKE_TEST_H

#include "exec/exec.h"
#include "exec/runner.h"
#include "sandbox/sandbox.h"
#include "tests/doubles/fake_engine.h"
#include "test.h"

/* What a body holds open on fe: close(obj) runs after the body, last held
 * first, unless the body let go of obj (it closed it itself).  obj must
 * outlive the body's frame: static in the body, or on the heap; close may
 * also run after a body that closed obj itself only if it is idempotent
 * (pool_release_all, sandbox_close), else the body lets go first. */
#define FAKE_TEST_MAX_HOLDS 8
static struct {
    void (*close)(void *obj);
    void *obj;
} fake_holds[FAKE_TEST_MAX_HOLDS];
static int fake_nholds;

static inline void fake_test_hold(void (*close)(void *obj), void *obj)
{
    if (fake_nholds < FAKE_TEST_MAX_HOLDS) {
        fake_holds[fake_nholds].close = close;
        fake_holds[fake_nholds++].obj = obj;
    } else {
        fprintf(stderr, "  fake_test_hold: more than %d held\n", FAKE_TEST_MAX_HOLDS);
        test_failed_flag = 1;
    }
}

static inline void fake_test_let_go(const void *obj)
{
    for (int i = fake_nholds - 1; i >= 0; i--)
        if (fake_holds[i].obj == obj) {
            memmove(&fake_holds[i], &fake_holds[i + 1],
                    (size_t)(fake_nholds - i - 1) * sizeof(fake_holds[0]));
            fake_nholds--;
        }
}

static inline void fake_test_close_held(void)
{
    while (fake_nholds > 0) {
        fake_nholds--;
        fake_holds[fake_nholds].close(fake_holds[fake_nholds].obj);
    }
}

static inline struct fake_engine *fake_test_engine(void)
{
    struct llmsb_err err = {0};
    struct fake_engine *fe = fake_engine_new(NULL, &err);

    if (!fe)
        fprintf(stderr, "  %s\n", err.msg);
    return fe;
}

/* fe holds n containers once pool p's helpers are done: retired ones are
 * removed off the jobs' path, by the pool's remover (pool_settle waits). */
#define ASSERT_CONTAINERS(p, n)                     \
    do {                                            \
        ASSERT_EQ(pool_settle((p), 10000), 0);      \
        ASSERT_EQ(fake_engine_containers(fe), (n)); \
    } while (0)

/* A JOB whose source the fake agent runs with sh -c. */
static inline void fake_test_job(struct proto_job *pj, const char *code, const char *stdin_data)
{
    proto_job_init(pj);
    pj->files = calloc(1, sizeof(*pj->files));
    pj->nfiles = 1;
    pj->files[0].path = strdup("main.sh");
    pj->files[0].data = strdup(code);
    pj->files[0].len = strlen(code);
    pj->files[0].mode = 0644;
    strlist_add(&pj->run_argv, &pj->nrun, "sh", 2);
    if (stdin_data) {
        pj->stdin_data = strdup(stdin_data);
        pj->stdin_len = strlen(stdin_data);
    }
}

/* Runs code in sb (res initialised here; the caller releases it);
 * returns sandbox_run's code. */
static inline int fake_test_run(struct sandbox *sb, const char *code, const char *stdin_data,
                                int64_t backstop_ms, struct proto_result *res,
                                struct llmsb_err *err)
{
    struct proto_job pj;
    int rc;

    fake_test_job(&pj, code, stdin_data);
    proto_result_init(res, 1 << 20);
    rc = sandbox_run(sb, &pj, backstop_ms, res, err);
    proto_job_release(&pj);
    return rc;
}

/* A config and a runner on the fake engine (runner_open_engine: the
 * runner's own open, ping and pool) for exec_job, runner_run and
 * sessions.  A lost engine is waited for 2 s, not the 5 min of a front end.
 * Held once open (x static in the body); fake_exec_release lets go. */
struct fake_exec {
    struct config cfg;
    struct runner rn;
};

static inline void fake_exec_close(void *x);

static inline int fake_exec_init(struct fake_exec *x, struct fake_engine *fe)
{
    const struct runner_opts o = {
        .kind = "run", .slots = 1, .keep_warm = 1, .engine_wait_ms = 2000};
    struct backend engine;
    struct llmsb_err err = {0};

    config_defaults(&x->cfg);
    x->cfg.lease_ms = 200; /* a retry waits 100 ms at most */
    if (backend_clone(&engine, fake_engine_backend(fe), &err) != 0)
        return -1;
    if (runner_open_engine(&x->rn, &x->cfg, &o, &engine, &err) != 0)
        return -1;
    fake_test_hold(fake_exec_close, x);
    return 0;
}

static inline void fake_exec_close(void *x)
{
    struct fake_exec *fx = x;

    runner_close(&fx->rn, "the test ended");
    config_release(&fx->cfg);
}

static inline void fake_exec_release(struct fake_exec *x)
{
    fake_test_let_go(x);
    fake_exec_close(x);
}

/* A Python job (the fake agent runs its code with sh -c) with r ready
 * for it; session: NULL, or the session it is a call of.  0 or <0. */
static inline int fake_exec_job(struct job *j, struct job_result *r, const struct config *cfg,
                                const char *id, const char *code, const char *session)
{
    struct llmsb_err err = {0};

    job_init(j, cfg);
    j->id = strdup(id);
    if (job_set_language(j, "python", &err) != 0 || job_set_code(j, code, strlen(code), &err) != 0)
        return -1;
    if (session && !(j->session = strdup(session)))
        return -1;
    job_result_init(r, j);
    return 0;
}

#define FAKE_TEST(name)                                   \
    static void fake_body_##name(struct fake_engine *fe); \
    TEST(name)                                            \
    {                                                     \
        struct fake_engine *fe_ = fake_test_engine();     \
        ASSERT(fe_);                                      \
        fake_body_##name(fe_);                            \
        fake_test_close_held();                           \
        fake_engine_free(fe_);                            \
    }                                                     \
    static void fake_body_##name(struct fake_engine *fe)

#endif
