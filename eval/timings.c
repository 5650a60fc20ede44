/* timings.c - the per-phase part of `submit --report` and `eval` (see report.h):
 * p50/p95/p99 of each phase of the results per language, by the
 * nearest-rank method, and the provenance that makes two reports
 * comparable (machine, engine, image digests, limits).  Pure: the facts
 * are gathered by the caller (batch/report.c); this file only counts,
 * prints and writes them. */
#include "eval/report.h"

#include <stdlib.h>
#include <string.h>

const char *const report_phase_names[REPORT_NPHASES] = {
    "queue_wait_ms", "prepare_ms", "acquire_ms", "install_ms", "compile_ms",
    "run_ms",        "collect_ms", "agent_ms",   "finish_ms",  "total_ms"};

static const int pcts[] = {50, 95, 99};
#define NPCT ((int)(sizeof(pcts) / sizeof(pcts[0])))

int64_t report_percentile(const int64_t *sorted, size_t n, int pct)
{
    size_t rank;

    if (n == 0 || pct < 1 || pct > 100)
        return -1;
    rank = ((size_t)pct * n + 99) / 100; /* ceil(pct/100 * n), at least 1 */
    return sorted[(rank ? rank : 1) - 1];
}

void report_env_add_limits(struct report_env *env, const char *lang, int64_t timeout_ms,
                           int64_t memory_mb, double cpus, int64_t pids)
{
    struct report_limits *l;

    for (size_t i = 0; i < env->nlimits; i++) {
        l = &env->limits[i];
        if (strcmp(l->lang, lang) == 0 && l->timeout_ms == timeout_ms &&
            l->memory_mb == memory_mb && l->cpus == cpus && l->pids == pids) {
            l->jobs++;
            return;
        }
    }
    if (env->nlimits == REPORT_MAX_LIMITS)
        return;
    l = &env->limits[env->nlimits++];
    snprintf(l->lang, sizeof(l->lang), "%s", lang);
    l->timeout_ms = timeout_ms;
    l->memory_mb = memory_mb;
    l->cpus = cpus;
    l->pids = pids;
    l->jobs = 1;
}

static int by_lang(const void *a, const void *b)
{
    return strcmp(((const struct report_timing *)a)->lang, ((const struct report_timing *)b)->lang);
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* One language's rows t[0..n): per phase, how many had it and its
 * percentiles; the acquire kinds counted. */
struct lang_stats {
    const char *lang;
    size_t jobs;
    size_t have[REPORT_NPHASES];
    int64_t pct[REPORT_NPHASES][NPCT];
    size_t warm, cold, other;
};

static int lang_stats(const struct report_timing *t, size_t n, struct lang_stats *s)
{
    int64_t *v = malloc((n ? n : 1) * sizeof(*v));

    if (!v)
        return LLMSB_ERR_NOMEM;
    memset(s, 0, sizeof(*s));
    s->lang = t[0].lang;
    s->jobs = n;
    for (int p = 0; p < REPORT_NPHASES; p++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (t[i].ms[p] >= 0)
                v[k++] = t[i].ms[p];
        qsort(v, k, sizeof(*v), by_value);
        s->have[p] = k;
        for (int q = 0; q < NPCT; q++)
            s->pct[p][q] = report_percentile(v, k, pcts[q]);
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].acquire, "warm") == 0)
            s->warm++;
        else if (strcmp(t[i].acquire, "cold") == 0)
            s->cold++;
        else if (t[i].acquire[0])
            s->other++;
    }
    free(v);
    return 0;
}

/* Calls fn for each language of tm (rows sorted by language first). */
static int each_lang(const struct report_timings *tm, void (*fn)(void *, const struct lang_stats *),
                     void *ud)
{
    qsort(tm->t, tm->n, sizeof(*tm->t), by_lang);
    for (size_t i = 0, k; i < tm->n; i = k) {
        struct lang_stats s;
        for (k = i + 1; k < tm->n && strcmp(tm->t[k].lang, tm->t[i].lang) == 0; k++)
            ;
        if (lang_stats(tm->t + i, k - i, &s) != 0)
            return LLMSB_ERR_NOMEM;
        fn(ud, &s);
    }
    return 0;
}

/* ---- JSON ---------------------------------------------------------------- */

static void stats_json(void *ud, const struct lang_stats *s)
{
    cJSON *o = cJSON_CreateObject(), *acq = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "jobs", (double)s->jobs);
    cJSON_AddNumberToObject(acq, "warm", (double)s->warm);
    cJSON_AddNumberToObject(acq, "cold", (double)s->cold);
    cJSON_AddNumberToObject(acq, "other", (double)s->other);
    cJSON_AddItemToObject(o, "acquire", acq);
    for (int p = 0; p < REPORT_NPHASES; p++) {
        cJSON *ph = cJSON_CreateObject();
        cJSON_AddNumberToObject(ph, "jobs", (double)s->have[p]);
        for (int q = 0; q < NPCT; q++) {
            char name[8];
            snprintf(name, sizeof(name), "p%d", pcts[q]);
            if (s->have[p])
                cJSON_AddNumberToObject(ph, name, (double)s->pct[p][q]);
            else
                cJSON_AddNullToObject(ph, name);
        }
        cJSON_AddItemToObject(o, report_phase_names[p], ph);
    }
    cJSON_AddItemToObject(ud, s->lang, o);
}

static cJSON *env_json(const struct report_env *e)
{
    cJSON *o = cJSON_CreateObject(), *m = cJSON_CreateObject(), *eng = cJSON_CreateObject();
    cJSON *imgs = cJSON_CreateArray(), *lim = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "where", e->where);
    cJSON_AddStringToObject(m, "host", e->host);
    cJSON_AddStringToObject(m, "kernel", e->kernel);
    cJSON_AddStringToObject(m, "cpu_model", e->cpu_model);
    cJSON_AddNumberToObject(m, "cpus", (double)e->cpus);
    cJSON_AddNumberToObject(m, "memory_bytes", (double)e->memory_bytes);
    cJSON_AddItemToObject(o, "machine", m);
    cJSON_AddStringToObject(eng, "name", e->engine);
    cJSON_AddStringToObject(eng, "version", e->engine_version);
    cJSON_AddItemToObject(o, "engine", eng);
    for (size_t i = 0; i < e->nimages; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", e->images[i].name);
        cJSON_AddStringToObject(x, "digest", e->images[i].digest);
        cJSON_AddItemToArray(imgs, x);
    }
    cJSON_AddItemToObject(o, "images", imgs);
    for (size_t i = 0; i < e->nlimits; i++) {
        const struct report_limits *l = &e->limits[i];
        cJSON *arr = cJSON_GetObjectItemCaseSensitive(lim, l->lang), *x = cJSON_CreateObject();
        if (!arr)
            cJSON_AddItemToObject(lim, l->lang, arr = cJSON_CreateArray());
        cJSON_AddNumberToObject(x, "timeout_ms", (double)l->timeout_ms);
        cJSON_AddNumberToObject(x, "memory_mb", (double)l->memory_mb);
        cJSON_AddNumberToObject(x, "cpus", l->cpus);
        cJSON_AddNumberToObject(x, "pids", (double)l->pids);
        cJSON_AddNumberToObject(x, "jobs", (double)l->jobs);
        cJSON_AddItemToArray(arr, x);
    }
    cJSON_AddItemToObject(o, "limits", lim);
    return o;
}

int report_timings_json(cJSON *o, const struct report_timings *tm)
{
    cJSON *ph = cJSON_CreateObject();
    int rc;

    cJSON_AddStringToObject(o, "percentiles", "nearest-rank");
    rc = each_lang(tm, stats_json, ph);
    cJSON_AddItemToObject(o, "phases", ph);
    if (tm->env)
        cJSON_AddItemToObject(o, "environment", env_json(tm->env));
    return rc;
}

/* ---- text and Markdown ----------------------------------------------------- */

struct print_ctx {
    FILE *f;
    int md;
};

static void stats_print(void *ud, const struct lang_stats *s)
{
    const struct print_ctx *c = ud;

    for (int p = 0; p < REPORT_NPHASES; p++) {
        char v[NPCT][24], name[32];
        if (!s->have[p])
            continue;
        for (int q = 0; q < NPCT; q++)
            snprintf(v[q], sizeof(v[q]), "%lld", (long long)s->pct[p][q]);
        snprintf(name, sizeof(name), "%.*s", (int)strlen(report_phase_names[p]) - 3,
                 report_phase_names[p]); /* less "_ms" */
        if (c->md)
            fprintf(c->f, "| %s | %s | %zu | %s | %s | %s |\n", s->lang, name, s->have[p], v[0],
                    v[1], v[2]);
        else
            fprintf(c->f, "%-12s %-11s %6zu %8s %8s %8s\n", s->lang, name, s->have[p], v[0], v[1],
                    v[2]);
    }
    fprintf(c->f,
            c->md ? "| %s | acquire: warm %zu, cold %zu, other %zu | %zu | | | |\n"
                  : "%-12s acquire: warm %zu, cold %zu, other %zu (of %zu jobs)\n",
            s->lang, s->warm, s->cold, s->other, s->jobs);
}

static void env_print(FILE *f, const struct report_env *e, int md)
{
    const char *b = md ? "- " : "";

    if (md)
        fprintf(f, "\n## Provenance\n\n%s.\n\n", e->where);
    else
        fprintf(f, "provenance: %s\n", e->where);
    fprintf(f, "%smachine: %s, %s, %s x %ld, %.1f GiB\n", b, e->host, e->kernel, e->cpu_model,
            e->cpus, (double)e->memory_bytes / (1 << 30));
    fprintf(f, "%sengine: %s %s\n", b, e->engine, e->engine_version);
    for (size_t i = 0; i < e->nimages; i++)
        fprintf(f, "%simage %s: %s\n", b, e->images[i].name, e->images[i].digest);
    for (size_t i = 0; i < e->nlimits; i++) {
        const struct report_limits *l = &e->limits[i];
        fprintf(f, "%slimits %s: timeout %lld ms, memory %lld MB, cpus %g, pids %lld (%zu jobs)\n",
                b, l->lang, (long long)l->timeout_ms, (long long)l->memory_mb, l->cpus,
                (long long)l->pids, l->jobs);
    }
}

void report_timings_print(FILE *out, const struct report_timings *tm, int md)
{
    struct print_ctx c = {out, md};
    const char *what = "milliseconds; nearest-rank percentiles over the jobs that had the phase";

    if (md)
        fprintf(out,
                "\n## Phases\n\nWhere the jobs' time went (%s; docs/jobs.md, \"phases\").\n\n"
                "| language | phase | jobs | p50 | p95 | p99 |\n|---|---|---:|---:|---:|---:|\n",
                what);
    else
        fprintf(out, "\nphases (%s)\n%-12s %-11s %6s %8s %8s %8s\n", what, "language", "phase",
                "jobs", "p50", "p95", "p99");
    if (each_lang(tm, stats_print, &c) != 0)
        fprintf(out, "(out of memory)\n");
    if (tm->env)
        env_print(out, tm->env, md);
}
