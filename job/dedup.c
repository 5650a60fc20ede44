/* dedup.c - submit's dedup (dedup.h): the dedup form of a job's fields and
 * the grouping of a submission by form.  A form compares whole, byte for
 * byte: no hash, so two jobs that differ anywhere never share a run. */
#include "job/dedup.h"

#include <stdlib.h>
#include <string.h>

const char *const job_dedup_ignored[] = {"id", "meta", "copies", "recheck", "needs", NULL};

static int ignored(const struct field *f)
{
    for (size_t i = 0; job_dedup_ignored[i]; i++)
        if (strlen(job_dedup_ignored[i]) == f->name_len &&
            memcmp(job_dedup_ignored[i], f->name, f->name_len) == 0)
            return 1;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const struct field *x = *(const struct field *const *)a, *y = *(const struct field *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

/* 1 when the job holds state a second run would not see the same way. */
static int stateful(const struct fields *f)
{
    size_t len;
    const char *net = fields_get(f, "network", &len);
    return fields_get(f, "session", NULL) || fields_get(f, "session_close", NULL) ||
           (net && !(len == 5 && memcmp(net, "false", 5) == 0));
}

int job_dedup_form(const struct fields *f, struct buf *out)
{
    const struct field **v = NULL;
    size_t n = 0;
    int rc = 0;

    buf_reset(out);
    if (f->dropped || f->oversized || stateful(f))
        return 1;
    if (!(v = calloc(f->n ? f->n : 1, sizeof(*v))))
        return LLMSB_ERR_NOMEM;
    for (size_t i = 0; i < f->n; i++)
        if (!ignored(&f->v[i]))
            v[n++] = &f->v[i];
    qsort(v, n, sizeof(*v), by_name);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = buf_printf(out, "%zu:", v[i]->name_len);
        rc = rc ? rc : buf_append(out, v[i]->name, v[i]->name_len);
        rc = rc ? rc : buf_printf(out, "%zu:", v[i]->len);
        rc = rc ? rc : buf_append(out, v[i]->value, v[i]->len);
    }
    free(v);
    return rc;
}

static int same_form(const struct buf *x, const struct buf *y)
{
    return x->len == y->len && (!x->len || memcmp(x->data, y->data, x->len) == 0);
}

static const struct buf *sort_forms;

static int by_form(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, k = *(const size_t *)b;
    const struct buf *x = &sort_forms[i], *y = &sort_forms[k];
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->data, y->data, n) : 0;

    if (!c)
        c = (x->len > y->len) - (x->len < y->len);
    return c ? c : (i > k) - (i < k); /* the file's first of a form runs */
}

long job_dedup_group(const struct buf *forms, const int *alone, size_t n, size_t *rep)
{
    size_t *order = calloc(n ? n : 1, sizeof(*order)), m = 0;
    long runs = 0;

    if (!order)
        return LLMSB_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        rep[i] = i;
        if (!alone[i])
            order[m++] = i;
    }
    sort_forms = forms;
    qsort(order, m, sizeof(*order), by_form);
    for (size_t k = 1; k < m; k++)
        if (same_form(&forms[order[k - 1]], &forms[order[k]]))
            rep[order[k]] = rep[order[k - 1]];
    for (size_t i = 0; i < n; i++)
        runs += rep[i] == i;
    free(order);
    return runs;
}
