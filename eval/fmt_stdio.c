/* fmt_stdio.c - the stdin/stdout benchmarks (CodeContests, APPS,
 * LiveCodeBench): their rows read into test cases, their solutions or a
 * model's samples into programs, one job per program with `cases`
 * (compiled once, each case its own run and limits), the harness's own
 * output rule as `compare` and its per-test time limit as `timeout`.  A
 * benchmark is a row of stdio_formats[]; Python programs of APPS and
 * LiveCodeBench run under the runner of fmt_stdio_runners.c. */
#include "eval/convert.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/fmt_stdio_int.h"
#include "languages/languages.h"

/* The most test cases a job takes (the agent's cap). */
#define STDIO_MAX_CASES 1000
/* The longest job of a call-based problem (all its tests in one run). */
#define STDIO_CALL_MAX_TIMEOUT_S 300

struct stdio_format;

/* One problem: its id, its row and its cases as the harness runs them. */
struct stdio_task {
    char *id; /* owned */
    const cJSON *row;
    size_t line;   /* in the dataset (a JSON array's element: its index + 1) */
    cJSON *cases;  /* owned: the jobs' cases; NULL: the problem has no tests */
    char *fn_name; /* owned: a call-based problem's function */
    int samples;   /* sample jobs written so far */
};

struct stdio_set {
    const char *name;
    const struct stdio_format *fmt;
    cJSON *rows; /* owned array */
    struct stdio_task *tasks;
    size_t n;
};

/* Where jobs go and what was left out. */
struct stdio_ctx {
    struct stdio_set *set;
    struct convert_out *out;
    struct convert_stdio_counts *counts;
    const char *lang; /* --lang: a sample's language where the file gives none */
};

/* One benchmark: how its rows are recognised, read and run. */
struct stdio_format {
    const char *name;    /* meta.benchmark */
    const char *mark;    /* the field that marks its rows */
    const char *id_key;  /* the dataset's own id */
    const char *compare; /* the harness's output rule (compare.h) */
    double timeout_s;    /* the harness's limit per test */
    const char *runner;  /* Python solutions run under it; NULL: as they are */
    /* t->cases (and t->fn_name) from t->row; an error names the field */
    int (*tests)(struct stdio_task *t, const char *file, struct llmsb_err *err);
    /* a job per reference solution of t */
    int (*references)(struct stdio_ctx *x, struct stdio_task *t, struct llmsb_err *err);
    /* a job per sample of a samples file in the benchmark's own format */
    int (*samples)(struct stdio_ctx *x, const char *name, const char *text, struct llmsb_err *err);
    void (*meta)(const struct stdio_task *t, cJSON *meta);
};

/* ---- small readers ---- */

static const cJSON *field(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *str_field(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(field(o, key));
}

/* o[key] as JSON: itself, or parsed when it is a string of JSON (the
 * datasets keep nested fields as JSON text).  Returns a new item the caller
 * deletes, NULL when absent or not JSON. */
static cJSON *json_field(const cJSON *o, const char *key)
{
    const cJSON *v = field(o, key);

    if (cJSON_IsString(v))
        return cJSON_Parse(v->valuestring);
    return v ? cJSON_Duplicate(v, 1) : NULL;
}

static int task_err(struct llmsb_err *err, const char *file, const struct stdio_task *t,
                    const char *what, const char *why)
{
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\": %s %s", file, t->line, t->id,
                         what, why);
}

/* A field that is JSON kept as a string (input_output, public_test_cases):
 * its own \u0000 escapes, which the row's check cannot see. */
static int nested_nul(const struct stdio_task *t, const char *file, const char *key,
                      struct llmsb_err *err)
{
    const cJSON *v = field(t->row, key);
    return cJSON_IsString(v) ? convert_check_nul(file, t->line, v->valuestring, err) : 0;
}

/* A test's text: a string, or a list of lines joined with "\n" (APPS). */
static char *test_text(const cJSON *v)
{
    size_t len = 0, k = 0;
    const cJSON *it;
    char *s;

    if (cJSON_IsString(v))
        return strdup(v->valuestring);
    if (!cJSON_IsArray(v))
        return NULL;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it))
            return NULL;
        len += strlen(it->valuestring) + 1;
    }
    if (!(s = calloc(1, len + 1)))
        return NULL;
    cJSON_ArrayForEach(it, v) {
        size_t l = strlen(it->valuestring);
        if (k)
            s[k++] = '\n';
        memcpy(s + k, it->valuestring, l);
        k += l;
    }
    return s;
}

/* Adds a stdin/stdout case to t->cases. */
static int add_io_case(struct stdio_task *t, const cJSON *in, const cJSON *out)
{
    char *i = test_text(in), *o = test_text(out);
    cJSON *c = cJSON_CreateObject();
    int rc = -1;

    if (i && o && c && cJSON_AddStringToObject(c, "stdin", i) &&
        cJSON_AddStringToObject(c, "expect_stdout", o)) {
        cJSON_AddItemToArray(t->cases, c);
        c = NULL;
        rc = 0;
    }
    cJSON_Delete(c);
    free(i);
    free(o);
    return rc;
}

/* Adds a call-based case: its stdin is {"fn_name", "input", "output"} for
 * the runner. */
static int add_call_case(struct stdio_task *t, const cJSON *in, const cJSON *out)
{
    cJSON *c = cJSON_CreateObject(), *call = cJSON_CreateObject();
    char *text = NULL;
    int rc = -1;

    if (c && call && cJSON_AddStringToObject(call, "fn_name", t->fn_name) &&
        cJSON_AddItemToObject(call, "input", cJSON_Duplicate(in, 1)) &&
        cJSON_AddItemToObject(call, "output", cJSON_Duplicate(out, 1)) &&
        (text = cJSON_PrintUnformatted(call)) && cJSON_AddStringToObject(c, "stdin", text)) {
        cJSON_AddItemToArray(t->cases, c);
        c = NULL;
        rc = 0;
    }
    free(text);
    cJSON_Delete(call);
    cJSON_Delete(c);
    return rc;
}

static int too_many_cases(struct stdio_task *t, const char *file, struct llmsb_err *err)
{
    char why[96];

    snprintf(why, sizeof(why), "has %d tests; a job takes at most %d cases",
             cJSON_GetArraySize(t->cases), STDIO_MAX_CASES);
    return task_err(err, file, t, "its tests", why);
}

/* ---- the job ---- */

static int write_line(struct convert_out *o, cJSON *job, const char *id, struct llmsb_err *err)
{
    char *text = cJSON_PrintUnformatted(job);
    int rc = 0;

    if (!text)
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
    else if (fputs(text, o->out) < 0 || fputc('\n', o->out) == EOF)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "%s: write failed", o->name);
    else
        o->jobs++;
    free(text);
    return rc;
}

/* A call-based problem's tests as one case: the checkers build the
 * module (and its Solution()) once and call it for every test, so state
 * is shared between tests; its stdin is the JSON list of the calls. */
static cJSON *one_call_case(const cJSON *cases)
{
    cJSON *list = cJSON_CreateArray(), *all = cJSON_CreateArray(), *c = cJSON_CreateObject();
    const cJSON *it;
    char *text = NULL;
    int ok = list && all && c;

    cJSON_ArrayForEach(it, cases) {
        cJSON *call = ok ? cJSON_Parse(cJSON_GetStringValue(field(it, "stdin"))) : NULL;
        ok = call && cJSON_AddItemToArray(list, call);
    }
    if (ok && (text = cJSON_PrintUnformatted(list)) && cJSON_AddStringToObject(c, "stdin", text) &&
        cJSON_AddItemToArray(all, c)) {
        c = NULL;
    } else {
        cJSON_Delete(all);
        all = NULL;
    }
    free(text);
    cJSON_Delete(list);
    cJSON_Delete(c);
    return all;
}

/* The job of program code in language lang (our name) for task t. */
static int write_job(struct stdio_ctx *x, const struct stdio_task *t, const char *id,
                     const char *lang, const char *code, struct llmsb_err *err)
{
    const struct stdio_format *f = x->set->fmt;
    double timeout = x->out->timeout_s > 0 ? (double)x->out->timeout_s : f->timeout_s;
    cJSON *job = cJSON_CreateObject(), *meta, *calls = NULL;
    int python = strcmp(lang, "python") == 0, rc;
    char *runner = NULL, per[32];

    if (!job ||
        (python && f->runner && asprintf(&runner, "%s%s", stdio_runner_common, f->runner) < 0) ||
        (t->fn_name && !(calls = one_call_case(t->cases)))) {
        cJSON_Delete(job);
        free(runner);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
    }
    cJSON_AddStringToObject(job, "id", id);
    cJSON_AddStringToObject(job, "lang", lang);
    if (runner) {
        cJSON_AddStringToObject(job, "code", runner);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(job, "files"), "program.py", code);
    } else {
        cJSON_AddStringToObject(job, "code", code);
    }
    if (t->fn_name) {
        /* each call under the per-test limit (the runner's alarm), the
         * job under the checker's global one, (limit + 1) * tests + 5, at
         * most 300 s (the default limits.max.timeout) */
        cJSON *args = cJSON_AddArrayToObject(job, "args");
        snprintf(per, sizeof(per), "%g", timeout);
        cJSON_AddItemToArray(args, cJSON_CreateString("call"));
        cJSON_AddItemToArray(args, cJSON_CreateString(per));
        cJSON_AddItemToObject(job, "cases", calls);
        timeout = (timeout + 1) * cJSON_GetArraySize(t->cases) + 5;
        if (timeout > STDIO_CALL_MAX_TIMEOUT_S)
            timeout = STDIO_CALL_MAX_TIMEOUT_S;
    } else {
        cJSON_AddStringToObject(job, "compare", f->compare);
        cJSON_AddItemReferenceToObject(job, "cases", t->cases);
    }
    cJSON_AddTrueToObject(job, "stop_on_failure");
    cJSON_AddNumberToObject(job, "timeout", timeout);
    meta = cJSON_AddObjectToObject(job, "meta");
    cJSON_AddStringToObject(meta, "task_id", t->id);
    cJSON_AddStringToObject(meta, "benchmark", f->name);
    if (f->meta)
        f->meta(t, meta);
    rc = write_line(x->out, job, id, err);
    cJSON_Delete(job);
    free(runner);
    return rc;
}

/* A sample of task t: its job is TASK#N. */
static int write_sample(struct stdio_ctx *x, struct stdio_task *t, const char *lang,
                        const char *code, struct llmsb_err *err)
{
    char *id = NULL;
    int rc;

    if (asprintf(&id, "%s#%d", t->id, t->samples++) < 0)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    rc = write_job(x, t, id, lang, code, err);
    free(id);
    return rc;
}

static struct stdio_task *find_task(struct stdio_set *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->tasks[i].id, id) == 0)
            return &s->tasks[i];
    return NULL;
}

/* A task of a sample: it must be in the set and have tests. */
static int sample_task(struct stdio_ctx *x, const char *name, const char *where, const char *id,
                       struct stdio_task **t, struct llmsb_err *err)
{
    if (!(*t = find_task(x->set, id)))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%s: task \"%s\" is not in %s", name, where,
                             id, x->set->name);
    if (!(*t)->cases)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%s: task \"%s\" has no tests in %s, so nothing can grade it", name,
                             where, id, x->set->name);
    return 0;
}

/* ---- CodeContests (google-deepmind/code_contests) ---- */

/* Its Language enum: UNKNOWN_LANGUAGE, PYTHON (2), CPP, PYTHON3, JAVA. */
static const char *const cc_langs[] = {NULL, NULL, "cpp", "python", "java"};
static const char *const cc_lang_names[] = {"UNKNOWN_LANGUAGE", "PYTHON", "CPP", "PYTHON3", "JAVA"};

/* A CodeContests language (its number or enum name, or our name) as ours;
 * NULL when we have none (Python 2, unknown). */
static const char *cc_lang(const cJSON *v, int *known)
{
    const struct language *l;

    *known = 1;
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 4 &&
        v->valuedouble == (int)v->valuedouble)
        return cc_langs[(int)v->valuedouble];
    if (cJSON_IsString(v)) {
        for (size_t i = 0; i < sizeof(cc_lang_names) / sizeof(cc_lang_names[0]); i++)
            if (strcasecmp(v->valuestring, cc_lang_names[i]) == 0)
                return cc_langs[i];
        if ((l = language_find(v->valuestring)))
            return l->name;
    }
    *known = 0;
    return NULL;
}

/* One of public_tests, private_tests, generated_tests: {"input": [...],
 * "output": [...]} (Hugging Face) or [{"input", "output"}, ...]. */
static int cc_add_tests(struct stdio_task *t, const char *key, const char *file,
                        struct llmsb_err *err)
{
    const cJSON *v = field(t->row, key), *in, *out, *it;
    char what[64];

    snprintf(what, sizeof(what), "%s", key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsObject(v)) {
        in = field(v, "input");
        out = field(v, "output");
        if (!cJSON_IsArray(in) || !cJSON_IsArray(out) ||
            cJSON_GetArraySize(in) != cJSON_GetArraySize(out))
            return task_err(err, file, t, what,
                            "must have \"input\" and \"output\" lists of the same length");
        for (int i = 0; i < cJSON_GetArraySize(in); i++)
            if (!cJSON_IsString(cJSON_GetArrayItem(in, i)) ||
                !cJSON_IsString(cJSON_GetArrayItem(out, i)) ||
                add_io_case(t, cJSON_GetArrayItem(in, i), cJSON_GetArrayItem(out, i)) != 0)
                return task_err(err, file, t, what, "must hold strings");
        return 0;
    }
    if (!cJSON_IsArray(v))
        return task_err(err, file, t, what, "is not a list of tests");
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(field(it, "input")) || !cJSON_IsString(field(it, "output")) ||
            add_io_case(t, field(it, "input"), field(it, "output")) != 0)
            return task_err(err, file, t, what, "must hold {\"input\", \"output\"} strings");
    }
    return 0;
}

/* The harness's order: public, private, then generated tests. */
static int cc_tests(struct stdio_task *t, const char *file, struct llmsb_err *err)
{
    static const char *const keys[] = {"public_tests", "private_tests", "generated_tests"};

    for (size_t i = 0; i < 3; i++)
        if (cc_add_tests(t, keys[i], file, err) != 0)
            return -1;
    return 0;
}

/* The jobs of one solutions list ({"language": [...], "solution": [...]}
 * or [{"language", "solution"}]), ids TASK/KEY/N. */
static int cc_solutions(struct stdio_ctx *x, struct stdio_task *t, const char *key,
                        struct llmsb_err *err)
{
    const cJSON *v = field(t->row, key), *langs, *sols;
    int n;

    if (!v || cJSON_IsNull(v))
        return 0;
    langs = cJSON_IsObject(v) ? field(v, "language") : NULL;
    sols = cJSON_IsObject(v) ? field(v, "solution") : v;
    n = cJSON_GetArraySize(sols);
    for (int i = 0; i < n; i++) {
        const cJSON *s = cJSON_GetArrayItem(sols, i);
        const cJSON *lv = langs ? cJSON_GetArrayItem(langs, i) : field(s, "language");
        const char *code = cJSON_IsString(s) ? s->valuestring : str_field(s, "solution");
        char *id = NULL;
        int known, rc;
        const char *lang = cc_lang(lv, &known);

        if (!code)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: task \"%s\": %s[%d]: no solution text", x->set->name,
                                 t->line, t->id, key, i);
        if (!lang) {
            x->counts->skipped++;
            continue;
        }
        if (asprintf(&id, "%s/%s/%d", t->id, key, i) < 0)
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        rc = write_job(x, t, id, lang, code, err);
        free(id);
        if (rc)
            return rc;
    }
    return 0;
}

static int cc_references(struct stdio_ctx *x, struct stdio_task *t, struct llmsb_err *err)
{
    size_t before = x->out->jobs, skipped = x->counts->skipped;
    int rc = cc_solutions(x, t, "solutions", err);

    if (rc == 0 && x->out->jobs == before && x->counts->skipped == skipped)
        x->counts->unsolved++;
    return rc;
}

/* JSON Lines of {"task_id" (the problem's name), "completion", "language"
 * (optional: a CodeContests number or name, or ours)}. */
struct cc_samples {
    struct stdio_ctx *x;
    const char *name;
};

static int cc_sample_row(struct stdio_ctx *x, const char *name, size_t line, const cJSON *row,
                         struct llmsb_err *err)
{
    const char *id = str_field(row, "task_id"), *code = str_field(row, "completion");
    const cJSON *lv = field(row, "language");
    const char *lang = x->lang ? x->lang : "python";
    struct stdio_task *t;
    char where[32];
    int known = 1;

    if (!id)
        id = str_field(row, "name");
    if (!code)
        code = str_field(row, "solution");
    snprintf(where, sizeof(where), "%zu", line);
    if (!id || !code)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: a sample needs task_id (or name) and completion (or "
                             "solution) strings",
                             name, line);
    if (lv && !(lang = cc_lang(lv, &known)))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: language: %s (Python 2 and unknown languages are not run)",
                             name, line, known ? "no image for it" : "not a language we know");
    if (sample_task(x, name, where, id, &t, err) != 0)
        return -1;
    return write_sample(x, t, lang, code, err);
}

/* ---- APPS (hendrycks/apps, codeparrot/apps rows) ---- */

static int apps_tests(struct stdio_task *t, const char *file, struct llmsb_err *err)
{
    cJSON *io = json_field(t->row, "input_output");
    const cJSON *in, *out, *fn;
    int rc = 0;

    if (nested_nul(t, file, "input_output", err) != 0) {
        cJSON_Delete(io);
        return LLMSB_ERR_INVALID;
    }
    if (!io) {
        cJSON_Delete(t->cases);
        t->cases = NULL; /* "": no tests */
        return 0;
    }
    in = field(io, "inputs");
    out = field(io, "outputs");
    fn = field(io, "fn_name");
    if (!cJSON_IsArray(in) || !cJSON_IsArray(out) ||
        cJSON_GetArraySize(in) != cJSON_GetArraySize(out)) {
        rc = task_err(err, file, t, "input_output",
                      "must have \"inputs\" and \"outputs\" lists of the same length");
        goto out;
    }
    if (cJSON_IsString(fn) && !(t->fn_name = strdup(fn->valuestring))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; rc == 0 && i < cJSON_GetArraySize(in); i++) {
        const cJSON *a = cJSON_GetArrayItem(in, i), *b = cJSON_GetArrayItem(out, i);
        if (t->fn_name ? add_call_case(t, a, b) != 0 : add_io_case(t, a, b) != 0)
            rc = task_err(err, file, t, "input_output",
                          t->fn_name ? "has a test that cannot be written"
                                     : "has a test that is not text or a list of lines");
    }
out:
    cJSON_Delete(io);
    return rc;
}

static int apps_references(struct stdio_ctx *x, struct stdio_task *t, struct llmsb_err *err)
{
    cJSON *sols = json_field(t->row, "solutions");
    int n = cJSON_GetArraySize(sols), rc = nested_nul(t, x->set->name, "solutions", err);

    if (!t->cases || n == 0)
        x->counts->unsolved++;
    for (int i = 0; t->cases && rc == 0 && i < n; i++) {
        const char *code = cJSON_GetStringValue(cJSON_GetArrayItem(sols, i));
        char *id = NULL;
        if (!code) {
            rc = task_err(err, x->set->name, t, "solutions", "must be a list of strings");
        } else if (asprintf(&id, "%s/solutions/%d", t->id, i) < 0) {
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        } else {
            rc = write_job(x, t, id, "python", code, err);
            free(id);
        }
    }
    cJSON_Delete(sols);
    return rc;
}

/* One key's generations: a code string or a list of them. */
static int code_list(struct stdio_ctx *x, struct stdio_task *t, const char *name, const char *where,
                     const cJSON *codes, struct llmsb_err *err)
{
    const cJSON *it;

    if (cJSON_IsString(codes))
        return write_sample(x, t, "python", codes->valuestring, err);
    if (!cJSON_IsArray(codes))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%s: not a list of code strings", name,
                             where);
    cJSON_ArrayForEach(it, codes) {
        if (!cJSON_IsString(it))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%s: not a list of code strings", name,
                                 where);
        if (write_sample(x, t, "python", it->valuestring, err) != 0)
            return -1;
    }
    return 0;
}

/* APPS's generations file (eval/test_one_solution.py reads it): a JSON
 * object {"PROBLEM_ID": [code, ...]} or a list by the dataset's order. */
static int apps_samples(struct stdio_ctx *x, const char *name, const char *text,
                        struct llmsb_err *err)
{
    cJSON *all = cJSON_Parse(text);
    const cJSON *it;
    struct stdio_task *t;
    int rc = 0, i = 0;
    char where[96];

    if (!cJSON_IsObject(all) && !cJSON_IsArray(all)) {
        cJSON_Delete(all);
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: not APPS generations (a JSON object {\"PROBLEM_ID\": [code, "
                             "...]} or a list)",
                             name);
    }
    cJSON_ArrayForEach(it, all) {
        if (cJSON_IsObject(all)) {
            snprintf(where, sizeof(where), "\"%.60s\"", it->string);
            rc = sample_task(x, name, where, it->string, &t, err);
        } else if ((size_t)i >= x->set->n) {
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:[%d]: %s has only %zu problems", name, i,
                               x->set->name, x->set->n);
        } else {
            snprintf(where, sizeof(where), "[%d]", i);
            rc = sample_task(x, name, where, x->set->tasks[i].id, &t, err);
        }
        if (rc == 0)
            rc = code_list(x, t, name, where, it, err);
        if (rc)
            break;
        i++;
    }
    cJSON_Delete(all);
    return rc;
}

static void apps_meta(const struct stdio_task *t, cJSON *meta)
{
    const char *d = str_field(t->row, "difficulty"), *url = str_field(t->row, "url");

    if (d)
        cJSON_AddStringToObject(meta, "difficulty", d);
    if (url)
        cJSON_AddStringToObject(meta, "url", url);
}

/* ---- LiveCodeBench (code_generation_lite rows) ---- */

/* A test list: a JSON string of [{"input", "output", "testtype"}], or the
 * list itself. */
static int lcb_add_tests(struct stdio_task *t, const char *key, const char *file,
                         struct llmsb_err *err)
{
    const cJSON *v = field(t->row, key), *it;
    cJSON *list = NULL;
    int rc = 0;

    if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && !*v->valuestring))
        return 0;
    if (nested_nul(t, file, key, err) != 0)
        return LLMSB_ERR_INVALID;
    if (cJSON_IsString(v) && !(list = cJSON_Parse(v->valuestring)))
        return task_err(
            err, file, t, key,
            "is not JSON: LiveCodeBench keeps private_test_cases as base64 of zlib of a Python "
            "pickle, which only Python can read; decode them first (docs/eval.md: "
            "\"LiveCodeBench\"), e.g. json.loads(pickle.loads(zlib.decompress(base64.b64decode("
            "s))))");
    if (!list && !(list = cJSON_Duplicate(v, 1)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    if (!cJSON_IsArray(list))
        rc = task_err(err, file, t, key, "is not a list of tests");
    cJSON_ArrayForEach(it, list) {
        const cJSON *in = field(it, "input"), *out = field(it, "output");
        const char *type = cJSON_GetStringValue(field(it, "testtype"));
        int call = type && strcmp(type, "functional") == 0;
        if (rc)
            break;
        if (!cJSON_IsString(in) || !cJSON_IsString(out))
            rc = task_err(err, file, t, key, "must hold {\"input\", \"output\"} strings");
        else if (call != (t->fn_name != NULL))
            rc = task_err(err, file, t, key,
                          call ? "has a functional test but metadata names no func_name"
                               : "has a stdin test in a functional problem");
        else if (call ? add_call_case(t, in, out) != 0 : add_io_case(t, in, out) != 0)
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    cJSON_Delete(list);
    return rc;
}

/* Public then private tests, as get_evaluation_sample joins them; a
 * metadata.func_name makes the problem functional (LeetCode). */
static int lcb_tests(struct stdio_task *t, const char *file, struct llmsb_err *err)
{
    cJSON *meta = json_field(t->row, "metadata");
    const char *fn = cJSON_GetStringValue(field(meta, "func_name"));

    if (fn && !(t->fn_name = strdup(fn))) {
        cJSON_Delete(meta);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    cJSON_Delete(meta);
    if (lcb_add_tests(t, "public_test_cases", file, err) != 0 ||
        lcb_add_tests(t, "private_test_cases", file, err) != 0)
        return -1;
    return 0;
}

/* LiveCodeBench publishes no solutions. */
static int lcb_references(struct stdio_ctx *x, struct stdio_task *t, struct llmsb_err *err)
{
    (void)t;
    (void)err;
    x->counts->unsolved++;
    return 0;
}

/* Its custom evaluator's file (lcb_runner/runner/custom_evaluator.py): a
 * JSON list of {"question_id", "code_list": [code, ...]}. */
static int lcb_samples(struct stdio_ctx *x, const char *name, const char *text,
                       struct llmsb_err *err)
{
    cJSON *all = cJSON_Parse(text);
    const cJSON *it;
    struct stdio_task *t;
    int rc = 0, i = 0;
    char where[32];

    if (!cJSON_IsArray(all)) {
        cJSON_Delete(all);
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: not LiveCodeBench outputs (a JSON list of {\"question_id\", "
                             "\"code_list\"})",
                             name);
    }
    cJSON_ArrayForEach(it, all) {
        const char *id = str_field(it, "question_id");
        snprintf(where, sizeof(where), "[%d]", i++);
        if (!id)
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%s: no question_id string", name, where);
        else if ((rc = sample_task(x, name, where, id, &t, err)) == 0)
            rc = code_list(x, t, name, where, field(it, "code_list"), err);
        if (rc)
            break;
    }
    cJSON_Delete(all);
    return rc;
}

static void copy_meta(const cJSON *row, cJSON *meta, const char *const *keys)
{
    for (; *keys; keys++) {
        const cJSON *v = field(row, *keys);
        if (v && !cJSON_IsNull(v))
            cJSON_AddItemToObject(meta, *keys, cJSON_Duplicate(v, 1));
    }
}

static void lcb_meta(const struct stdio_task *t, cJSON *meta)
{
    static const char *const keys[] = {"difficulty", "platform", "contest_id", "contest_date",
                                       NULL};
    copy_meta(t->row, meta, keys);
}

static void cc_meta(const struct stdio_task *t, cJSON *meta)
{
    static const char *const keys[] = {"difficulty", "source", "cf_rating", "memory_limit_bytes",
                                       NULL};
    const cJSON *tl = field(t->row, "time_limit");

    copy_meta(t->row, meta, keys);
    if (cJSON_IsNumber(field(tl, "seconds")))
        cJSON_AddNumberToObject(
            meta, "time_limit_s",
            field(tl, "seconds")->valuedouble +
                (cJSON_IsNumber(field(tl, "nanos")) ? field(tl, "nanos")->valuedouble / 1e9 : 0));
}

static int cc_samples(struct stdio_ctx *x, const char *name, const char *text,
                      struct llmsb_err *err);

static const struct stdio_format stdio_formats[] = {
    {.name = "codecontests",
     .mark = "public_tests",
     .id_key = "name",
     .compare = "tokens_icase_abs",
     .timeout_s = 10, /* tester_sandboxer.h: max_execution_duration */
     .runner = NULL,  /* py_tester_sandboxer runs python3 on the file */
     .tests = cc_tests,
     .references = cc_references,
     .samples = cc_samples,
     .meta = cc_meta},
    {.name = "apps",
     .mark = "input_output",
     .id_key = "problem_id",
     .compare = "line_token_sets",
     .timeout_s = 4, /* testing_util.py: timeout = 4 */
     .runner = stdio_apps_runner,
     .tests = apps_tests,
     .references = apps_references,
     .samples = apps_samples,
     .meta = apps_meta},
    {.name = "livecodebench",
     .mark = "public_test_cases",
     .id_key = "question_id",
     .compare = "lines_decimal",
     .timeout_s = 6, /* compute_code_generation_metrics.py: timeout=6 */
     .runner = stdio_lcb_runner,
     .tests = lcb_tests,
     .references = lcb_references,
     .samples = lcb_samples,
     .meta = lcb_meta},
};

#define NFORMATS (sizeof(stdio_formats) / sizeof(stdio_formats[0]))

static const struct stdio_format *format_of(const cJSON *row)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (field(row, stdio_formats[i].mark))
            return &stdio_formats[i];
    return NULL;
}

/* ---- reading ---- */

/* The rows of text: a JSON array, or JSON Lines; *lines[i] is row i's
 * line (a JSON array: its index + 1).  Returns a new array or NULL with
 * err set. */
static cJSON *read_rows(const char *name, const char *text, size_t **lines, struct llmsb_err *err)
{
    cJSON *rows = NULL, *row;
    size_t line = 0, n = 0;
    const char *p = text + strspn(text, " \t\r\n");

    if (*p == '[') {
        if (!cJSON_IsArray(rows = cJSON_Parse(p))) {
            cJSON_Delete(rows);
            llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: not a JSON array", name);
            return NULL;
        }
        n = (size_t)cJSON_GetArraySize(rows);
        if (!(*lines = calloc(n + 1, sizeof(**lines))))
            goto nomem;
        for (size_t i = 0; i < n; i++)
            (*lines)[i] = i + 1;
        return rows;
    }
    if (!(rows = cJSON_CreateArray()))
        goto nomem;
    *lines = NULL;
    for (const char *nl; *text; text = nl ? nl + 1 : text + strlen(text)) {
        size_t len, *nls;
        nl = strchr(text, '\n');
        len = nl ? (size_t)(nl - text) : strlen(text);
        line++;
        if (strspn(text, " \t\r") >= len)
            continue;
        row = cJSON_ParseWithLength(text, len);
        if (!cJSON_IsObject(row)) {
            cJSON_Delete(row);
            cJSON_Delete(rows);
            free(*lines);
            *lines = NULL;
            llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: not a JSON object", name, line);
            return NULL;
        }
        if (!(nls = reallocarray(*lines, n + 1, sizeof(*nls)))) {
            cJSON_Delete(row);
            goto nomem;
        }
        *lines = nls;
        nls[n++] = line;
        cJSON_AddItemToArray(rows, row);
    }
    return rows;
nomem:
    cJSON_Delete(rows);
    free(*lines);
    *lines = NULL;
    llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    return NULL;
}

/* The id of a row: a string, or an integer (APPS's problem_id). */
static char *row_id(const cJSON *v)
{
    char num[32];

    if (cJSON_IsString(v) && *v->valuestring)
        return strdup(v->valuestring);
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
        fabs(v->valuedouble) < 1e15) {
        snprintf(num, sizeof(num), "%.0f", v->valuedouble);
        return strdup(num);
    }
    return NULL;
}

static int read_task(struct stdio_set *s, struct stdio_task *t, const cJSON *row, size_t line,
                     struct llmsb_err *err)
{
    const struct stdio_format *f = format_of(row);

    t->row = row;
    t->line = line;
    if (f != s->fmt)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: %s, where the first row is %s's (one benchmark per file)",
                             s->name, line,
                             f ? "a row of another benchmark"
                               : "not a row of a stdin/stdout "
                                 "benchmark",
                             s->fmt->name);
    if (!(t->id = row_id(field(row, f->id_key))))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: %s: missing or not a string id",
                             s->name, line, f->id_key);
    if (!(t->cases = cJSON_CreateArray()))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    if (f->tests(t, s->name, err) != 0)
        return -1;
    if (t->cases && cJSON_GetArraySize(t->cases) > STDIO_MAX_CASES)
        return too_many_cases(t, s->name, err);
    if (t->cases && cJSON_GetArraySize(t->cases) == 0) {
        cJSON_Delete(t->cases);
        t->cases = NULL;
    }
    return 0;
}

static void set_free(struct stdio_set *s)
{
    for (size_t i = 0; s->tasks && i < s->n; i++) {
        free(s->tasks[i].id);
        free(s->tasks[i].fn_name);
        cJSON_Delete(s->tasks[i].cases);
    }
    free(s->tasks);
    cJSON_Delete(s->rows);
}

static int set_read(struct stdio_set *s, const char *name, const char *text, struct llmsb_err *err)
{
    size_t *lines = NULL, i = 0;
    const cJSON *row;
    int rc = 0;

    memset(s, 0, sizeof(*s));
    s->name = name;
    if (!(s->rows = read_rows(name, text, &lines, err)))
        return -1;
    s->n = (size_t)cJSON_GetArraySize(s->rows);
    if (!(s->tasks = calloc(s->n + 1, sizeof(*s->tasks)))) {
        free(lines);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    s->fmt = format_of(cJSON_GetArrayItem(s->rows, 0));
    cJSON_ArrayForEach(row, s->rows) {
        if (rc)
            break;
        if (!cJSON_IsObject(row))
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: not a JSON object", name, lines[i]);
        else
            rc = read_task(s, &s->tasks[i], row, lines[i], err);
        i++;
    }
    for (size_t a = 0; rc == 0 && a < s->n; a++)
        for (size_t b = a + 1; rc == 0 && b < s->n; b++)
            if (strcmp(s->tasks[a].id, s->tasks[b].id) == 0)
                rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task \"%s\" is there twice", name,
                                   s->tasks[a].id);
    free(lines);
    return rc;
}

/* CodeContests has no samples format of its own: JSON Lines (see
 * cc_sample_row). */
static int cc_samples(struct stdio_ctx *x, const char *name, const char *text,
                      struct llmsb_err *err)
{
    size_t *lines = NULL;
    cJSON *rows = read_rows(name, text, &lines, err);
    const cJSON *row;
    size_t i = 0;
    int rc = rows ? 0 : -1;

    cJSON_ArrayForEach(row, rows) {
        if (rc)
            break;
        rc = cc_sample_row(x, name, lines[i++], row, err);
    }
    cJSON_Delete(rows);
    free(lines);
    return rc;
}

int convert_stdio_detect(const char *text)
{
    const char *p = text + strspn(text, " \t\r\n");
    const char *nl = strchr(p, '\n');
    cJSON *row;
    int yes;

    if (*p == '[') {
        cJSON *all = cJSON_Parse(p);
        yes = format_of(cJSON_GetArrayItem(all, 0)) != NULL;
        cJSON_Delete(all);
        return yes;
    }
    row = cJSON_ParseWithLength(p, nl ? (size_t)(nl - p) : strlen(p));
    yes = cJSON_IsObject(row) && format_of(row) != NULL;
    cJSON_Delete(row);
    return yes;
}

int convert_stdio_write(const char *name, const char *text, const char *samples_name,
                        const char *samples_text, const char *lang, struct convert_out *o,
                        struct convert_stdio_counts *counts, struct llmsb_err *err)
{
    struct stdio_set s;
    struct stdio_ctx x = {.set = &s, .out = o, .counts = counts, .lang = lang};
    int rc;

    memset(counts, 0, sizeof(*counts));
    if (convert_check_nul(name, 1, text, err) != 0 ||
        (samples_text && convert_check_nul(samples_name, 1, samples_text, err) != 0))
        return LLMSB_ERR_INVALID;
    if (lang) {
        const struct language *l = language_find(lang);
        if (!l)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "--lang: \"%s\" is not a language", lang);
        x.lang = l->name;
    }
    if ((rc = set_read(&s, name, text, err)) == 0) {
        counts->tasks = s.n;
        snprintf(counts->benchmark, sizeof(counts->benchmark), "%s", s.fmt->name);
        for (size_t i = 0; i < s.n; i++)
            counts->no_tests += s.tasks[i].cases == NULL;
        if (samples_text)
            rc = s.fmt->samples(&x, samples_name, samples_text, err);
        for (size_t i = 0; !samples_text && rc == 0 && i < s.n; i++)
            if (s.tasks[i].cases)
                rc = s.fmt->references(&x, &s.tasks[i], err);
    }
    set_free(&s);
    return rc;
}
