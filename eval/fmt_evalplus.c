/* fmt_evalplus.c - EvalPlus's HumanEval+ and MBPP+ (rows with base_input,
 * plus_input, atol, canonical_solution), a row each of convert's table, one
 * benchmark a file, graded as EvalPlus's evaluate does, in two steps: the
 * expected outputs come from the canonical solution, never from a sample.
 *  1. Without samples: one job per task (id = task id) that runs the
 *     canonical solution on every base and plus input in the sandbox and
 *     returns the outputs (expected.pkl.z, an artifact) and the time of each
 *     call (a JSON line on stdout).
 *  2. With samples and --expected (the results of step 1): one job per
 *     sample carrying its task's inputs, those outputs (the pickle is only
 *     ever loaded inside a sandbox) and EvalPlus's per-input time limits;
 *     its two cases are the base and the plus tests, each graded by the
 *     runner of fmt_evalplus_runner.c with EvalPlus's comparison. */
#include "eval/convert_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "eval/fmt_evalplus_int.h"

/* evalplus/config.py: DEFAULT_MIN_TIME_LIMIT, DEFAULT_GT_TIME_LIMIT_FACTOR */
#define EVALPLUS_MIN_TIME_LIMIT_S 4.0
#define EVALPLUS_TIME_LIMIT_FACTOR 4.0
/* evalplus/eval/__init__.py: EVALPLUS_TIMEOUT_PER_TASK's default; the
 * child is given min(that, sum of the limits) + 1 s and joined for 1 s more */
#define EVALPLUS_TIMEOUT_PER_TASK_S 60.0
#define EVALPLUS_JOIN_SLACK_S 2.0
/* its reliability_guard caps the address space at 4 GiB */
#define EVALPLUS_MEMORY_MB 4096
/* the ground-truth job: EvalPlus gives the canonical solution no limit */
#define EVALPLUS_TRUTH_TIMEOUT_S 240
/* an expected.pkl.z artifact in base64 (the default artifacts.max_file, 16 MB) */
#define EVALPLUS_MAX_PICKLE_B64 ((size_t)24 << 20)

/* What one benchmark of the two is beyond its hooks. */
struct evalplus_spec {
    const char *prefix;  /* its task ids' */
    const char *dataset; /* EvalPlus's name: its special oracles go by it */
};

static const cJSON *field(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* job's files object, to add to */
static cJSON *files_of(cJSON *job)
{
    return cJSON_GetObjectItemCaseSensitive(job, "files");
}

static int task_err(struct llmsb_err *err, const char *file, const struct convert_task *t,
                    const char *what, const char *why)
{
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\": %s %s", file, t->line, t->id,
                         what, why);
}

/* ---- reading a row ---- */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A key of object o given twice: cJSON reads the first, Python's json (the
 * runner's task.json, EvalPlus's loaders) the last, so such a row would be
 * graded as another than EvalPlus's.  1 and *name the key, 0 none, -1 out
 * of memory. */
static int twice(const cJSON *o, const char **name)
{
    const cJSON *it;
    const char **names;
    size_t n = 0;
    int found = 0;

    cJSON_ArrayForEach(it, o)
        n++;
    if (n < 2)
        return 0;
    if (!(names = malloc(n * sizeof(*names))))
        return -1;
    n = 0;
    cJSON_ArrayForEach(it, o)
        names[n++] = it->string ? it->string : "";
    qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 1; i < n && !found; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            found = 1, *name = names[i];
    free(names);
    return found;
}

/* 0, or an error naming the row (at) and its key given twice */
static int refuse_twice(const cJSON *row, const char *at, struct llmsb_err *err)
{
    const char *name = NULL;
    int rc = twice(row, &name);

    if (rc < 0)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    if (rc > 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: key \"%s\" is there twice (EvalPlus, reading JSON with "
                             "Python, would take the last, this reader the first)",
                             at, name);
    return 0;
}

/* A row with plus_input whose task id has this benchmark's prefix. */
static int evalplus_adopt(struct convert_task *t, cJSON *row, const char *file, size_t line,
                          struct llmsb_err *err, const struct convert_format *f)
{
    const struct evalplus_spec *sp = f->spec;
    const char *id = convert_str(row, "task_id");

    if (!field(row, "plus_input"))
        return 0;
    if (!id || strncmp(id, sp->prefix, strlen(sp->prefix)) != 0) {
        /* the last of the two tells a row of neither */
        if (f == &convert_mbppplus && !(id && strncmp(id, "HumanEval/", 10) == 0))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: an EvalPlus row (it has plus_input) whose task_id "
                                 "\"%s\" is neither HumanEval/N (HumanEval+) nor Mbpp/N (MBPP+)",
                                 file, line, id ? id : "");
        return 0;
    }
    t->id = id;
    t->lang = language_find("python");
    return 1;
}

static int humanevalplus_adopt(struct convert_task *t, cJSON *row, const char *file, size_t line,
                               struct llmsb_err *err)
{
    return evalplus_adopt(t, row, file, line, err, &convert_humanevalplus);
}

static int mbppplus_adopt(struct convert_task *t, cJSON *row, const char *file, size_t line,
                          struct llmsb_err *err)
{
    return evalplus_adopt(t, row, file, line, err, &convert_mbppplus);
}

/* The fields EvalPlus's completeness check and evaluate use. */
static int evalplus_read(struct convert_task *t, const char *file, struct llmsb_err *err)
{
    static const char *const strings[] = {"prompt", "canonical_solution", "entry_point", NULL};
    static const char *const inputs[] = {"base_input", "plus_input", NULL};
    const cJSON *it;
    char at[320];
    int rc;

    snprintf(at, sizeof(at), "%s:%zu: task \"%s\"", file, t->line, t->id);
    if ((rc = refuse_twice(t->row, at, err)) != 0)
        return rc;
    for (int i = 0; strings[i]; i++)
        if (!convert_str(t->row, strings[i]))
            return task_err(err, file, t, strings[i], "must be a string");
    if (!cJSON_IsNumber(field(t->row, "atol")) || field(t->row, "atol")->valuedouble < 0)
        return task_err(err, file, t, "atol", "must be a number >= 0");
    if (!(t->own_text = strndup(t->text, t->text_len)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    for (int i = 0; inputs[i]; i++) {
        const cJSON *v = field(t->row, inputs[i]);
        /* an empty object is no inputs (MBPP+'s Mbpp/793 plus_input: {}) */
        if (!cJSON_IsArray(v) && !(cJSON_IsObject(v) && !v->child))
            return task_err(err, file, t, inputs[i], "must be a list of inputs");
        cJSON_ArrayForEach(it, field(t->row, inputs[i])) {
            if (!cJSON_IsArray(it))
                return task_err(err, file, t, inputs[i],
                                "must hold lists (the arguments of one call each)");
        }
    }
    return 0;
}

/* ---- what a job carries ---- */

/* A job of the runner for task t: program.py (program) and task.json, the
 * dataset's row as it is written there (its inputs as EvalPlus's loader
 * reads them: NaN, Infinity and NUL characters are no C strings), args
 * MODE DATASET ENTRY_POINT TASK_ID [more]. */
static cJSON *runner_job(const struct convert_task *t, const char *id, const char *program,
                         const char *mode, const char *more)
{
    const struct evalplus_spec *sp = t->format->spec;
    cJSON *job = convert_job_new(id, "python", program, evalplus_runner), *args = NULL, *row;
    char *inputs = base64_encode(t->own_text, strlen(t->own_text), NULL);
    int ok = job && inputs;

    if (ok && (args = cJSON_AddArrayToObject(job, "args"))) {
        const char *a[] = {mode, sp->dataset, convert_str(t->row, "entry_point"), t->id, more};
        for (size_t i = 0; i < 5 && a[i]; i++)
            ok &= cJSON_AddItemToArray(args, cJSON_CreateString(a[i]));
    }
    ok = ok && args && (row = cJSON_AddObjectToObject(files_of(job), "task.json")) &&
         cJSON_AddStringToObject(row, "base64", inputs) &&
         cJSON_AddNumberToObject(job, "memory", EVALPLUS_MEMORY_MB);
    free(inputs);
    if (!ok) {
        cJSON_Delete(job);
        return NULL;
    }
    return job;
}

/* The program of a row and a solution: prompt + solution, as EvalPlus
 * builds both the ground truth and a completion's.  New; caller frees. */
static char *prompt_plus(const struct convert_task *t, const char *sol)
{
    char *s = NULL;

    if (asprintf(&s, "%s%s", convert_str(t->row, "prompt"), sol) < 0)
        return NULL;
    return s;
}

/* ---- step 1: the ground truth ---- */

static int evalplus_references(struct convert_set *s, struct convert_task *t, struct convert_out *o,
                               const char *at, struct llmsb_err *err)
{
    char *program = prompt_plus(t, convert_str(t->row, "canonical_solution"));
    cJSON *job = program ? runner_job(t, t->id, program, "truth", NULL) : NULL, *art;

    (void)s;
    free(program);
    if (!job || !(art = cJSON_AddArrayToObject(job, "artifacts")) ||
        !cJSON_AddItemToArray(art, cJSON_CreateString("expected.pkl.z")) ||
        !cJSON_AddNumberToObject(job, "expect_exit", 0) ||
        !cJSON_AddNumberToObject(
            job, "timeout", (double)(o->timeout_s > 0 ? o->timeout_s : EVALPLUS_TRUTH_TIMEOUT_S))) {
        cJSON_Delete(job);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", t->id);
    }
    return convert_job_end(o, t, job, t->id, at, err);
}

/* meta: which case is which verdict (the report's base pass@k) */
static int evalplus_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                        struct llmsb_err *err)
{
    (void)t, (void)at, (void)err;
    if (field(job, "cases"))
        cJSON_AddNumberToObject(meta, "base_case", 0);
    return 0;
}

/* ---- step 2: the samples ---- */

/* One task's ground truth, from its job's result. */
struct evalplus_truth {
    cJSON *result; /* owned */
    const char *pickle_b64;
    const cJSON *times[2];     /* base_time, plus_time */
    const cJSON *recompute[2]; /* the inputs whose outputs it could not carry */
};

static const char *const phases[2] = {"base", "plus"};

static int is_base64(const char *s, size_t *len)
{
    size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");

    n += strspn(s + n, "=");
    *len = n;
    return s[n] == '\0' && n % 4 == 0 && n > 0;
}

/* The last line of text that is a JSON object with key, parsed; NULL when
 * none.  New item; caller deletes. */
static cJSON *last_json_line(const char *text, const char *key)
{
    const char *end = text + strlen(text), *p = end;

    while (p > text) {
        const char *line = p;
        cJSON *o;
        while (line > text && line[-1] != '\n')
            line--;
        if ((o = cJSON_ParseWithLength(line, (size_t)(p - line))) && field(o, key))
            return o;
        cJSON_Delete(o);
        p = line > text ? line - 1 : text;
    }
    return NULL;
}

/* A ground-truth result's expected.pkl.z (base64) and its stdout's line of
 * times, checked against task t: ran, passed, all inputs. */
static int truth_check(struct evalplus_truth *g, const struct convert_task *t, const char *at,
                       struct llmsb_err *err)
{
    const cJSON *r = g->result, *a, *meta = field(r, "meta");
    cJSON *line = NULL;
    const cJSON *v;
    size_t len;
    int rc = 0;

    if (cJSON_IsObject(meta) && convert_str(meta, "benchmark") &&
        strcmp(convert_str(meta, "benchmark"), t->format->name) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: task \"%s\": the result of a %s job, not %s's", at, t->id,
                             convert_str(meta, "benchmark"), t->format->name);
    if (!cJSON_IsTrue(field(r, "passed")))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: task \"%s\": its canonical solution did not run every input "
                             "(status %s): no expected outputs",
                             at, t->id, convert_str(r, "status") ? convert_str(r, "status") : "?");
    cJSON_ArrayForEach(a, field(r, "artifacts")) {
        const char *name = convert_str(a, "name");
        if (name && strcmp(name, "expected.pkl.z") == 0)
            g->pickle_b64 = convert_str(a, "base64");
    }
    if (!g->pickle_b64 || !is_base64(g->pickle_b64, &len) || len > EVALPLUS_MAX_PICKLE_B64)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: task \"%s\": no expected.pkl.z artifact (base64, at most %zu "
                             "bytes) in its result",
                             at, t->id, EVALPLUS_MAX_PICKLE_B64);
    line = convert_str(r, "stdout") ? last_json_line(convert_str(r, "stdout"), "evalplus_truth")
                                    : NULL;
    v = field(line, "evalplus_truth");
    if (!cJSON_IsObject(v) || !convert_str(v, "task_id") ||
        strcmp(convert_str(v, "task_id"), t->id) != 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: task \"%s\": its stdout has no evalplus_truth line of this task",
                           at, t->id);
        goto out;
    }
    for (int i = 0; i < 2 && rc == 0; i++) {
        char key[16];
        const cJSON *x, *list;
        int n = cJSON_GetArraySize(field(t->row, i ? "plus_input" : "base_input"));
        snprintf(key, sizeof(key), "%s_time", phases[i]);
        x = field(v, key);
        if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) != n)
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                               "%s: task \"%s\": %s is not a list of %d times (one per input of "
                               "the dataset: a ground truth of another version?)",
                               at, t->id, key, n);
        cJSON_ArrayForEach(x, field(v, key)) {
            if (rc == 0 &&
                (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || !isfinite(x->valuedouble)))
                rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                                   "%s: task \"%s\": %s holds a time that is not a number >= 0", at,
                                   t->id, key);
        }
        list = field(field(v, "recompute"), phases[i]);
        if (rc == 0 && list && !cJSON_IsArray(list))
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                               "%s: task \"%s\": recompute.%s is not a list of inputs", at, t->id,
                               phases[i]);
        cJSON_ArrayForEach(x, list) {
            if (rc == 0 && (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble >= n ||
                            x->valuedouble != floor(x->valuedouble)))
                rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                                   "%s: task \"%s\": recompute.%s holds what is not the index of "
                                   "one of its %d inputs",
                                   at, t->id, phases[i], n);
        }
    }
    if (rc == 0) { /* the line is kept on the result, for the times */
        cJSON_AddItemToObject(g->result, "llmsb_truth", line);
        g->times[0] = field(v, "base_time");
        g->times[1] = field(v, "plus_time");
        g->recompute[0] = field(field(v, "recompute"), "base");
        g->recompute[1] = field(field(v, "recompute"), "plus");
        line = NULL;
    }
out:
    cJSON_Delete(line);
    return rc;
}

/* Reading --expected: the results, one a line, by task. */
struct truth_read {
    struct convert_set *set;
    struct evalplus_truth *truth; /* by the task's place in set->tasks */
    const char *name;
};

static int truth_row(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct truth_read *e = ctx;
    const char *id = convert_str(row, "id");
    struct convert_task *t = id ? convert_set_find(e->set, id) : NULL;
    struct evalplus_truth *g;
    char at[320];
    int rc;

    snprintf(at, sizeof(at), "%s:%zu", e->name, line);
    if (!t) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: the result of job \"%s\", which is no task of %s (a ground-truth "
                           "job's id is its task's)",
                           at, id ? id : "", e->set->name);
        cJSON_Delete(row);
        return rc;
    }
    g = &e->truth[t - e->set->tasks];
    if (g->result) {
        cJSON_Delete(row);
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task \"%s\" is there twice", at, t->id);
    }
    g->result = row;
    return truth_check(g, t, at, err);
}

/* The limits of one phase: max(min limit, factor x reference time) per
 * input, and the phase's whole time as EvalPlus's evaluate gives it. */
static cJSON *phase_limits(const cJSON *times, double *overall)
{
    cJSON *l = cJSON_CreateArray();
    const cJSON *x;
    double sum = 0;

    cJSON_ArrayForEach(x, times) {
        double lim = EVALPLUS_TIME_LIMIT_FACTOR * x->valuedouble;
        if (lim < EVALPLUS_MIN_TIME_LIMIT_S)
            lim = EVALPLUS_MIN_TIME_LIMIT_S;
        sum += lim;
        cJSON_AddItemToArray(l, cJSON_CreateNumber(lim));
    }
    *overall = (sum < EVALPLUS_TIMEOUT_PER_TASK_S ? sum : EVALPLUS_TIMEOUT_PER_TASK_S) +
               EVALPLUS_JOIN_SLACK_S;
    return l;
}

/* limits.json and the job's cases and timeout. */
static int add_limits(cJSON *job, const struct evalplus_truth *g, long timeout_s)
{
    cJSON *lim = cJSON_CreateObject(), *cases;
    double overall[2], longest = 0;
    char *text = NULL;
    int ok = lim != NULL;

    for (int i = 0; i < 2 && ok; i++) {
        char key[16];
        const cJSON *x;
        double again = 0; /* the recomputed outputs' time: twice the reference's, and 2 s */
        ok = cJSON_AddItemToObject(lim, phases[i], phase_limits(g->times[i], &overall[i]));
        snprintf(key, sizeof(key), "%s_timeout", phases[i]);
        ok = ok && cJSON_AddNumberToObject(lim, key, overall[i]);
        if (ok && cJSON_GetArraySize(g->recompute[i]) > 0) {
            cJSON *r = cJSON_GetObjectItemCaseSensitive(lim, "recompute");
            if (!r)
                r = cJSON_AddObjectToObject(lim, "recompute");
            ok = r && cJSON_AddItemToObject(r, phases[i], cJSON_Duplicate(g->recompute[i], 1));
            cJSON_ArrayForEach(x, g->recompute[i]) {
                again += 2 * cJSON_GetArrayItem(g->times[i], (int)x->valuedouble)->valuedouble;
            }
            again += 2;
        }
        longest = overall[i] + again > longest ? overall[i] + again : longest;
    }
    ok = ok && (text = cJSON_PrintUnformatted(lim)) &&
         cJSON_AddStringToObject(files_of(job), "limits.json", text) &&
         (cases = cJSON_AddArrayToObject(job, "cases"));
    for (int i = 0; i < 2 && ok; i++) {
        cJSON *c = cJSON_CreateObject(), *args = c ? cJSON_AddArrayToObject(c, "args") : NULL;
        char pass[96];
        /* the runner's verdict line, as Python's json.dumps writes it: a
         * program that leaves with 0 by itself (a C call) does not pass */
        snprintf(pass, sizeof(pass), "{\"phase\": \"%s\", \"status\": \"pass\", \"inputs\": %d}\n",
                 phases[i], cJSON_GetArraySize(g->times[i]));
        ok = args && cJSON_AddItemToArray(args, cJSON_CreateString(phases[i])) &&
             cJSON_AddNumberToObject(c, "expect_exit", 0) &&
             cJSON_AddStringToObject(c, "expect_stdout", pass) && cJSON_AddItemToArray(cases, c);
        if (!ok)
            cJSON_Delete(c);
    }
    /* the runner keeps each phase's own limit; the sandbox's is a backstop a
     * little past the longer one (the interpreter's start) */
    ok = ok && cJSON_AddNumberToObject(job, "timeout",
                                       timeout_s > 0 ? (double)timeout_s : ceil(longest) + 1);
    free(text);
    cJSON_Delete(lim);
    return ok ? 0 : -1;
}

static int needs_canonical(const struct evalplus_truth *g)
{
    return cJSON_GetArraySize(g->recompute[0]) > 0 || cJSON_GetArraySize(g->recompute[1]) > 0;
}

/* canonical.py, for the outputs the ground truth could not carry; 1 or 0
 * when out of memory */
static int add_canonical(cJSON *job, const struct convert_task *t)
{
    char *canonical = prompt_plus(t, convert_str(t->row, "canonical_solution"));
    int ok = canonical && cJSON_AddStringToObject(files_of(job), "canonical.py", canonical);

    free(canonical);
    return ok;
}

/* A sample's job: TASK#N, its program the solution (or prompt +
 * completion), with the task's inputs, expected outputs and limits. */
static int sample_job(struct convert_out *o, struct convert_task *t, const struct evalplus_truth *g,
                      const char *sol, const char *comp, const char *at, struct llmsb_err *err)
{
    char atol[32], *id = convert_sample_id(t), *taken = NULL, *program = NULL;
    cJSON *job = NULL, *pkl, *xmeta = NULL;
    int rc;

    if (!id)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    /* --extract: the code taken out of the answer, before the prompt is put
     * before a completion (as the other formats do) */
    if ((rc = convert_extract(o, id, "python", sol ? sol : comp, &taken, &xmeta, err)) != 0) {
        free(id);
        return rc;
    }
    if (taken && sol)
        sol = taken;
    else if (taken)
        comp = taken;
    if (!(program = sol ? strdup(sol) : prompt_plus(t, comp))) {
        free(taken);
        free(id);
        cJSON_Delete(xmeta);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }

    snprintf(atol, sizeof(atol), "%.17g", field(t->row, "atol")->valuedouble);
    if (!(job = runner_job(t, id, program, "check", atol)) ||
        (needs_canonical(g) && !add_canonical(job, t)) ||
        !(pkl = cJSON_AddObjectToObject(files_of(job), "expected.pkl.z")) ||
        !cJSON_AddStringToObject(pkl, "base64", g->pickle_b64) ||
        add_limits(job, g, o->timeout_s) != 0 || !cJSON_AddFalseToObject(job, "stop_on_failure")) {
        cJSON_Delete(job);
        cJSON_Delete(xmeta);
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
        rc = LLMSB_ERR_NOMEM;
    } else if ((rc = convert_job_meta(job, xmeta, err)) != 0)
        cJSON_Delete(job);
    else
        rc = convert_job_end(o, t, job, id, at, err);
    free(program);
    free(taken);
    free(id);
    return rc;
}

/* Reading the samples: EvalPlus's {task_id, solution} (the whole program)
 * or {task_id, completion} (after the prompt). */
struct sample_read {
    struct convert_set *set;
    struct evalplus_truth *truth;
    struct convert_out *out;
    const char *name;
};

static int sample_row(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct sample_read *e = ctx;
    const char *id = convert_str(row, "task_id"), *sol = convert_str(row, "solution"),
               *comp = convert_str(row, "completion");
    struct convert_task *t = id ? convert_set_find(e->set, id) : NULL;
    char at[320];
    int rc;

    snprintf(at, sizeof(at), "%s:%zu", e->name, line);
    if ((rc = refuse_twice(row, at, err)) != 0) {
        cJSON_Delete(row);
        return rc;
    }
    if (!id || (!sol && !comp) || (field(row, "solution") && !sol) ||
        (field(row, "completion") && !comp))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: an EvalPlus sample is {\"task_id\", \"solution\"} (the whole "
                           "program) or {\"task_id\", \"completion\"} (after the prompt), strings",
                           at);
    else if (!t)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task \"%s\" is not in %s", at, id,
                           e->set->name);
    else if (!e->truth[t - e->set->tasks].result)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: task \"%s\" has no ground-truth result in --expected", at, id);
    else
        rc = sample_job(e->out, t, &e->truth[t - e->set->tasks], sol, comp, at, err);
    cJSON_Delete(row);
    return rc;
}

static int evalplus_samples(struct convert_set *s, const char *name, const char *text,
                            struct convert_out *o, struct llmsb_err *err)
{
    struct evalplus_truth *truth = calloc(s->n ? s->n : 1, sizeof(*truth));
    struct truth_read tr = {.set = s, .truth = truth, .name = s->opts.expected_name};
    struct sample_read sr = {.set = s, .truth = truth, .out = o, .name = name};
    int rc;

    if (!truth)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    if (!s->opts.expected_text)
        rc = llmsb_err_set(
            err, LLMSB_ERR_INVALID,
            "%s: EvalPlus samples are graded against the canonical solution's outputs: make them "
            "once with `llm-sandbox convert %s --out gt.jsonl && llm-sandbox submit gt.jsonl "
            "--local --wait --out gt-results.jsonl`, then give --expected gt-results.jsonl",
            name, s->name);
    else if ((rc = convert_check_nul(tr.name, 1, s->opts.expected_text, err)) == 0 &&
             (rc = convert_each_row(tr.name, s->opts.expected_text, truth_row, &tr, err)) == 0)
        rc = convert_each_row(name, text, sample_row, &sr, err);
    for (size_t i = 0; i < s->n; i++)
        cJSON_Delete(truth[i].result);
    free(truth);
    return rc;
}

/* ---- the rows of convert's table ---- */

static const struct evalplus_spec humanevalplus_spec = {"HumanEval/", "humaneval"};
static const struct evalplus_spec mbppplus_spec = {"Mbpp/", "mbpp"};

const struct convert_format convert_humanevalplus = {
    .name = "humanevalplus",
    .label = "HumanEval+ (plus_input, task ids HumanEval/)",
    .adopt = humanevalplus_adopt,
    .family = "an EvalPlus benchmark (HumanEval+ or MBPP+)",
    .read = evalplus_read,
    .references = evalplus_references,
    .samples = evalplus_samples,
    .job = evalplus_job,
    .spec = &humanevalplus_spec,
    .nonfinite = 1,
    .truth_first = 1,
};

const struct convert_format convert_mbppplus = {
    .name = "mbppplus",
    .label = "MBPP+ (plus_input, task ids Mbpp/)",
    .adopt = mbppplus_adopt,
    .family = "an EvalPlus benchmark (HumanEval+ or MBPP+)",
    .read = evalplus_read,
    .references = evalplus_references,
    .samples = evalplus_samples,
    .job = evalplus_job,
    .spec = &mbppplus_spec,
    .nonfinite = 1,
    .truth_first = 1,
};
