/* test_evalplus.c - EvalPlus's rows of convert's table (eval/fmt_evalplus.c)
 * and what convert reads for them, without a container: gzip-compressed
 * files and their limits, NaN/Infinity and NUL in the inputs, the
 * ground-truth job, the checks on --expected (the ground truth's results)
 * and the sample job EvalPlus's limits make, and the base verdict the
 * report takes from a job's result. */
#include "test.h"

#include <cjson/cJSON.h>

#include "common/base64.h"
#include "eval/convert.h"
#include "eval/report.h"
#include "eval_jobs.h"

#define HE_ROW                                                                                    \
    "{\"task_id\": \"HumanEval/0\", \"prompt\": \"def f(x):\\n\", \"canonical_solution\": \"    " \
    "return x\\n\", \"entry_point\": \"f\", \"contract\": \"\", \"test\": \"\", \"atol\": 0, "    \
    "\"base_input\": [[1], [2]], \"plus_input\": [[3]]}\n"
#define MBPP_ROW                                                                                 \
    "{\"task_id\": \"Mbpp/1\", \"prompt\": \"\", \"canonical_solution\": \"def g(x):\\n    "     \
    "return x\\n\", \"entry_point\": \"g\", \"contract\": \"\", \"assertion\": \"\", \"atol\": " \
    "0.0001, \"base_input\": [[NaN], [-Infinity]], \"plus_input\": [[\"a\\u0000b\", Infinity]]}\n"

/* A ground-truth result of HE_ROW: passed, its artifact, its times line. */
/* files[name] of a job (a name has dots: no path) */
static const char *file_of(const cJSON *job, const char *name)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(get(job, "files"), name);
    return cJSON_IsObject(f) ? str(f, "base64") : cJSON_GetStringValue(f);
}

#define GT_STDOUT                                                                       \
    "{\\\"evalplus_truth\\\": {\\\"task_id\\\": \\\"HumanEval/0\\\", \\\"base\\\": 2, " \
    "\\\"plus\\\": 1, \\\"base_time\\\": [0.1, 2.0], \\\"plus_time\\\": [0.5], "        \
    "\\\"recompute\\\": {\\\"base\\\": [], \\\"plus\\\": [0]}}}\\n"
#define GT_GOOD                                                                                \
    "{\"id\": \"HumanEval/0\", \"status\": \"ok\", \"passed\": true, \"stdout\": \"" GT_STDOUT \
    "\", \"artifacts\": [{\"name\": \"expected.pkl.z\", \"base64\": \"gARdlC4=\"}], "          \
    "\"meta\": {\"task_id\": \"HumanEval/0\", \"benchmark\": \"humanevalplus\"}}\n"

static int convert_extracting(const char *dataset, const char *samples, const char *expected,
                              enum extract_mode x, struct jobs *j, struct llmsb_err *err)
{
    struct convert_opts opts = {.expected_name = "gt.jsonl", .expected_text = expected};
    struct convert_out o = {.name = "mem", .extract = x};
    struct convert_set *s;
    int rc;

    memset(j, 0, sizeof(*j));
    if (!(s = convert_set_read_opts("d.jsonl", dataset, &opts, err)))
        return err->code;
    o.out = open_memstream(&j->text, &j->len);
    rc = convert_write(s, "s.jsonl", samples, &o, err);
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(j);
    return rc;
}

static int convert_with(const char *dataset, const char *samples, const char *expected,
                        struct jobs *j, struct llmsb_err *err)
{
    return convert_extracting(dataset, samples, expected, EXTRACT_OFF, j, err);
}

/* ---- gzip ---- */

static const unsigned char gz_row[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0x2a, 0x49, 0x2c, 0xce,
    0x8e, 0xcf, 0x4c, 0x51, 0xb2, 0x52, 0x50, 0xf2, 0x28, 0xcd, 0x4d, 0xcc, 0x73, 0x2d, 0x4b, 0xcc,
    0xd1, 0x37, 0x50, 0xaa, 0xe5, 0x02, 0x00, 0xed, 0x18, 0x2d, 0x53, 0x1b, 0x00, 0x00, 0x00};
/* 70,000 spaces */
static const unsigned char gz_spaces[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xed, 0xc1, 0x31, 0x01, 0x00,
    0x00, 0x00, 0xc2, 0xa0, 0x2a, 0xeb, 0x9f, 0xd2, 0x12, 0x9e, 0x40, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x6f, 0x03, 0x60, 0xac, 0x45, 0x1f, 0x70, 0x11, 0x01, 0x00};
/* "a\0b" */
static const unsigned char gz_nul[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00,
                                       0x02, 0x03, 0x4b, 0x64, 0x48, 0x02, 0x00, 0x71,
                                       0x78, 0xe8, 0x15, 0x03, 0x00, 0x00, 0x00};

static int unpack(const void *p, size_t n, size_t cap, struct buf *b, struct llmsb_err *err)
{
    buf_init(b, 1 << 20);
    if (buf_append(b, p, n) != 0)
        return -100;
    return convert_text_unpack(b, "f.gz", cap, err);
}

TEST(gzip_is_unpacked_by_its_magic_bytes_within_a_cap)
{
    struct llmsb_err err = {0};
    struct buf b;

    /* text is left as it is */
    ASSERT_EQ(unpack("{}\n", 3, 1024, &b, &err), 0);
    ASSERT_STR(b.data, "{}\n");
    buf_release(&b);
    ASSERT_EQ(unpack(gz_row, sizeof(gz_row), 1024, &b, &err), 0);
    ASSERT_STR(b.data, "{\"task_id\": \"HumanEval/0\"}\n");
    buf_release(&b);
    /* exactly at the cap, and one byte under it */
    ASSERT_EQ(unpack(gz_spaces, sizeof(gz_spaces), 70000, &b, &err), 0);
    ASSERT_EQ(b.len, (size_t)70000);
    buf_release(&b);
    ASSERT(unpack(gz_spaces, sizeof(gz_spaces), 69999, &b, &err) == LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg,
               "f.gz: gzip-compressed: unpacks to more than 69999 bytes, the cap; unpack it and "
               "split it");
    buf_release(&b);
    ASSERT(unpack(gz_nul, sizeof(gz_nul), 1024, &b, &err) == LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg,
               "f.gz: gzip-compressed, and what it holds is not text (a NUL byte at offset 1)");
    buf_release(&b);
    /* cut short: damaged */
    ASSERT(unpack(gz_row, 30, 1024, &b, &err) == LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "f.gz: gzip-compressed, but");
    buf_release(&b);
}

TEST(gzip_twice_is_told)
{
    struct llmsb_err err = {0};
    char text[] = "\x1f\x8b rest";

    ASSERT(convert_set_read("x.json.gz.gz", text, &err) == NULL);
    ASSERT_CONTAINS(err.msg, "x.json.gz.gz: gzip-compressed data where JSON text was expected");
}

/* ---- rows ---- */

TEST(evalplus_rows_give_a_ground_truth_job_per_task)
{
    struct llmsb_err err = {0};
    struct jobs j;
    size_t n;
    char *row;

    ASSERT_EQ(convert_with(HE_ROW, NULL, NULL, &j, &err), 0);
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(str(j.job[0], "id"), "HumanEval/0");
    ASSERT_STR(str(j.job[0], "meta.benchmark"), "humanevalplus");
    ASSERT_STR(file_of(j.job[0], "program.py"), "def f(x):\n    return x\n");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(j.job[0], "args"), 0)), "truth");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(j.job[0], "args"), 1)), "humaneval");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(j.job[0], "artifacts"), 0)),
               "expected.pkl.z");
    /* task.json is the row as written */
    row = base64_decode(file_of(j.job[0], "task.json"), strlen(file_of(j.job[0], "task.json")), &n);
    ASSERT(row != NULL);
    ASSERT_EQ(strncmp(row, HE_ROW, strlen(HE_ROW) - 1), 0);
    free(row);
    jobs_release(&j);
    /* NaN, Infinity and a NUL in the inputs: read, carried as the row's text */
    ASSERT_EQ(convert_with(MBPP_ROW, NULL, NULL, &j, &err), 0);
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(str(j.job[0], "meta.benchmark"), "mbppplus");
    row = base64_decode(file_of(j.job[0], "task.json"), strlen(file_of(j.job[0], "task.json")), &n);
    ASSERT_CONTAINS(row, "[[\"\\u0001NaN\"], [\"\\u0001-Infinity\"]]");
    ASSERT_CONTAINS(row, "[[\"a\\u0000b\", \"\\u0001Infinity\"]]");
    free(row);
    jobs_release(&j);
}

TEST(nan_and_nul_only_where_evalplus_carries_them)
{
    struct llmsb_err err = {0};
    struct jobs j;

    ASSERT(convert_with("{\"task_id\": \"HumanEval/1\", \"prompt\": \"\", \"test\": \"\", "
                        "\"entry_point\": \"f\", \"x\": [NaN]}\n",
                        NULL, NULL, &j, &err) != 0);
    ASSERT_STR(err.msg, "d.jsonl:1: task \"HumanEval/1\": x holds NaN, which is not JSON (only "
                        "EvalPlus rows may: Python's json writes them)");
    jobs_release(&j);
    ASSERT(convert_with("{\"task_id\": \"HumanEval/0\", \"prompt\": \"a\\u0000\", \"plus_input\": "
                        "[]}\n",
                        NULL, NULL, &j, &err) != 0);
    ASSERT_CONTAINS(err.msg, "d.jsonl:1: field \"prompt\" holds a NUL character");
    jobs_release(&j);
    ASSERT(convert_with("{\"task_id\": \"Other/0\", \"plus_input\": []}\n", NULL, NULL, &j, &err) !=
           0);
    ASSERT_CONTAINS(err.msg, "task_id \"Other/0\" is neither HumanEval/N");
    jobs_release(&j);
    /* a bare word that only starts like one is no token */
    ASSERT(convert_with("{\"task_id\": \"HumanEval/0\", \"plus_input\": [NaNa]}\n", NULL, NULL, &j,
                        &err) != 0);
    ASSERT_CONTAINS(err.msg, "not a JSON object");
    jobs_release(&j);
}

/* ---- samples and --expected ---- */

TEST(samples_need_the_ground_truth_results)
{
    struct llmsb_err err = {0};
    struct jobs j;
    const char *sample = "{\"task_id\": \"HumanEval/0\", \"completion\": \"    return x\\n\"}\n";

    ASSERT(convert_with(HE_ROW, sample, NULL, &j, &err) == LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "give --expected gt-results.jsonl");
    jobs_release(&j);
}

/* GT_GOOD with from replaced by to */
static char *gt_with(const char *from, const char *to)
{
    const char *at = strstr(GT_GOOD, from);
    char *s = NULL;

    if (!at || asprintf(&s, "%.*s%s%s", (int)(at - GT_GOOD), GT_GOOD, to, at + strlen(from)) < 0)
        return NULL;
    return s;
}

TEST(expected_results_are_checked_before_use)
{
    static const struct {
        const char *from, *to, *why;
    } cases[] = {
        {"\"passed\": true", "\"passed\": false",
         "gt.jsonl:1: task \"HumanEval/0\": its canonical solution did not run every input "
         "(status ok): no expected outputs"},
        {"\"id\": \"HumanEval/0\"", "\"id\": \"HumanEval/9\"",
         "gt.jsonl:1: the result of job \"HumanEval/9\", which is no task of d.jsonl"},
        {"\"benchmark\": \"humanevalplus\"", "\"benchmark\": \"mbppplus\"",
         "gt.jsonl:1: task \"HumanEval/0\": the result of a mbppplus job, not humanevalplus's"},
        {"expected.pkl.z", "other.pkl", "task \"HumanEval/0\": no expected.pkl.z artifact"},
        {"gARdlC4=", "gAR*lC4=", "task \"HumanEval/0\": no expected.pkl.z artifact"},
        {"[0.1, 2.0]", "[0.1]", "base_time is not a list of 2 times"},
        {"[0.1, 2.0]", "[0.1, -2]", "base_time holds a time that is not a number >= 0"},
        {"[0.5]", "[\\\"x\\\"]", "plus_time holds a time that is not a number >= 0"},
        {"\\\"plus\\\": [0]", "\\\"plus\\\": [1]", "recompute.plus holds what is not the index"},
        {"\\\"task_id\\\": \\\"HumanEval/0\\\"", "\\\"task_id\\\": \\\"HumanEval/1\\\"",
         "its stdout has no evalplus_truth line of this task"},
    };
    const char *sample = "{\"task_id\": \"HumanEval/0\", \"completion\": \"    return x\\n\"}\n";
    struct llmsb_err err = {0};
    struct jobs j;
    char *two = NULL;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *gt = gt_with(cases[i].from, cases[i].to);
        ASSERT_MSG(gt != NULL, cases[i].from);
        ASSERT_MSG(convert_with(HE_ROW, sample, gt, &j, &err) == LLMSB_ERR_INVALID, cases[i].why);
        ASSERT_MSG(strstr(err.msg, cases[i].why) != NULL, err.msg);
        jobs_release(&j);
        free(gt);
    }
    ASSERT(asprintf(&two, "%s%s", GT_GOOD, GT_GOOD) > 0);
    ASSERT(convert_with(HE_ROW, sample, two, &j, &err) == LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "gt.jsonl:2: task \"HumanEval/0\" is there twice");
    jobs_release(&j);
    free(two);
    ASSERT(convert_with(HE_ROW, "{\"task_id\": \"HumanEval/0\", \"completion\": 3}\n", GT_GOOD, &j,
                        &err) == LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "s.jsonl:1: an EvalPlus sample is {\"task_id\", \"solution\"}");
    jobs_release(&j);
}

TEST(a_sample_job_has_evalplus_limits_and_two_cases)
{
    const char *samples =
        "{\"task_id\": \"HumanEval/0\", \"completion\": \"    return x\\n\"}\n"
        "{\"task_id\": \"HumanEval/0\", \"solution\": \"def f(x):\\n    return 0\\n\"}\n";
    struct llmsb_err err = {0};
    struct jobs j;
    cJSON *lim;

    ASSERT_EQ(convert_with(HE_ROW, samples, GT_GOOD, &j, &err), 0);
    ASSERT_EQ(j.n, 2);
    ASSERT_STR(str(j.job[0], "id"), "HumanEval/0#0");
    ASSERT_STR(str(j.job[1], "id"), "HumanEval/0#1");
    /* completion: after the prompt; solution: the whole program */
    ASSERT_STR(file_of(j.job[0], "program.py"), "def f(x):\n    return x\n");
    ASSERT_STR(file_of(j.job[1], "program.py"), "def f(x):\n    return 0\n");
    ASSERT_STR(file_of(j.job[0], "expected.pkl.z"), "gARdlC4=");
    /* the outputs the ground truth could not carry: the canonical solution */
    ASSERT_STR(file_of(j.job[0], "canonical.py"), "def f(x):\n    return x\n");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(j.job[0], "args"), 0)), "check");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(j.job[0], "args"), 4)), "0");
    ASSERT_EQ(cJSON_GetArraySize(get(j.job[0], "cases")), 2);
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(
                   get(cJSON_GetArrayItem(get(j.job[0], "cases"), 0), "args"), 0)),
               "base");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(
                   get(cJSON_GetArrayItem(get(j.job[0], "cases"), 1), "args"), 0)),
               "plus");
    /* the verdict line is the case's whole stdout */
    ASSERT_STR(str(cJSON_GetArrayItem(get(j.job[0], "cases"), 1), "expect_stdout"),
               "{\"phase\": \"plus\", \"status\": \"pass\", \"inputs\": 1}\n");
    ASSERT(cJSON_IsFalse(get(j.job[0], "stop_on_failure")));
    ASSERT_EQ(get(j.job[0], "meta.base_case")->valuedouble, 0);
    ASSERT_EQ(get(j.job[0], "memory")->valuedouble, 4096);
    /* max(4, 4 x reference time) per input; min(60, their sum) + 2 a phase */
    lim = cJSON_Parse(file_of(j.job[0], "limits.json"));
    ASSERT(lim != NULL);
    ASSERT_EQ(cJSON_GetArrayItem(get(lim, "base"), 0)->valuedouble, 4);
    ASSERT_EQ(cJSON_GetArrayItem(get(lim, "base"), 1)->valuedouble, 8);
    ASSERT_EQ(get(lim, "base_timeout")->valuedouble, 14);
    ASSERT_EQ(get(lim, "plus_timeout")->valuedouble, 6);
    ASSERT_EQ(cJSON_GetArrayItem(get(lim, "recompute.plus"), 0)->valuedouble, 0);
    cJSON_Delete(lim);
    /* the sandbox's: past the longer phase, recomputing included (6 + 2 x
     * 0.5 + 2 < 14): ceil(14) + 1 */
    ASSERT_EQ(get(j.job[0], "timeout")->valuedouble, 15);
    jobs_release(&j);
}

TEST(extract_takes_the_code_before_the_prompt_is_put)
{
    /* a completion in a fence: the fence's code after the prompt; a solution:
     * the fence's code as the whole program; meta says what was taken */
    const char *samples =
        "{\"task_id\": \"HumanEval/0\", \"completion\": \"Here:\\n```python\\n    return "
        "x\\n```\\n\"}\n"
        "{\"task_id\": \"HumanEval/0\", \"solution\": \"```python\\ndef f(x):\\n    return "
        "1\\n```\\nDone.\"}\n";
    struct llmsb_err err = {0};
    struct jobs j;

    ASSERT_EQ(convert_extracting(HE_ROW, samples, GT_GOOD, EXTRACT_FENCED, &j, &err), 0);
    ASSERT_EQ(j.n, 2);
    ASSERT_STR(file_of(j.job[0], "program.py"), "def f(x):\n    return x\n");
    ASSERT_STR(file_of(j.job[1], "program.py"), "def f(x):\n    return 1\n");
    ASSERT_STR(str(j.job[0], "meta.extract.mode"), "fenced");
    ASSERT_STR(str(j.job[0], "meta.extracted"), "    return x\n");
    ASSERT_STR(str(j.job[1], "meta.task_id"), "HumanEval/0");
    jobs_release(&j);
    /* without --extract: the answer as it is */
    ASSERT_EQ(convert_with(HE_ROW, samples, GT_GOOD, &j, &err), 0);
    ASSERT_CONTAINS(file_of(j.job[0], "program.py"), "```python");
    ASSERT(get(j.job[0], "meta.extract") == NULL);
    jobs_release(&j);
}

TEST(a_key_given_twice_is_refused)
{
    /* cJSON would take the first, EvalPlus's Python the last */
    struct llmsb_err err = {0};
    struct jobs j;
    char *row = NULL;

    ASSERT(convert_with(HE_ROW,
                        "{\"task_id\": \"HumanEval/0\", \"completion\": \"    return x\\n\"}\n"
                        "{\"task_id\": \"HumanEval/0\", \"completion\": \"    return x\\n\", "
                        "\"completion\": \"    return 0\\n\"}\n",
                        GT_GOOD, &j, &err) == LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "s.jsonl:2: key \"completion\" is there twice");
    jobs_release(&j);
    ASSERT(convert_with(HE_ROW,
                        "{\"task_id\": \"HumanEval/0\", \"task_id\": \"HumanEval/0\", "
                        "\"solution\": \"def f(x):\\n    return x\\n\"}\n",
                        GT_GOOD, &j, &err) == LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "s.jsonl:1: key \"task_id\" is there twice");
    jobs_release(&j);
    /* a dataset row: its inputs twice */
    ASSERT(asprintf(&row, "%.*s, \"plus_input\": [[4]]}\n", (int)strlen(HE_ROW) - 2, HE_ROW) > 0);
    ASSERT(convert_with(row, NULL, NULL, &j, &err) == LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "d.jsonl:1: task \"HumanEval/0\": key \"plus_input\" is there twice");
    jobs_release(&j);
    free(row);
}

/* ---- the report's base verdict ---- */

TEST(base_verdict_is_the_named_case)
{
    cJSON *job = cJSON_Parse("{\"meta\": {\"base_case\": 0}}"),
          *plain = cJSON_Parse("{\"meta\": {\"task_id\": \"x\"}}"),
          *res = cJSON_Parse("{\"passed\": false, \"cases\": [{\"passed\": true}, "
                             "{\"passed\": false}]}");
    int has = 7;

    ASSERT_EQ(report_base_verdict(job, res, &has), 1);
    ASSERT_EQ(has, 1);
    ASSERT_EQ(report_base_verdict(job, NULL, &has), 0); /* no result: not passed */
    ASSERT_EQ(has, 1);
    ASSERT_EQ(report_base_verdict(plain, res, &has), -1);
    ASSERT_EQ(has, 0);
    cJSON_Delete(job);
    cJSON_Delete(plain);
    cJSON_Delete(res);
}

TEST_MAIN("evalplus", T(gzip_is_unpacked_by_its_magic_bytes_within_a_cap), T(gzip_twice_is_told),
          T(evalplus_rows_give_a_ground_truth_job_per_task),
          T(nan_and_nul_only_where_evalplus_carries_them), T(samples_need_the_ground_truth_results),
          T(expected_results_are_checked_before_use),
          T(a_sample_job_has_evalplus_limits_and_two_cases),
          T(extract_takes_the_code_before_the_prompt_is_put), T(a_key_given_twice_is_refused),
          T(base_verdict_is_the_named_case))
