/* provenance.c - the facts `submit --report` states beside its figures so
 * that two reports can be compared (eval/timings.c prints them): this
 * machine (uname, /proc/cpuinfo, /proc/meminfo), the engine the config
 * names and its version, what identifies each image the results name (the
 * engine's image id and repo digest), each language's limits as the jobs
 * resolve them, and each result's phases as a report row.  A fact that
 * cannot be had is stated as unknown, with why. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "config/jobfile.h"
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
static void workers_of(struct report_env *e, cJSON **results, size_t n)
{
    const char *seen[8];
    size_t ns = 0, len;

    len = (size_t)snprintf(e->where, sizeof(e->where), "%s",
                           "The machine submit ran on, its config's engine and limits; the jobs "
                           "ran on the workers");
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

void cli_provenance(const struct config *cfg, const struct jobfile *jf, cJSON **results, int local,
                    struct report_env *e)
{
    memset(e, 0, sizeof(*e));
    if (local)
        snprintf(e->where, sizeof(e->where),
                 "The machine and engine submit --local ran the jobs on");
    else
        workers_of(e, results, jf->n);
    machine(e);
    images_of(e, results, jf->n);
    engine(cfg, e);
    limits(cfg, jf, e);
}

void cli_timing_of(const cJSON *result, const char *lang, struct report_timing *t)
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
