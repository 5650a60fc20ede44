/* fmt_stdio.c - the stdin/stdout benchmarks (CodeContests, APPS,
 * LiveCodeBench), a row each of convert's table, one benchmark a file: a
 * row is marked by a field, read into test cases, and its solutions or a
 * model's samples become one job per program with `cases` (compiled once,
 * each case its own run and limits), the harness's own output rule as
 * `compare` and its per-test time limit as `timeout`.  Python programs of
 * APPS and LiveCodeBench run under the runner of fmt_stdio_runners.c. */
#include "eval/convert_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/fmt_stdio_int.h"

/* The most test cases a job takes (the agent's cap). */
#define STDIO_MAX_CASES 1000
/* The longest job of a call-based problem (all its tests in one run). */
#define STDIO_CALL_MAX_TIMEOUT_S 300

/* What one benchmark is beyond its hooks: its format's spec. */
struct stdio_spec {
    const char *compare; /* the harness's output rule (compare.h) */
    double timeout_s;    /* the harness's limit per test */
    const char *runner;  /* Python solutions run under it; NULL: as they are */
    /* t->cases (and t->fn_name) from t->row; an error names the field */
    int (*tests)(struct convert_task *t, const char *file, struct llmsb_err *err);
};

/* Where a conversion's jobs go. */
struct stdio_ctx {
    struct convert_set *set;
    struct convert_out *out;
};

/* ---- small readers ---- */

static const cJSON *field(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
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

static int task_err(struct llmsb_err *err, const char *file, const struct convert_task *t,
                    const char *what, const char *why)
{
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\": %s %s", file, t->line, t->id,
                         what, why);
}

/* A field that is JSON kept as a string (input_output, public_test_cases):
 * its own \u0000 escapes, which the row's check cannot see. */
static int nested_nul(const struct convert_task *t, const char *file, const char *key,
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
static int add_io_case(struct convert_task *t, const cJSON *in, const cJSON *out)
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
static int add_call_case(struct convert_task *t, const cJSON *in, const cJSON *out)
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

static int too_many_cases(struct convert_task *t, const char *file, struct llmsb_err *err)
{
    char why[96];

    snprintf(why, sizeof(why), "has %d tests; a job takes at most %d cases",
             cJSON_GetArraySize(t->cases), STDIO_MAX_CASES);
    return task_err(err, file, t, "its tests", why);
}

/* ---- the job ---- */

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

/* The job of program code in language lang (our name) for task t, with
 * meta (consumed; NULL: none) as the start of its meta. */
static int write_job(struct stdio_ctx *x, const struct convert_task *t, const char *id,
                     const char *lang, const char *code, cJSON *meta, struct llmsb_err *err)
{
    const struct stdio_spec *f = t->format->spec;
    double timeout = x->out->timeout_s > 0 ? (double)x->out->timeout_s : f->timeout_s;
    int in_runner = strcmp(lang, "python") == 0 && f->runner;
    cJSON *job = NULL, *calls = NULL;
    char *runner = NULL, per[32], at[320];

    if (in_runner && asprintf(&runner, "%s%s", stdio_runner_common, f->runner) < 0)
        runner = NULL;
    if ((in_runner && !runner) || (t->fn_name && !(calls = one_call_case(t->cases))) ||
        !(job = convert_job_new(id, lang, code, runner))) {
        cJSON_Delete(calls);
        cJSON_Delete(meta);
        free(runner);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
    }
    free(runner);
    if (convert_job_meta(job, meta, err) != 0) {
        cJSON_Delete(calls);
        cJSON_Delete(job);
        return LLMSB_ERR_NOMEM;
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
    snprintf(at, sizeof(at), "%s:%zu", x->set->name, t->line);
    return convert_job_end(x->out, t, job, id, at, err);
}

/* A sample of task t: its job is TASK#N. */
static int write_sample(struct stdio_ctx *x, struct convert_task *t, const char *lang,
                        const char *code, struct llmsb_err *err)
{
    char *id = convert_sample_id(t), *taken = NULL;
    cJSON *meta = NULL;
    int rc;

    if (!id)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    if ((rc = convert_extract(x->out, id, lang, code, &taken, &meta, err)) == 0)
        rc = write_job(x, t, id, lang, taken ? taken : code, meta, err);
    free(taken);
    free(id);
    return rc;
}

/* A task of a sample: it must be in the set and have tests. */
static int sample_task(struct stdio_ctx *x, const char *name, const char *where, const char *id,
                       struct convert_task **t, struct llmsb_err *err)
{
    if (!(*t = convert_set_find(x->set, id)))
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
static int cc_add_tests(struct convert_task *t, const char *key, const char *file,
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
static int cc_tests(struct convert_task *t, const char *file, struct llmsb_err *err)
{
    static const char *const keys[] = {"public_tests", "private_tests", "generated_tests"};

    for (size_t i = 0; i < 3; i++)
        if (cc_add_tests(t, keys[i], file, err) != 0)
            return -1;
    return 0;
}

/* The jobs of one solutions list ({"language": [...], "solution": [...]}
 * or [{"language", "solution"}]), ids TASK/KEY/N. */
static int cc_solutions(struct stdio_ctx *x, struct convert_task *t, const char *key,
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
        const char *code = cJSON_IsString(s) ? s->valuestring : convert_str(s, "solution");
        char *id = NULL;
        int known, rc;
        const char *lang = cc_lang(lv, &known);

        if (!code)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: task \"%s\": %s[%d]: no solution text", x->set->name,
                                 t->line, t->id, key, i);
        if (!lang) {
            x->out->no_image++;
            continue;
        }
        if (asprintf(&id, "%s/%s/%d", t->id, key, i) < 0)
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        rc = write_job(x, t, id, lang, code, NULL, err);
        free(id);
        if (rc)
            return rc;
    }
    return 0;
}

/* A task with tests: a job per solution in a language with an image;
 * unsolved when it has none in any language. */
static int cc_references(struct convert_set *s, struct convert_task *t, struct convert_out *o,
                         const char *at, struct llmsb_err *err)
{
    struct stdio_ctx x = {.set = s, .out = o};
    size_t before = o->jobs, skipped = o->no_image;
    int rc;

    (void)at;
    if (!t->cases)
        return 0;
    rc = cc_solutions(&x, t, "solutions", err);
    if (rc == 0 && o->jobs == before && o->no_image == skipped)
        o->unsolved++;
    return rc;
}

/* A row of CodeContests samples: {"task_id" (the problem's name),
 * "completion", "language" (optional: a CodeContests number or name, or
 * ours; else --lang, else python)}. */
static int cc_sample_row(struct stdio_ctx *x, const char *name, size_t line, const cJSON *row,
                         struct llmsb_err *err)
{
    const char *id = convert_str(row, "task_id"), *code = convert_str(row, "completion");
    const cJSON *lv = field(row, "language");
    const struct language *given = x->set->opts.lang ? language_find(x->set->opts.lang) : NULL;
    const char *lang = given ? given->name : "python";
    struct convert_task *t;
    char where[32];
    int known = 1;

    if (!id)
        id = convert_str(row, "name");
    if (!code)
        code = convert_str(row, "solution");
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

static int apps_tests(struct convert_task *t, const char *file, struct llmsb_err *err)
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

/* A task with tests: a job per solution (APPS's are Python); unsolved
 * when it has none. */
static int apps_references(struct convert_set *s, struct convert_task *t, struct convert_out *o,
                           const char *at, struct llmsb_err *err)
{
    struct stdio_ctx x = {.set = s, .out = o};
    cJSON *sols;
    int n, rc;

    (void)at;
    if (!t->cases)
        return 0;
    sols = json_field(t->row, "solutions");
    n = cJSON_GetArraySize(sols);
    rc = nested_nul(t, s->name, "solutions", err);
    if (n == 0)
        o->unsolved++;
    for (int i = 0; rc == 0 && i < n; i++) {
        const char *code = cJSON_GetStringValue(cJSON_GetArrayItem(sols, i));
        char *id = NULL;
        if (!code) {
            rc = task_err(err, s->name, t, "solutions", "must be a list of strings");
        } else if (asprintf(&id, "%s/solutions/%d", t->id, i) < 0) {
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        } else {
            rc = write_job(&x, t, id, "python", code, NULL, err);
            free(id);
        }
    }
    cJSON_Delete(sols);
    return rc;
}

/* One key's generations: a code string or a list of them. */
static int code_list(struct stdio_ctx *x, struct convert_task *t, const char *name,
                     const char *where, const cJSON *codes, struct llmsb_err *err)
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
static int apps_samples(struct convert_set *s, const char *name, const char *text,
                        struct convert_out *o, struct llmsb_err *err)
{
    struct stdio_ctx x0 = {.set = s, .out = o}, *x = &x0;
    cJSON *all = cJSON_Parse(text);
    const cJSON *it;
    struct convert_task *t;
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
            rc = sample_task(x, name, where, s->byrow[i]->id, &t, err);
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

/* meta: the problem's difficulty and url */
static int apps_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                    struct llmsb_err *err)
{
    const char *d = convert_str(t->row, "difficulty"), *url = convert_str(t->row, "url");

    (void)job, (void)at, (void)err;
    if (d)
        cJSON_AddStringToObject(meta, "difficulty", d);
    if (url)
        cJSON_AddStringToObject(meta, "url", url);
    return 0;
}

/* ---- LiveCodeBench (code_generation_lite rows) ---- */

/* The most tests' bytes one row's decoded private_test_cases may give
 * (the decoding job's output cap, docs/jobs.md `output`). */
#define LCB_DECODED_MAX ((size_t)64 << 20)
/* The longest input or output of a decoded test: a job's stdin (16 MiB,
 * job/job.h JOB_MAX_STDIN). */
#define LCB_TEST_MAX ((size_t)16 << 20)

static int lcb_test_err(struct llmsb_err *err, const char *file, const struct convert_task *t,
                        const char *key, int i, const char *why)
{
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "%s:%zu: task \"%s\": %s[%d] (decoded in the sandbox) %s", file, t->line,
                         t->id, key, i, why);
}

/* A decoded test: nothing but {"input": string, "output": string,
 * "testtype": "stdin" | "functional"}, each text at most a job's stdin. */
static int lcb_check_test(const struct convert_task *t, const char *key, int i, const cJSON *it,
                          const char *file, struct llmsb_err *err)
{
    static const char *const names[] = {"input", "output", "testtype"};
    const char *type = cJSON_GetStringValue(field(it, "testtype"));
    const cJSON *m;

    if (!cJSON_IsObject(it))
        return lcb_test_err(err, file, t, key, i, "is not an object");
    cJSON_ArrayForEach(m, it) {
        size_t k = 0;
        while (k < 3 && strcmp(m->string, names[k]) != 0)
            k++;
        if (k == 3)
            return lcb_test_err(err, file, t, key, i,
                                "has a member other than input, output and testtype");
        if (!cJSON_IsString(m))
            return lcb_test_err(err, file, t, key, i, "has a member that is not a string");
        if (strlen(m->valuestring) > LCB_TEST_MAX)
            return lcb_test_err(err, file, t, key, i, "has a text over a job's 16 MiB stdin");
    }
    if (!field(it, "input") || !field(it, "output"))
        return lcb_test_err(err, file, t, key, i, "lacks input or output");
    if (!type || (strcmp(type, "stdin") != 0 && strcmp(type, "functional") != 0))
        return lcb_test_err(err, file, t, key, i,
                            "has a testtype that is neither \"stdin\" nor \"functional\"");
    return 0;
}

/* Adds the tests of list (from field key) to t->cases; strict: decoded
 * in a sandbox, each test checked against the schema first. */
static int lcb_add_list(struct convert_task *t, const char *key, const cJSON *list, int strict,
                        const char *file, struct llmsb_err *err)
{
    const cJSON *it;
    int i = 0, rc = 0;

    if (!cJSON_IsArray(list))
        return task_err(err, file, t, key,
                        strict ? "(decoded in the sandbox) is not a list of tests"
                               : "is not a list of tests");
    cJSON_ArrayForEach(it, list) {
        const cJSON *in = field(it, "input"), *out = field(it, "output");
        const char *type = cJSON_GetStringValue(field(it, "testtype"));
        int call = type && strcmp(type, "functional") == 0;
        if (strict && (rc = lcb_check_test(t, key, i, it, file, err)) != 0)
            break;
        i++;
        if (!cJSON_IsString(in) || !cJSON_IsString(out))
            rc = task_err(err, file, t, key, "must hold {\"input\", \"output\"} strings");
        else if (call != (t->fn_name != NULL))
            rc = task_err(err, file, t, key,
                          call ? "has a functional test but metadata names no func_name"
                               : "has a stdin test in a functional problem");
        else if (call ? add_call_case(t, in, out) != 0 : add_io_case(t, in, out) != 0)
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        if (rc)
            break;
    }
    return rc;
}

/* A test list: a JSON string of [{"input", "output", "testtype"}], or the
 * list itself; private_test_cases as published (not JSON: base64 of zlib
 * of a pickle) waits for lcb_finish when the caller can decode them. */
static int lcb_add_tests(struct convert_task *t, const char *key, const char *file,
                         struct llmsb_err *err)
{
    const cJSON *v = field(t->row, key);
    cJSON *list = NULL;
    int rc;

    if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && !*v->valuestring))
        return 0;
    if (nested_nul(t, file, key, err) != 0)
        return LLMSB_ERR_INVALID;
    if (cJSON_IsString(v) && !(list = cJSON_Parse(v->valuestring))) {
        if (t->opts->decode && strcmp(key, "private_test_cases") == 0) {
            t->encoded = v->valuestring;
            return 0;
        }
        return task_err(
            err, file, t, key,
            "is not JSON: LiveCodeBench keeps private_test_cases as base64 of zlib of a Python "
            "pickle, which only Python can read; convert decodes them in a sandbox job unless "
            "told not to (--no-decode), or decode them first (docs/eval.md: \"LiveCodeBench\"), "
            "e.g. json.loads(pickle.loads(zlib.decompress(base64.b64decode(s))))");
    }
    if (!list && !(list = cJSON_Duplicate(v, 1)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    rc = lcb_add_list(t, key, list, 0, file, err);
    cJSON_Delete(list);
    return rc;
}

/* What a row's tests come to once all are in: too many is an error, none
 * leaves the task untested. */
static int stdio_cases_done(struct convert_task *t, const char *file, struct llmsb_err *err)
{
    if (t->cases && cJSON_GetArraySize(t->cases) > STDIO_MAX_CASES)
        return too_many_cases(t, file, err);
    if (t->cases && cJSON_GetArraySize(t->cases) == 0) {
        cJSON_Delete(t->cases);
        t->cases = NULL;
    }
    t->untested = t->cases == NULL;
    return 0;
}

/* Task t's decoded private tests: what the sandbox printed (text) or why
 * it could not, checked against the schema and added to its cases. */
static int lcb_decoded(struct convert_task *t, const char *file, const char *text, const char *why,
                       struct llmsb_err *err)
{
    const char *key = "private_test_cases";
    char because[400]; /* the prefix and the decoder's why: at most ~240 bytes */
    cJSON *list;
    int rc;

    if (why) {
        snprintf(because, sizeof(because), "could not be decoded in the sandbox: %s", why);
        return task_err(err, file, t, key, because);
    }
    if (strlen(text) > LCB_DECODED_MAX)
        return task_err(err, file, t, key, "(decoded in the sandbox) is over 64 MiB");
    if (convert_check_nul(file, t->line, text, err) != 0)
        return LLMSB_ERR_INVALID;
    if (!(list = cJSON_Parse(text)))
        return task_err(err, file, t, key, "(decoded in the sandbox) is not JSON");
    rc = lcb_add_list(t, key, list, 1, file, err);
    cJSON_Delete(list);
    return rc;
}

/* The rows whose private tests wait (in the dataset's order), decoded in
 * one call of the caller's decoder, then each checked and added. */
static int lcb_finish(struct convert_set *s, struct llmsb_err *err)
{
    const char **blobs = NULL;
    char **out = NULL, **why = NULL;
    size_t n = 0, k = 0;
    int rc = 0;

    for (size_t i = 0; i < s->n; i++)
        n += s->tasks[i].encoded != NULL;
    if (n == 0)
        return 0;
    blobs = calloc(n, sizeof(*blobs));
    out = calloc(n, sizeof(*out));
    why = calloc(n, sizeof(*why));
    if (!blobs || !out || !why) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->byrow[i]->encoded)
            blobs[k++] = s->byrow[i]->encoded;
    if ((rc = s->opts.decode(s->opts.decode_ud, n, blobs, out, why, err)) != 0)
        goto out;
    k = 0;
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        struct convert_task *t = s->byrow[i];
        if (!t->encoded)
            continue;
        if (!out[k] && !why[k])
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        else
            rc = lcb_decoded(t, s->name, out[k], why[k], err);
        k++;
        t->encoded = NULL;
        if (rc == 0) {
            int was = t->untested;
            rc = stdio_cases_done(t, s->name, err);
            s->untested += t->untested && !was;
        }
    }
out:
    for (size_t i = 0; out && why && i < n; i++)
        free(out[i]), free(why[i]);
    free(blobs);
    free(out);
    free(why);
    return rc;
}

/* Public then private tests, as get_evaluation_sample joins them; a
 * metadata.func_name makes the problem functional (LeetCode). */
static int lcb_tests(struct convert_task *t, const char *file, struct llmsb_err *err)
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

/* LiveCodeBench publishes no solutions: a task with tests is unsolved. */
static int lcb_references(struct convert_set *s, struct convert_task *t, struct convert_out *o,
                          const char *at, struct llmsb_err *err)
{
    (void)s, (void)at, (void)err;
    o->unsolved += t->cases != NULL;
    return 0;
}

/* Its custom evaluator's file (lcb_runner/runner/custom_evaluator.py): a
 * JSON list of {"question_id", "code_list": [code, ...]}. */
static int lcb_samples(struct convert_set *s, const char *name, const char *text,
                       struct convert_out *o, struct llmsb_err *err)
{
    struct stdio_ctx x0 = {.set = s, .out = o}, *x = &x0;
    cJSON *all = cJSON_Parse(text);
    const cJSON *it;
    struct convert_task *t;
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
        const char *id = convert_str(it, "question_id");
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

/* meta: the problem's difficulty, platform and contest */
static int lcb_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                   struct llmsb_err *err)
{
    static const char *const keys[] = {"difficulty", "platform", "contest_id", "contest_date",
                                       NULL};

    (void)job, (void)at, (void)err;
    copy_meta(t->row, meta, keys);
    return 0;
}

/* meta: the problem's difficulty, source, rating, memory limit and time
 * limit in seconds */
static int cc_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                  struct llmsb_err *err)
{
    static const char *const keys[] = {"difficulty", "source", "cf_rating", "memory_limit_bytes",
                                       NULL};
    const cJSON *tl = field(t->row, "time_limit");

    (void)job, (void)at, (void)err;
    copy_meta(t->row, meta, keys);
    if (cJSON_IsNumber(field(tl, "seconds")))
        cJSON_AddNumberToObject(
            meta, "time_limit_s",
            field(tl, "seconds")->valuedouble +
                (cJSON_IsNumber(field(tl, "nanos")) ? field(tl, "nanos")->valuedouble / 1e9 : 0));
    return 0;
}

/* CodeContests has no samples format of its own: rows of JSON Lines or a
 * JSON array (see cc_sample_row). */
struct cc_samples {
    struct stdio_ctx x;
    const char *name;
};

static int cc_sample(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct cc_samples *e = ctx;
    int rc = cc_sample_row(&e->x, e->name, line, row, err);

    cJSON_Delete(row);
    return rc;
}

static int cc_samples(struct convert_set *s, const char *name, const char *text,
                      struct convert_out *o, struct llmsb_err *err)
{
    struct cc_samples e = {.x = {.set = s, .out = o}, .name = name};

    return convert_each_row(name, text, cc_sample, &e, err);
}

/* ---- reading a row ---- */

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

/* A row the format's mark took: its id and its tests as the harness runs
 * them (none: the task is untested). */
static int stdio_read(struct convert_task *t, const char *file, struct llmsb_err *err)
{
    const struct stdio_spec *f = t->format->spec;

    /* --lang is a sample's language here: one we have, told once */
    if (t->order == 0 && t->opts->lang && !language_find(t->opts->lang))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "--lang: \"%s\" is not a language",
                             t->opts->lang);
    if (!(t->id = t->own_id = row_id(field(t->row, t->format->id_key))))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: %s: missing or not a string id", file,
                             t->line, t->format->id_key);
    if (!(t->cases = cJSON_CreateArray()))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    if (f->tests(t, file, err) != 0)
        return -1;
    if (t->encoded) /* its tests are all in once lcb_finish decoded them */
        return 0;
    return stdio_cases_done(t, file, err);
}

/* ---- the rows of convert's table ---- */

static const struct stdio_spec cc_spec = {
    .compare = "tokens_icase_abs",
    .timeout_s = 10, /* tester_sandboxer.h: max_execution_duration */
    .runner = NULL,  /* py_tester_sandboxer runs python3 on the file */
    .tests = cc_tests,
};

const struct convert_format convert_codecontests = {
    .name = "codecontests",
    .label = "CodeContests (public_tests)",
    .mark = "public_tests",
    .family = "a stdin/stdout benchmark",
    .id_key = "name",
    .read = stdio_read,
    .references = cc_references,
    .samples = cc_samples,
    .job = cc_job,
    .spec = &cc_spec,
    .lacks = "reference solution",
};

static const struct stdio_spec apps_spec = {
    .compare = "line_token_sets",
    .timeout_s = 4, /* testing_util.py: timeout = 4 */
    .runner = stdio_apps_runner,
    .tests = apps_tests,
};

const struct convert_format convert_apps = {
    .name = "apps",
    .label = "APPS (input_output)",
    .mark = "input_output",
    .family = "a stdin/stdout benchmark",
    .id_key = "problem_id",
    .read = stdio_read,
    .references = apps_references,
    .samples = apps_samples,
    .job = apps_job,
    .spec = &apps_spec,
    .lacks = "reference solution",
};

static const struct stdio_spec lcb_spec = {
    .compare = "lines_decimal",
    .timeout_s = 6, /* compute_code_generation_metrics.py: timeout=6 */
    .runner = stdio_lcb_runner,
    .tests = lcb_tests,
};

const struct convert_format convert_livecodebench = {
    .name = "livecodebench",
    .label = "LiveCodeBench (public_test_cases)",
    .mark = "public_test_cases",
    .family = "a stdin/stdout benchmark",
    .id_key = "question_id",
    .read = stdio_read,
    .references = lcb_references,
    .samples = lcb_samples,
    .job = lcb_job,
    .finish = lcb_finish,
    .spec = &lcb_spec,
    .lacks = "reference solution",
};
