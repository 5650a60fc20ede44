/* test_batch.c - the batch module (batch/batch.h) without Redis: the
 * checks of a whole file, every problem said at its line and counted; the
 * dedup plan (runs and copies, a run's cap of copies, the ids of jobs that
 * have none); the summary and the results lines; the line that says why a
 * job did not pass; and a batch run in process over the fake engine
 * (tests/doubles): a copy gets its run's result, a timeout is run again
 * alone and its new verdict counted as flaky, a stop leaves the running
 * job without a result.  Redis's side is tests/dedup/run.sh's. */
#include "fake_test.h"

#include <unistd.h>

#include "batch/batch.h"
#include "config/jobfile.h"
#include "job/job.h"
#include "scheduler/decide.h"

/* The front end's names of its options, as the batch's lines give them. */
static const char *const names[BATCH_NAMES] = {"ALLOW",   "RERUN",   "REUSE",
                                               "NODEDUP", "RECHECK", "OUT"};

static struct config cfg; /* the defaults */

/* What a batch said, as the CLI prints it. */
static char said[16384];

static void say(void *ud, enum batch_say kind, const char *line)
{
    static const char *const prefix[] = {"", "submit: ", "warning: ", "error: "};
    (void)ud;
    llmsb_append(said, sizeof(said), "%s%s\n", prefix[kind], line);
}

/* A batch of text's jobs ("f.jsonl") over config c; o's options but the
 * names and say. */
static int batch_of(struct batch *b, struct jobfile *jf, const struct config *c, const char *text,
                    struct batch_opts o)
{
    struct llmsb_err err = {0};

    said[0] = '\0';
    if (jobfile_load_string(jf, text, strlen(text), "f.jsonl", &err) != 0) {
        fprintf(stderr, "  %s\n", err.msg);
        return -1;
    }
    o.names = names;
    o.say = say;
    return batch_init(b, c, jf, &o, &err);
}

static void batch_done(struct batch *b, struct jobfile *jf)
{
    batch_release(b);
    jobfile_release(jf);
}

#define PY(id, code) "{\"id\":\"" id "\",\"lang\":\"python\",\"code\":\"" code "\"}\n"

TEST(check_says_every_problem_at_its_line)
{
    struct jobfile jf;
    struct batch b;
    struct llmsb_err err = {0};

    ASSERT_EQ(
        batch_of(&b, &jf, &cfg,
                 PY("x", "print(1)") PY(
                     "x", "print(2)") "{\"id\":\"y\",\"lang\":\"cobol\",\"code\":\"x\"}\n"
                                      "{\"id\":\"z\",\"lang\":\"python\",\"code\":\"1\",\"copies\":"
                                      "\"[{\\\"id\\\":\\\"x\\\"}]\"}\n",
                 (struct batch_opts){.dedup = 1, .slots = 1}),
        0);
    ASSERT_EQ(batch_check(&b, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(said, "f.jsonl:3: lang: unknown language \"cobol\"");
    ASSERT_CONTAINS(said, "f.jsonl:2: id \"x\" is also the id of the job at line 1\n");
    ASSERT_CONTAINS(said, "f.jsonl:4: copies: id \"x\" is also the id of the job at line 2 (it "
                          "would get two results)\n");
    ASSERT_CONTAINS(said, "submit: 3 problem(s) in f.jsonl; nothing was run\n");
    ASSERT_STR(err.msg, "3 problem(s) in f.jsonl; nothing was run");
    ASSERT_EQ(b.problems, 3);
    ASSERT_EQ(b.invalid, 1);
    /* the lines come in the file's order of the parser, then the ids */
    ASSERT(strstr(said, "f.jsonl:3:") < strstr(said, "f.jsonl:2:"));
    batch_done(&b, &jf);
}

TEST(check_lets_invalid_jobs_through_when_asked)
{
    struct jobfile jf;
    struct batch b;
    struct llmsb_err err = {0};
    const char *file = PY("a", "print(1)") "{\"id\":\"b\",\"lang\":\"cobol\",\"code\":\"x\"}\n";

    /* without: refused, and told how to let them through */
    ASSERT_EQ(batch_of(&b, &jf, &cfg, file, (struct batch_opts){.queue = 1, .slots = 1}), 0);
    ASSERT_EQ(batch_check(&b, &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(said,
                    "submit: 1 problem(s) in f.jsonl; nothing was enqueued (ALLOW submits such "
                    "jobs as invalid results)\n");
    batch_done(&b, &jf);
    ASSERT_EQ(batch_of(&b, &jf, &cfg, file, (struct batch_opts){.allow_invalid = 1, .slots = 1}),
              0);
    ASSERT_EQ(batch_check(&b, &err), 0);
    ASSERT_CONTAINS(said, "submit: 1 invalid job(s) submitted anyway (ALLOW)\n");
    ASSERT(b.jobs[0].valid && !b.jobs[1].valid);
    batch_done(&b, &jf);
    /* a duplicate id is no invalid job: refused whatever */
    ASSERT_EQ(batch_of(&b, &jf, &cfg, PY("a", "1") PY("a", "2"),
                       (struct batch_opts){.allow_invalid = 1, .slots = 1}),
              0);
    ASSERT_EQ(batch_check(&b, &err), LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "1 problem(s) in f.jsonl; nothing was run");
    batch_done(&b, &jf);
}

TEST(check_shows_twenty_problems_then_counts_the_rest)
{
    struct jobfile jf;
    struct batch b;
    struct llmsb_err err = {0};
    char file[4096] = "";
    size_t lines = 0;

    for (int i = 0; i < 25; i++)
        llmsb_append(file, sizeof(file), "{\"id\":\"j%d\",\"lang\":\"nope\",\"code\":\"1\"}\n", i);
    ASSERT_EQ(batch_of(&b, &jf, &cfg, file, (struct batch_opts){.slots = 1}), 0);
    ASSERT_EQ(batch_check(&b, &err), LLMSB_ERR_INVALID);
    for (const char *p = said; (p = strstr(p, "f.jsonl:")); p++)
        lines++;
    ASSERT_EQ(lines, BATCH_SHOW_MAX);
    ASSERT_CONTAINS(said, "... and 5 more\nsubmit: 25 problem(s) in f.jsonl;");
    batch_done(&b, &jf);
}

TEST(plan_runs_each_program_once)
{
    struct jobfile jf;
    struct batch b;
    struct llmsb_err err = {0};

    ASSERT_EQ(
        batch_of(&b, &jf, &cfg,
                 PY("a", "print(1)") /* run */
                 "{\"id\":\"b\",\"lang\":\"python\",\"code\":\"print(1)\",\"meta\":{\"s\":1}}\n"
                 "{\"id\":\"c\",\"lang\":\"python\",\"code\":\"print(1)\",\"timeout\":7}\n"
                 "{\"lang\":\"python\",\"code\":\"print(1)\"}\n" /* no id: job-4 */
                 "{\"id\":\"e\",\"lang\":\"python\",\"code\":\"print(1)\",\"copies\":"
                 "\"[{\\\"id\\\":\\\"e2\\\"}]\"}\n",
                 (struct batch_opts){.dedup = 1, .slots = 1}),
        0);
    ASSERT_EQ(batch_check(&b, &err), 0);
    ASSERT_EQ(batch_local_plan(&b, &err), 0);
    /* b (meta apart) and the job without an id share a's run; c (a timeout
     * apart) runs; e carries a copies field of its own: alone */
    ASSERT_EQ(b.jobs[1].rep, 0);
    ASSERT_EQ(b.jobs[3].rep, 0);
    ASSERT_EQ(b.jobs[2].rep, 2);
    ASSERT_EQ(b.jobs[4].rep, 4);
    ASSERT_EQ(b.jobs[0].next, 1);
    ASSERT_EQ(b.jobs[1].next, 3);
    ASSERT_EQ(b.jobs[3].next, BATCH_NO_COPY);
    ASSERT_EQ(b.runs, 3);
    ASSERT_EQ(b.copies, 2);
    ASSERT_STR(b.jobs[3].id, "job-4");
    ASSERT_STR(b.jobs[0].id, "a");
    batch_done(&b, &jf);
}

TEST(plan_starts_a_run_past_its_copies_cap)
{
    struct jobfile jf;
    struct batch b;
    struct llmsb_err err = {0};
    size_t n = JOB_MAX_COPIES + 3;
    struct buf file;

    buf_init(&file, 0);
    for (size_t i = 0; i < n; i++)
        buf_printf(&file, "{\"id\":\"j%zu\",\"lang\":\"python\",\"code\":\"print(1)\"}\n", i);
    ASSERT_EQ(batch_of(&b, &jf, &cfg, file.data, (struct batch_opts){.dedup = 1, .slots = 1}), 0);
    buf_release(&file);
    ASSERT_EQ(batch_check(&b, &err), 0);
    ASSERT_EQ(batch_local_plan(&b, &err), 0);
    /* job 0 runs with JOB_MAX_COPIES copies; the next starts a run of its
     * own for the rest */
    ASSERT_EQ(b.runs, 2);
    ASSERT_EQ(b.copies, n - 2);
    ASSERT_EQ(b.jobs[JOB_MAX_COPIES].rep, 0);
    ASSERT_EQ(b.jobs[JOB_MAX_COPIES + 1].rep, JOB_MAX_COPIES + 1);
    ASSERT_EQ(b.jobs[JOB_MAX_COPIES + 2].rep, JOB_MAX_COPIES + 1);
    batch_done(&b, &jf);
}

/* A made-up result of status for the job id. */
static cJSON *result(const char *id, const char *status, int passed)
{
    cJSON *r = cJSON_CreateObject();

    cJSON_AddStringToObject(r, "id", id);
    cJSON_AddStringToObject(r, "status", status);
    if (passed >= 0)
        cJSON_AddBoolToObject(r, "passed", passed);
    return r;
}

TEST(summary_counts_every_job)
{
    struct jobfile jf;
    struct batch b;
    struct llmsb_err err = {0};
    char *text = NULL, *lines = NULL;
    size_t len = 0, llen = 0;
    FILE *f;

    ASSERT_EQ(batch_of(&b, &jf, &cfg,
                       "{\"id\":\"a\",\"lang\":\"python\",\"code\":\"1\",\"expect_stdout\":\"1\"}\n"
                       "{\"id\":\"b\",\"lang\":\"ruby\",\"code\":\"2\",\"expect_stdout\":\"1\"}\n"
                       "{\"id\":\"c\",\"lang\":\"ruby\",\"code\":\"3\"}\n",
                       (struct batch_opts){.dedup = 1, .slots = 1}),
              0);
    ASSERT_EQ(batch_check(&b, &err), 0);
    ASSERT_EQ(batch_local_plan(&b, &err), 0);
    b.results[0] = result("a", "ok", 1);
    b.results[1] = result("b", "ok", 0); /* c never finished */
    ASSERT((f = open_memstream(&text, &len)) != NULL);
    ASSERT_EQ(batch_summary(&b, f), 2);
    fclose(f);
    ASSERT_CONTAINS(text, "ok                    2\nnot_finished          1\n");
    ASSERT_CONTAINS(text, "python            1      1        1        1    100.0%\n");
    ASSERT_CONTAINS(text, "ruby              2      1        1        0      0.0%\n");
    ASSERT_CONTAINS(text, "total             3      2        2        1     50.0%\n");
    ASSERT_CONTAINS(text, "dedup: 3 jobs, 3 distinct programs run, 0 copies (runs saved: 0)\n");
    ASSERT_CONTAINS(text, "not passed:\n  b (f.jsonl:2): ok but not passed: output or exit code "
                          "differs from the expectation\n  c (f.jsonl:3): not finished\n");
    ASSERT((f = open_memstream(&lines, &llen)) != NULL);
    ASSERT_EQ(batch_results_write(&b, f), 0);
    fclose(f);
    ASSERT_CONTAINS(lines, "{\"id\":\"a\",\"status\":\"ok\",\"passed\":true}\n");
    ASSERT_CONTAINS(lines, "{\"id\":\"c\",\"status\":\"not_finished\",\"exit_code\":null}\n");
    free(text);
    free(lines);
    batch_done(&b, &jf);
}

TEST(failed_says_why_in_one_line)
{
    cJSON *r = result("x", "runtime_error", -1);
    char why[200];

    ASSERT_EQ(batch_job_failed(NULL, 0, why, sizeof(why)), 1);
    ASSERT_STR(why, "not finished");
    cJSON_AddStringToObject(r, "stderr",
                            "Traceback (most recent call last):\n  File \"x\"\nValueError: bad\n");
    ASSERT_EQ(batch_job_failed(r, 0, why, sizeof(why)), 1);
    ASSERT_STR(why, "runtime_error: ValueError: bad");
    cJSON_Delete(r);
    r = result("x", "compile_error", -1);
    cJSON_AddStringToObject(r, "compile_output", "# pkg\n./x.go:3: undefined: y\nmore\n");
    ASSERT_EQ(batch_job_failed(r, 0, why, sizeof(why)), 1);
    ASSERT_STR(why, "compile_error: ./x.go:3: undefined: y");
    cJSON_Delete(r);
    r = result("x", "runtime_error", 1); /* expected a non-zero exit: passed */
    ASSERT_EQ(batch_job_failed(r, 1, why, sizeof(why)), 0);
    cJSON_Delete(r);
}

/* ---- in process, over the fake engine ------------------------------------------------ */

/* A Python job (the fake agent runs it with sh -c) as a JSON Lines line. */
static void add_job(struct buf *file, const char *id, const char *code, const char *more)
{
    cJSON *j = cJSON_CreateObject();
    char *t;

    cJSON_AddStringToObject(j, "id", id);
    cJSON_AddStringToObject(j, "lang", "python");
    cJSON_AddStringToObject(j, "code", code);
    t = cJSON_PrintUnformatted(j);
    buf_printf(file, "%.*s%s}\n", (int)strlen(t) - 1, t, more);
    free(t);
    cJSON_Delete(j);
}

static const char *str_of(const cJSON *r, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

FAKE_TEST(local_run_fills_copies_and_rechecks_a_timeout)
{
    static struct fake_exec x;
    char dir[] = "/tmp/llmsb-test-batch.XXXXXX", code[300];
    struct jobfile jf;
    struct batch b;
    struct llmsb_err err = {0};
    struct buf file;

    ASSERT(mkdtemp(dir) != NULL);
    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    buf_init(&file, 0);
    add_job(&file, "a", "echo hi", ",\"expect_stdout\":\"hi\"");
    add_job(&file, "b", "echo hi", ",\"expect_stdout\":\"hi\"");
    /* times out the first time only: the recheck's verdict differs */
    snprintf(code, sizeof(code),
             "if [ -e %s/mark ]; then echo again; else : > %s/mark; sleep 5; fi", dir, dir);
    add_job(&file, "t", code, ",\"timeout\":1");
    ASSERT_EQ(batch_of(&b, &jf, &x.cfg, file.data,
                       (struct batch_opts){.dedup = 1, .recheck = 1, .slots = 2, .runner = &x.rn}),
              0);
    buf_release(&file);
    ASSERT_EQ(batch_check(&b, &err), 0);
    ASSERT_EQ(batch_local_plan(&b, &err), 0);
    ASSERT_EQ(b.runs, 2);
    ASSERT_EQ(batch_local_run(&b, &err), BATCH_DONE);
    ASSERT_STR(str_of(b.results[0], "status"), "ok");
    ASSERT_STR(str_of(b.results[1], "id"), "b");
    ASSERT_STR(str_of(b.results[1], "copy_of"), "a");
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(b.results[1], "passed")));
    ASSERT_STR(str_of(b.results[2], "status"), "ok");
    ASSERT_STR(str_of(b.results[2], "stdout"), "again\n");
    ASSERT_STR(str_of(b.results[2], "first_status"), "timeout");
    ASSERT_EQ(b.rechecked, 1);
    ASSERT_EQ(b.flaky, 1);
    batch_done(&b, &jf);
    snprintf(code, sizeof(code), "%s/mark", dir);
    unlink(code);
    rmdir(dir);
}

FAKE_TEST(local_run_stops_at_its_cancel_flag)
{
    static struct fake_exec x;
    struct jobfile jf;
    struct batch b;
    struct llmsb_err err = {0};
    struct buf file;
    atomic_int cancel;
    int64_t t0;

    ASSERT_EQ(fake_exec_init(&x, fe), 0);
    atomic_init(&cancel, SCHED_CANCEL_ABORT); /* the client left */
    buf_init(&file, 0);
    add_job(&file, "s", "sleep 30", "");
    ASSERT_EQ(batch_of(&b, &jf, &x.cfg, file.data,
                       (struct batch_opts){.slots = 1, .runner = &x.rn, .cancel = &cancel}),
              0);
    buf_release(&file);
    ASSERT_EQ(batch_check(&b, &err), 0);
    ASSERT_EQ(batch_local_plan(&b, &err), 0);
    t0 = clock_mono_ms();
    ASSERT_EQ(batch_local_run(&b, &err), BATCH_STOPPED);
    ASSERT(clock_mono_ms() - t0 < 10000);
    ASSERT(b.results[0] == NULL);
    batch_done(&b, &jf);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
    config_defaults(&cfg);
}

TEST_MAIN("batch", T(check_says_every_problem_at_its_line),
          T(check_lets_invalid_jobs_through_when_asked),
          T(check_shows_twenty_problems_then_counts_the_rest), T(plan_runs_each_program_once),
          T(plan_starts_a_run_past_its_copies_cap), T(summary_counts_every_job),
          T(failed_says_why_in_one_line), T(local_run_fills_copies_and_rechecks_a_timeout),
          T(local_run_stops_at_its_cancel_flag))
