/* fmt_crux.c - CRUXEval (facebookresearch/cruxeval) and CRUXEval-X
 * (CRUXEVAL-X/cruxeval-x): code reasoning benchmarks whose rows are a
 * function and its input and output, graded for input prediction (the
 * model writes a call of f giving the output) or output prediction (it
 * writes the output).  Each row is adopted into a task for the mode the
 * user names (--mode), with the program its harness builds:
 *   CRUXEval:   CODE "\nassert " OUTPUT " == " GENERATION, exec'd in the
 *               harness's process with a 3 s limit;
 *   CRUXEval-X: the code cut at the language's test, then the row's
 *               input_reasoning or output_reasoning with its marker
 *               (four question marks; for input prediction the call
 *               around them, "candidate(" MARK ")" and the like)
 *               replaced by the answer, run as MultiPL-E's evaluator of
 *               that language runs a file.
 * Both read their samples in the harness's own shape. */
#include "eval/convert_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const modes[] = {"input", "output"};

/* The mode of opts: 0 input, 1 output, or an error naming the row. */
static int crux_mode(const struct convert_task *t, const char *bench, const char *file, size_t line,
                     const char *id, struct llmsb_err *err)
{
    const char *m = t->opts->mode;

    for (int i = 0; m && i < 2; i++)
        if (strcmp(m, modes[i]) == 0)
            return i;
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "%s:%zu: task \"%s\": a %s row is graded for input or output "
                         "prediction: give --mode input or --mode output%s%s%s",
                         file, line, id, bench, m ? " (got \"" : "", m ? m : "", m ? "\")" : "");
}

/* row[key] = value (a copy), the one such key; NULL when out of memory. */
static const char *set_str(cJSON *row, const char *key, const char *value)
{
    cJSON *v;

    cJSON_DeleteItemFromObjectCaseSensitive(row, key);
    v = cJSON_AddStringToObject(row, key, value);
    return v ? v->valuestring : NULL;
}

static int nomem(struct llmsb_err *err)
{
    return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
}

/* The UTF-8 of the characters Python's str.strip() takes away (str.isspace:
 * \t-\r, \x1c-\x1f, space, NEL, NBSP and the Unicode spaces). */
static const char *const py_spaces[] = {
    "\t",     "\n",     "\v",       "\f",       "\r",     "\x1c",   "\x1d",   "\x1e",
    "\x1f",   " ",      "\xc2\x85", "\xc2\xa0", "\u1680", "\u2000", "\u2001", "\u2002",
    "\u2003", "\u2004", "\u2005",   "\u2006",   "\u2007", "\u2008", "\u2009", "\u200a",
    "\u2028", "\u2029", "\u202f",   "\u205f",   "\u3000", NULL};

/* The length of the white space of Python's that [s, end) begins (at_end
 * 0) or ends (at_end 1) with, 0 when none. */
static size_t py_space(const char *s, const char *end, int at_end)
{
    for (int i = 0; py_spaces[i]; i++) {
        size_t n = strlen(py_spaces[i]);
        if ((size_t)(end - s) >= n && memcmp(at_end ? end - n : s, py_spaces[i], n) == 0)
            return n;
    }
    return 0;
}

/* s with every "[ANSWER]" taken out and white space stripped at both ends
 * as Python's str.strip() does, as both harnesses clean a generation; a
 * new string, caller frees. */
static char *clean_answer(const char *s)
{
    static const char tag[] = "[ANSWER]";
    char *out = malloc(strlen(s) + 1), *o = out, *end;
    size_t n;

    if (!out)
        return NULL;
    for (const char *p = s; *p;)
        if (strncmp(p, tag, sizeof(tag) - 1) == 0)
            p += sizeof(tag) - 1;
        else
            *o++ = *p++;
    *o = '\0';
    for (end = o; (n = py_space(out, end, 1)) > 0;)
        *(end -= n) = '\0';
    for (o = out; (n = py_space(o, end, 0)) > 0;)
        o += n;
    memmove(out, o, strlen(o) + 1);
    return out;
}

/* The whole text of CRUXEval's samples file, one JSON object; NULL with
 * err naming file:line. */
static cJSON *parse_object(const char *name, const char *text, struct llmsb_err *err)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, strlen(text), &end, 0);
    size_t line = 1;

    while (v && end && *end && strchr(" \t\r\n", *end))
        end++;
    if (cJSON_IsObject(v) && end && !*end)
        return v;
    cJSON_Delete(v);
    for (const char *p = text; end && p < end && *p; p++)
        line += *p == '\n';
    llmsb_err_set(err, LLMSB_ERR_INVALID,
                  "%s:%zu: not a JSON object of {\"sample_N\": [generations]} (CRUXEval's "
                  "generations.json)",
                  name, line);
    return NULL;
}

/* ---- CRUXEval: rows of {"id", "code", "input", "output"} ---------------- */

static int crux_adopt(struct convert_task *t, cJSON *row, const char *file, size_t line,
                      struct llmsb_err *err)
{
    const char *id = convert_str(row, "id"), *code = convert_str(row, "code");
    const char *in = convert_str(row, "input"), *out = convert_str(row, "output");
    char *tid = NULL, *gold = NULL;
    int mode, rc = 1;

    if (!id || !code || !in || !out || convert_str(row, "task_id"))
        return 0;
    if ((mode = crux_mode(t, "CRUXEval", file, line, id, err)) < 0)
        return mode;
    if (asprintf(&tid, "%s/%s", id, modes[mode]) < 0)
        tid = NULL;
    /* the reference: f on the row's input, or its output */
    if (mode == 0 ? asprintf(&gold, "f(%s)", in) < 0 : !(gold = strdup(out)))
        gold = NULL;
    if (!tid || !gold || !(t->id = set_str(row, "task_id", tid)) ||
        !set_str(row, "canonical_solution", gold))
        rc = nomem(err);
    t->lang = language_find("python");
    free(tid);
    free(gold);
    return rc;
}

/* evaluation/utils_general.py: f"{c}\nassert {o} == {g}" for both modes */
static int crux_build(const struct convert_task *t, const char *sol, struct buf *b)
{
    int rc = 0;

    rc |= buf_append_str(b, convert_str(t->row, "code"));
    rc |= buf_append_str(b, "\nassert ");
    rc |= buf_append_str(b, convert_str(t->row, "output"));
    rc |= buf_append_str(b, " == ");
    rc |= buf_append_str(b, sol);
    return rc;
}

/* check_correctness(program, 3): a 3 s limit, in the harness's process */
static void crux_fields(const struct convert_task *t, struct convert_job_fields *f)
{
    (void)t;
    f->timeout_s = 3;
}

/* meta: the mode and the row's id */
static int crux_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                    struct llmsb_err *err)
{
    (void)job, (void)at, (void)err;
    cJSON_AddStringToObject(meta, "mode", t->opts->mode);
    cJSON_AddStringToObject(meta, "id", convert_str(t->row, "id"));
    return 0;
}

/* What evaluate_score leaves out: an input prediction without a call of f,
 * an output prediction that names f(INPUT). */
static int crux_skipped(const struct convert_task *t, const char *gen)
{
    const char *in = convert_str(t->row, "input");
    char *call = NULL;
    int skip;

    if (strcmp(t->opts->mode, "input") == 0)
        return !strstr(gen, "f(");
    if (asprintf(&call, "f(%s)", in) < 0)
        return -1;
    skip = strstr(gen, call) != NULL;
    free(call);
    return skip;
}

/* A task whose every generation is left out is scored as all failed: the
 * job of such a generation fails, saying why. */
static int crux_build_skipped(const struct convert_task *t, const char *sol, struct buf *b)
{
    (void)t, (void)sol;
    return buf_append_str(b, "raise AssertionError(\"cruxeval: every generation of this task is "
                             "left out by the harness (input prediction without a call of f, "
                             "or output prediction naming f(INPUT)), so each counts as "
                             "failed\")\n");
}

static int crux_samples(struct convert_set *s, const char *name, const char *text,
                        struct convert_out *o, struct llmsb_err *err);

const struct convert_format convert_cruxeval = {
    .name = "cruxeval",
    .label = "CRUXEval (no code, input, output)",
    .adopt = crux_adopt,
    .program = crux_build,
    .fields = crux_fields,
    .job = crux_job,
    .samples = crux_samples,
};

static const struct convert_format cruxeval_skipped = {
    .name = "cruxeval",
    .program = crux_build_skipped,
    .fields = crux_fields,
    .job = crux_job,
};

/* The generations of task t (a JSON array of strings), as the harness
 * scores them: those it leaves out get no job, unless all are (then each
 * is a failing job), so pass@k counts what the harness counts. */
static int crux_task_samples(struct convert_task *t, const cJSON *gens, const char *name,
                             struct convert_out *o, struct buf *code, struct llmsb_err *err)
{
    struct convert_task all_skipped = *t;
    int kept = 0, rc = 0;
    const cJSON *g;

    cJSON_ArrayForEach(g, gens) {
        int skip = cJSON_IsString(g) ? crux_skipped(t, g->valuestring) : 0;
        if (!cJSON_IsString(g))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: \"%s\": generations must be strings",
                                 name, convert_str(t->row, "id"));
        if (skip < 0)
            return nomem(err);
        kept += !skip;
    }
    all_skipped.format = &cruxeval_skipped;
    cJSON_ArrayForEach(g, gens) {
        char *jid;
        int skip = crux_skipped(t, g->valuestring);
        if (!(jid = convert_sample_id(t)))
            return nomem(err);
        if (kept == 0)
            rc = convert_job_write(o, &all_skipped, jid, g->valuestring, code, name, err);
        else if (skip)
            o->skipped++;
        else
            rc = convert_job_write(o, t, jid, g->valuestring, code, name, err);
        free(jid);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The task of s named ID/MODE (ID a string or a number), or NULL with err
 * naming where in the samples file (at) and the id. */
static struct convert_task *find(struct convert_set *s, const char *lang, const cJSON *id,
                                 const char *at, struct llmsb_err *err)
{
    const char *mode = s->opts.mode;
    struct convert_task *t = NULL;
    char *tid = NULL, num[32];
    const char *ids = cJSON_GetStringValue(id);

    if (!ids && cJSON_IsNumber(id)) {
        snprintf(num, sizeof(num), "%.17g", id->valuedouble);
        ids = num;
    }
    if (!ids) {
        llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: the id must be a string or a number", at);
        return NULL;
    }
    if (asprintf(&tid, "%s%s%s/%s", lang ? lang : "", lang ? "/" : "", ids, mode ? mode : "") < 0) {
        nomem(err);
        return NULL;
    }
    if (!(t = convert_set_find(s, tid)))
        llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task \"%s\" is not in the dataset", at, tid);
    free(tid);
    return t;
}

/* CRUXEval's generations.json: {"sample_N": ["generation", ...], ...} */
static int crux_samples(struct convert_set *s, const char *name, const char *text,
                        struct convert_out *o, struct llmsb_err *err)
{
    cJSON *all = parse_object(name, text, err);
    const cJSON *gens;
    struct buf code;
    int rc = 0;

    if (!all)
        return -1;
    buf_init(&code, CONVERT_MAX_PROGRAM);
    cJSON_ArrayForEach(gens, all) {
        cJSON key = {.type = cJSON_String, .valuestring = gens->string};
        struct convert_task *t;
        char at[320];

        snprintf(at, sizeof(at), "%s: %s", name, gens->string);
        t = find(s, NULL, &key, at, err);
        if (!t) {
            rc = -1;
        } else if (!cJSON_IsArray(gens)) {
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                               "%s: \"%s\": not a JSON array of generations", name, gens->string);
        } else {
            rc = crux_task_samples(t, gens, name, o, &code, err);
        }
        if (rc != 0)
            break;
    }
    cJSON_Delete(all);
    buf_release(&code);
    return rc;
}

/* ---- CRUXEval-X: rows of {"id", "code", "input_reasoning",
 * "output_reasoning"}, one language a file ------------------------------- */

/* inference/untils.py: the language's name there, ours, where its test
 * begins (iterating_stops: the code is cut at the earliest that occurs),
 * what an input prediction replaces (input_map), and how MultiPL-E's
 * evaluator runs the file (its limit, C++'s flags; Python runs as
 * `python3 FILE`).  CRUXEval-X has no Python row in input_map or lang_map:
 * its Python rows mark the call as the others do and run as MultiPL-E's
 * Python evaluator runs a file. */
static const struct crux_x_lang {
    const char *name, *ours, *stops[3], *call;
    long timeout_s;
} x_langs[] = {
    {"py", "python", {"def check(candidate):"}, "candidate(?\?\?\?)", 15},
    {"js", "javascript", {"const assert"}, "candidate(?\?\?\?)", 5},
    {"java",
     "java",
     {"    }\n    public static void main", "    }\n\n    public static void main"},
     "f(?\?\?\?)",
     15},
    {"cpp", "cpp", {"}\nint main()", "}\n\nint main()"}, "candidate(?\?\?\?)", 15},
    {"go", "go_test", {"func TestF(t *testing.T)"}, "candidate(?\?\?\?)", 30},
    {"rb", "ruby", {"require 'test/unit'"}, "candidate.call(?\?\?\?)", 5},
    {"r", "r", {"test_humaneval"}, "candidate(?\?\?\?)", 5},
};
#define N_X_LANGS (sizeof(x_langs) / sizeof(x_langs[0]))

static const struct crux_x_lang *x_lang_named(const char *name, size_t len)
{
    for (size_t i = 0; i < N_X_LANGS; i++)
        if ((strlen(x_langs[i].name) == len && strncmp(x_langs[i].name, name, len) == 0) ||
            (strlen(x_langs[i].ours) == len && strncmp(x_langs[i].ours, name, len) == 0))
            return &x_langs[i];
    return NULL;
}

static const struct crux_x_lang *x_lang_of(const struct convert_task *t)
{
    return x_lang_named(t->lang->name, strlen(t->lang->name));
}

/* --lang, else the file's name: .../cpp.jsonl is C++ */
static const struct crux_x_lang *x_lang_find(const struct convert_task *t, const char *file,
                                             const char **name, size_t *len)
{
    const char *base = strrchr(file, '/'), *dot;

    if (t->opts->lang) {
        *name = t->opts->lang;
        *len = strlen(*name);
    } else {
        *name = base ? base + 1 : file;
        dot = strchr(*name, '.');
        *len = dot ? (size_t)(dot - *name) : strlen(*name);
    }
    return x_lang_named(*name, *len);
}

static const char *const marker = "?\?\?\?";

static const char *x_marker(const struct convert_task *t, const struct crux_x_lang *l)
{
    return strcmp(t->opts->mode, "input") == 0 ? l->call : marker;
}

/* Where the code's test begins: at the earliest of the language's stops
 * (infer_vllm.py splits at each in turn, keeping what is before), else
 * nowhere (the whole code is kept, as the harness keeps it). */
static size_t x_cut(const char *code, const struct crux_x_lang *l)
{
    size_t cut = strlen(code);

    for (int i = 0; l->stops[i]; i++) {
        const char *at = strstr(code, l->stops[i]);
        if (at && (size_t)(at - code) < cut)
            cut = (size_t)(at - code);
    }
    return cut;
}

/* The program around the answer, as infer_vllm.py has it: the code before
 * its test, then the reasoning, taken back out of the prompt's code block
 * ("\n" before, "\n\n" after, no "```" left). */
static int x_template(const char *code, const char *reasoning, const struct crux_x_lang *l,
                      struct buf *b)
{
    int rc = 0;

    rc |= buf_append_str(b, "\n");
    rc |= buf_append(b, code, x_cut(code, l));
    rc |= buf_append_str(b, reasoning);
    rc |= buf_append_str(b, "\n\n");
    if (rc == 0) /* prompt.split("```lang")[-1].replace("```", "") */
        for (char *q; (q = strstr(b->data, "```"));) {
            memmove(q, q + 3, strlen(q + 3) + 1);
            b->len -= 3;
        }
    return rc;
}

/* The row's own answer: what its code's test has where the reasoning has
 * the mark; NULL (no reference) when they differ around it. */
static char *x_gold(const char *code, const char *reasoning, const char *mark,
                    const struct crux_x_lang *l)
{
    const char *at = strstr(reasoning, mark), *test = code + x_cut(code, l);
    size_t before, after, n = strlen(test);

    if (!at)
        return NULL;
    before = (size_t)(at - reasoning);
    after = strlen(at + strlen(mark));
    if (before + after > n || strncmp(test, reasoning, before) != 0 ||
        strcmp(test + n - after, at + strlen(mark)) != 0)
        return NULL;
    return strndup(test + before, n - before - after);
}

static int x_adopt(struct convert_task *t, cJSON *row, const char *file, size_t line,
                   struct llmsb_err *err)
{
    const char *code = convert_str(row, "code"), *rin = convert_str(row, "input_reasoning");
    const char *rout = convert_str(row, "output_reasoning"), *name;
    const cJSON *idv = cJSON_GetObjectItemCaseSensitive(row, "id");
    const struct crux_x_lang *l;
    char ids[64], *tid = NULL, *gold = NULL;
    struct buf b;
    size_t len;
    int mode, rc = 1;

    if (!code || !rin || !rout || convert_str(row, "task_id"))
        return 0;
    if (cJSON_IsString(idv))
        snprintf(ids, sizeof(ids), "%s", idv->valuestring);
    else if (cJSON_IsNumber(idv))
        snprintf(ids, sizeof(ids), "%.17g", idv->valuedouble);
    else
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: a CRUXEval-X row's id must be a number or a string", file,
                             line);
    if ((mode = crux_mode(t, "CRUXEval-X", file, line, ids, err)) < 0)
        return mode;
    if (!(l = x_lang_find(t, file, &name, &len)))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: task \"%s\": a CRUXEval-X file's language is --lang or its "
                             "name's (py, js, java, cpp, go, rb, r: cpp.jsonl): \"%.*s\" is "
                             "none of them",
                             file, line, ids, (int)len, name);
    t->lang = language_find(l->ours);
    buf_init(&b, CONVERT_MAX_PROGRAM);
    if (asprintf(&tid, "%s/%s/%s", l->name, ids, modes[mode]) < 0)
        tid = NULL;
    gold = x_gold(code, mode == 0 ? rin : rout, mode == 0 ? l->call : marker, l);
    if (!tid || x_template(code, mode == 0 ? rin : rout, l, &b) != 0 ||
        !(t->id = set_str(row, "task_id", tid)) || !set_str(row, "prompt", b.data) ||
        (gold && !set_str(row, "canonical_solution", gold)))
        rc = nomem(err);
    buf_release(&b);
    free(tid);
    free(gold);
    return rc;
}

/* code.replace(MARK, answer): every place the mark is */
static int x_build(const struct convert_task *t, const char *sol, struct buf *b)
{
    const char *p = convert_str(t->row, "prompt"), *mark = x_marker(t, x_lang_of(t)), *at;
    int rc = 0;

    while ((at = strstr(p, mark))) {
        rc |= buf_append(b, p, (size_t)(at - p));
        rc |= buf_append_str(b, sol);
        p = at + strlen(mark);
    }
    rc |= buf_append_str(b, p);
    return rc;
}

/* MultiPL-E's evaluators: each its limit; C++ `g++ -std=c++17` (no -O);
 * Python `python3 FILE`; every other file as that language runs it */
static void x_fields(const struct convert_task *t, struct convert_job_fields *f)
{
    const struct crux_x_lang *l = x_lang_of(t);

    f->timeout_s = l->timeout_s;
    f->as_script = 1;
    if (strcmp(l->ours, "cpp") == 0) {
        f->compile_flags[0] = "-std=c++17";
        f->compile_flags[1] = "-O0";
    }
}

/* meta: the mode, the row's id and CRUXEval-X's name of its language */
static int x_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                 struct llmsb_err *err)
{
    (void)job, (void)at, (void)err;
    cJSON_AddStringToObject(meta, "mode", t->opts->mode);
    cJSON_AddItemToObject(meta, "id",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t->row, "id"), 0));
    cJSON_AddStringToObject(meta, "language", x_lang_of(t)->name);
    return 0;
}

struct x_samples {
    struct convert_set *set;
    const char *name;
    struct convert_out *out;
    struct buf code;
};

/* A row of CRUXEval-X's results (infer_results/MODEL/LANG_MODE.json) or
 * Codabench submission: {"id", "answer"} ("generation" for a raw one),
 * cleaned as the harness cleans a generation; a row without either is a
 * task left out (as Codabench takes it). */
static int x_sample(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct x_samples *e = ctx;
    const char *ans = convert_str(row, "answer");
    struct convert_task *t;
    char at[320], *jid = NULL, *clean = NULL;
    int rc = 0;

    snprintf(at, sizeof(at), "%s:%zu", e->name, line);
    if (!ans)
        ans = convert_str(row, "generation");
    if (!cJSON_GetObjectItemCaseSensitive(row, "id")) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: no id: not a row of CRUXEval-X's results ({\"id\", \"answer\"})",
                           at);
    } else if (!ans) {
        /* left out */
    } else if (!(t = find(e->set, x_lang_of(&e->set->tasks[0])->name,
                          cJSON_GetObjectItemCaseSensitive(row, "id"), at, err))) {
        rc = -1;
    } else if (!(clean = clean_answer(ans)) || !(jid = convert_sample_id(t))) {
        rc = nomem(err);
    } else {
        rc = convert_job_write(e->out, t, jid, clean, &e->code, at, err);
    }
    free(jid);
    free(clean);
    cJSON_Delete(row);
    return rc;
}

/* The results' rows: a JSON array (as CRUXEval-X writes them) or JSON
 * Lines. */
static int x_samples(struct convert_set *s, const char *name, const char *text,
                     struct convert_out *o, struct llmsb_err *err)
{
    struct x_samples e = {.set = s, .name = name, .out = o};
    int rc;

    buf_init(&e.code, CONVERT_MAX_PROGRAM);
    rc = convert_each_row(name, text, x_sample, &e, err);
    buf_release(&e.code);
    return rc;
}

const struct convert_format convert_cruxeval_x = {
    .name = "cruxeval-x",
    .label = "CRUXEval-X (no code, input_reasoning, output_reasoning)",
    .adopt = x_adopt,
    .program = x_build,
    .fields = x_fields,
    .job = x_job,
    .samples = x_samples,
};
