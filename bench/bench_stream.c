/* bench_stream.c - a steady stream of trivial Python jobs (print(1)) on
 * runc and on gVisor (runtime runsc), both in this one run, through the
 * runner as a front end runs them: one slot, the zygote prestarted, no
 * pool.min_idle (what is made ahead follows the stream's rate alone):
 *   rate   a job arrives every BENCH_STREAM_GAP_MS (default 2000), a pace
 *          the machine sustains on both; each job's own time (the
 *          runner's: prepare, acquire, the agent's turn, finish) and its
 *          latency (arrival to result, waiting included)
 *   b2b    back to back: each job as the last one ends; the wall time per
 *          job (the stream's throughput) and each job's own time
 *   reuse  for comparison only, not how gVisor runs jobs: the same program
 *          sent n times to one container's agent (no pool), what a pool
 *          that reused containers on gVisor would reach at best
 * The first two jobs of the stream rows are left out (a rate is known from
 * two jobs on; runc's first is its one cold start).  Prints p50 and p99
 * per runtime, the ratio of runsc's p50 to runc's, and the p50 of each
 * phase (where the time goes).
 *   usage: bin/bench/bench_stream [N]   (N jobs a row, default 30) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/agent_runs.h"
#include "bench/stats.h"
#include "common/clock.h"
#include "exec/runner.h"
#include "job/job.h"

#define SKIP 2 /* the first jobs of a row, left out */

/* One row's samples (ms): a job's own time, its latency, its phases (the
 * host's; the agent's run step and the program's own duration). */
struct row {
    double *own, *lat, *acq, *agent, *fin, *run, *prog;
    int n;
    double wall_per_job;
    int cold; /* jobs that made their own container */
};

static int row_alloc(struct row *r, int n)
{
    memset(r, 0, sizeof(*r));
    r->own = calloc((size_t)n, sizeof(double));
    r->lat = calloc((size_t)n, sizeof(double));
    r->acq = calloc((size_t)n, sizeof(double));
    r->agent = calloc((size_t)n, sizeof(double));
    r->fin = calloc((size_t)n, sizeof(double));
    r->run = calloc((size_t)n, sizeof(double));
    r->prog = calloc((size_t)n, sizeof(double));
    return r->own && r->lat && r->acq && r->agent && r->fin && r->run && r->prog ? 0 : -1;
}

static void row_free(struct row *r)
{
    free(r->own), free(r->lat), free(r->acq), free(r->agent), free(r->fin);
    free(r->run), free(r->prog);
}

/* Runs n jobs in rn, job i arriving at t0 + i * gap_ms (0: back to
 * back). 0, or -1 when a job did not end ok. */
static int stream(struct runner *rn, const struct config *cfg, int n, int64_t gap_ms, struct row *r)
{
    struct llmsb_err err = {0};
    struct job j;
    int64_t t0, first = 0;
    int rc = 0;

    job_init(&j, cfg);
    if (job_set_language(&j, "python", &err) != 0 || job_set_code(&j, "print(1)", 8, &err) != 0) {
        fprintf(stderr, "bench_stream: %s\n", err.msg);
        job_release(&j);
        return -1;
    }
    t0 = clock_mono_ms();
    for (int i = 0; i < n && rc == 0; i++) {
        int64_t arrive = gap_ms ? t0 + i * gap_ms : clock_mono_ms(), start, end;
        struct job_result res;

        if (clock_mono_ms() < arrive)
            clock_sleep_ms(arrive - clock_mono_ms());
        if (i == SKIP)
            first = clock_mono_ms();
        job_result_init(&res, &j);
        start = clock_mono_ms();
        if (runner_run(rn, NULL, &j, NULL, &res) != SCHED_OUT_FINAL || res.r.status != STATUS_OK) {
            fprintf(stderr, "bench_stream: job %d: %s %s\n", i, status_name(res.r.status),
                    res.error);
            rc = -1;
        }
        end = clock_mono_ms();
        if (i >= SKIP) {
            int k = r->n++;
            r->own[k] = (double)(end - start);
            r->lat[k] = (double)(end - arrive);
            r->acq[k] = (double)res.ph.acquire_ms;
            r->agent[k] = (double)res.ph.agent_ms;
            r->fin[k] = (double)res.ph.finish_ms;
            r->run[k] = (double)res.r.phases.run_ms;
            r->prog[k] = (double)res.r.duration_ms;
            r->cold += res.ph.acquire != RESULT_ACQUIRE_WARM;
        }
        job_result_release(&res);
    }
    if (rc == 0 && r->n > 0)
        r->wall_per_job = (double)(clock_mono_ms() - first) / r->n;
    job_release(&j);
    return rc;
}

/* The comparison row: n jobs in one container of rn's engine. */
static int reuse_row(struct runner *rn, const struct config *cfg, int n, struct row *r)
{
    struct sandbox sb;
    int rc;

    if (open_sandbox(&sb, &rn->be, cfg, "python", "llmsb/python:latest") != 0)
        return -1;
    rc = agent_runs(&sb, cfg, "python", "print(1)", 0, n, r->own, r->prog);
    r->n = rc == 0 ? n : 0;
    sandbox_close(&sb);
    return rc;
}

/* The rows on one runtime, through a runner of their own. */
static int runtime_rows(const char *runtime, int n, int64_t gap_ms, struct row *rate,
                        struct row *b2b, struct row *reuse)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_RUN, .slots = 1, .prestart = 1};
    struct config cfg;
    struct runner rn;
    struct llmsb_err err = {0};
    int rc;

    config_defaults(&cfg);
    snprintf(cfg.backend, sizeof(cfg.backend), "docker");
    snprintf(cfg.runtime, sizeof(cfg.runtime), "%s", runtime);
    if (runner_open(&rn, &cfg, &ro, &err) != 0) {
        fprintf(stderr, "bench_stream: %s: %s\n", runtime, err.msg);
        config_release(&cfg);
        return -1;
    }
    rc = stream(&rn, &cfg, n, gap_ms, rate);
    pool_settle(&rn.pool, 60000); /* the last job's leftovers off the next row's clock */
    clock_sleep_ms(gap_ms);
    if (rc == 0)
        rc = stream(&rn, &cfg, n, 0, b2b);
    if (rc == 0)
        rc = reuse_row(&rn, &cfg, n, reuse);
    runner_close(&rn, "the bench ended");
    config_release(&cfg);
    return rc;
}

static void line(const char *name, double *runc, double *runsc, int n)
{
    double a50 = bench_pct(runc, n, 0.5), a99 = bench_pct(runc, n, 0.99);
    double b50 = bench_pct(runsc, n, 0.5), b99 = bench_pct(runsc, n, 0.99);

    printf("%-26s %10.0f %10.0f %11.0f %11.0f %8.1fx\n", name, a50, a99, b50, b99,
           a50 > 0 ? b50 / a50 : 0);
}

/* A whole number in [lo, hi] from s, or def when s is NULL; -1 (said) when
 * it is not one. */
static long long knob(const char *what, const char *s, long long lo, long long hi, long long def)
{
    char *end;
    long long v;

    if (!s)
        return def;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "bench_stream: %s must be a whole number from %lld to %lld (got \"%s\")\n",
                what, lo, hi, s);
        return -1;
    }
    return v;
}

int main(int argc, char **argv)
{
    long long n = knob("N", argc > 1 ? argv[1] : NULL, SKIP + 5, 100000, 30);
    long long gap = knob("BENCH_STREAM_GAP_MS", getenv("BENCH_STREAM_GAP_MS"), 1, 600000, 2000);
    struct row rate[2], b2b[2], reuse[2];
    char name[64];
    int rc = 0;

    if (n < 0 || gap < 0)
        return 2;
    for (int k = 0; k < 2; k++)
        if (row_alloc(&rate[k], (int)n) != 0 || row_alloc(&b2b[k], (int)n) != 0 ||
            row_alloc(&reuse[k], (int)n) != 0)
            return 1;
    if (runtime_rows("runc", (int)n, gap, &rate[0], &b2b[0], &reuse[0]) != 0 ||
        runtime_rows("runsc", (int)n, gap, &rate[1], &b2b[1], &reuse[1]) != 0)
        return 1;
    printf("bench_stream: print(1) in Python, one slot, %lld jobs a row (the first %d left out)\n",
           n, SKIP);
    printf("%-26s %10s %10s %11s %11s %9s\n", "row (ms)", "runc p50", "runc p99", "runsc p50",
           "runsc p99", "p50 x");
    snprintf(name, sizeof(name), "rate 1/%lldms: job", (long long)gap);
    line(name, rate[0].own, rate[1].own, rate[0].n);
    snprintf(name, sizeof(name), "rate 1/%lldms: latency", (long long)gap);
    line(name, rate[0].lat, rate[1].lat, rate[0].n);
    line("back to back: job", b2b[0].own, b2b[1].own, b2b[0].n);
    printf("%-26s %10.1f %10s %11.1f %11s %8.1fx\n", "back to back: wall/job", b2b[0].wall_per_job,
           "", b2b[1].wall_per_job, "", b2b[1].wall_per_job / b2b[0].wall_per_job);
    line("reuse (comparison): job", reuse[0].own, reuse[1].own, reuse[0].n);
    for (int k = 0; k < 2; k++) {
        struct row *r[2] = {&rate[k], &b2b[k]};
        for (int m = 0; m < 2; m++)
            printf("%-5s %-4s p50: acquire %.0f ms, agent %.0f ms (its run step %.0f, the "
                   "program %.0f), finish %.0f ms; made for the job: %d of %d\n",
                   k ? "runsc" : "runc", m ? "b2b" : "rate", bench_pct(r[m]->acq, r[m]->n, 0.5),
                   bench_pct(r[m]->agent, r[m]->n, 0.5), bench_pct(r[m]->run, r[m]->n, 0.5),
                   bench_pct(r[m]->prog, r[m]->n, 0.5), bench_pct(r[m]->fin, r[m]->n, 0.5),
                   r[m]->cold, r[m]->n);
    }
    printf("goal: the rate row's job p50 on runsc <= 3x runc's\n");
    for (int k = 0; k < 2; k++)
        printf("%-5s reuse p50: the program %.0f ms\n", k ? "runsc" : "runc",
               bench_pct(reuse[k].prog, reuse[k].n, 0.5));
    for (int k = 0; k < 2; k++)
        row_free(&rate[k]), row_free(&b2b[k]), row_free(&reuse[k]);
    return rc;
}
