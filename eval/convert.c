/* convert.c - benchmark rows and samples to jobs (see convert.h): reads a
 * dataset's rows into tasks, each recognised by one of the formats of
 * formats.c, and writes one JSON Lines job per program.  The format builds
 * the program; everything a job of any benchmark has is written here. */
#include "eval/convert.h"

#include <stdlib.h>
#include <string.h>

#include "eval/convert_int.h"

/* The largest program put together from one row and one solution. */
#define CONVERT_MAX_PROGRAM ((size_t)1 << 30)

/* Python harnesses (human-eval, CodeGeeX, mxeval) exec the program inside
 * their own process, where leaving early by SystemExit -- even sys.exit(0)
 * in a completion, before the tests ran -- is a failure, and where
 * __name__ is not "__main__".  So a Python job is this runner, and the
 * program is its file program.py. */
static const char python_runner[] =
    "# llm-sandbox convert: runs program.py as the benchmark's harness does, in this\n"
    "# process: leaving by SystemExit before the tests finish fails, even with 0.\n"
    "import runpy, sys\n"
    "try:\n"
    "    runpy.run_path(\"program.py\", run_name=\"__sandbox_program__\")\n"
    "except SystemExit as e:\n"
    "    sys.stderr.write(\"Error: the program left by SystemExit(%r) before its tests \"\n"
    "                     \"finished\\n\" % (e.code,))\n"
    "    sys.exit(1)\n";

struct convert_set {
    char *name;
    struct convert_opts opts;   /* borrowed strings */
    cJSON **rows;               /* in the dataset's order; owned */
    struct convert_task *tasks; /* sorted by id once read */
    size_t n, cap;
};

/* Which benchmark a row is from, and its language. */
static int classify(struct convert_task *t, const char *file, size_t line, struct llmsb_err *err)
{
    char labels[512] = "";
    size_t nf = 0, len = 0;

    for (; convert_formats[nf]; nf++) {
        int rc = convert_formats[nf]->claim ? convert_formats[nf]->claim(t, file, line, err) : 0;
        if (rc != 0) {
            t->format = convert_formats[nf];
            return rc < 0 ? rc : 0;
        }
    }
    /* named from the most common mark to the most specific; the formats
     * that adopt rows of another shape come last and are not named */
    while (nf > 0 && !convert_formats[nf - 1]->claim)
        nf--;
    for (size_t i = nf; i-- > 0 && len < sizeof(labels);)
        len += (size_t)snprintf(labels + len, sizeof(labels) - len, "%s%s",
                                i + 1 == nf ? ""
                                : i == 0    ? " or "
                                            : ", ",
                                convert_formats[i]->label);
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\": not a row of %s", file, line,
                         t->id, labels);
}

/* The program of task t with solution sol, as its benchmark builds it. */
static int program(const struct convert_task *t, const char *sol, struct buf *b)
{
    const char *prompt = convert_str(t->row, "prompt"), *test = convert_str(t->row, "test");
    int rc = 0;

    buf_reset(b);
    if (t->format->build)
        return t->format->build(t, sol, b);
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

static void add_strings(cJSON *job, const char *key, const char *a, const char *b)
{
    cJSON *v = cJSON_AddArrayToObject(job, key);
    cJSON_AddItemToArray(v, cJSON_CreateString(a));
    if (b)
        cJSON_AddItemToArray(v, cJSON_CreateString(b));
}

/* The job of task t with solution sol as one line of o->out; code is the
 * scratch buffer for the program. */
int convert_job_write(struct convert_out *o, const struct convert_task *t, const char *id,
                      const char *sol, struct buf *code, struct llmsb_err *err)
{
    const char *lang = t->lang->name;
    struct convert_job_fields f = {0};
    cJSON *job = cJSON_CreateObject(), *meta;
    char *text = NULL;
    int rc = 0;

    if (!job || program(t, sol, code) != 0) {
        rc =
            llmsb_err_set(err, LLMSB_ERR_NOMEM,
                          "job \"%s\": out of memory or its program over %zu bytes", id, code->cap);
        goto out;
    }
    if (t->format->fields)
        t->format->fields(t, &f);
    cJSON_AddStringToObject(job, "id", id);
    cJSON_AddStringToObject(job, "lang", lang);
    if (strcmp(lang, "python") == 0 && !f.plain) {
        cJSON_AddStringToObject(job, "code", python_runner);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(job, "files"), "program.py", code->data);
    } else {
        cJSON_AddStringToObject(job, "code", code->data);
    }
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
    meta = cJSON_AddObjectToObject(job, "meta");
    cJSON_AddStringToObject(meta, "task_id", t->id);
    cJSON_AddStringToObject(meta, "benchmark", t->format->name);
    if (t->format->meta)
        t->format->meta(t, meta);
    if (!(text = cJSON_PrintUnformatted(job))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
        goto out;
    }
    if (fputs(text, o->out) < 0 || fputc('\n', o->out) == EOF) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "%s: write failed", o->name);
        goto out;
    }
    o->jobs++;
out:
    free(text);
    cJSON_Delete(job);
    return rc;
}

/* One JSON object per non-blank line of text: calls fn(obj, line, ctx),
 * which consumes obj; a line that is not an object is an error naming it. */
static int each_row(const char *name, const char *text,
                    int (*fn)(cJSON *, size_t, void *, struct llmsb_err *), void *ctx,
                    struct llmsb_err *err)
{
    size_t line = 0;
    int rc = 0;

    for (const char *p = text, *nl; rc == 0 && *p; p = nl ? nl + 1 : p + strlen(p)) {
        const char *end = NULL;
        size_t len;
        cJSON *row;

        nl = strchr(p, '\n');
        len = nl ? (size_t)(nl - p) : strlen(p);
        line++;
        if (strspn(p, " \t\r") >= len)
            continue;
        row = cJSON_ParseWithLengthOpts(p, len, &end, 0);
        while (row && end < p + len && strchr(" \t\r", *end))
            end++;
        if (!cJSON_IsObject(row) || end != p + len) {
            cJSON_Delete(row);
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: not a JSON object", name, line);
        }
        rc = fn(row, line, ctx, err);
    }
    return rc;
}

static int add_task(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct convert_set *s = ctx;
    struct convert_task *t;

    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        struct convert_task *nt = realloc(s->tasks, cap * sizeof(*nt));
        cJSON **nr = nt ? realloc(s->rows, cap * sizeof(*nr)) : NULL;
        if (nt)
            s->tasks = nt;
        if (!nr) {
            cJSON_Delete(row);
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        }
        s->rows = nr;
        s->cap = cap;
    }
    s->rows[s->n] = row;
    t = &s->tasks[s->n++];
    memset(t, 0, sizeof(*t));
    t->row = row;
    t->opts = &s->opts;
    for (size_t i = 0; convert_formats[i]; i++) {
        int rc =
            convert_formats[i]->adopt ? convert_formats[i]->adopt(t, row, s->name, line, err) : 0;
        if (rc < 0)
            return rc;
        if (rc > 0) {
            t->format = convert_formats[i];
            return 0;
        }
    }
    t->id = convert_str(row, "task_id");
    if (!t->id || !*t->id)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: no task_id", s->name, line);
    if (!convert_str(row, "prompt") || !convert_str(row, "test"))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: task \"%s\": prompt and test must be strings", s->name, line,
                             t->id);
    return classify(t, s->name, line, err);
}

static int cmp_task(const void *a, const void *b)
{
    return strcmp(((const struct convert_task *)a)->id, ((const struct convert_task *)b)->id);
}

struct convert_task *convert_set_find(struct convert_set *s, const char *id)
{
    struct convert_task key = {.id = id};
    if (s->n == 0)
        return NULL;
    return bsearch(&key, s->tasks, s->n, sizeof(key), cmp_task);
}

struct convert_set *convert_set_read(const char *name, const char *text, struct llmsb_err *err)
{
    return convert_set_read_opts(name, text, NULL, err);
}

struct convert_set *convert_set_read_opts(const char *name, const char *text,
                                          const struct convert_opts *opts, struct llmsb_err *err)
{
    struct convert_set *s = calloc(1, sizeof(*s));

    if (!s || !(s->name = strdup(name))) {
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (opts)
        s->opts = *opts;
    if (each_row(name, text, add_task, s, err) != 0)
        goto fail;
    if (s->n > 0) /* an empty dataset has no tasks array to sort */
        qsort(s->tasks, s->n, sizeof(*s->tasks), cmp_task);
    for (size_t i = 0; i + 1 < s->n; i++)
        if (strcmp(s->tasks[i].id, s->tasks[i + 1].id) == 0) {
            llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: task \"%s\" is there twice", name,
                          s->tasks[i].id);
            goto fail;
        }
    return s;
fail:
    convert_set_free(s);
    return NULL;
}

void convert_set_free(struct convert_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        cJSON_Delete(s->rows[i]);
    free(s->rows);
    free(s->tasks);
    free(s->name);
    free(s);
}

struct convert_task *convert_set_task(struct convert_set *s, size_t i)
{
    return &s->tasks[i];
}

const struct convert_opts *convert_set_opts(const struct convert_set *s)
{
    return &s->opts;
}

size_t convert_set_size(const struct convert_set *s)
{
    return s->n;
}

int convert_write_references(struct convert_set *s, struct convert_out *o, size_t *unsolved,
                             struct llmsb_err *err)
{
    struct buf code;
    int rc = 0;

    buf_init(&code, CONVERT_MAX_PROGRAM);
    /* in the dataset's own order: its rows, not the sorted tasks */
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        struct convert_task *t = convert_set_find(s, convert_str(s->rows[i], "task_id"));
        const char *sol = convert_str(t->row, "canonical_solution");
        if (!sol)
            ++*unsolved;
        else
            rc = convert_job_write(o, t, t->id, sol, &code, err);
    }
    buf_release(&code);
    return rc;
}

struct samples {
    struct convert_set *set;
    const char *name; /* the samples' */
    struct convert_out *out;
    struct buf code;
};

/* A sample: its job is TASK#N. */
static int add_sample(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct samples *e = ctx;
    const char *id = convert_str(row, "task_id"), *sol = convert_str(row, "completion");
    struct convert_task *t = NULL;
    char *jid = NULL;
    int rc;

    if (!sol)
        sol = convert_str(row, "generation");
    if (!id || !sol) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s:%zu: a sample needs task_id and completion (or generation) strings",
                           e->name, line);
    } else if (!(t = convert_set_find(e->set, id))) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\" is not in %s", e->name,
                           line, id, e->set->name);
    } else if (asprintf(&jid, "%s#%d", id, t->samples++) < 0) {
        jid = NULL;
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    } else {
        rc = convert_job_write(e->out, t, jid, sol, &e->code, err);
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

    if (s->n > 0 && s->tasks[0].format->samples)
        return s->tasks[0].format->samples(s, name, text, o, err);
    buf_init(&e.code, CONVERT_MAX_PROGRAM);
    rc = each_row(name, text, add_sample, &e, err);
    buf_release(&e.code);
    return rc;
}
