/* convert.c - a benchmark's dataset read into tasks (see convert.h): its
 * rows (JSON Lines, a JSON array of objects, or pretty-printed objects one
 * after another), each adopted or claimed by one of the formats of the one
 * table below, which says what benchmark a row is from and reads what the
 * row gives.  The jobs are written by convert_jobs.c. */
#include "eval/convert.h"

#include <stdlib.h>
#include <string.h>

#include <archive.h>

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
const struct convert_format *const convert_formats[] = {&convert_humanevalplus,
                                                        &convert_mbppplus,
                                                        &convert_codecontests,
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

static const cJSON *nonfinite_field(const cJSON *row);
static const cJSON *nonfinite_find(const cJSON *v);

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

/* What a row is given to: fn, or with its text fn_text. */
struct each_row_fn {
    int (*fn)(cJSON *, size_t, void *, struct llmsb_err *);
    int (*fn_text)(cJSON *, size_t, const char *, size_t, void *, struct llmsb_err *);
};

static int each_row(const char *name, const char *text, const struct each_row_fn *f, void *ctx,
                    struct llmsb_err *err);

int convert_each_row(const char *name, const char *text,
                     int (*fn)(cJSON *, size_t, void *, struct llmsb_err *), void *ctx,
                     struct llmsb_err *err)
{
    struct each_row_fn f = {.fn = fn};
    return each_row(name, text, &f, ctx, err);
}

static int each_row(const char *name, const char *text, const struct each_row_fn *f, void *ctx,
                    struct llmsb_err *err)
{
    const char *p = text, *end = text + strlen(text);
    size_t line = 1, index = 0;
    int in_array = 0, rc = 0;

    if ((unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s: gzip-compressed data where JSON text was expected (convert "
                             "unpacks one layer of gzip: is it compressed twice?)",
                             name);
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
        rc =
            f->fn ? f->fn(row, at, ctx, err) : f->fn_text(row, at, p, (size_t)(next - p), ctx, err);
        p = next, index += in_array;
    }
    if (rc == 0 && in_array)
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: the array has no closing ']'", name,
                           line);
    return rc;
}

/* The fields of a row whose NULs a format carries as the row's text. */
static const char *const evalplus_inputs[] = {"base_input", "plus_input", NULL};

static int check_nul(const char *name, size_t line, const char *json, const char *const *allow,
                     struct llmsb_err *err);

int convert_check_nul(const char *name, size_t line, const char *json, struct llmsb_err *err)
{
    return check_nul(name, line, json, NULL, err);
}

/* 1 when the row's field (the key at depth 1, *key of len) is in allow */
static int nul_allowed(const char *const *allow, const char *key, size_t len)
{
    for (int i = 0; allow && key && allow[i]; i++)
        if (strlen(allow[i]) == len && strncmp(key, allow[i], len) == 0)
            return 1;
    return 0;
}

static int check_nul(const char *name, size_t line, const char *json, const char *const *allow,
                     struct llmsb_err *err)
{
    /* the key each open object was last given, by depth (deeper: not named) */
    const char *key[32] = {0}, *row_key = NULL;
    size_t keylen[32] = {0}, row_keylen = 0;
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
        /* the row's field: the key of the outermost object (a row, also
         * in an array of rows) */
        for (int d = 1; d < depth && d < 31 && in_array[d]; d++)
            row_key = key[d + 1], row_keylen = keylen[d + 1];
        if (depth >= 1 && !in_array[1])
            row_key = key[1], row_keylen = keylen[1];
        for (p = s; *p && *p != '"'; p++) {
            if (*p != '\\')
                continue;
            if (strncmp(p + 1, "u0000", 5) == 0 && !nul_allowed(allow, row_key, row_keylen)) {
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

static int add_task(cJSON *row, size_t line, const char *text, size_t text_len, void *ctx,
                    struct llmsb_err *err)
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
    t->text = text; /* while it is read */
    t->text_len = text_len;
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
    char *marked = NULL;
    size_t nonfinite = 0;
    struct each_row_fn each = {.fn_text = add_task};

    if (!s || !(s->name = strdup(name))) {
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (opts)
        s->opts = *opts;
    /* EvalPlus's inputs may hold NUL characters (MBPP+): they reach its
     * jobs as the row's own text, never as a C string */
    if (check_nul(name, 1, text, evalplus_inputs, err) != 0)
        goto fail;
    /* Python's json writes NaN and Infinity (MBPP+'s inputs have them):
     * read as marked strings, kept only by a format that takes them */
    if (!(marked = convert_nonfinite_mark(text, &nonfinite))) {
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (nonfinite && strchr(text, CONVERT_NONFINITE_MARK)) {
        llmsb_err_set(err, LLMSB_ERR_INVALID,
                      "%s: holds NaN or Infinity and a byte 0x01, which convert uses to mark "
                      "them: it cannot read both",
                      name);
        goto fail;
    }
    if (nonfinite && strstr(text, "\\u0001")) {
        llmsb_err_set(err, LLMSB_ERR_INVALID,
                      "%s: holds NaN or Infinity and a \\u0001, which convert uses to mark "
                      "them: it cannot read both",
                      name);
        goto fail;
    }
    if (each_row(name, nonfinite ? marked : text, &each, s, err) != 0)
        goto fail;
    for (size_t i = 0; i < s->n; i++)
        s->tasks[i].text = NULL;
    free(marked);
    marked = NULL;
    for (size_t i = 0; nonfinite && i < s->n; i++) {
        const struct convert_task *t = &s->tasks[i];
        const cJSON *v = t->format && t->format->nonfinite ? NULL : nonfinite_field(t->row);
        if (v) {
            llmsb_err_set(err, LLMSB_ERR_INVALID,
                          "%s:%zu: task \"%s\": %s holds %s, which is not JSON (only EvalPlus rows "
                          "may: Python's json writes them)",
                          name, t->line, t->id ? t->id : "", v->string,
                          convert_nonfinite_of(nonfinite_find(v)));
            goto fail;
        }
    }
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
    if (s->whole && s->whole->finish && s->whole->finish(s, err) != 0)
        goto fail;
    return s;
fail:
    free(marked);
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
        free(s->tasks[i].own_text);
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
    info->truth_first = s->whole ? s->whole->truth_first : 0;
    info->lacks =
        s->whole && s->whole->lacks ? s->whole->lacks : "canonical_solution nor completions";
    info->tasks = s->n;
    info->untested = s->untested;
}

/* ---- gzip-compressed files ---------------------------------------------- */

int convert_text_unpack(struct buf *b, const char *name, size_t max_bytes, struct llmsb_err *err)
{
    struct archive *a = NULL;
    struct archive_entry *e;
    struct buf out;
    char chunk[65536];
    la_ssize_t n;
    int rc = 0;

    if (b->len < 2 || (unsigned char)b->data[0] != 0x1f || (unsigned char)b->data[1] != 0x8b)
        return 0;
    buf_init(&out, max_bytes);
    /* libarchive (already linked for images/) as a plain gzip reader: its
     * "raw" format is the one stream the gzip filter unpacks */
    if (!(a = archive_read_new()) || archive_read_support_filter_gzip(a) != ARCHIVE_OK ||
        archive_read_support_format_raw(a) != ARCHIVE_OK) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: cannot set up a gzip reader", name);
        goto out;
    }
    if (archive_read_open_memory(a, b->data, b->len) != ARCHIVE_OK ||
        archive_read_next_header(a, &e) != ARCHIVE_OK) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: gzip-compressed, but not readable: %s",
                           name, archive_error_string(a) ? archive_error_string(a) : "?");
        goto out;
    }
    /* a header too short or damaged for the gzip filter to bid on leaves
     * libarchive reading the bytes as they are: not unpacked at all */
    if (archive_filter_code(a, 0) != ARCHIVE_FILTER_GZIP) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: starts as gzip-compressed data (1f 8b) but its gzip header is cut "
                           "or damaged: not readable",
                           name);
        goto out;
    }
    while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0)
        if (buf_append(&out, chunk, (size_t)n) != 0) {
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                               "%s: gzip-compressed: unpacks to more than %zu bytes, the cap; "
                               "unpack it and split it",
                               name, max_bytes);
            goto out;
        }
    if (n < 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: gzip-compressed, but damaged: %s", name,
                           archive_error_string(a) ? archive_error_string(a) : "?");
        goto out;
    }
    if (out.len && memchr(out.data, '\0', out.len)) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: gzip-compressed, and what it holds is not text (a NUL byte at "
                           "offset %zu)",
                           name, (size_t)((char *)memchr(out.data, '\0', out.len) - out.data));
        goto out;
    }
    if (buf_append(&out, "", 0) != 0) { /* a terminated string, even when empty */
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: out of memory", name);
        goto out;
    }
    buf_release(b);
    *b = out;
    buf_init(&out, max_bytes);
out:
    buf_release(&out);
    archive_read_free(a);
    return rc;
}

/* ---- NaN and Infinity --------------------------------------------------- */

static const char *const nonfinite_tokens[] = {"-Infinity", "Infinity", "NaN", NULL};

/* The token of nonfinite_tokens at p, a whole JSON value (p after a
 * separator, a delimiter after it), or NULL. */
static const char *nonfinite_at(const char *text, const char *p)
{
    char before = p > text ? p[-1] : ' ';

    if (!strchr("[,: \t\r\n", before))
        return NULL;
    for (int i = 0; nonfinite_tokens[i]; i++) {
        size_t n = strlen(nonfinite_tokens[i]);
        if (strncmp(p, nonfinite_tokens[i], n) == 0 && p[n] && strchr(",]} \t\r\n", p[n]))
            return nonfinite_tokens[i];
    }
    return NULL;
}

char *convert_nonfinite_mark(const char *text, size_t *count)
{
    struct buf b;
    const char *p = text, *from = text;
    int in_string = 0;

    *count = 0;
    buf_init(&b, (size_t)4 << 30);
    for (; *p; p++) {
        const char *tok;
        if (in_string) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_string = 0;
            continue;
        }
        if (*p == '"') {
            in_string = 1;
            continue;
        }
        if (!(tok = nonfinite_at(text, p)))
            continue;
        if (buf_append(&b, from, (size_t)(p - from)) != 0 ||
            buf_printf(&b, "\"\\u0001%s\"", tok) != 0) {
            buf_release(&b);
            return NULL;
        }
        ++*count;
        p += strlen(tok) - 1;
        from = p + 1;
    }
    if (buf_append(&b, from, (size_t)(p - from)) != 0) {
        buf_release(&b);
        return NULL;
    }
    return buf_steal(&b);
}

const char *convert_nonfinite_of(const cJSON *v)
{
    const char *s = cJSON_GetStringValue(v);

    if (!s || s[0] != CONVERT_NONFINITE_MARK)
        return NULL;
    for (int i = 0; nonfinite_tokens[i]; i++)
        if (strcmp(s + 1, nonfinite_tokens[i]) == 0)
            return nonfinite_tokens[i];
    return NULL;
}

/* The first marked NaN or Infinity in v, or NULL. */
static const cJSON *nonfinite_find(const cJSON *v)
{
    const cJSON *c, *f;

    if (convert_nonfinite_of(v))
        return v;
    cJSON_ArrayForEach(c, v) {
        if ((f = nonfinite_find(c)))
            return f;
    }
    return NULL;
}

/* The field of row that holds a marked NaN or Infinity, or NULL. */
static const cJSON *nonfinite_field(const cJSON *row)
{
    const cJSON *f;

    cJSON_ArrayForEach(f, row) {
        if (nonfinite_find(f))
            return f;
    }
    return NULL;
}
