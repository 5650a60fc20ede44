/* convert.c - a benchmark's dataset read into tasks (see convert.h): its
 * rows (JSON Lines, a JSON array of objects, or pretty-printed objects one
 * after another), each adopted or claimed by one of the formats of the one
 * table below, which says what benchmark a row is from and reads what the
 * row gives.  The jobs are written by convert_jobs.c. */
#include "eval/convert.h"

#include <stdlib.h>
#include <string.h>

#include "eval/convert_int.h"

/* The one table of formats, in the order a row is tried.  The stdin/stdout
 * benchmarks (CodeContests, APPS, LiveCodeBench) are one per file: their
 * marks are looked for in a file's first row before anything else, and in
 * its other rows only when the first had one.  MultiPL-E's rows (name,
 * language, tests) and the open format's (an id, no task_id) come next;
 * then an explicit "language" field wins over a task id prefix, which wins
 * over the entry_point every HumanEval-like row has.  CRUXEval's and
 * CRUXEval-X's rows are adopted before any claim (they have no field to be
 * claimed by); formats without a claim are not named when no format claims
 * a row.  MBPP's and BigCodeBench's rows are adopted too, one benchmark
 * per file, by their own fields (MBPP's task_id is a number). */
/* clang-format off */
const struct convert_format *const convert_formats[] = {&convert_codecontests,
                                                        &convert_apps,
                                                        &convert_livecodebench,
                                                        &convert_mbpp,
                                                        &convert_mbpp_sanitized,
                                                        &convert_bigcodebench,
                                                        &convert_multiple,
                                                        &convert_open,
                                                        &convert_mbxp,
                                                        &convert_humaneval_x,
                                                        &convert_humaneval,
                                                        &convert_cruxeval,
                                                        &convert_cruxeval_x,
                                                        NULL};
/* clang-format on */

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
    size_t nf = 0, nc = 0, k = 0, len = 0;

    for (; convert_formats[nf]; nf++) {
        const struct convert_format *f = convert_formats[nf];
        int rc = f->claim ? f->claim(t, file, line, err) : 0;
        if (rc != 0) {
            t->format = f;
            return rc < 0 ? rc : check_task(t, file, line, err);
        }
        nc += f->claim != NULL;
    }
    /* those that claim rows, named from the most common mark to the most
     * specific */
    for (size_t i = nf; i-- > 0 && len < sizeof(labels);) {
        if (!convert_formats[i]->claim)
            continue;
        k++;
        len += (size_t)snprintf(labels + len, sizeof(labels) - len, "%s%s",
                                k == 1    ? ""
                                : k == nc ? " or "
                                          : ", ",
                                convert_formats[i]->label);
    }
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: task \"%s\": not a row of %s", file, line,
                         t->id, labels);
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

/* Offers row to the formats of a family (family 1) or of none (0) that
 * take rows by their shape (adopt) or by a field (mark), in the table's
 * order: 1 with t->format set when one takes it, 0 when none does, or an
 * error. */
static int adopt(const struct convert_set *s, struct convert_task *t, cJSON *row, size_t line,
                 int family, struct llmsb_err *err)
{
    for (size_t i = 0; convert_formats[i]; i++) {
        const struct convert_format *f = convert_formats[i];
        int rc;

        if ((!f->adopt && !f->mark) || (f->family != NULL) != family)
            continue;
        rc = f->adopt ? f->adopt(t, row, s->name, line, err)
                      : cJSON_GetObjectItemCaseSensitive(row, f->mark) != NULL;
        if (rc > 0)
            t->format = f;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A row of a file of one benchmark (s->whole, its first row's): a row of
 * that benchmark, then what it gives read. */
static int add_family_row(struct convert_set *s, struct convert_task *t, cJSON *row, size_t line,
                          struct llmsb_err *err)
{
    const struct convert_format *f = s->whole;
    int rc = t->format ? 1 : adopt(s, t, row, line, 1, err);

    if (rc < 0)
        return rc;
    if (t->format != f)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: %s%s, where the first row is %s's (one benchmark per file)",
                             s->name, line, rc ? "a row of another benchmark" : "not a row of ",
                             rc ? "" : f->family, f->name);
    if (f->read && (rc = f->read(t, s->name, err)) != 0)
        return rc;
    s->untested += t->untested != 0;
    return 0;
}

static int add_task(cJSON *row, size_t line, void *ctx, struct llmsb_err *err)
{
    struct convert_set *s = ctx;
    struct convert_task *t;
    int rc;

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
    /* the first row says whether the file is of one benchmark's family */
    if (t->order == 0 && (rc = adopt(s, t, row, line, 1, err)) != 0) {
        if (rc < 0)
            return rc;
        s->whole = t->format;
    }
    if (s->whole)
        return add_family_row(s, t, row, line, err);
    if ((rc = adopt(s, t, row, line, 0, err)) != 0)
        return rc < 0 ? rc : 0;
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
    if (!(s->byrow = calloc(s->n ? s->n : 1, sizeof(*s->byrow)))) {
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < s->n; i++)
        s->byrow[s->tasks[i].order] = &s->tasks[i];
    return s;
fail:
    convert_set_free(s);
    return NULL;
}

void convert_set_free(struct convert_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->tasks[i].own_id);
        free(s->tasks[i].fn_name);
        cJSON_Delete(s->tasks[i].cases);
        cJSON_Delete(s->rows[i]);
    }
    free(s->byrow);
    free(s->rows);
    free(s->tasks);
    free(s->name);
    free(s);
}

size_t convert_set_size(const struct convert_set *s)
{
    return s->n;
}

void convert_set_info(const struct convert_set *s, struct convert_set_info *info)
{
    info->benchmark = s->whole ? s->whole->name : NULL;
    info->lacks =
        s->whole && s->whole->lacks ? s->whole->lacks : "canonical_solution nor completions";
    info->tasks = s->n;
    info->untested = s->untested;
}
