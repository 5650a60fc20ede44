/* agent_runs.h - a warm sandbox and jobs sent straight to its agent, for
 * the benchmarks that time the agent's round trip in one container
 * (bench_run.c, bench_stream.c's comparison row): no pool, no retries. */
#ifndef LLMSB_BENCH_AGENT_RUNS_H
#define LLMSB_BENCH_AGENT_RUNS_H

#include <stdio.h>
#include <string.h>

#include "exec/exec.h"
#include "job/job.h"
#include "sandbox/sandbox.h"

/* A warm container of lang's image, or -1. */
static inline int open_sandbox(struct sandbox *sb, struct backend *be, const struct config *cfg,
                               const char *lang, const char *image)
{
    struct llmsb_err err = {0};
    struct container_spec spec;
    struct job j;

    job_init(&j, cfg);
    job_set_language(&j, lang, &err);
    exec_spec_for_job(&spec, be, cfg, &j, image);
    job_release(&j);
    if (sandbox_open(sb, be, &spec, 60000, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* n runs of code through the agent; lat gets the round trips, prog the
 * program's own times.  Every run must end ok, through the zygote or not
 * as asked. */
static inline int agent_runs(struct sandbox *sb, const struct config *cfg, const char *lang,
                             const char *code, int fresh, int n, double *lat, double *prog)
{
    struct llmsb_err err = {0};
    struct proto_job pj;
    struct job j;
    int rc = 0;

    job_init(&j, cfg);
    j.fresh_interpreter = fresh;
    if (job_set_language(&j, lang, &err) || job_set_code(&j, code, strlen(code), &err) ||
        job_to_proto(&j, &pj, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        job_release(&j);
        return -1;
    }
    for (int i = -3; i < n && rc == 0; i++) { /* 3 warm-up runs (the zygote preloads) */
        struct proto_result res;
        int64_t t0 = clock_mono_us();
        proto_result_init(&res, 1 << 20);
        if (sandbox_run(sb, &pj, 60000, &res, &err) != 0 || res.status != STATUS_OK) {
            fprintf(stderr, "bench: agent run failed: %s %s %s\n", err.msg, status_name(res.status),
                    res.err.data ? res.err.data : "");
            rc = -1;
        } else if (i >= 0 && res.zygote == fresh) {
            fprintf(stderr, "bench: run %d %s the zygote\n", i, fresh ? "went through" : "missed");
            rc = -1;
        } else if (i >= 0) {
            lat[i] = (double)(clock_mono_us() - t0) / 1000.0;
            prog[i] = (double)res.duration_ms;
        }
        proto_result_release(&res);
    }
    proto_job_release(&pj);
    job_release(&j);
    return rc;
}

#endif
