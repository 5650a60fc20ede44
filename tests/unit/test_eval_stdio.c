/* test_eval_stdio.c - the stdin/stdout benchmarks' rows of convert's table
 * (eval/fmt_stdio.c) without a container: which rows it takes, the job each
 * benchmark gets (cases in the harness's order, its compare, its time per
 * test, the runner, call-based cases), the samples formats, and the errors
 * naming file:line, the task, the field and why. */
#include "test.h"

#include <cjson/cJSON.h>

#include "eval/convert.h"

#define CC_ROW                                                                                    \
    "{\"name\": \"P1\", \"public_tests\": {\"input\": [\"1\\n\"], \"output\": [\"A\\n\"]}, "      \
    "\"private_tests\": {\"input\": [\"2\\n\"], \"output\": [\"B\\n\"]}, \"generated_tests\": "   \
    "[{\"input\": \"3\\n\", \"output\": \"C\\n\"}], \"solutions\": {\"language\": [3, 1, 2, 4], " \
    "\"solution\": [\"print(1)\", \"print 1\", \"int main(){}\", \"class Main {}\"]}, "           \
    "\"difficulty\": 7, \"source\": 2, \"time_limit\": {\"seconds\": 2, \"nanos\": 500000000}}\n"

#define APPS_ROWS                                                                             \
    "{\"problem_id\": 5, \"solutions\": \"[\\\"print(input())\\\"]\", \"input_output\": "     \
    "\"{\\\"inputs\\\": [[\\\"1\\\", \\\"2\\\"]], \\\"outputs\\\": [\\\"3\\\"]}\", "          \
    "\"difficulty\": \"interview\", \"url\": \"u\"}\n"                                        \
    "{\"problem_id\": 6, \"solutions\": \"[\\\"def f(a): return a\\\"]\", \"input_output\": " \
    "\"{\\\"fn_name\\\": \\\"f\\\", \\\"inputs\\\": [[1]], \\\"outputs\\\": [[1]]}\"}\n"      \
    "{\"problem_id\": 7, \"solutions\": \"\", \"input_output\": \"\"}\n"

#define LCB_ROW                                                                                \
    "{\"question_id\": \"q1\", \"platform\": \"leetcode\", \"difficulty\": \"easy\", "         \
    "\"public_test_cases\": \"[{\\\"input\\\": \\\"[1]\\\\n2\\\", \\\"output\\\": \\\"3\\\", " \
    "\\\"testtype\\\": \\\"functional\\\"}]\", \"private_test_cases\": \"[]\", \"metadata\": " \
    "\"{\\\"func_name\\\": \\\"g\\\"}\"}\n"

struct jobs {
    char *text;
    size_t len;
    cJSON *job[8];
    int n;
};

/* What a conversion told: the set's and the writer's counts. */
struct counts {
    const char *benchmark;
    size_t tasks, untested, unsolved, no_image;
};

/* Converts dataset (with samples, when given) into j, as convert does (one
 * path for every benchmark); the return code. */
static int convert(const char *dataset, const char *samples, long timeout_s, struct jobs *j,
                   struct counts *c, struct llmsb_err *err)
{
    struct convert_out o = {.name = "mem", .timeout_s = timeout_s};
    struct convert_set_info info;
    struct convert_set *s;
    int rc;

    memset(j, 0, sizeof(*j));
    memset(c, 0, sizeof(*c));
    if (!(s = convert_set_read("d.jsonl", dataset, err)))
        return err->code;
    o.out = open_memstream(&j->text, &j->len);
    rc = convert_write(s, "s.json", samples, &o, err);
    fclose(o.out);
    convert_set_info(s, &info);
    *c = (struct counts){info.benchmark, info.tasks, info.untested, o.unsolved, o.no_image};
    convert_set_free(s);
    for (char *p = j->text, *nl; p && *p && j->n < 8; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        j->job[j->n++] = cJSON_ParseWithLength(p, nl ? (size_t)(nl - p) : strlen(p));
    }
    return rc;
}

static void jobs_release(struct jobs *j)
{
    for (int i = 0; i < j->n; i++)
        cJSON_Delete(j->job[i]);
    free(j->text);
}

static const cJSON *at(const cJSON *o, const char *path)
{
    char key[64];
    const char *dot = strchr(path, '.');

    if (!dot)
        return *path >= '0' && *path <= '9' ? cJSON_GetArrayItem(o, (int)strtol(path, NULL, 10))
                                            : cJSON_GetObjectItemCaseSensitive(o, path);
    snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
    if (*key >= '0' && *key <= '9')
        return at(cJSON_GetArrayItem(o, (int)strtol(key, NULL, 10)), dot + 1);
    return at(cJSON_GetObjectItemCaseSensitive(o, key), dot + 1);
}

static const char *str(const cJSON *o, const char *path)
{
    return cJSON_GetStringValue(at(o, path));
}

/* The benchmark of a file of one (a stdin/stdout benchmark's), "" when
 * its rows each name theirs, NULL when it is not read. */
static const char *benchmark_of(const char *text)
{
    struct llmsb_err err = {0};
    struct convert_set *s = convert_set_read("d.jsonl", text, &err);
    struct convert_set_info info;

    if (!s)
        return NULL;
    convert_set_info(s, &info);
    convert_set_free(s);
    return info.benchmark ? info.benchmark : "";
}

TEST(stdio_rows_are_recognised_by_their_fields)
{
    ASSERT_STR(benchmark_of(CC_ROW), "codecontests");
    ASSERT_STR(benchmark_of(APPS_ROWS), "apps");
    ASSERT_STR(benchmark_of(" [" LCB_ROW "]"), "livecodebench");
    ASSERT_STR(benchmark_of("{\"task_id\": \"HumanEval/0\", \"prompt\": \"\", \"test\": \"\", "
                            "\"entry_point\": \"f\"}\n"),
               "");
    ASSERT(benchmark_of("not json") == NULL);
}

/* CodeContests: a job per solution in a language with an image (Python 2
 * left out), public, private then generated tests, tokens_icase_abs, the
 * harness's 10 s per test, the problem's own time limit in meta. */
TEST(stdio_codecontests_jobs)
{
    struct counts c;
    struct llmsb_err err = {0};
    struct jobs j;

    ASSERT_EQ(convert(CC_ROW, NULL, 0, &j, &c, &err), 0);
    ASSERT_EQ(j.n, 3);
    ASSERT_EQ(c.no_image, 1);
    ASSERT_STR(c.benchmark, "codecontests");
    ASSERT_STR(str(j.job[0], "id"), "P1/solutions/0");
    ASSERT_STR(str(j.job[0], "lang"), "python");
    ASSERT_STR(str(j.job[0], "code"), "print(1)"); /* as it is: python3 FILE */
    ASSERT_STR(str(j.job[1], "id"), "P1/solutions/2");
    ASSERT_STR(str(j.job[1], "lang"), "cpp");
    ASSERT_STR(str(j.job[2], "lang"), "java");
    ASSERT_STR(str(j.job[0], "compare"), "tokens_icase_abs");
    ASSERT_STR(str(j.job[0], "cases.0.stdin"), "1\n");
    ASSERT_STR(str(j.job[0], "cases.1.expect_stdout"), "B\n");
    ASSERT_STR(str(j.job[0], "cases.2.stdin"), "3\n");
    ASSERT_EQ(cJSON_GetArraySize(at(j.job[0], "cases")), 3);
    ASSERT(cJSON_IsTrue(at(j.job[0], "stop_on_failure")));
    ASSERT_EQ(at(j.job[0], "timeout")->valuedouble, 10);
    ASSERT_EQ(at(j.job[0], "meta.time_limit_s")->valuedouble, 2.5);
    ASSERT_EQ(at(j.job[0], "meta.difficulty")->valueint, 7);
    ASSERT_STR(str(j.job[0], "meta.benchmark"), "codecontests");
    ASSERT_STR(str(j.job[0], "meta.task_id"), "P1");
    jobs_release(&j);
}

/* APPS: lists of lines joined, the runner with program.py, 4 s a test or
 * --timeout; a call-based problem's cases carry the call; a problem with
 * no tests is counted, not run. */
TEST(stdio_apps_jobs)
{
    struct counts c;
    struct llmsb_err err = {0};
    struct jobs j;

    ASSERT_EQ(convert(APPS_ROWS, NULL, 0, &j, &c, &err), 0);
    ASSERT_EQ(j.n, 2);
    ASSERT_EQ(c.tasks, 3);
    ASSERT_EQ(c.untested, 1);
    ASSERT_EQ(c.unsolved, 0); /* the one without tests is counted there only */
    ASSERT_STR(str(j.job[0], "id"), "5/solutions/0");
    ASSERT_STR(str(j.job[0], "cases.0.stdin"), "1\n2");
    ASSERT_STR(str(j.job[0], "cases.0.expect_stdout"), "3");
    ASSERT_STR(str(j.job[0], "compare"), "line_token_sets");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetObjectItem(at(j.job[0], "files"), "program.py")),
               "print(input())");
    ASSERT_CONTAINS(str(j.job[0], "code"), "CHECKER = \"APPS\"");
    ASSERT_EQ(at(j.job[0], "timeout")->valuedouble, 4);
    ASSERT_STR(str(j.job[0], "meta.difficulty"), "interview");
    /* a call-based problem: all its tests in one case (one module, as the
     * checker), each under the per-test limit, the job under its global */
    ASSERT_STR(str(j.job[1], "args.0"), "call");
    ASSERT_STR(str(j.job[1], "args.1"), "4");
    ASSERT(at(j.job[1], "compare") == NULL);
    ASSERT_STR(str(j.job[1], "cases.0.stdin"),
               "[{\"fn_name\":\"f\",\"input\":[1],\"output\":[1]}]");
    ASSERT(at(j.job[1], "cases.1") == NULL);
    ASSERT_EQ(at(j.job[1], "timeout")->valuedouble, (4 + 1) * 1 + 5);
    ASSERT(at(j.job[1], "cases.0.expect_stdout") == NULL);
    jobs_release(&j);
    ASSERT_EQ(convert(APPS_ROWS, NULL, 9, &j, &c, &err), 0);
    ASSERT_EQ(at(j.job[0], "timeout")->valuedouble, 9);
    jobs_release(&j);
}

/* The samples formats: APPS's {"PROBLEM_ID": [code]} (or a list by the
 * dataset's order), LiveCodeBench's [{"question_id", "code_list"}],
 * CodeContests' JSON Lines; ids TASK#N. */
TEST(stdio_samples_formats)
{
    struct counts c;
    struct llmsb_err err = {0};
    struct jobs j;

    ASSERT_EQ(convert(APPS_ROWS, "{\"6\": [\"a\", \"b\"], \"5\": \"c\"}", 0, &j, &c, &err), 0);
    ASSERT_EQ(j.n, 3);
    ASSERT_STR(str(j.job[1], "id"), "6#1");
    ASSERT_STR(str(j.job[2], "id"), "5#0");
    jobs_release(&j);
    ASSERT_EQ(convert(APPS_ROWS, "[[\"a\"], [\"b\"]]", 0, &j, &c, &err), 0);
    ASSERT_STR(str(j.job[1], "id"), "6#0");
    jobs_release(&j);
    ASSERT_EQ(convert(LCB_ROW, "[{\"question_id\": \"q1\", \"code_list\": [\"x\", \"y\"]}]", 0, &j,
                      &c, &err),
              0);
    ASSERT_EQ(j.n, 2);
    ASSERT_STR(str(j.job[1], "id"), "q1#1");
    ASSERT_STR(str(j.job[0], "args.0"), "call");
    ASSERT_STR(str(j.job[0], "cases.0.stdin"),
               "[{\"fn_name\":\"g\",\"input\":\"[1]\\n2\",\"output\":\"3\"}]");
    ASSERT_CONTAINS(str(j.job[0], "code"), "CHECKER = \"LiveCodeBench\"");
    ASSERT_STR(str(j.job[0], "args.1"), "6");
    ASSERT_EQ(at(j.job[0], "timeout")->valuedouble, (6 + 1) * 1 + 5);
    ASSERT_STR(str(j.job[0], "meta.platform"), "leetcode");
    jobs_release(&j);
    ASSERT_EQ(convert(CC_ROW,
                      "{\"task_id\": \"P1\", \"completion\": \"x\", \"language\": 2}\n"
                      "{\"name\": \"P1\", \"solution\": \"y\"}\n",
                      0, &j, &c, &err),
              0);
    ASSERT_STR(str(j.job[0], "lang"), "cpp");
    ASSERT_STR(str(j.job[1], "id"), "P1#1");
    ASSERT_STR(str(j.job[1], "lang"), "python");
    jobs_release(&j);
}

/* A stdin/stdout benchmark's file is read as every dataset is: a row may
 * be pretty-printed over lines, and an error names the line a row (or a
 * CodeContests sample) starts on, in a JSON array too. */
TEST(stdio_files_read_as_every_dataset)
{
    static const struct {
        const char *dataset, *samples, *msg;
    } bad[] = {
        {"[\n{\"problem_id\": 5, \"input_output\": \"\"},\n\n{\"input_output\": \"\"}\n]\n", NULL,
         "d.jsonl:4: problem_id: missing or not a string id"},
        {CC_ROW, "[\n {\"task_id\": \"P1\"}\n]\n",
         "s.json:2: a sample needs task_id (or name) and completion (or solution) strings"},
    };
    struct counts c;
    struct llmsb_err err = {0};
    struct jobs j;

    ASSERT_EQ(convert("{\"name\": \"P\",\n \"public_tests\": {\"input\": [\"1\\n\"], \"output\": "
                      "[\"1\\n\"]},\n \"solutions\": [{\"language\": 3, \"solution\": "
                      "\"print(1)\"}]\n}\n",
                      NULL, 0, &j, &c, &err),
              0);
    ASSERT_STR(c.benchmark, "codecontests");
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(str(j.job[0], "id"), "P/solutions/0");
    ASSERT_STR(str(j.job[0], "cases.0.stdin"), "1\n");
    jobs_release(&j);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&err, 0, sizeof(err));
        ASSERT_MSG(convert(bad[i].dataset, bad[i].samples, 0, &j, &c, &err) != 0, bad[i].msg);
        ASSERT_STR(err.msg, bad[i].msg);
        jobs_release(&j);
    }
}

/* Each bad input and the whole message it gets. */
TEST(stdio_errors_name_line_field_value)
{
    static const struct {
        const char *dataset, *samples, *msg;
    } cases[] = {
        {CC_ROW APPS_ROWS, NULL,
         "d.jsonl:2: a row of another benchmark, where the first row is codecontests's (one "
         "benchmark per file)"},
        {"{\"public_tests\": []}\n", NULL, "d.jsonl:1: name: missing or not a string id"},
        {"{\"name\": \"P\", \"public_tests\": {\"input\": [\"1\"]}}\n", NULL,
         "d.jsonl:1: task \"P\": public_tests must have \"input\" and \"output\" lists of the "
         "same length"},
        {"{\"question_id\": \"q\", \"public_test_cases\": \"[]\", \"private_test_cases\": "
         "\"eJxrYA==\"}\n",
         NULL,
         "d.jsonl:1: task \"q\": private_test_cases is not JSON: LiveCodeBench keeps "
         "private_test_cases as base64 of zlib of a Python pickle, which only Python can read; "
         "convert decodes them in a sandbox job unless told not to (--no-decode), or decode "
         "them first (docs/eval.md: \"LiveCodeBench\"), e.g. "
         "json.loads(pickle.loads(zlib.decompress(base64.b64decode(s))))"},
        {"{\"question_id\": \"q\", \"public_test_cases\": \"[{\\\"input\\\": \\\"1\\\", "
         "\\\"output\\\": \\\"1\\\", \\\"testtype\\\": \\\"functional\\\"}]\"}\n",
         NULL,
         "d.jsonl:1: task \"q\": public_test_cases has a functional test but metadata names no "
         "func_name"},
        {APPS_ROWS, "{\"404\": [\"x\"]}", "s.json:\"404\": task \"404\" is not in d.jsonl"},
        {APPS_ROWS, "{\"7\": [\"x\"]}",
         "s.json:\"7\": task \"7\" has no tests in d.jsonl, so nothing can grade it"},
        {APPS_ROWS, "{\"5\": [1]}", "s.json:\"5\": not a list of code strings"},
        {LCB_ROW, "{}",
         "s.json: not LiveCodeBench outputs (a JSON list of {\"question_id\", "
         "\"code_list\"})"},
        {CC_ROW, "{\"task_id\": \"P1\", \"completion\": \"x\", \"language\": 1}\n",
         "s.json:1: language: no image for it (Python 2 and unknown languages are not run)"},
        {CC_ROW, "{\"task_id\": \"P1\"}\n",
         "s.json:1: a sample needs task_id (or name) and completion (or solution) strings"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct counts c;
        struct llmsb_err err = {0};
        struct jobs j;
        ASSERT_MSG(convert(cases[i].dataset, cases[i].samples, 0, &j, &c, &err) != 0, cases[i].msg);
        ASSERT_EQ(err.code, LLMSB_ERR_INVALID);
        ASSERT_STR(err.msg, cases[i].msg);
        jobs_release(&j);
    }
}

/* A \u0000 in a row or a sample (cJSON would end the string there, cutting
 * a program or a test) is refused naming file:line and the field, also
 * inside a field that is JSON kept as a string; an escaped backslash
 * before u0000 is no NUL. */
TEST(stdio_nul_is_refused_naming_the_field)
{
    static const struct {
        const char *dataset, *samples, *msg;
    } cases[] = {
        {"{\"problem_id\": 5, \"solutions\": \"[]\", \"input_output\": "
         "\"{\\\"inputs\\\": [\\\"1\\\\u0000\\\"], \\\"outputs\\\": [\\\"1\\\"]}\"}\n",
         NULL, "d.jsonl:1: field \"inputs\" holds a NUL character"},
        {APPS_ROWS, "{\"5\": [\"print(1)\",\n \"print(2)\\u0000\"]}",
         "s.json:2: field \"5\" holds a NUL character"},
        {LCB_ROW, "[{\"question_id\": \"q1\", \"code_list\": [\"x\\u0000\"]}]",
         "s.json:1: field \"code_list\" holds a NUL character"},
        {APPS_ROWS, "{\"5\": [\"print('\\\\u0000')\"]}", NULL},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct counts c;
        struct llmsb_err err = {0};
        struct jobs j;
        int rc = convert(cases[i].dataset, cases[i].samples, 0, &j, &c, &err);
        if (cases[i].msg) {
            ASSERT_MSG(rc != 0, cases[i].msg);
            ASSERT_CONTAINS(err.msg, cases[i].msg);
        } else {
            ASSERT_MSG(rc == 0, err.msg);
            ASSERT_EQ(j.n, 1);
        }
        jobs_release(&j);
    }
}

/* A problem with more tests than a job takes is refused, naming it. */
TEST(stdio_too_many_tests)
{
    struct counts c;
    struct llmsb_err err = {0};
    struct jobs j;
    char *row = NULL;
    size_t cap = 1001 * 40 + 256, o;

    ASSERT((row = malloc(cap)) != NULL);
    o = (size_t)snprintf(row, cap, "{\"name\": \"P\", \"public_tests\": [");
    for (int i = 0; i < 1001; i++)
        o += (size_t)snprintf(row + o, cap - o, "%s{\"input\": \"\", \"output\": \"\"}",
                              i ? "," : "");
    snprintf(row + o, cap - o, "]}\n");
    ASSERT(convert(row, NULL, 0, &j, &c, &err) != 0);
    ASSERT_STR(err.msg, "d.jsonl:1: task \"P\": its tests has 1001 tests; a job takes at most "
                        "1000 cases");
    jobs_release(&j);
    free(row);
}

TEST_MAIN("eval_stdio", T(stdio_rows_are_recognised_by_their_fields), T(stdio_codecontests_jobs),
          T(stdio_apps_jobs), T(stdio_samples_formats), T(stdio_errors_name_line_field_value),
          T(stdio_too_many_tests), T(stdio_nul_is_refused_naming_the_field),
          T(stdio_files_read_as_every_dataset))
