/* bench_backends.c - per-job cost of a trivial Python job on every backend
 * that is up (Docker, Podman, Kubernetes), side by side in one run:
 *   start      a sandbox from create to the agent's HELLO (a pod: created,
 *              scheduled, started, attached)
 *   agent      a job over the agent stream of a warm sandbox
 *   exec       the engine's own exec into the same sandbox (Docker and
 *              Podman: exec create + start + inspect; Kubernetes: the exec
 *              WebSocket through the API server and the kubelet)
 * A backend that does not answer is listed as not up, with why.  Kubernetes
 * is tried with $KUBECONFIG (and $LLMSB_K8S_NODE for a cluster without a
 * scheduler, which the backend reads), as `eval "$(scripts/k8s-up.sh)"`
 * sets them.  BENCH_N sets the
 * sample count (default 50). */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "sandbox/sandbox.h"
#include "bench/stats.h"
#include "exec/exec.h"
#include "exec/runner.h"
#include "job/job.h"

#define PROGRAM "print(1)"
#define IMAGE "llmsb/python:latest"

struct row {
    const char *name;
    char version[64];
    int up;
    char why[200];
    double start_ms, agent_p50, agent_p99, exec_p50, exec_p99, prog_p50;
};

static int engine_exec(struct backend *be, const char *id, struct llmsb_err *err)
{
    static const char *const argv[] = {"python3", "-c", PROGRAM, NULL};
    struct buf out;
    int code = -1, rc;

    buf_init(&out, 1 << 20);
    rc = be->ops->exec(be, id, argv, "10001:10001", &out, &code, err);
    if (rc == 0 && (code != 0 || out.len < 2 || memcmp(out.data, "1\n", 2) != 0))
        rc =
            llmsb_err_set(err, LLMSB_ERR_BACKEND, "exec printed %zu bytes, exit %d", out.len, code);
    buf_release(&out);
    return rc;
}

static void measure(struct row *r, const struct config *base, int n)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_RUN, .slots = 1};
    struct config *cfg = malloc(sizeof(*cfg));
    struct runner rn;
    struct backend *be = &rn.be;
    struct llmsb_err err = {0};
    struct container_spec spec;
    struct sandbox sb;
    struct job j;
    struct proto_job pj;
    double *agent = calloc((size_t)n, sizeof(double)), *prog = calloc((size_t)n, sizeof(double)),
           *ex = calloc((size_t)n, sizeof(double));
    int64_t t0;

    if (!cfg || !agent || !prog || !ex) {
        snprintf(r->why, sizeof(r->why), "out of memory");
        goto out;
    }
    *cfg = *base;
    snprintf(cfg->backend, sizeof(cfg->backend), "%s", r->name);
    if (runner_open(&rn, cfg, &ro, &err) != 0) {
        snprintf(r->why, sizeof(r->why), "%.190s", err.msg);
        goto out;
    }
    snprintf(r->version, sizeof(r->version), "%s", rn.engine_version);
    job_init(&j, cfg);
    job_set_language(&j, "python", &err);
    job_set_code(&j, PROGRAM, strlen(PROGRAM), &err);
    job_to_proto(&j, &pj, &err);
    exec_spec_for_job(&spec, be, cfg, &j, IMAGE);
    t0 = clock_mono_us();
    if (sandbox_open(&sb, be, &spec, 60000, &err) != 0) {
        snprintf(r->why, sizeof(r->why), "%.190s", err.msg);
        goto close;
    }
    r->start_ms = (double)(clock_mono_us() - t0) / 1000.0;
    for (int i = -3; i < n; i++) { /* 3 warm-up runs */
        struct proto_result res;
        t0 = clock_mono_us();
        proto_result_init(&res, 1 << 20);
        if (sandbox_run(&sb, &pj, 30000, &res, &err) != 0 || res.status != STATUS_OK) {
            snprintf(r->why, sizeof(r->why), "agent run: %.150s %s", err.msg,
                     status_name(res.status));
            proto_result_release(&res);
            goto sandbox;
        }
        if (i >= 0) {
            agent[i] = (double)(clock_mono_us() - t0) / 1000.0;
            prog[i] = (double)res.duration_ms;
        }
        proto_result_release(&res);
    }
    for (int i = 0; i < n; i++) {
        t0 = clock_mono_us();
        if (engine_exec(be, sb.id, &err) != 0) {
            snprintf(r->why, sizeof(r->why), "engine exec: %.170s", err.msg);
            goto sandbox;
        }
        ex[i] = (double)(clock_mono_us() - t0) / 1000.0;
    }
    r->agent_p50 = bench_pct(agent, n, 0.5);
    r->agent_p99 = bench_pct(agent, n, 0.99);
    r->exec_p50 = bench_pct(ex, n, 0.5);
    r->exec_p99 = bench_pct(ex, n, 0.99);
    r->prog_p50 = bench_pct(prog, n, 0.5);
    r->up = 1;
sandbox:
    sandbox_close(&sb);
close:
    proto_job_release(&pj);
    job_release(&j);
    runner_close(&rn, "the bench ended");
out:
    free(cfg);
    free(agent), free(prog), free(ex);
}

int main(void)
{
    struct row rows[] = {{.name = "docker"}, {.name = "podman"}, {.name = "kubernetes"}};
    struct config cfg;
    const char *ns = getenv("BENCH_N");
    int n = ns ? atoi(ns) : 50; /* bench input, not untrusted */

    if (n < 5)
        n = 5;
    config_defaults(&cfg);
    printf("bench: trivial Python job (%s) on each backend that is up, %d samples each\n", PROGRAM,
           n);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        measure(&rows[i], &cfg, n);
    printf("%-11s %-10s %9s %10s %10s %10s %10s %10s %8s\n", "backend", "version", "start ms",
           "agent p50", "agent p99", "exec p50", "exec p99", "program", "exec/agent");
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        if (!r->up) {
            printf("%-11s not up: %s\n", r->name, r->why);
            continue;
        }
        printf("%-11s %-10.10s %9.0f %10.1f %10.1f %10.1f %10.1f %10.1f %7.1fx\n", r->name,
               r->version, r->start_ms, r->agent_p50, r->agent_p99, r->exec_p50, r->exec_p99,
               r->prog_p50, r->agent_p50 > 0 ? r->exec_p50 / r->agent_p50 : 0);
    }
    printf("(agent: the job through the pooled sandbox's agent; exec: the engine's own exec into "
           "the same sandbox; program: its own run time as the agent measured it)\n");
    return 0;
}
