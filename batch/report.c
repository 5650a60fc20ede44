/* report.c - a batch's figures as a benchmark states them, for every front
 * end (`submit`, `eval`): pass@k over the jobs with expectations, grouped
 * into tasks, and with a report the per-phase percentiles and the facts
 * that make two reports comparable (eval/timings.c prints them): this
 * machine (uname, /proc/cpuinfo, /proc/meminfo), the engine the config
 * names and its version, what identifies each image the results name (the
 * engine's image id and repo digest), each language's limits as the jobs
 * resolve them.  A fact that cannot be had is stated as unknown, with why. */
#include "batch/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/status.h"
#include "config/jobfile.h"
#include "eval/passk.h"
#include "eval/report.h"
#include "exec/runner.h"
#include "job/job.h"

/* The first "key : value" line of a /proc file whose key is key. */
static void proc_value(const char *path, const char *key, char *out, size_t outsz)
{
    FILE *f = fopen(path, "re");
    char line[512];
    size_t kl = strlen(key);

    snprintf(out, outsz, "unknown (no %s in %s)", key, path);
    while (f && fgets(line, sizeof(line), f)) {
        char *v = strchr(line, ':');
        if (strncmp(line, key, kl) != 0 || !v ||
            strspn(line + kl, " \t") != (size_t)(v - line) - kl)
            continue;
        v += 1 + strspn(v + 1, " \t");
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, outsz, "%s", v);
        break;
    }
    if (f)
        fclose(f);
}

static void machine(struct report_env *e)
{
    struct utsname u;
    char mem[64];
    long long kb = 0;

    if (gethostname(e->host, sizeof(e->host)) != 0)
        snprintf(e->host, sizeof(e->host), "unknown");
    if (uname(&u) == 0)
        snprintf(e->kernel, sizeof(e->kernel), "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(e->kernel, sizeof(e->kernel), "unknown");
    proc_value("/proc/cpuinfo", "model name", e->cpu_model, sizeof(e->cpu_model));
    e->cpus = sysconf(_SC_NPROCESSORS_ONLN);
    proc_value("/proc/meminfo", "MemTotal", mem, sizeof(mem));
    if (sscanf(mem, "%lld kB", &kb) == 1)
        e->memory_bytes = kb * 1024;
}

/* The distinct images the results name. */
static void images_of(struct report_env *e, cJSON **results, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *im = results[i] ? cJSON_GetObjectItemCaseSensitive(results[i], "image") : NULL;
        size_t k = 0;
        if (!cJSON_IsString(im) || !im->valuestring[0])
            continue;
        while (k < e->nimages && strcmp(e->images[k].name, im->valuestring) != 0)
            k++;
        if (k == e->nimages && e->nimages < REPORT_MAX_IMAGES)
            snprintf(e->images[e->nimages++].name, sizeof(e->images[0].name), "%s",
                     im->valuestring);
    }
}

/* The engine's version and each image's id, asked of the config's engine. */
static void engine(const struct config *cfg, struct report_env *e)
{
    struct backend be;
    struct llmsb_err err = {0};

    snprintf(e->engine, sizeof(e->engine), "%s", cfg->backend);
    if (runner_engine_open(&be, cfg, e->engine_version, sizeof(e->engine_version), &err) != 0) {
        llmsb_fmt(e->engine_version, sizeof(e->engine_version), "unknown (%s)", err.msg);
        for (size_t i = 0; i < e->nimages; i++)
            snprintf(e->images[i].digest, sizeof(e->images[0].digest),
                     "unknown (the engine did not answer)");
        return;
    }
    for (size_t i = 0; i < e->nimages; i++) {
        char *d = e->images[i].digest;
        size_t dsz = sizeof(e->images[0].digest);
        llmsb_err_clear(&err);
        if (!be.ops->image_digest)
            snprintf(d, dsz, "unknown (the %s backend cannot say what identifies an image)",
                     be.ops->name);
        else if (be.ops->image_digest(&be, e->images[i].name, d, dsz, &err) != 0)
            llmsb_fmt(d, dsz, "unknown (%s)", err.msg);
    }
    backend_close(&be);
}

/* Each job's limits as the config resolves them (what the worker did). */
static void limits(const struct config *cfg, const struct jobfile *jf, struct report_env *e)
{
    for (size_t i = 0; i < jf->n; i++) {
        struct llmsb_err err = {0};
        struct job j;

        job_init(&j, cfg);
        if (job_from_json(&j, cfg, jf->jobs[i], "", &err) == 0 && j.lang)
            report_env_add_limits(e, j.lang->name, j.limits.timeout_ms, j.limits.memory_mb,
                                  j.limits.cpus, j.limits.pids);
        job_release(&j);
    }
}

/* Through Redis: whose facts these are, and the workers the results name
 * (the first 8 distinct). */
static void workers_of(struct report_env *e, cJSON **results, size_t n, const char *verb)
{
    const char *seen[8];
    size_t ns = 0, len;

    len = (size_t)snprintf(e->where, sizeof(e->where),
                           "The machine %s ran on, its config's engine and limits; the jobs "
                           "ran on the workers",
                           verb);
    for (size_t i = 0; i < n && ns < sizeof(seen) / sizeof(seen[0]); i++) {
        const cJSON *w = results[i] ? cJSON_GetObjectItemCaseSensitive(results[i], "worker") : NULL;
        size_t k = 0;
        if (!cJSON_IsString(w) || !w->valuestring[0])
            continue;
        while (k < ns && strcmp(seen[k], w->valuestring) != 0)
            k++;
        if (k < ns)
            continue;
        seen[ns] = w->valuestring;
        if (len < sizeof(e->where))
            len += (size_t)snprintf(e->where + len, sizeof(e->where) - len, "%s %s", ns ? "," : "",
                                    w->valuestring);
        ns++;
    }
}

/* Fills e: this machine, the engine the config names and its version, the
 * id of each image the results name, each language's limits as the jobs
 * resolve them; verb: the front end's name for the run ("submit"). */
static void provenance(const struct batch *b, const char *verb, struct report_env *e)
{
    const struct config *cfg = b->cfg;
    const struct jobfile *jf = b->jf;
    cJSON **results = b->results;

    memset(e, 0, sizeof(*e));
    if (!b->o.queue)
        snprintf(e->where, sizeof(e->where), "The machine and engine %s --local ran the jobs on",
                 verb);
    else
        workers_of(e, results, jf->n, verb);
    machine(e);
    images_of(e, results, jf->n);
    engine(cfg, e);
    limits(cfg, jf, e);
}

/* A result object's phases as a report row of language lang (borrowed). */
static void timing_of(const cJSON *result, const char *lang, struct report_timing *t)
{
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(result, "phases");
    const cJSON *acq = cJSON_GetObjectItemCaseSensitive(ph, "acquire");

    memset(t, 0, sizeof(*t));
    t->lang = lang;
    for (int p = 0; p < REPORT_NPHASES; p++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(ph, report_phase_names[p]);
        /* a number past any duration (1e300, which no int64_t holds) is
         * not a measurement: read as one not made */
        t->ms[p] = cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1e15
                       ? (int64_t)v->valuedouble
                       : -1;
    }
    if (cJSON_IsString(acq))
        snprintf(t->acquire, sizeof(t->acquire), "%s", acq->valuestring);
}

/* ---- pass@k ------------------------------------------------------------------- */

/* The task of a job for pass@k, as text (owned): group_by meta.FIELD or
 * id; by default (NULL) meta.task_id when the job has one, else the id
 * less a trailing "#N".  A job without the meta field counts under its id. */
static char *task_key(const cJSON *job, const char *id, const char *group_by)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(job, "meta"), *v = NULL;
    cJSON *parsed = cJSON_IsString(meta) ? cJSON_Parse(meta->valuestring) : NULL;
    const char *field = !group_by                            ? "task_id"
                        : strncmp(group_by, "meta.", 5) == 0 ? group_by + 5
                                                             : NULL;
    char *out = NULL, num[64];

    if (parsed)
        meta = parsed;
    if (field && cJSON_IsObject(meta))
        v = cJSON_GetObjectItemCaseSensitive(meta, field);
    if (cJSON_IsString(v))
        out = strdup(v->valuestring);
    else if (cJSON_IsNumber(v) && snprintf(num, sizeof(num), "%.17g", v->valuedouble) > 0)
        out = strdup(num);
    else if (!group_by)
        out = strndup(id, passk_task_len(id));
    else
        out = strdup(id);
    cJSON_Delete(parsed);
    return out;
}

static void timings_free(struct report_timings *tm)
{
    if (tm) {
        free(tm->t);
        free((void *)tm->env);
        free(tm);
    }
}

/* The per-phase rows (every job with a result) and provenance; NULL when
 * out of memory. */
static struct report_timings *timings_of(const struct batch *b, const char *verb)
{
    struct report_timings *tm = calloc(1, sizeof(*tm));
    struct report_env *env = malloc(sizeof(*env));

    if (!tm || !env || !(tm->t = calloc(b->n ? b->n : 1, sizeof(*tm->t)))) {
        free(env);
        timings_free(tm);
        return NULL;
    }
    tm->env = env;
    for (size_t i = 0; i < b->n; i++) /* the runs: a copy's timings are its run's */
        if (b->results[i] && !cJSON_GetObjectItem(b->results[i], "copy_of"))
            timing_of(b->results[i], batch_job_lang(b, i), &tm->t[tm->n++]);
    provenance(b, verb, env);
    return tm;
}

int batch_report(const struct batch *b, FILE *out, const struct batch_report_opts *o,
                 struct llmsb_err *err)
{
    struct report_row *rows = calloc(b->n ? b->n : 1, sizeof(*rows));
    struct report_timings *tm = o->path || o->phases ? timings_of(b, o->verb) : NULL;
    size_t n = 0;
    int rc = 0;

    if (!rows || ((o->path || o->phases) && !tm)) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (!b->jobs[i].checked)
            continue;
        rows[n].lang = batch_job_lang(b, i);
        rows[n].passed =
            b->results[i] && cJSON_IsTrue(cJSON_GetObjectItem(b->results[i], "passed"));
        rows[n].base = report_base_verdict(b->jf->jobs[i], b->results[i], &rows[n].has_base);
        if (!(rows[n].key = task_key(b->jf->jobs[i], b->jobs[i].id, o->group_by))) {
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
            goto out;
        }
        n++;
    }
    rc = report_passk(out, rows, n,
                      o->group_by ? o->group_by : "meta.task_id, else the id less \"#N\"", o->path,
                      tm, err);
    if (rc == 0 && o->path) {
        struct report_runs runs = {b->n,         b->runs,      b->copies, b->dedup,
                                   b->o.recheck, b->rechecked, b->flaky};
        rc = report_runs(o->path, &runs, err);
    }
out:
    for (size_t i = 0; rows && i < n; i++)
        free((char *)rows[i].key);
    free(rows);
    timings_free(tm);
    return rc;
}

int batch_job_graded(const cJSON *r)
{
    const cJSON *st = r ? cJSON_GetObjectItemCaseSensitive(r, "status") : NULL;
    const struct status_info *si;
    enum job_status s;

    if (!cJSON_IsString(st) || status_parse(st->valuestring, strlen(st->valuestring), &s) != 0)
        return 0;
    si = status_info(s);
    return si->final && si->fault != FAULT_INFRA && s != STATUS_INVALID && s != STATUS_CANCELLED &&
           s != STATUS_SESSION_LOST && cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(r, "passed"));
}
