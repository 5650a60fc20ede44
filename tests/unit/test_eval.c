/* test_eval.c - eval/ without a container: which benchmark a dataset row
 * is from, the job each format writes, the errors naming file:line, the
 * field and the value, sample ids, a pass@k report's write error, the
 * nearest-rank percentiles and the report's phases and provenance. */
#include "test.h"

#include "eval_jobs.h"

#include <cjson/cJSON.h>

#include "eval/convert.h"
#include "eval/report.h"

/* One row of each format, and a HumanEval row without a reference. */
static const char dataset[] =
    "{\"task_id\": \"HumanEval/0\", \"prompt\": \"def f():\\n\", \"test\": \"def check(c): "
    "pass\\n\", \"entry_point\": \"f\", \"canonical_solution\": \"    return 1\"}\n"
    "\n"
    "{\"task_id\": \"JavaScript/3\", \"prompt\": \"const f = () => {\", \"test\": \"f();\", "
    "\"canonical_solution\": \"return 1; }\"}\r\n"
    "{\"task_id\": \"MBRBP/1\", \"language\": \"ruby\", \"prompt\": \"def f\\n\", \"test\": "
    "\"f\\n\", \"canonical_solution\": \"1\\nend\"}\n"
    "{\"task_id\": \"HumanEval/1\", \"prompt\": \"def g():\\n\", \"test\": \"\", "
    "\"entry_point\": \"g\"}\n";

/* The program of a Python job: its file program.py. */
static const char *program_py(const cJSON *job)
{
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(job, "files");
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(files, "program.py"));
}

TEST(reference_jobs_by_format)
{
    struct llmsb_err err = {0};
    struct convert_set *s = convert_set_read("d.jsonl", dataset, &err);
    struct jobs j = {0};
    struct convert_out o = {.name = "mem", .timeout_s = 7};

    ASSERT_MSG(s != NULL, err.msg);
    ASSERT_EQ(convert_set_size(s), 4);
    o.out = open_memstream(&j.text, &j.len);
    ASSERT_EQ(convert_write_references(s, &o, &err), 0);
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(&j);
    ASSERT_EQ(j.n, 3);
    ASSERT_EQ(o.jobs, 3);
    ASSERT_EQ(o.unsolved, 1);
    /* HumanEval: the Python runner, the program as a file, check() called */
    ASSERT_STR(str(j.job[0], "id"), "HumanEval/0");
    ASSERT_STR(str(j.job[0], "meta.benchmark"), "humaneval");
    ASSERT_STR(program_py(j.job[0]), "def f():\n    return 1\ndef check(c): pass\n"
                                     "\ncheck(f)\n");
    ASSERT_CONTAINS(str(j.job[0], "code"), "runpy.run_path(\"program.py\"");
    ASSERT_EQ(cJSON_GetObjectItem(j.job[0], "timeout")->valueint, 7);
    /* HumanEval-X JavaScript: console.assert throws; nothing may be printed */
    ASSERT_STR(str(j.job[1], "meta.benchmark"), "humaneval-x");
    ASSERT_STR(str(j.job[1], "lang"), "javascript");
    ASSERT_STR(str(j.job[1], "expect_stdout"), "");
    ASSERT_CONTAINS(str(j.job[1], "code"), "console.assert = ");
    ASSERT_CONTAINS(str(j.job[1], "code"), "const f = () => {return 1; }\nf();");
    /* MBXP Ruby: Set loaded first */
    ASSERT_STR(str(j.job[2], "meta.task_id"), "MBRBP/1");
    ASSERT_STR(str(j.job[2], "meta.benchmark"), "mbxp");
    ASSERT_STR(str(j.job[2], "code"), "require 'set'\ndef f\n1\nend\nf\n");
    jobs_release(&j);
}

/* Each bad dataset and the whole message it gets. */
TEST(dataset_errors_name_line_field_value)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"\n[1]\n", "d.jsonl:2: element [0] of the array is not a JSON object"},
        {"{\"a\": 1} x\n", "d.jsonl:1: not a JSON object"},
        {"{\"prompt\": \"p\", \"test\": \"t\"}\n", "d.jsonl:1: no task_id (nor a name or an id)"},
        {"{\"task_id\": \"A\", \"test\": \"t\", \"entry_point\": \"f\"}\n",
         "d.jsonl:1: task \"A\": prompt and test must be strings"},
        {"{\"task_id\": \"A\", \"prompt\": \"p\", \"test\": \"t\", \"language\": \"cobol\"}\n",
         "d.jsonl:1: task \"A\": language \"cobol\" is not one of ours"},
        {"{\"task_id\": \"X/1\", \"prompt\": \"\", \"test\": \"\"}\n",
         "d.jsonl:1: task \"X/1\": not a row of HumanEval (no entry_point), HumanEval-X (task ids "
         "Python/, JavaScript/, Java/, CPP/, Go/), MBXP (no language), the open format (id, "
         "language, program or prompt) or MultiPL-E (name, language and tests)"},
        {"{\"task_id\": \"A\", \"prompt\": \"p\", \"test\": \"t\", \"entry_point\": \"f\"}\n"
         "{\"task_id\": \"A\", \"prompt\": \"p\", \"test\": \"t\", \"entry_point\": \"f\"}\n",
         "d.jsonl: task \"A\" is there twice"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct llmsb_err err = {0};
        struct convert_set *s = convert_set_read("d.jsonl", cases[i].text, &err);
        ASSERT_MSG(s == NULL, cases[i].msg);
        ASSERT_EQ(err.code, LLMSB_ERR_INVALID);
        ASSERT_STR(err.msg, cases[i].msg);
    }
}

TEST(samples_are_task_n_and_checked)
{
    struct llmsb_err err = {0};
    struct convert_set *s = convert_set_read("d.jsonl", dataset, &err);
    struct jobs j = {0};
    struct convert_out o = {.name = "mem"};
    const char *samples = "{\"task_id\": \"HumanEval/1\", \"completion\": \"  return 2\"}\n"
                          "{\"task_id\": \"HumanEval/1\", \"generation\": \"  return 3\"}\n"
                          "{\"task_id\": \"HumanEval/404\", \"completion\": \"x\"}\n";

    ASSERT_MSG(s != NULL, err.msg);
    o.out = open_memstream(&j.text, &j.len);
    ASSERT_EQ(convert_write_samples(s, "s.jsonl", samples, &o, &err), LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "s.jsonl:3: task \"HumanEval/404\" is not in d.jsonl");
    ASSERT_EQ(convert_write_samples(s, "s.jsonl", "{\"task_id\": \"HumanEval/1\"}", &o, &err),
              LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "s.jsonl:1: a sample needs task_id (or name, or id) and a completion (or "
                        "generation) string or a completions list");
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(&j);
    /* the jobs before the bad line are written, as the rows are read */
    ASSERT_EQ(j.n, 2);
    ASSERT_STR(str(j.job[0], "id"), "HumanEval/1#0");
    ASSERT_STR(str(j.job[1], "id"), "HumanEval/1#1");
    ASSERT_STR(str(j.job[1], "meta.task_id"), "HumanEval/1");
    ASSERT_CONTAINS(program_py(j.job[1]), "def g():\n  return 3\n");
    jobs_release(&j);
}

/* A whole file into b, NUL-terminated. */
static int read_whole(const char *path, struct buf *b)
{
    FILE *f = fopen(path, "re");
    char chunk[4096];
    size_t n;

    if (!f)
        return -1;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        buf_append(b, chunk, n);
    fclose(f);
    return buf_append(b, "", 1);
}

TEST(report_write_error_names_the_file)
{
    struct report_row rows[] = {{.lang = "python", .key = "T/1", .passed = 1},
                                {.lang = "python", .key = "T/1", .passed = 0}};
    struct llmsb_err err = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    ASSERT(report_passk(out, rows, 2, "meta.task_id", "/nonexistent/r.json", NULL, &err) < 0);
    fclose(out);
    ASSERT_STR(err.msg, "cannot write \"/nonexistent/r.json\"");
    ASSERT_CONTAINS(text, "python            1        2    0.5000");
    free(text);
}

/* Nearest rank: the value at rank ceil(p/100 * n), never between two. */
TEST(percentiles_are_nearest_rank)
{
    int64_t v[100];

    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    ASSERT_EQ(report_percentile(v, 0, 50), -1);
    ASSERT_EQ(report_percentile(v, 1, 50), 1);
    ASSERT_EQ(report_percentile(v, 1, 99), 1);
    ASSERT_EQ(report_percentile(v, 2, 50), 1); /* rank 1, not the mean 1.5 */
    ASSERT_EQ(report_percentile(v, 2, 51), 2);
    ASSERT_EQ(report_percentile(v, 10, 50), 5);
    ASSERT_EQ(report_percentile(v, 10, 95), 10); /* rank ceil(9.5) */
    ASSERT_EQ(report_percentile(v, 20, 95), 19);
    ASSERT_EQ(report_percentile(v, 20, 99), 20);
    ASSERT_EQ(report_percentile(v, 100, 99), 99);
    ASSERT_EQ(report_percentile(v, 100, 100), 100);
    ASSERT_EQ(report_percentile(v, 3, 0), -1);
}

/* The report's phases per language: a phase a job lacks is not counted
 * for it; the provenance lines and the JSON sections are there. */
TEST(report_phases_and_provenance)
{
    struct report_timing t[5];
    struct report_env env = {.cpus = 2, .memory_bytes = 1LL << 30};
    struct report_timings tm = {t, 5, &env};
    struct report_row rows[] = {{.lang = "cpp", .key = "T/1", .passed = 1}};
    struct llmsb_err err = {0};
    char path[] = "/tmp/llmsb-test-report-XXXXXX", *text = NULL, md[64], *mdtext;
    size_t len = 0;
    FILE *out;
    cJSON *o, *cpp;
    struct buf b;
    int fd = mkstemp(path);

    ASSERT(fd >= 0);
    close(fd);
    for (int i = 0; i < 5; i++) {
        memset(&t[i], 0, sizeof(t[i]));
        t[i].lang = i < 4 ? "cpp" : "python";
        for (int p = 0; p < REPORT_NPHASES; p++)
            t[i].ms[p] = p == 3 ? -1 : 10 * (i + 1); /* nobody installed */
        snprintf(t[i].acquire, sizeof(t[i].acquire), "%s", i ? "warm" : "cold");
    }
    t[1].ms[4] = -1; /* one cpp job without a compile step */
    snprintf(env.host, sizeof(env.host), "box");
    snprintf(env.engine, sizeof(env.engine), "docker");
    snprintf(env.engine_version, sizeof(env.engine_version), "24.0");
    env.nimages = 1;
    snprintf(env.images[0].name, sizeof(env.images[0].name), "llmsb/cpp:latest");
    snprintf(env.images[0].digest, sizeof(env.images[0].digest), "sha256:abc");
    report_env_add_limits(&env, "cpp", 10000, 512, 1, 256);
    report_env_add_limits(&env, "cpp", 10000, 512, 1, 256);
    report_env_add_limits(&env, "cpp", 2000, 512, 1, 256);
    ASSERT_EQ(env.nlimits, (size_t)2);
    ASSERT_EQ(env.limits[0].jobs, (size_t)2);
    out = open_memstream(&text, &len);
    ASSERT_EQ(report_passk(out, rows, 1, "meta.task_id", path, &tm, &err), 0);
    fclose(out);
    /* cpp run_ms over 10, 20, 30, 40: p50 = 20, p95 = p99 = 40 */
    ASSERT_CONTAINS(text, "cpp          run              4       20       40       40\n");
    ASSERT_CONTAINS(text, "cpp          compile          3       30       40       40\n");
    ASSERT(!strstr(text, "install"));
    ASSERT_CONTAINS(text, "cpp          acquire: warm 3, cold 1, other 0 (of 4 jobs)");
    ASSERT_CONTAINS(text, "engine: docker 24.0\n");
    ASSERT_CONTAINS(text, "image llmsb/cpp:latest: sha256:abc\n");
    ASSERT_CONTAINS(text, "limits cpp: timeout 10000 ms, memory 512 MB, cpus 1, pids 256 (2 jobs)");
    ASSERT_CONTAINS(text, "limits cpp: timeout 2000 ms");
    buf_init(&b, 1 << 20);
    ASSERT_EQ(read_whole(path, &b), 0);
    o = cJSON_Parse(b.data);
    ASSERT(o);
    ASSERT_STR(cJSON_GetObjectItem(o, "percentiles")->valuestring, "nearest-rank");
    cpp = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "phases"), "cpp");
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(cpp, "run_ms"), "p50")->valueint, 20);
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(cpp, "compile_ms"), "jobs")->valueint, 3);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(cpp, "install_ms"), "p50")));
    ASSERT_STR(cJSON_GetObjectItem(
                   cJSON_GetArrayItem(
                       cJSON_GetObjectItem(cJSON_GetObjectItem(o, "environment"), "images"), 0),
                   "digest")
                   ->valuestring,
               "sha256:abc");
    cJSON_Delete(o);
    snprintf(md, sizeof(md), "%s.md", path);
    buf_reset(&b);
    ASSERT_EQ(read_whole(md, &b), 0);
    mdtext = b.data;
    ASSERT_CONTAINS(mdtext, "| language | phase | jobs | p50 | p95 | p99 |");
    ASSERT_CONTAINS(mdtext, "| python | total | 1 | 50 | 50 | 50 |");
    ASSERT_CONTAINS(mdtext, "- image llmsb/cpp:latest: sha256:abc");
    buf_release(&b);
    unlink(md);
    unlink(path);
    free(text);
}

TEST_MAIN("eval", T(reference_jobs_by_format), T(dataset_errors_name_line_field_value),
          T(samples_are_task_n_and_checked), T(report_write_error_names_the_file),
          T(percentiles_are_nearest_rank), T(report_phases_and_provenance))
