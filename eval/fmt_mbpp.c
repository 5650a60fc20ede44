/* fmt_mbpp.c - MBPP (google-research/google-research mbpp/): the original
 * mbpp.jsonl (text, code, task_id, test_setup_code, test_list,
 * challenge_test_list) and the hand-verified sanitized-mbpp.json
 * (source_file, task_id, prompt, code, test_imports, test_list), two rows
 * of convert's table.  Their task_id is a number, so no claim by a string
 * field takes them: each is adopted by its own fields, one split per file.
 * The program is what the harnesses run (bigcode-evaluation-harness's
 * tasks/mbpp.py: the solution, "\n", the asserts of test_list, executed in
 * the harness's process with a 3 s limit), with the original's
 * test_setup_code between them and the sanitized split's test_imports
 * before them (docs/eval.md, "MBPP"). */
#include "eval/convert_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bigcode-evaluation-harness's code_eval: timeout=3.0 a program */
#define MBPP_TIMEOUT_S 3

/* What marks a row of each split, besides a number task_id and test_list. */
struct mbpp_split {
    const char *key;   /* a string field only this split has */
    const char *extra; /* its other list of code lines: test_imports, or NULL */
};

static const struct mbpp_split original = {.key = "text", .extra = NULL};
static const struct mbpp_split sanitized = {.key = "prompt", .extra = "test_imports"};

/* 0 when row[key] is an array of strings, else an error naming it. */
static int check_lines(const cJSON *row, const char *key, const char *id, const char *file,
                       size_t line, struct llmsb_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key), *s;

    if (!cJSON_IsArray(v))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: MBPP task %s: %s must be a list of strings (lines of code)",
                             file, line, id, key);
    cJSON_ArrayForEach(s, v) {
        if (!cJSON_IsString(s))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: MBPP task %s: %s has an element that is not a string",
                                 file, line, id, key);
    }
    return 0;
}

/* The decimal text of a task_id that is a whole number in 0..10^9, else
 * "" (into buf of size n). */
static const char *number_id(const cJSON *v, char *buf, size_t n)
{
    buf[0] = '\0';
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1e9 &&
        floor(v->valuedouble) == v->valuedouble)
        snprintf(buf, n, "%.0f", v->valuedouble);
    return buf;
}

/* A row of split sp: a number task_id and sp's key; its test_list (and
 * test_imports) must then be lists of strings and its code a string. */
static int adopt_split(const struct mbpp_split *sp, struct convert_task *t, cJSON *row,
                       const char *file, size_t line, struct llmsb_err *err)
{
    char id[32];

    if (!*number_id(cJSON_GetObjectItemCaseSensitive(row, "task_id"), id, sizeof(id)) ||
        !convert_str(row, sp->key))
        return 0;
    if (check_lines(row, "test_list", id, file, line, err) != 0 ||
        (sp->extra && check_lines(row, sp->extra, id, file, line, err) != 0))
        return -1;
    if (!convert_str(row, "code"))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: MBPP task %s: code (its reference solution) must be a string",
                             file, line, id);
    if (!(t->own_id = strdup(id)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    t->id = t->own_id;
    t->lang = language_find("python");
    return 1;
}

static int original_adopt(struct convert_task *t, cJSON *row, const char *file, size_t line,
                          struct llmsb_err *err)
{
    return adopt_split(&original, t, row, file, line, err);
}

static int sanitized_adopt(struct convert_task *t, cJSON *row, const char *file, size_t line,
                           struct llmsb_err *err)
{
    return adopt_split(&sanitized, t, row, file, line, err);
}

/* Each string of row[key], a line each. */
static int append_lines(struct buf *b, const cJSON *row, const char *key)
{
    const cJSON *s;
    int rc = 0;

    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(row, key)) {
        rc |= buf_append_str(b, s->valuestring);
        rc |= buf_append_str(b, "\n");
    }
    return rc;
}

/* test_imports (sanitized), the solution, test_setup_code (original), the
 * asserts of test_list. */
static int mbpp_program(const struct convert_task *t, const char *sol, struct buf *b)
{
    const struct mbpp_split *sp = t->format->spec;
    const char *setup = convert_str(t->row, "test_setup_code");
    int rc = 0;

    if (sp->extra)
        rc |= append_lines(b, t->row, sp->extra);
    rc |= buf_append_str(b, sol);
    rc |= buf_append_str(b, "\n");
    if (setup && *setup) {
        rc |= buf_append_str(b, setup);
        rc |= buf_append_str(b, "\n");
    }
    rc |= append_lines(b, t->row, "test_list");
    return rc;
}

static const char *mbpp_reference(const struct convert_task *t)
{
    return convert_str(t->row, "code");
}

static void mbpp_fields(const struct convert_task *t, struct convert_job_fields *f)
{
    (void)t;
    f->timeout_s = MBPP_TIMEOUT_S;
}

/* ---- samples: {"task_id": N or "N", "completion" or "generation"}, or
 * {"task_id", "completions": [...]} ---- */

struct mbpp_samples {
    struct convert_set *set;
    const char *name;
    struct convert_out *out;
    struct buf code;
};

static int write_one(struct mbpp_samples *e, struct convert_task *t, const char *sol,
                     const char *at, struct llmsb_err *err)
{
    char *jid = convert_sample_id(t);
    int rc;

    if (!jid)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    rc = convert_job_write(e->out, t, jid, sol, &e->code, at, err);
    free(jid);
    return rc;
}

static int mbpp_sample(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct mbpp_samples *e = ctx;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, "task_id");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(row, "completions"), *c;
    const char *sol = convert_str(row, "completion");
    struct convert_task *t = NULL;
    char num[32], at[320];
    const char *id = cJSON_IsString(v) ? v->valuestring : number_id(v, num, sizeof(num));
    int rc = 0, k = 0;

    snprintf(at, sizeof(at), "%s:%zu", e->name, line);
    if (!sol)
        sol = convert_str(row, "generation");
    if (!*id || (!sol && !cJSON_IsArray(list)))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: an MBPP sample needs task_id (a number, or its decimal text) and "
                           "a completion (or generation) string or a completions list",
                           at);
    else if (!(t = convert_set_find(e->set, id)))
        rc =
            llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task %s is not in %s", at, id, e->set->name);
    else if (sol)
        rc = write_one(e, t, sol, at, err);
    else
        cJSON_ArrayForEach(c, list) {
            if (rc != 0)
                break;
            if (!cJSON_IsString(c))
                rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                                   "%s: task %s: completions[%d] is not a string", at, id, k);
            else
                rc = write_one(e, t, c->valuestring, at, err);
            k++;
        }
    cJSON_Delete(row);
    return rc;
}

static int mbpp_samples(struct convert_set *s, const char *name, const char *text,
                        struct convert_out *o, struct llmsb_err *err)
{
    struct mbpp_samples e = {.set = s, .name = name, .out = o};
    int rc;

    buf_init(&e.code, CONVERT_MAX_PROGRAM);
    rc = convert_each_row(name, text, mbpp_sample, &e, err);
    buf_release(&e.code);
    return rc;
}

const struct convert_format convert_mbpp = {
    .name = "mbpp",
    .label = "MBPP (a number task_id, text, code, test_list)",
    .adopt = original_adopt,
    .family = "an MBPP split",
    .program = mbpp_program,
    .reference = mbpp_reference,
    .fields = mbpp_fields,
    .samples = mbpp_samples,
    .spec = &original,
    .lacks = "code",
};

const struct convert_format convert_mbpp_sanitized = {
    .name = "mbpp-sanitized",
    .label = "MBPP sanitized (a number task_id, prompt, code, test_imports, test_list)",
    .adopt = sanitized_adopt,
    .family = "an MBPP split",
    .program = mbpp_program,
    .reference = mbpp_reference,
    .fields = mbpp_fields,
    .samples = mbpp_samples,
    .spec = &sanitized,
    .lacks = "code",
};
