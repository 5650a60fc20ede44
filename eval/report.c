/* report.c - pass@k of a batch (see report.h): jobs grouped into tasks by
 * a key, the estimator per task, averaged per language and over all,
 * printed in submit's summary and written as JSON (FILE) and a Markdown
 * table (FILE.md). */
#include "eval/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "eval/passk.h"

static const int ks[] = {1, 10, 100};
#define NK ((int)(sizeof(ks) / sizeof(ks[0])))

struct task {
    const char *lang, *key;
    int n, c;
    int nb, cb; /* the samples with a base verdict, and how many passed it */
};

/* Averages over tasks with n >= k. */
struct avg {
    const char *lang; /* the rows' own text */
    int tasks, samples;
    double sum[NK];
    int with[NK];
};

static int by_lang_key(const void *a, const void *b)
{
    const struct report_row *x = a, *y = b;
    int c = strcmp(x->lang, y->lang);
    return c ? c : strcmp(x->key, y->key);
}

/* Adds a task of n samples, c of them passed. */
static void avg_add_nc(struct avg *a, int n, int c)
{
    a->tasks++;
    a->samples += n;
    for (int k = 0; k < NK; k++)
        if (n >= ks[k]) {
            a->sum[k] += passk(n, c, ks[k]);
            a->with[k]++;
        }
}

static void avg_add(struct avg *a, const struct task *t)
{
    avg_add_nc(a, t->n, t->c);
}

/* "pass@K": the average, or null where no task has K samples. */
static void passk_json(cJSON *o, const struct avg *a)
{
    for (int k = 0; k < NK; k++) {
        char name[16];
        snprintf(name, sizeof(name), "pass@%d", ks[k]);
        if (a->with[k])
            cJSON_AddNumberToObject(o, name, a->sum[k] / a->with[k]);
        else
            cJSON_AddNullToObject(o, name);
    }
}

static void avg_json(cJSON *o, const struct avg *a)
{
    cJSON_AddNumberToObject(o, "tasks", a->tasks);
    cJSON_AddNumberToObject(o, "samples", a->samples);
    passk_json(o, a);
}

static void avg_text(char *out, size_t sz, const struct avg *a, int k)
{
    if (a->with[k])
        snprintf(out, sz, "%.4f", a->sum[k] / a->with[k]);
    else
        snprintf(out, sz, "-");
}

static void print_avgs(FILE *out, const struct avg *langs, int nl, const struct avg *total, int md)
{
    if (md)
        fprintf(out, "| language | tasks | samples | pass@1 | pass@10 | pass@100 |\n"
                     "|---|---:|---:|---:|---:|---:|\n");
    else
        fprintf(out, "\n%-12s %6s %8s %9s %9s %9s\n", "language", "tasks", "samples", "pass@1",
                "pass@10", "pass@100");
    for (int i = 0; i <= nl; i++) {
        const struct avg *a = i < nl ? &langs[i] : total;
        char v[NK][16];
        for (int k = 0; k < NK; k++)
            avg_text(v[k], sizeof(v[k]), a, k);
        if (md)
            fprintf(out, "| %s | %d | %d | %s | %s | %s |\n", a->lang, a->tasks, a->samples, v[0],
                    v[1], v[2]);
        else
            fprintf(out, "%-12s %6d %8d %9s %9s %9s\n", a->lang, a->tasks, a->samples, v[0], v[1],
                    v[2]);
    }
}

/* pass@k of the base tests (EvalPlus), over the tasks whose samples have
 * a base verdict. */
struct base_avgs {
    struct avg langs[32], total;
    int nl;
};

static void base_avgs_of(struct base_avgs *b, const struct task *t, size_t nt)
{
    memset(b, 0, sizeof(*b));
    b->total.lang = "total";
    for (size_t i = 0; i < nt; i++) {
        if (!t[i].nb)
            continue;
        if ((!b->nl || strcmp(b->langs[b->nl - 1].lang, t[i].lang) != 0) && b->nl < 32)
            b->langs[b->nl++].lang = t[i].lang;
        if (strcmp(b->langs[b->nl - 1].lang, t[i].lang) == 0)
            avg_add_nc(&b->langs[b->nl - 1], t[i].nb, t[i].cb);
        avg_add_nc(&b->total, t[i].nb, t[i].cb);
    }
}

static void base_json(cJSON *o, const struct base_avgs *b)
{
    cJSON *x = cJSON_AddObjectToObject(o, "base"), *L;

    cJSON_AddStringToObject(x, "what",
                            "pass@k of the base tests alone (EvalPlus); the totals above are "
                            "base and plus");
    avg_json(cJSON_AddObjectToObject(x, "total"), &b->total);
    L = cJSON_AddObjectToObject(x, "languages");
    for (int i = 0; i < b->nl; i++)
        avg_json(cJSON_AddObjectToObject(L, b->langs[i].lang), &b->langs[i]);
}

static int write_report(const char *path, const char *group_by, const struct task *t, size_t nt,
                        const struct avg *langs, int nl, const struct avg *total,
                        const struct base_avgs *base, const struct report_timings *tm,
                        struct llmsb_err *err)
{
    cJSON *o = cJSON_CreateObject(), *L = cJSON_CreateObject(), *G = cJSON_CreateArray();
    char *text, mdpath[4096];
    FILE *f;
    int rc = 0;

    cJSON_AddStringToObject(o, "group_by", group_by);
    cJSON_AddItemToObject(o, "total", cJSON_CreateObject());
    avg_json(cJSON_GetObjectItem(o, "total"), total);
    for (int i = 0; i < nl; i++) {
        cJSON *x = cJSON_CreateObject();
        avg_json(x, &langs[i]);
        cJSON_AddItemToObject(L, langs[i].lang, x);
    }
    cJSON_AddItemToObject(o, "languages", L);
    for (size_t i = 0; i < nt; i++) {
        cJSON *x = cJSON_CreateObject();
        struct avg one = {0};
        cJSON_AddStringToObject(x, "lang", t[i].lang);
        cJSON_AddStringToObject(x, "task", t[i].key);
        cJSON_AddNumberToObject(x, "n", t[i].n);
        cJSON_AddNumberToObject(x, "c", t[i].c);
        if (t[i].nb)
            cJSON_AddNumberToObject(x, "c_base", t[i].cb);
        avg_add(&one, &t[i]);
        passk_json(x, &one);
        cJSON_AddItemToArray(G, x);
    }
    cJSON_AddItemToObject(o, "tasks", G);
    if (base)
        base_json(o, base);
    if (tm && report_timings_json(o, tm) != 0) {
        cJSON_Delete(o);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text || !(f = fopen(path, "we")) || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0) {
        free(text);
        return llmsb_err_set(err, LLMSB_ERR_SYS, "cannot write \"%s\"", path);
    }
    free(text);
    snprintf(mdpath, sizeof(mdpath), "%s.md", path);
    if (!(f = fopen(mdpath, "we")))
        return llmsb_err_set(err, LLMSB_ERR_SYS, "cannot write \"%s\"", mdpath);
    fprintf(f,
            "# pass@k\n\nTasks grouped by `%s`; pass@k is the unbiased estimator of the "
            "HumanEval paper, averaged over the tasks with at least k samples.\n\n",
            group_by);
    print_avgs(f, langs, nl, total, 1);
    if (base) {
        fprintf(f, "\n## Base tests\n\npass@k of the base tests alone (EvalPlus: the table "
                   "above is base and plus).\n\n");
        print_avgs(f, base->langs, base->nl, &base->total, 1);
    }
    if (tm)
        report_timings_print(f, tm, 1);
    fprintf(f, "\n## Tasks\n\n| language | task | samples | passed | pass@1 |\n"
               "|---|---|---:|---:|---:|\n");
    for (size_t i = 0; i < nt; i++) {
        fprintf(f, "| %s | ", t[i].lang);
        for (const char *c = t[i].key; *c; c++) /* a task name in a table cell */
            if (*c == '|')
                fputs("\\|", f);
            else
                fputc(*c == '\n' ? ' ' : *c, f);
        fprintf(f, " | %d | %d | %.4f |\n", t[i].n, t[i].c, passk(t[i].n, t[i].c, 1));
    }
    if (fclose(f) != 0)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "cannot write \"%s\"", mdpath);
    return rc;
}

int report_passk(FILE *out, struct report_row *rows, size_t n, const char *group_by,
                 const char *path, const struct report_timings *tm, struct llmsb_err *err)
{
    struct task *t = calloc(n ? n : 1, sizeof(*t));
    struct avg langs[32], total = {.lang = "total"};
    struct base_avgs base;
    size_t nt = 0;
    int nl = 0, multi = 0, rc = 0, any_base = 0;

    if (!t)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    memset(langs, 0, sizeof(langs));
    qsort(rows, n, sizeof(*rows), by_lang_key);
    for (size_t i = 0; i < n; i++) {
        if (!nt || strcmp(t[nt - 1].lang, rows[i].lang) || strcmp(t[nt - 1].key, rows[i].key))
            t[nt++] = (struct task){rows[i].lang, rows[i].key, 0, 0, 0, 0};
        t[nt - 1].n++;
        t[nt - 1].c += rows[i].passed;
        if (rows[i].has_base) {
            t[nt - 1].nb++;
            t[nt - 1].cb += rows[i].base == 1;
            any_base = 1;
        }
        multi |= t[nt - 1].n > 1;
    }
    if (any_base)
        base_avgs_of(&base, t, nt);
    for (size_t i = 0; i < nt; i++) { /* tasks are sorted by language */
        if ((!nl || strcmp(langs[nl - 1].lang, t[i].lang) != 0) && nl < 32)
            langs[nl++].lang = t[i].lang;
        if (strcmp(langs[nl - 1].lang, t[i].lang) == 0) /* past 32 languages: total only */
            avg_add(&langs[nl - 1], &t[i]);
        avg_add(&total, &t[i]);
    }
    if (nt && (multi || path)) {
        print_avgs(out, langs, nl, &total, 0);
        fprintf(out, "(pass@k: tasks grouped by %s; averaged over tasks with at least k samples)\n",
                group_by);
        if (any_base) {
            fprintf(out, "\nbase tests alone (EvalPlus; the table above is base and plus):");
            print_avgs(out, base.langs, base.nl, &base.total, 0);
        }
    }
    if (path && tm)
        report_timings_print(out, tm, 0);
    if (path)
        rc = write_report(path, group_by, t, nt, langs, nl, &total, any_base ? &base : NULL, tm,
                          err);
    free(t);
    return rc;
}

/* ---- what ran: dedup and rechecks ---------------------------------------------- */

/* The report report_passk wrote, read back: new text, caller frees. */
static char *read_back(const char *path)
{
    FILE *f = fopen(path, "re");
    struct buf b;
    char chunk[65536];
    size_t n;

    if (!f)
        return NULL;
    buf_init(&b, (size_t)256 << 20);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (buf_append(&b, chunk, n) != 0)
            break;
    if (ferror(f) || !feof(f))
        buf_release(&b);
    fclose(f);
    return b.data ? buf_steal(&b) : NULL;
}

int report_runs(const char *path, const struct report_runs *r, struct llmsb_err *err)
{
    char *text = read_back(path), mdpath[4096];
    cJSON *o = NULL, *x = cJSON_CreateObject();
    FILE *f;
    int rc = 0;

    if (!x || !text || !(o = cJSON_Parse(text))) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "cannot read back \"%s\"", path);
        goto out;
    }
    cJSON_AddBoolToObject(x, "dedup", r->dedup);
    cJSON_AddNumberToObject(x, "jobs", (double)r->jobs);
    cJSON_AddNumberToObject(x, "runs", (double)r->runs);
    cJSON_AddNumberToObject(x, "copies", (double)r->copies);
    if (r->recheck) {
        cJSON_AddNumberToObject(x, "rechecked_timeouts", (double)r->rechecked);
        cJSON_AddNumberToObject(x, "flaky", (double)r->flaky);
    }
    cJSON_AddItemToObject(o, "runs", x);
    x = NULL;
    free(text);
    text = cJSON_Print(o);
    if (!text || !(f = fopen(path, "we")) || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "cannot write \"%s\"", path);
        goto out;
    }
    snprintf(mdpath, sizeof(mdpath), "%s.md", path);
    if (!(f = fopen(mdpath, "ae"))) {
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "cannot write \"%s\"", mdpath);
        goto out;
    }
    fprintf(f, "\n## Runs\n\n%zu jobs, %zu distinct programs run, %zu copies (dedup %s).\n",
            r->jobs, r->runs, r->copies, r->dedup ? "on" : "off: --no-dedup");
    if (r->recheck)
        fprintf(f, "%zu timeout(s) run again alone (--recheck-timeouts), %zu changed (flaky).\n",
                r->rechecked, r->flaky);
    if (fclose(f) != 0)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "cannot write \"%s\"", mdpath);
out:
    cJSON_Delete(o);
    cJSON_Delete(x);
    free(text);
    return rc;
}

/* ---- the base verdict (EvalPlus) ------------------------------------------------ */

int report_base_verdict(const cJSON *job, const cJSON *result, int *has_base)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(job, "meta"), *k, *c;
    cJSON *parsed = cJSON_IsString(meta) ? cJSON_Parse(meta->valuestring) : NULL;
    int base = 0;

    if (parsed)
        meta = parsed;
    k = cJSON_GetObjectItemCaseSensitive(meta, "base_case");
    *has_base = cJSON_IsNumber(k) && k->valuedouble >= 0 && k->valuedouble < 1000;
    if (*has_base) {
        c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(result, "cases"),
                               (int)k->valuedouble);
        base = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "passed"));
    }
    cJSON_Delete(parsed);
    return *has_base ? base : -1;
}
