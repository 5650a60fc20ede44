/* report.h - pass@k of a batch of checked jobs: grouped into tasks,
 * averaged per language and over all, printed as a table and written as a
 * JSON report and its Markdown twin. */
#ifndef LLMSB_EVAL_REPORT_H
#define LLMSB_EVAL_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "common/common.h"

/* One checked job of a batch for pass@k: its language, its task key. */
struct report_row {
    const char *lang, *key;
    int passed;
    /* the base tests' verdict of a job that has one (EvalPlus's: passed is
     * then base and plus), 1 or 0; -1 (or a zeroed row's 0 with has_base
     * 0): none */
    int base, has_base;
};
/* ---- timings and provenance (eval/timings.c) ---------------------------- */

/* The phases a report shows, in order (docs/jobs.md, "phases"). */
#define REPORT_NPHASES 10
extern const char *const report_phase_names[REPORT_NPHASES];

/* One result's phases: ms per report_phase_names entry, -1 when the
 * result has none (a step that did not run, an older agent). */
struct report_timing {
    const char *lang;
    int64_t ms[REPORT_NPHASES];
    char acquire[12]; /* "warm", "cold", ...; "" none */
};

/* What makes two reports comparable: the machine, the engine, the images
 * and the limits the jobs had.  A fact that could not be had says why in
 * its own text ("unknown: ..."). */
struct report_image {
    char name[256];
    char digest[512]; /* the engine's image id and repo digest, or why not known */
};
struct report_limits {
    char lang[32];
    int64_t timeout_ms, memory_mb, pids;
    double cpus;
    size_t jobs; /* how many of the language's jobs had these */
};
#define REPORT_MAX_IMAGES 32
#define REPORT_MAX_LIMITS 64
struct report_env {
    char host[256], kernel[256], cpu_model[256];
    long cpus;
    long long memory_bytes;
    char engine[32], engine_version[256]; /* the version, or why not known */
    char where[256];                      /* whose machine and engine these are */
    struct report_image images[REPORT_MAX_IMAGES];
    size_t nimages;
    struct report_limits limits[REPORT_MAX_LIMITS];
    size_t nlimits;
};

/* A batch's timings and provenance for report_passk; NULL: none. */
struct report_timings {
    struct report_timing *t; /* sorted by language here */
    size_t n;
    const struct report_env *env;
};

/* The nearest-rank percentile pct (1..100) of n values sorted ascending:
 * the value at rank ceil(pct/100 * n), 1-based. -1 when n is 0. */
int64_t report_percentile(const int64_t *sorted, size_t n, int pct);
/* Adds a limits row: one per distinct (lang, limits), counting jobs. */
void report_env_add_limits(struct report_env *env, const char *lang, int64_t timeout_ms,
                           int64_t memory_mb, double cpus, int64_t pids);
/* Fills tm's per-phase table into o ("phases", "environment"), prints it
 * to out, or writes it as Markdown to md. */
int report_timings_json(cJSON *o, const struct report_timings *tm);
void report_timings_print(FILE *out, const struct report_timings *tm, int md);

/* Groups rows into tasks (rows are sorted here), prints pass@1/10/100 per
 * language and in total to out when some task has several samples or path
 * is given, and writes path (JSON) and path.md (Markdown).  When some rows
 * have a base verdict (EvalPlus), pass@k of the base tests follows, over
 * those rows' tasks ("base" in the JSON, a second table).  With tm and
 * path, the per-phase percentiles and the provenance are printed and
 * written too.  On an error returns a negative code with err naming the
 * file it could not write. */
int report_passk(FILE *out, struct report_row *rows, size_t n, const char *group_by,
                 const char *path, const struct report_timings *tm, struct llmsb_err *err);

/* The base verdict of a job whose meta names the case that holds it
 * (meta.base_case: EvalPlus's jobs), from its result (NULL: none, not
 * passed): 1 passed, 0 not, with *has_base 1; -1 with *has_base 0 when the
 * job has none. */
int report_base_verdict(const cJSON *job, const cJSON *result, int *has_base);

/* What a submission ran (submit's dedup and --recheck-timeouts). */
struct report_runs {
    size_t jobs, runs, copies; /* copies: jobs that shared an identical job's run */
    int dedup;                 /* 0: --no-dedup */
    int recheck;               /* --recheck-timeouts was on */
    size_t rechecked, flaky;   /* timeouts run again; of those, how many changed */
};
/* Adds a "runs" object to the JSON report at path and a "Runs" section to
 * path.md (both written by report_passk).  On an error returns a negative
 * code with err naming the file. */
int report_runs(const char *path, const struct report_runs *r, struct llmsb_err *err);

#endif
