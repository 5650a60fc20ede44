/* fake_test.h - the fixture of the unit tests that run on the fake engine
 * (tests/doubles/fake_engine.h): FAKE_TEST(name) { ... } is a test whose
 * body gets a fresh engine as fe, freed after the body however it ended,
 * so a failed ASSERT leaves no agent process and no temp dir behind; a
 * JOB the fake agent runs with sh -c; and for the executor, a config and a
 * pool on the engine and a job whose code the fake agent runs. */
#ifndef LLMSB_FAKE_TEST_H
#define LLMSB_FAKE_TEST_H

#include "exec/exec.h"
#include "exec/runner.h"
#include "sandbox/sandbox.h"
#include "tests/doubles/fake_engine.h"
#include "test.h"

static inline struct fake_engine *fake_test_engine(void)
{
    struct llmsb_err err = {0};
    struct fake_engine *fe = fake_engine_new(NULL, &err);

    if (!fe)
        fprintf(stderr, "  %s\n", err.msg);
    return fe;
}

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
 * sessions.  A lost engine is waited for 2 s, not the 5 min of a front end. */
struct fake_exec {
    struct config cfg;
    struct runner rn;
};

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
    return runner_open_engine(&x->rn, &x->cfg, &o, &engine, &err);
}

static inline void fake_exec_release(struct fake_exec *x)
{
    runner_close(&x->rn, "the test ended");
    config_release(&x->cfg);
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
        fake_engine_free(fe_);                            \
    }                                                     \
    static void fake_body_##name(struct fake_engine *fe)

#endif
