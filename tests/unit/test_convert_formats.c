/* test_convert_formats.c - convert's MultiPL-E rows and the open JSON
 * Lines format without a container: the program of one row per language,
 * byte for byte, as MultiPL-E's evaluator writes it; a dataset as a JSON
 * array or as pretty-printed objects; completions lists; and the open
 * format's jobs and its errors naming file:line, the field and the value. */
#include "test.h"

#include "eval_jobs.h"

#include "eval/convert.h"

static int cut; /* convert_out.cut_at_stop_tokens of convert() */

/* The jobs of dataset (and samples, when given) into j; 0 or the error. */
static int convert(const char *dataset, const char *samples, struct jobs *j, struct llmsb_err *err)
{
    struct convert_set *s = convert_set_read("d.json", dataset, err);
    struct convert_out o = {.name = "mem", .cut_at_stop_tokens = cut};
    int rc;

    memset(j, 0, sizeof(*j));
    if (!s)
        return err->code;
    o.out = open_memstream(&j->text, &j->len);
    rc = samples ? convert_write_samples(s, "s.jsonl", samples, &o, err)
                 : convert_write_references(s, &o, err);
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(j);
    return rc;
}

static int num(const cJSON *o, const char *path)
{
    const cJSON *v = get(o, path);
    return cJSON_IsNumber(v) ? v->valueint : -1;
}

/* One MultiPL-E row per language, as its dataset spells the language, each
 * with one completion: the job's language, the program
 * prompt + completion + "\n" + tests, the harness's time limit. */
TEST(multiple_program_per_language)
{
    static const struct {
        const char *theirs, *ours;
        int timeout_s;
    } langs[] = {{"py", "python", 15}, {"js", "javascript", 5},       {"java", "java", 15},
                 {"cpp", "cpp", 15},   {"go_test.go", "go_test", 30}, {"rb", "ruby", 5},
                 {"r", "r", 5}};
    struct llmsb_err err = {0};
    char row[512];
    struct jobs j;

    for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++) {
        snprintf(row, sizeof(row),
                 "{\"name\": \"HumanEval_53_add\", \"language\": \"%s\", \"prompt\": \"P{\\n\", "
                 "\"doctests\": \"transform\", \"tests\": \"T\\n\", \"stop_tokens\": [\"\\n}\"], "
                 "\"completions\": [\"  C\\n}\"]}",
                 langs[i].theirs);
        ASSERT_MSG(convert(row, NULL, &j, &err) == 0, err.msg);
        ASSERT_EQ(j.n, 1);
        ASSERT_STR(str(j.job[0], "id"), "HumanEval_53_add#0");
        ASSERT_STR(str(j.job[0], "lang"), langs[i].ours);
        /* Python too: python3 FILE, the program itself (no runner) */
        ASSERT_STR(str(j.job[0], "code"), "P{\n  C\n}\nT\n");
        ASSERT(get(j.job[0], "files") == NULL);
        ASSERT_EQ(num(j.job[0], "timeout"), langs[i].timeout_s);
        ASSERT_EQ(num(j.job[0], "expect_exit"), 0);
        ASSERT_STR(str(j.job[0], "meta.benchmark"), "multipl-e");
        ASSERT_STR(str(j.job[0], "meta.task_id"), "HumanEval_53_add");
        ASSERT_STR(str(j.job[0], "meta.language"), langs[i].theirs);
        ASSERT_STR(str(j.job[0], "meta.doctests"), "transform");
        ASSERT(cJSON_IsArray(get(j.job[0], "meta.stop_tokens")));
        ASSERT(get(j.job[0], "meta.prompt") == NULL && get(j.job[0], "meta.completions") == NULL);
        /* eval_cpp.py: g++ -std=c++17, no -O */
        if (strcmp(langs[i].ours, "cpp") == 0) {
            ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(j.job[0], "compile_flags"), 0)),
                       "-std=c++17");
            ASSERT_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(j.job[0], "compile_flags"), 1)),
                       "-O0");
        }
        jobs_release(&j);
    }
}

/* A JSON array over lines, then pretty-printed objects one after another:
 * every row read, in order; samples by name, and a samples file's own
 * prompt must be the dataset's. */
TEST(multiple_array_objects_and_samples)
{
    const char *text =
        "[\n  {\"name\": \"A\", \"language\": \"py\",\n   \"prompt\": \"a\", \"tests\": "
        "\"t\"},\n  {\"name\": \"B\", \"language\": \"rb\", \"prompt\": \"b\", "
        "\"tests\": \"t\"}\n]\n{\n  \"name\": \"C\",\n  \"language\": \"r\",\n  "
        "\"prompt\": \"c\", \"tests\": \"t\",\n  \"completions\": [\"1\", \"2\"]\n}\n";
    struct llmsb_err err = {0};
    struct jobs j;

    ASSERT_MSG(convert(text, NULL, &j, &err) == 0, err.msg);
    ASSERT_EQ(j.n, 2); /* A and B have no completions, no reference */
    jobs_release(&j);
    /* pretty-printed objects one right after another (cat of files
     * without a last newline), where a one-line row may not be followed */
    ASSERT_MSG(convert("{\n\"name\": \"A\", \"language\": \"rb\", \"prompt\": \"\", \"tests\": "
                       "\"\",\n\"completions\": [\"1\"]\n}{\n\"name\": \"B\", \"language\": "
                       "\"rb\", \"prompt\": \"\", \"tests\": \"\", \"completions\": [\"2\"]}",
                       NULL, &j, &err) == 0,
               err.msg);
    ASSERT_EQ(j.n, 2);
    jobs_release(&j);
    ASSERT_EQ(convert("{\"name\": \"A\"} {\"name\": \"B\"}", NULL, &j, &err), LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "d.json:1: not a JSON object");
    jobs_release(&j);
    ASSERT_MSG(convert(text, NULL, &j, &err) == 0, err.msg);
    ASSERT_STR(str(j.job[1], "id"), "C#1");
    ASSERT_STR(str(j.job[1], "code"), "c2\nt");
    jobs_release(&j);
    ASSERT_MSG(convert(text,
                       "{\"name\": \"B\", \"completion\": \"x\"}\n"
                       "{\"name\": \"A\", \"completions\": [\"y\", \"z\"]}\n",
                       &j, &err) == 0,
               err.msg);
    ASSERT_EQ(j.n, 3);
    ASSERT_STR(str(j.job[0], "id"), "B#0");
    ASSERT_STR(str(j.job[0], "code"), "bx\nt");
    ASSERT_STR(str(j.job[2], "id"), "A#1");
    jobs_release(&j);
    ASSERT_EQ(convert(text, "{\"name\": \"A\", \"prompt\": \"other\", \"completion\": \"x\"}\n", &j,
                      &err),
              LLMSB_ERR_INVALID);
    ASSERT_STR(err.msg, "s.jsonl:1: task \"A\": its prompt is not the one in d.json (a "
                        "completions file brings its own: convert it as the dataset)");
    jobs_release(&j);
}

/* Each bad file and the whole message it gets. */
TEST(reader_and_multiple_errors)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"[\n{\"name\": \"A\", \"language\": \"py\", \"prompt\": \"\", \"tests\": \"\"}\n\n  7]",
         "d.json:4: element [1] of the array: a ',' or ']' expected"},
        {"[{\"name\": \"A\", \"language\": \"py\", \"prompt\": \"\", \"tests\": \"\"},\n]",
         "d.json:2: element [1] of the array is not a JSON object"},
        {"[{\"name\": \"A\", \"language\": \"py\", \"prompt\": \"\", \"tests\": \"\"}\n",
         "d.json:2: the array has no closing ']'"},
        /* the list goes on with every language of the table */
        {"{\"name\": \"A\", \"language\": \"swift\", \"prompt\": \"\", \"tests\": \"\"}",
         "d.json:1: task \"A\": MultiPL-E language \"swift\" is not one of ours (py, python, "
         "notypes.py, js, javascript, java, cpp, go_test.go, go, rb, ruby, r, humaneval_to_r.py"},
        {"{\"name\": \"A\", \"language\": \"py\", \"prompt\": 1, \"tests\": \"\"}",
         "d.json:1: task \"A\": prompt and tests must be strings"},
        /* the text of a file convert unpacked once (convert_text_unpack) */
        {"\x1f\x8b\x08", "d.json: gzip-compressed data where JSON text was expected (convert "
                         "unpacks one layer of gzip: is it compressed twice?)"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct llmsb_err err = {0};
        struct convert_set *s = convert_set_read("d.json", cases[i].text, &err);
        ASSERT_MSG(s == NULL, cases[i].msg);
        ASSERT_EQ(err.code, LLMSB_ERR_INVALID);
        if (strstr(cases[i].msg, "is not one of ours ("))
            ASSERT_MSG(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0, err.msg);
        else
            ASSERT_STR(err.msg, cases[i].msg);
    }
}

/* The open format: a whole program with stdin and meta; prompt +
 * completion + test; cases (no expect_exit of its own); samples by id. */
TEST(open_format_jobs)
{
    const char *text =
        "{\"id\": \"t1\", \"language\": \"python\", \"program\": \"print(input())\", \"stdin\": "
        "\"hi\", \"expect_stdout\": \"hi\\n\", \"timeout\": 3, \"meta\": {\"level\": \"easy\"}}\n"
        "{\"id\": \"t2\", \"lang\": \"ruby\", \"prompt\": \"def f\\n\", "
        "\"completion\": \"1\\nend\", \"test\": \"exit f\"}\n"
        "{\"id\": \"t3\", \"language\": \"cpp\", \"program\": \"int main(){}\", \"compile_flags\": "
        "[\"-O0\"], \"cases\": [{\"stdin\": \"1\", \"expect_stdout\": \"\"}]}\n";
    struct llmsb_err err = {0};
    struct jobs j;

    ASSERT_MSG(convert(text, NULL, &j, &err) == 0, err.msg);
    ASSERT_EQ(j.n, 3);
    ASSERT_STR(str(j.job[0], "id"), "t1");
    ASSERT_STR(str(j.job[0], "code"), "print(input())");
    ASSERT_STR(str(j.job[0], "stdin"), "hi");
    ASSERT_STR(str(j.job[0], "expect_stdout"), "hi\n");
    ASSERT_EQ(num(j.job[0], "timeout"), 3);
    ASSERT_STR(str(j.job[0], "meta.level"), "easy");
    ASSERT_STR(str(j.job[0], "meta.benchmark"), "open");
    ASSERT_STR(str(j.job[1], "lang"), "ruby");
    ASSERT_STR(str(j.job[1], "code"), "def f\n1\nend\nexit f");
    ASSERT(get(j.job[2], "expect_exit") == NULL);
    ASSERT_EQ(cJSON_GetArraySize(get(j.job[2], "cases")), 1);
    ASSERT_STR(str(cJSON_GetArrayItem(get(j.job[2], "cases"), 0), "stdin"), "1");
    jobs_release(&j);
    ASSERT_MSG(convert(text, "{\"id\": \"t2\", \"completion\": \"2\\nend\"}\n", &j, &err) == 0,
               err.msg);
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(str(j.job[0], "id"), "t2#0");
    ASSERT_STR(str(j.job[0], "code"), "def f\n2\nend\nexit f");
    jobs_release(&j);
}

TEST(open_format_errors)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"{\"id\": \"a\", \"language\": \"python\", \"program\": \"\", \"expected_stdout\": \"\"}",
         "d.json:1: task \"a\": unknown field \"expected_stdout\" (docs/eval.md lists the open "
         "format's fields)"},
        {"{\"id\": \"a\", \"language\": \"cobol\", \"program\": \"\"}",
         "d.json:1: task \"a\": language \"cobol\" is not one of ours"},
        {"{\"id\": \"a\", \"language\": \"python\", \"program\": \"\", \"prompt\": \"\"}",
         "d.json:1: task \"a\": a row has a program, or a prompt and a test (and a completion), "
         "not both"},
        {"{\"id\": \"a\", \"language\": \"python\", \"program\": 1}",
         "d.json:1: task \"a\": program must be a string"},
        {"{\"id\": \"a\", \"language\": \"python\", \"program\": \"\", \"meta\": 1}",
         "d.json:1: task \"a\": meta must be an object"},
    };
    struct jobs j;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct llmsb_err err = {0};
        struct convert_set *s = convert_set_read("d.json", cases[i].text, &err);
        ASSERT_MSG(s == NULL, cases[i].msg);
        ASSERT_STR(err.msg, cases[i].msg);
    }
    /* a job field is checked as submit checks it, at the row's line */
    {
        struct llmsb_err err = {0};
        ASSERT_EQ(convert("\n{\"id\": \"a\", \"language\": \"python\", \"program\": \"\", "
                          "\"timeout\": \"soon\"}",
                          NULL, &j, &err),
                  LLMSB_ERR_INVALID);
        ASSERT_CONTAINS(err.msg, "d.json:2: task \"a\": ");
        ASSERT_CONTAINS(err.msg, "timeout");
        jobs_release(&j);
    }
}

/* --cut-at-stop-tokens: a completion ends before the first of its row's
 * stop tokens (MultiPL-E's stop_at_stop_token); without it, as it is. */
TEST(cut_at_stop_tokens)
{
    const char *row = "{\"name\": \"A\", \"language\": \"go_test.go\", \"prompt\": \"P{\\n\", "
                      "\"tests\": \"T\", \"stop_tokens\": [\"\\nfunc\", \"struct\", \"\\n// \"], "
                      "\"completions\": [\"  return 1\\n}\\n// more\\nfunc b() {}\", \"  x\\n}\"]}";
    struct llmsb_err err = {0};
    struct jobs j;

    cut = 1;
    ASSERT_MSG(convert(row, NULL, &j, &err) == 0, err.msg);
    cut = 0;
    ASSERT_EQ(j.n, 2);
    ASSERT_STR(str(j.job[0], "code"), "P{\n  return 1\n}\nT");
    ASSERT_STR(str(j.job[1], "code"), "P{\n  x\n}\nT");
    jobs_release(&j);
    ASSERT_MSG(convert(row, NULL, &j, &err) == 0, err.msg);
    ASSERT_STR(str(j.job[0], "code"), "P{\n  return 1\n}\n// more\nfunc b() {}\nT");
    jobs_release(&j);
}

TEST_MAIN("convert_formats", T(cut_at_stop_tokens), T(multiple_program_per_language),
          T(multiple_array_objects_and_samples), T(reader_and_multiple_errors), T(open_format_jobs),
          T(open_format_errors))
