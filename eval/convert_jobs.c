/* convert_jobs.c - the jobs of a dataset read into tasks (see convert.h):
 * one JSON Lines job per program, of each task's reference solutions or of
 * a model's samples.  A format builds its program (prompt, solution, test
 * and what its harness adds) and may read samples of its own shape or write
 * its own jobs (the stdin/stdout benchmarks); what a job of any benchmark
 * has (its id, language, code, meta) and the line it is written as are
 * written here. */
#include "eval/convert.h"

#include <stdlib.h>
#include <string.h>

#include "eval/convert_int.h"

/* Python harnesses (human-eval, CodeGeeX, mxeval) exec the program inside
 * their own process, where leaving early is a failure: by SystemExit --
 * even sys.exit(0) in a completion, before the tests ran -- or by
 * os._exit(), which ends their child before it recorded a result.  And
 * __name__ is not "__main__" there.  So a Python job is this runner, and
 * the program is its file program.py.  os._exit and posix._exit are
 * replaced in the runner's own process only (a multiprocessing child, whose
 * pid differs, still leaves by the real one); the replacement writes why
 * and leaves by the real one with 1, so no except clause can catch it. */
static const char python_runner[] =
    "# llm-sandbox convert: runs program.py as the benchmark's harness does, in this\n"
    "# process: leaving by SystemExit or os._exit before the tests finish fails.\n"
    "import os, posix, runpy, sys\n"
    "def early_exit(code, pid=os.getpid(), getpid=os.getpid, real=os._exit, write=os.write):\n"
    "    if getpid() == pid:\n"
    "        write(2, (\"Error: the program left by os._exit(%r) before its tests \"\n"
    "                  \"finished\\n\" % (code,)).encode())\n"
    "        code = 1\n"
    "    real(code)\n"
    "os._exit = posix._exit = early_exit\n"
    "try:\n"
    "    runpy.run_path(\"program.py\", run_name=\"__sandbox_program__\")\n"
    "except SystemExit as e:\n"
    "    sys.stderr.write(\"Error: the program left by SystemExit(%r) before its tests \"\n"
    "                     \"finished\\n\" % (e.code,))\n"
    "    sys.exit(1)\n";

/* The program of task t with solution sol, as its benchmark builds it. */
static int program(const struct convert_task *t, const char *sol, struct buf *b)
{
    const char *prompt = convert_str(t->row, "prompt");
    const char *test = convert_str(t->row, t->format->test_key ? t->format->test_key : "test");
    int rc = 0;

    buf_reset(b);
    if (t->format->program)
        return t->format->program(t, sol, b);
    if (t->format->head)
        rc |= t->format->head(t, sol, b, &prompt);
    rc |= buf_append_str(b, prompt);
    rc |= buf_append_str(b, sol);
    rc |= buf_append_str(b, "\n");
    rc |= buf_append_str(b, test);
    if (t->format->tail)
        rc |= t->format->tail(t, b);
    return rc;
}

/* The longest extracted code kept in meta.extracted: a job's meta is at
 * most JOB_MAX_FIELD (64 KiB) of JSON; longer code is in the job's program
 * only (meta.extract.extracted_kept false). */
#define EXTRACT_META_MAX ((size_t)16 << 10)

/* meta.extract (what was taken, how) and meta.extracted (the code) */
static cJSON *extract_meta(const struct extract_result *r, const char *code, size_t len)
{
    cJSON *meta = cJSON_CreateObject(), *x = cJSON_AddObjectToObject(meta, "extract");
    int ok = x && cJSON_AddStringToObject(x, "mode", extract_mode_name(r->mode)) &&
             cJSON_AddStringToObject(x, "found", extract_found_name(r->found)) &&
             (!r->fence_lang[0] || cJSON_AddStringToObject(x, "fence_lang", r->fence_lang)) &&
             cJSON_AddNumberToObject(x, "fences", (double)r->fences) &&
             cJSON_AddNumberToObject(x, "raw_len", (double)r->raw_len) &&
             cJSON_AddNumberToObject(x, "code_len", (double)len) &&
             (!r->first_line || cJSON_AddNumberToObject(x, "first_line", (double)r->first_line)) &&
             (!r->last_line || cJSON_AddNumberToObject(x, "last_line", (double)r->last_line)) &&
             cJSON_AddBoolToObject(x, "extracted_kept", len <= EXTRACT_META_MAX) &&
             (len > EXTRACT_META_MAX || cJSON_AddStringToObject(meta, "extracted", code));

    if (!ok) {
        cJSON_Delete(meta);
        return NULL;
    }
    return meta;
}

int convert_extract(const struct convert_out *o, const char *id, const char *lang, const char *sol,
                    char **code, cJSON **meta, struct llmsb_err *err)
{
    struct extract_result r;
    struct buf b;
    size_t len;

    *code = NULL, *meta = NULL;
    if (o->extract == EXTRACT_OFF || !o->in_samples)
        return 0;
    buf_init(&b, CONVERT_MAX_PROGRAM);
    if (extract_code(o->extract, lang, sol, strlen(sol), &b, &r, err) != 0) {
        buf_release(&b);
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "job \"%s\": --extract: %s", id, err->msg);
    }
    len = b.len;
    if (!(*code = buf_steal(&b)) && !(*code = strdup("")))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
    if (!(*meta = extract_meta(&r, *code, len))) {
        free(*code);
        *code = NULL;
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
    }
    return 0;
}

int convert_job_meta(cJSON *job, cJSON *extra, struct llmsb_err *err)
{
    if (!extra)
        return 0;
    if (!cJSON_AddItemToObject(job, "meta", extra)) {
        cJSON_Delete(extra);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    return 0;
}

static void add_strings(cJSON *job, const char *key, const char *a, const char *b)
{
    cJSON *v = cJSON_AddArrayToObject(job, key);
    cJSON_AddItemToArray(v, cJSON_CreateString(a));
    if (b)
        cJSON_AddItemToArray(v, cJSON_CreateString(b));
}

/* sol up to the first of row's stop_tokens (all of it when none is in
 * it). Returns a new string; caller frees; NULL when out of memory. */
static char *stop_cut(const cJSON *row, const char *sol)
{
    const cJSON *tok;
    size_t len = strlen(sol);

    cJSON_ArrayForEach(tok, cJSON_GetObjectItemCaseSensitive(row, "stop_tokens")) {
        const char *at =
            cJSON_IsString(tok) && *tok->valuestring ? strstr(sol, tok->valuestring) : NULL;
        if (at && (size_t)(at - sol) < len)
            len = (size_t)(at - sol);
    }
    return strndup(sol, len);
}

cJSON *convert_job_new(const char *id, const char *lang, const char *code, const char *runner)
{
    cJSON *job = cJSON_CreateObject();

    if (!job)
        return NULL;
    cJSON_AddStringToObject(job, "id", id);
    cJSON_AddStringToObject(job, "lang", lang);
    if (runner) {
        cJSON_AddStringToObject(job, "code", runner);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(job, "files"), "program.py", code);
    } else {
        cJSON_AddStringToObject(job, "code", code);
    }
    return job;
}

int convert_job_end(struct convert_out *o, const struct convert_task *t, cJSON *job, const char *id,
                    const char *at, struct llmsb_err *err)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(job, "meta");
    char *text = NULL;
    int rc = 0;

    if (!meta)
        meta = cJSON_AddObjectToObject(job, "meta");
    cJSON_AddStringToObject(meta, "task_id", t->id);
    cJSON_AddStringToObject(meta, "benchmark", t->format->name);
    if (t->format->job && (rc = t->format->job(t, job, meta, at, err)) != 0)
        goto out;
    if (!(text = cJSON_PrintUnformatted(job)))
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
    else if (fputs(text, o->out) < 0 || fputc('\n', o->out) == EOF)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "%s: write failed", o->name);
    else
        o->jobs++;
out:
    free(text);
    cJSON_Delete(job);
    return rc;
}

/* The job of task t with solution sol as one line of o->out; code is the
 * scratch buffer for the program, at the row's place ("file:line") for the
 * format's errors. */
int convert_job_write(struct convert_out *o, const struct convert_task *t, const char *id,
                      const char *sol, struct buf *code, const char *at, struct llmsb_err *err)
{
    const char *lang = t->lang->name;
    struct convert_job_fields f = {0};
    cJSON *job = NULL, *xmeta = NULL;
    char *cut = NULL, *taken = NULL;
    int rc = 0;

    if ((rc = convert_extract(o, id, lang, sol, &taken, &xmeta, err)) != 0)
        goto out;
    if (taken)
        sol = taken;
    if (o->cut_at_stop_tokens && !(cut = stop_cut(t->row, sol))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
        goto out;
    }
    if (t->format->fields)
        t->format->fields(t, &f);
    if (program(t, cut ? cut : sol, code) != 0 ||
        !(job = convert_job_new(id, lang, code->data,
                                strcmp(lang, "python") == 0 && !f.as_script ? python_runner
                                                                            : NULL))) {
        rc =
            llmsb_err_set(err, LLMSB_ERR_NOMEM,
                          "job \"%s\": out of memory or its program over %zu bytes", id, code->cap);
        goto out;
    }
    if (f.runner) { /* the program becomes the runner's file */
        cJSON *files = cJSON_AddObjectToObject(job, "files");
        if (!files || !cJSON_AddStringToObject(files, f.runner_file, code->data) ||
            !cJSON_ReplaceItemInObjectCaseSensitive(job, "code", cJSON_CreateString(f.runner))) {
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
            goto out;
        }
    }
    if ((rc = convert_job_meta(job, xmeta, err)) != 0) {
        xmeta = NULL;
        goto out;
    }
    xmeta = NULL;
    cJSON_AddNumberToObject(job, "expect_exit", 0);
    if (f.expect_stdout)
        cJSON_AddStringToObject(job, "expect_stdout", f.expect_stdout);
    if (o->timeout_s > 0 || f.timeout_s > 0)
        cJSON_AddNumberToObject(job, "timeout",
                                (double)(o->timeout_s > 0 ? o->timeout_s : f.timeout_s));
    if (f.compile_flags[0])
        add_strings(job, "compile_flags", f.compile_flags[0], f.compile_flags[1]);
    /* CodeGeeX links OpenSSL where a program uses it (CPP/162: MD5) */
    if (strcmp(lang, "cpp") == 0 && strstr(code->data, "<openssl/"))
        add_strings(job, "link_flags", "-lcrypto", "-lssl");
    rc = convert_job_end(o, t, job, id, at, err);
    job = NULL;
out:
    free(cut);
    free(taken);
    cJSON_Delete(xmeta);
    cJSON_Delete(job);
    return rc;
}

char *convert_sample_id(struct convert_task *t)
{
    char *id = NULL;

    if (asprintf(&id, "%s#%d", t->id, t->samples++) < 0)
        return NULL;
    return id;
}

/* One job per completion of t (an array of strings), id = TASK#N. */
static int write_completions(struct convert_out *o, struct convert_task *t, const cJSON *list,
                             struct buf *code, const char *at, struct llmsb_err *err)
{
    const cJSON *c;
    int rc = 0;

    cJSON_ArrayForEach(c, list) {
        char *jid;
        if (!cJSON_IsString(c))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s: task \"%s\": completions[%d] is not a string", at, t->id,
                                 t->samples);
        if (!(jid = convert_sample_id(t)))
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        rc = convert_job_write(o, t, jid, c->valuestring, code, at, err);
        free(jid);
        if (rc != 0)
            break;
    }
    return rc;
}

/* The jobs of task t's own solutions: a harness's input file (MultiPL-E's)
 * carries its samples as a completions list; else its reference, else it
 * is counted unsolved. */
static int own_solutions(struct convert_task *t, struct convert_out *o, struct buf *code,
                         const char *at, struct llmsb_err *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(t->row, "completions");
    const char *sol =
        t->format->reference ? t->format->reference(t) : convert_str(t->row, "canonical_solution");

    if (cJSON_IsArray(list))
        return write_completions(o, t, list, code, at, err);
    if (!sol) {
        o->unsolved++;
        return 0;
    }
    return convert_job_write(o, t, t->id, sol, code, at, err);
}

int convert_write_references(struct convert_set *s, struct convert_out *o, struct llmsb_err *err)
{
    struct buf code;
    int rc = 0;

    buf_init(&code, CONVERT_MAX_PROGRAM);
    /* in the dataset's own order: its rows, not the sorted tasks */
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        struct convert_task *t = s->byrow[i];
        char at[320];

        snprintf(at, sizeof(at), "%s:%zu", s->name, t->line);
        rc = t->format->references ? t->format->references(s, t, o, at, err)
                                   : own_solutions(t, o, &code, at, err);
    }
    buf_release(&code);
    return rc;
}

/* A samples file of human-eval's rows being read. */
struct samples {
    struct convert_set *set;
    const char *name; /* the samples' */
    struct convert_out *out;
    struct buf code;
};

/* A sample that brings its own prompt or test (MultiPL-E's completions
 * files do) is graded on them by its harness: they must be the dataset's. */
static int same_program(const cJSON *row, const struct convert_task *t, const char *at,
                        const char *set, struct llmsb_err *err)
{
    const char *keys[] = {"prompt", t->format->test_key ? t->format->test_key : "test"};

    for (int i = 0; i < 2; i++) {
        const char *mine = convert_str(row, keys[i]), *theirs = convert_str(t->row, keys[i]);
        if (mine && theirs && strcmp(mine, theirs) != 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s: task \"%s\": its %s is not the one in %s (a completions "
                                 "file brings its own: convert it as the dataset)",
                                 at, t->id, keys[i], set);
    }
    return 0;
}

/* A sample: its job is TASK#N.  The row names its task by task_id (or
 * MultiPL-E's name), and has a completion (human-eval), a generation
 * (CodeGeeX) or a list of completions (MultiPL-E's completions files). */
static int add_sample(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct samples *e = ctx;
    const char *id = convert_str(row, "task_id"), *sol = convert_str(row, "completion");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(row, "completions");
    struct convert_task *t = NULL;
    char *jid = NULL, at[320];
    int rc;

    if (!id)
        id = convert_str(row, "name");
    if (!id)
        id = convert_str(row, "id");
    if (!sol)
        sol = convert_str(row, "generation");
    snprintf(at, sizeof(at), "%s:%zu", e->name, line);
    if (!id || (!sol && !cJSON_IsArray(list))) {
        rc = llmsb_err_set(
            err, LLMSB_ERR_INVALID,
            "%s: a sample needs task_id (or name, or id) and a completion (or generation) "
            "string or a completions list",
            at);
    } else if (!(t = convert_set_find(e->set, id))) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task \"%s\" is not in %s", at, id,
                           e->set->name);
    } else if ((rc = same_program(row, t, at, e->set->name, err)) != 0) {
        /* told */
    } else if (!sol) {
        rc = write_completions(e->out, t, list, &e->code, at, err);
    } else if (!(jid = convert_sample_id(t))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    } else {
        rc = convert_job_write(e->out, t, jid, sol, &e->code, at, err);
    }
    free(jid);
    cJSON_Delete(row);
    return rc;
}

int convert_write_samples(struct convert_set *s, const char *name, const char *text,
                          struct convert_out *o, struct llmsb_err *err)
{
    struct samples e = {.set = s, .name = name, .out = o};
    int rc;

    if (convert_check_nul(name, 1, text, err) != 0)
        return LLMSB_ERR_INVALID;
    o->in_samples = 1;
    if (s->n > 0 && s->tasks[0].format->samples) {
        rc = s->tasks[0].format->samples(s, name, text, o, err);
    } else {
        buf_init(&e.code, CONVERT_MAX_PROGRAM);
        rc = convert_each_row(name, text, add_sample, &e, err);
        buf_release(&e.code);
    }
    o->in_samples = 0;
    return rc;
}

int convert_write(struct convert_set *s, const char *samples_name, const char *samples_text,
                  struct convert_out *o, struct llmsb_err *err)
{
    if (samples_text)
        return convert_write_samples(s, samples_name, samples_text, o, err);
    return convert_write_references(s, o, err);
}
