/* fmt_multiple.c - MultiPL-E's rows (nuprl/MultiPL-E: name, language, prompt,
 * tests, stop_tokens; its completions files add a completions list) as
 * convert's format row.  Its evaluator (evaluation/src/main.py) runs
 * prompt + completion + "\n" + tests as one file with the language's
 * command and grades by the exit code (Go: by `go test`'s output), each
 * language under its own time limit: that program, that limit, here. */
#include "eval/convert_int.h"

#include <string.h>

/* MultiPL-E's language names (its EVALUATORS keys, the dataset's
 * "language" values, and the eval_NAME.py a name not in EVALUATORS falls
 * back to: "ruby", "go"), ours, and the limit in seconds its eval_*.py
 * gives the run (safe_subprocess's 15 s default unless the script sets
 * one).  "go" is eval_go.py on a file not named *_test.go, where `go test`
 * finds no tests and says ok: we run its tests. */
static const struct {
    const char *theirs, *ours;
    long timeout_s;
} multiple_langs[] = {
    {"py", "python", 15},
    {"python", "python", 15},
    {"notypes.py", "python", 15},
    {"js", "javascript", 5},
    {"javascript", "javascript", 5},
    {"java", "java", 15},
    {"cpp", "cpp", 15},
    {"go_test.go", "go_test", 30},
    {"go", "go_test", 30},
    {"rb", "ruby", 5},
    {"ruby", "ruby", 5},
    {"r", "r", 5},
    {"humaneval_to_r.py", "r", 5},
    {"scala", "scala", 15}, /* eval_scala.py: safe_subprocess's default */
    {"cs", "csharp", 5},
};

static int multiple_lang(const char *theirs)
{
    for (size_t i = 0; i < sizeof(multiple_langs) / sizeof(multiple_langs[0]); i++)
        if (strcmp(theirs, multiple_langs[i].theirs) == 0)
            return (int)i;
    return -1;
}

static int multiple_claim(struct convert_task *t, const char *file, size_t line,
                          struct llmsb_err *err)
{
    const char *lang = convert_str(t->row, "language");
    int i;

    if (!lang || !convert_str(t->row, "name") || !convert_str(t->row, "tests"))
        return 0;
    if ((i = multiple_lang(lang)) < 0) {
        char names[512];
        size_t o = 0;
        for (size_t k = 0; k < sizeof(multiple_langs) / sizeof(multiple_langs[0]); k++) {
            int w = snprintf(names + o, sizeof(names) - o, "%s%s", k ? ", " : "",
                             multiple_langs[k].theirs);
            if (w < 0 || (size_t)w >= sizeof(names) - o)
                break;
            o += (size_t)w;
        }
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: task \"%s\": MultiPL-E language \"%s\" is not one of ours "
                             "(%s)",
                             file, line, t->id, lang, names);
    }
    t->lang = language_find(multiple_langs[i].ours);
    return 1;
}

static void multiple_fields(const struct convert_task *t, struct convert_job_fields *f)
{
    int i = multiple_lang(convert_str(t->row, "language"));

    f->timeout_s = multiple_langs[i].timeout_s;
    /* eval_python.py: python3 FILE, a script like any other */
    f->as_script = 1;
    /* eval_cpp.py: g++ FILE -o BASENAME -std=c++17, no -O */
    if (strcmp(t->lang->name, "cpp") == 0) {
        f->compile_flags[0] = "-std=c++17";
        f->compile_flags[1] = "-O0";
    }
}

/* The row's own fields but its program text, in meta: language, doctests,
 * prompt_terminology, original, stop_tokens, and what a completions file
 * adds (temperature, top_p, max_tokens). */
static int multiple_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                        struct llmsb_err *err)
{
    static const char *const skip[] = {"name", "prompt", "tests", "completions", NULL};

    (void)job, (void)at;
    if (convert_meta_copy(meta, t->row, skip) != 0)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    return 0;
}

/* MultiPL-E has no reference solutions: a row's jobs are its completions
 * (a completions file given as the dataset) or --samples. */
static const char *multiple_reference(const struct convert_task *t)
{
    (void)t;
    return NULL;
}

const struct convert_format convert_multiple = {
    .name = "multipl-e",
    .label = "MultiPL-E (name, language and tests)",
    .claim = multiple_claim,
    .fields = multiple_fields,
    .id_key = "name",
    .test_key = "tests",
    .reference = multiple_reference,
    .job = multiple_job,
};
