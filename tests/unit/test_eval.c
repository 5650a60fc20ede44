/* test_eval.c - eval/ without a container: which benchmark a dataset row
 * is from, the job each format writes, the errors naming file:line, the
 * field and the value, sample ids, and a pass@k report's write error. */
#include "test.h"

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

/* The jobs written to a memory stream, one JSON object per line. */
struct jobs {
    char *text;
    size_t len;
    cJSON *job[8];
    int n;
};

static void jobs_parse(struct jobs *j)
{
    for (char *p = j->text, *nl; p && *p && j->n < 8; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        j->job[j->n++] = cJSON_ParseWithLength(p, nl ? (size_t)(nl - p) : strlen(p));
    }
}

static void jobs_release(struct jobs *j)
{
    for (int i = 0; i < j->n; i++)
        cJSON_Delete(j->job[i]);
    free(j->text);
}

static const char *str(const cJSON *o, const char *path)
{
    char key[64];
    const char *dot = strchr(path, '.');
    if (!dot)
        return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, path));
    snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
    return str(cJSON_GetObjectItemCaseSensitive(o, key), dot + 1);
}

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
    size_t unsolved = 0;

    ASSERT_MSG(s != NULL, err.msg);
    ASSERT_EQ(convert_set_size(s), 4);
    o.out = open_memstream(&j.text, &j.len);
    ASSERT_EQ(convert_write_references(s, &o, &unsolved, &err), 0);
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(&j);
    ASSERT_EQ(j.n, 3);
    ASSERT_EQ(o.jobs, 3);
    ASSERT_EQ(unsolved, 1);
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

TEST(report_write_error_names_the_file)
{
    struct report_row rows[] = {{"python", "T/1", 1}, {"python", "T/1", 0}};
    struct llmsb_err err = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    ASSERT(report_passk(out, rows, 2, "meta.task_id", "/nonexistent/r.json", &err) < 0);
    fclose(out);
    ASSERT_STR(err.msg, "cannot write \"/nonexistent/r.json\"");
    ASSERT_CONTAINS(text, "python            1        2    0.5000");
    free(text);
}

TEST_MAIN("eval", T(reference_jobs_by_format), T(dataset_errors_name_line_field_value),
          T(samples_are_task_n_and_checked), T(report_write_error_names_the_file))
