/* test_crux.c - CRUXEval and CRUXEval-X in eval/ without a container: the
 * program each harness builds, for input and output prediction, in each
 * of CRUXEval-X's languages; the samples files in the harnesses' shapes;
 * the generations CRUXEval leaves out; the errors naming file:line. */
#include "test.h"

#include "eval_jobs.h"

#include <cjson/cJSON.h>

#include "eval/convert.h"

#define MARK "?\?\?\?" /* four question marks, not a trigraph */

static double num(const cJSON *o, const char *key)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* The jobs of dataset text (named name) read for mode, from samples when
 * not NULL, else the references; 0 or the error code. */
static int convert(const char *name, const char *text, const char *mode, const char *lang,
                   const char *samples, struct jobs *j, struct convert_out *o,
                   struct llmsb_err *err)
{
    struct convert_opts opts = {.mode = mode, .lang = lang};
    struct convert_set *s = convert_set_read_opts(name, text, &opts, err);
    int rc;

    if (!s)
        return err->code;
    o->name = "mem";
    o->out = open_memstream(&j->text, &j->len);
    rc = samples ? convert_write_samples(s, "s.json", samples, o, err)
                 : convert_write_references(s, o, err);
    fclose(o->out);
    convert_set_free(s);
    jobs_parse(j);
    return rc;
}

static const char crux_row[] =
    "{\"code\": \"def f(x):\\n    return x + 1\", \"input\": \"1\", \"output\": \"2\", "
    "\"id\": \"sample_3\"}\n";

TEST(cruxeval_program_per_mode)
{
    struct llmsb_err err = {0};
    struct convert_out o = {0};
    struct jobs j = {0};
    const cJSON *files;

    /* input prediction: the reference is f on the row's input */
    ASSERT_EQ(convert("c.jsonl", crux_row, "input", NULL, NULL, &j, &o, &err), 0);
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(str(j.job[0], "id"), "sample_3/input");
    ASSERT_STR(str(j.job[0], "lang"), "python");
    files = cJSON_GetObjectItemCaseSensitive(j.job[0], "files");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(files, "program.py")),
               "def f(x):\n    return x + 1\nassert 2 == f(1)");
    ASSERT_CONTAINS(str(j.job[0], "code"), "runpy.run_path(\"program.py\"");
    ASSERT_EQ(num(j.job[0], "timeout"), 3);
    ASSERT_STR(str(j.job[0], "meta.task_id"), "sample_3/input");
    ASSERT_STR(str(j.job[0], "meta.benchmark"), "cruxeval");
    ASSERT_STR(str(j.job[0], "meta.mode"), "input");
    ASSERT_STR(str(j.job[0], "meta.id"), "sample_3");
    jobs_release(&j);

    /* output prediction from generations.json: the same assertion */
    ASSERT_EQ(convert("c.jsonl", crux_row, "output", NULL, "{\"sample_3\": [\"2\", \"3\"]}", &j, &o,
                      &err),
              0);
    ASSERT_EQ(j.n, 2);
    ASSERT_STR(str(j.job[1], "id"), "sample_3/output#1");
    files = cJSON_GetObjectItemCaseSensitive(j.job[1], "files");
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(files, "program.py")),
               "def f(x):\n    return x + 1\nassert 2 == 3");
    ASSERT_STR(str(j.job[1], "meta.task_id"), "sample_3/output");
    jobs_release(&j);
}

/* evaluate_score leaves out an input prediction without "f(" and an output
 * prediction naming f(INPUT); a task with all of them left out fails. */
TEST(cruxeval_generations_left_out_as_the_harness)
{
    struct llmsb_err err = {0};
    struct convert_out o = {0};
    struct jobs j = {0};
    const cJSON *files;

    ASSERT_EQ(convert("c.jsonl", crux_row, "input", NULL,
                      "{\"sample_3\": [\"f(1)\", \"2\", \"f(0)\"]}", &j, &o, &err),
              0);
    ASSERT_EQ(j.n, 2);
    ASSERT_EQ(o.skipped, 1);
    ASSERT_STR(str(j.job[0], "id"), "sample_3/input#0");
    ASSERT_STR(str(j.job[1], "id"), "sample_3/input#2");
    jobs_release(&j);

    o = (struct convert_out){0};
    ASSERT_EQ(convert("c.jsonl", crux_row, "output", NULL, "{\"sample_3\": [\"f(1)\", \"f(1) \"]}",
                      &j, &o, &err),
              0);
    ASSERT_EQ(j.n, 2);
    ASSERT_EQ(o.skipped, 0);
    files = cJSON_GetObjectItemCaseSensitive(j.job[0], "files");
    ASSERT_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(files, "program.py")),
                    "raise AssertionError(\"cruxeval: every generation");
    jobs_release(&j);
}

/* One row of CRUXEval-X in each language: the code, its test (where the
 * harness cuts), and the reasoning's test around the mark. */
static const struct {
    const char *file, *lang, *call, *code, *test_before, *input, *test_mid, *output, *test_after;
    long timeout_s;
} x_rows[] = {
    {"py.jsonl", "python", "candidate(", "def f(x):\n    return x\n\n",
     "def check(candidate):\n    assert ", "candidate(1)", " == ", "1", "\n\ncheck(f)\n", 15},
    {"js.jsonl", "javascript", "candidate(", "function f(x){ return x; }\n",
     "const assert = require('node:assert');\nassert.deepEqual(", "candidate(1)", ",", "1", ");\n",
     5},
    {"java.jsonl", "java", "f(",
     "class Problem {\n    public static long f(long x) {\n        return x;\n",
     "    }\n    public static void main(String[] args) {\n    assert(", "f(1l)", " == (", "1l",
     "));\n    }\n}\n", 15},
    {"cpp.jsonl", "cpp", "candidate(", "#include<assert.h>\nlong f(long x) {\n    return x;\n",
     "}\nint main() {\n    auto candidate = f;\n    assert(", "candidate(1)", " == ", "(1)",
     ");\n}\n", 15},
    {"go.jsonl", "go_test", "candidate(",
     "package f_test\n\nimport \"testing\"\n\nfunc f(x int) int { return x }\n",
     "func TestF(t *testing.T) {\n  candidate := f\n  if ", "candidate(1)", " != ", "1",
     " { t.Fail() }\n}\n", 30},
    {"rb.jsonl", "ruby", "candidate.call(", "def f(x)\n  x\nend\n",
     "require 'test/unit'\nclass T < Test::Unit::TestCase\n  def test_f\n    candidate = "
     "method(:f)\n    assert_equal(",
     "candidate.call(1)", ", ", "1", ")\n  end\nend\n", 5},
    {"r.jsonl", "r", "candidate(", "f <- function(x) {\n    x\n}\n",
     "test_humaneval <- function() {\n    candidate <- f\n    stopifnot(isTRUE(all.equal(",
     "candidate(1)", ", ", "1", ")))\n}\ntest_humaneval()\n", 5},
};

/* Row i's reasoning for input (the call with the mark in place of its
 * input) or output prediction (the mark in place of the output); Ruby's
 * assert_equal names the output first. */
static char *x_reasoning(int i, int output)
{
    char *r = NULL;
    int ruby = strcmp(x_rows[i].lang, "ruby") == 0; /* its output comes first */
    const char *in = output ? x_rows[i].input : NULL, *out = output ? NULL : x_rows[i].output;
    char call[64];

    snprintf(call, sizeof(call), "%s" MARK ")", x_rows[i].call);
    if (!in)
        in = call;
    if (!out)
        out = MARK;
    if (asprintf(&r, "%s%s%s%s%s", x_rows[i].test_before, ruby ? out : in, x_rows[i].test_mid,
                 ruby ? in : out, x_rows[i].test_after) < 0)
        r = NULL;
    return r;
}

TEST(cruxeval_x_program_per_language_and_mode)
{
    for (int i = 0; i < (int)(sizeof(x_rows) / sizeof(x_rows[0])); i++) {
        int ruby = strcmp(x_rows[i].lang, "ruby") == 0;
        char *rin = x_reasoning(i, 0), *rout = x_reasoning(i, 1), *code = NULL, *row = NULL;
        cJSON *r = cJSON_CreateObject();

        ASSERT(rin && rout);
        ASSERT(asprintf(&code, "%s%s%s%s%s%s", x_rows[i].code, x_rows[i].test_before,
                        ruby ? x_rows[i].output : x_rows[i].input, x_rows[i].test_mid,
                        ruby ? x_rows[i].input : x_rows[i].output, x_rows[i].test_after) > 0);
        cJSON_AddNumberToObject(r, "id", 7);
        cJSON_AddStringToObject(r, "code", code);
        cJSON_AddStringToObject(r, "input_reasoning", rin);
        cJSON_AddStringToObject(r, "output_reasoning", rout);
        row = cJSON_PrintUnformatted(r);
        for (int m = 0; m < 2; m++) {
            const char *mode = m ? "output" : "input";
            const char *answer = m ? "42" : "candidate(41)";
            char *want = NULL, *sample = NULL, *call = NULL, *id = NULL;
            struct llmsb_err err = {0};
            struct convert_out o = {0};
            struct jobs j = {0};

            /* the reference is the row's own code, "\n" before, "\n\n" after */
            ASSERT(asprintf(&want, "\n%s\n\n", code) > 0);
            ASSERT_EQ(convert(x_rows[i].file, row, mode, NULL, NULL, &j, &o, &err), 0);
            ASSERT_MSG(j.n == 1, x_rows[i].file);
            ASSERT_STR(str(j.job[0], "code"), want);
            ASSERT_STR(str(j.job[0], "lang"), x_rows[i].lang);
            ASSERT_EQ(num(j.job[0], "timeout"), x_rows[i].timeout_s);
            ASSERT(cJSON_GetObjectItemCaseSensitive(j.job[0], "files") == NULL);
            ASSERT_EQ(num(cJSON_GetObjectItemCaseSensitive(j.job[0], "meta"), "id"), 7);
            ASSERT_STR(str(j.job[0], "meta.benchmark"), "cruxeval-x");
            jobs_release(&j);
            free(want);

            /* an answer (cleaned as the harness cleans it: Python's str.strip(),
             * \x1c and Unicode spaces too) in place of the mark */
            ASSERT(asprintf(
                       &sample,
                       "[{\"id\": 7, \"answer\": \"\\u00a0\\u001c [ANSWER]%s\\u3000\\n\\u001f\"}]",
                       answer) > 0);
            ASSERT(asprintf(&call, "%s" MARK ")", x_rows[i].call) > 0);
            {
                const char *reasoning = m ? rout : rin, *mark = m ? MARK : call;
                const char *at = strstr(reasoning, mark);
                size_t cut = strlen(x_rows[i].code);
                ASSERT(at != NULL);
                ASSERT(asprintf(&want, "\n%.*s%.*s%s%s\n\n", (int)cut, code, (int)(at - reasoning),
                                reasoning, answer, at + strlen(mark)) > 0);
            }
            ASSERT_EQ(convert(x_rows[i].file, row, mode, NULL, sample, &j, &o, &err), 0);
            ASSERT_MSG(j.n == 1, err.msg);
            ASSERT(asprintf(&id, "%.*s/7/%s#0", (int)(strchr(x_rows[i].file, '.') - x_rows[i].file),
                            x_rows[i].file, mode) > 0);
            ASSERT_STR(str(j.job[0], "id"), id);
            ASSERT_STR(str(j.job[0], "code"), want);
            ASSERT_STR(str(j.job[0], "meta.mode"), mode);
            if (strcmp(x_rows[i].lang, "cpp") == 0) {
                char *flags = cJSON_PrintUnformatted(
                    cJSON_GetObjectItemCaseSensitive(j.job[0], "compile_flags"));
                ASSERT_STR(flags, "[\"-std=c++17\",\"-O0\"]");
                free(flags);
            }
            jobs_release(&j);
            free(want);
            free(sample);
            free(call);
            free(id);
        }
        free(row);
        free(code);
        free(rin);
        free(rout);
        cJSON_Delete(r);
    }
}

/* The code is cut at the earliest of the language's stops, wherever each
 * is in the list (infer_vllm.py splits at each in turn). */
TEST(cruxeval_x_cut_at_the_earliest_stop)
{
    static const char row[] =
        "{\"id\": 3, \"code\": \"long f(long x) {\\n    return x;\\n}\\n\\nint main() {\\n    "
        "assert(candidate(1) == 1);\\n}\\nint main() {}\\n\", \"input_reasoning\": \"x\", "
        "\"output_reasoning\": \"}\\n\\nint main() {\\n    assert(candidate(1) == " MARK
        ");\\n}\\n\"}\n";
    struct llmsb_err err = {0};
    struct convert_out o = {0};
    struct jobs j = {0};

    ASSERT_EQ(
        convert("cpp.jsonl", row, "output", NULL, "[{\"id\": 3, \"answer\": \"1\"}]", &j, &o, &err),
        0);
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(str(j.job[0], "code"), "\nlong f(long x) {\n    return x;\n}\n\nint main() {\n    "
                                      "assert(candidate(1) == 1);\n}\n\n\n");
    jobs_release(&j);
}

/* --lang names the language of a file whose name does not; its samples'
 * errors name their line */
TEST(cruxeval_x_language_from_lang_or_file_name)
{
    static const char row[] =
        "{\"id\": 1, \"code\": \"f <- function(x) x\\ntest_humaneval <- function() "
        "stopifnot(candidate(1) == 1)\", \"input_reasoning\": \"test_humaneval <- function() "
        "stopifnot(candidate(" MARK ") == 1)\", \"output_reasoning\": \"test_humaneval <- "
        "function() stopifnot(candidate(1) == " MARK ")\"}\n";
    struct llmsb_err err = {0};
    struct convert_out o = {0};
    struct jobs j = {0};

    ASSERT_EQ(convert("data/x.jsonl", row, "input", "r", NULL, &j, &o, &err), 0);
    ASSERT_STR(str(j.job[0], "id"), "r/1/input");
    ASSERT_STR(str(j.job[0], "meta.language"), "r");
    jobs_release(&j);
    ASSERT_EQ(convert("data/x.jsonl", row, "input", NULL, NULL, &j, &o, &err), LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "data/x.jsonl:1: task \"1\": a CRUXEval-X file's language is --lang or "
                        "its name's (py, js, java, cpp, go, rb, r: cpp.jsonl): \"x\" is none of "
                        "them");
    jobs_release(&j);
    /* its results: a JSON array or JSON Lines, an error naming the row's line */
    ASSERT_EQ(convert("data/x.jsonl", row, "output", "r",
                      "[\n  {\"id\": 1, \"answer\": \"1\"},\n  {\"id\": 2},\n"
                      "  {\"id\": 9, \"answer\": \"1\"}\n]",
                      &j, &o, &err),
              LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "s.json:4: task \"r/9/output\" is not in the dataset");
    ASSERT_EQ(j.n, 1);
    jobs_release(&j);
    ASSERT_EQ(convert("data/x.jsonl", row, "output", "r",
                      "{\"id\": 1, \"answer\": \"1\"}\n{\"id\": [1], \"answer\": \"1\"}\n", &j, &o,
                      &err),
              LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "s.json:2: the id must be a string or a number");
    jobs_release(&j);
    /* CRUXEval's generations.json is not CRUXEval-X's results */
    ASSERT_EQ(
        convert("data/x.jsonl", row, "output", "r", "{\n\"sample_0\": [\"1\"]\n}", &j, &o, &err),
        LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg,
               "s.json:1: no id: not a row of CRUXEval-X's results ({\"id\", \"answer\"})");
    jobs_release(&j);
}

TEST(crux_errors_name_file_line_and_value)
{
    struct llmsb_err err = {0};
    struct convert_out o = {0};
    struct jobs j = {0};

    ASSERT_EQ(convert("c.jsonl", crux_row, NULL, NULL, NULL, &j, &o, &err), LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "c.jsonl:1: task \"sample_3\": a CRUXEval row is graded for input or "
                        "output prediction: give --mode input or --mode output");
    jobs_release(&j);
    ASSERT_EQ(
        convert("c.jsonl", crux_row, "input", NULL, "{\"sample_4\": [\"f(1)\"]}", &j, &o, &err),
        LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "s.json: sample_4: task \"sample_4/input\" is not in the dataset");
    jobs_release(&j);
    ASSERT_EQ(convert("c.jsonl", crux_row, "input", NULL, "\n{\"sample_3\": [1]}", &j, &o, &err),
              LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "s.json: \"sample_3\": generations must be strings");
    jobs_release(&j);
    ASSERT_EQ(convert("c.jsonl", crux_row, "input", NULL, "\n\n[\"f(1)\"]", &j, &o, &err),
              LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "s.json:3: not a JSON object of {\"sample_N\": [generations]} "
                        "(CRUXEval's generations.json)");
    jobs_release(&j);
}

TEST_MAIN("crux", T(cruxeval_program_per_mode), T(cruxeval_generations_left_out_as_the_harness),
          T(cruxeval_x_program_per_language_and_mode), T(cruxeval_x_cut_at_the_earliest_stop),
          T(cruxeval_x_language_from_lang_or_file_name), T(crux_errors_name_file_line_and_value))
