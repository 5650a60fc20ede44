/* bench_run.c - per-job latency of a trivial Python program, all in one
 * run on the same machine and image:
 *   agent      a warm container, the job sent over the attached agent stream
 *   api-exec   the engine's own exec API (the backend's exec op: create +
 *              start + inspect) into the same warm container
 *   cli-exec   `docker exec <id> python3 -c ...` (the docker CLI)
 *   run-rm     `docker run --rm ... python3 -c ...` (the docker CLI)
 * Prints p50/p99 and the ratios against the agent path.  BENCH_N sets the
 * sample count (default 100; run-rm uses N/5). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/sandbox.h"
#include "bench/stats.h"
#include "worker/exec.h"
#include "worker/job.h"

extern char **environ;

#define PROGRAM "print(1)"
#define IMAGE "llmsb/python:latest"

static int spawn_quiet(char *const argv[])
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int st = 0;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* One exec through the engine's own API (the backend's exec op); 0 if it
 * printed "1". */
static int api_exec(struct backend *be, const char *id)
{
    static const char *const argv[] = {"python3", "-c", PROGRAM, NULL};
    struct llmsb_err err = {0};
    struct buf out;
    int code = -1, rc;

    buf_init(&out, 1 << 20);
    rc = be->ops->exec(be, id, argv, "10001:10001", &out, &code, &err);
    if (rc == 0 && (code != 0 || out.len < 2 || memcmp(out.data, "1\n", 2) != 0))
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "bench: engine exec: %s (exit %d)\n", err.msg, code);
    buf_release(&out);
    return rc;
}

static void report(const char *name, double *v, int n, double agent_p50, double program_p50)
{
    double p50 = bench_pct(v, n, 0.5), p99 = bench_pct(v, n, 0.99);
    printf("%-10s n=%-4d p50 %8.1f ms  p99 %8.1f ms  overhead p50 %8.1f ms  "
           "x agent: total %5.1fx, overhead %6.1fx\n",
           name, n, p50, p99, p50 - program_p50, agent_p50 > 0 ? p50 / agent_p50 : 0,
           agent_p50 - program_p50 > 0 ? (p50 - program_p50) / (agent_p50 - program_p50) : 0);
}

int main(void)
{
    struct config cfg;
    struct backend be;
    struct llmsb_err err = {0};
    struct container_spec spec;
    struct sandbox sb;
    struct job j;
    struct proto_job pj;
    char version[64];
    const char *ns = getenv("BENCH_N");
    int n = ns ? atoi(ns) : 100, nrun; /* bench input, not untrusted */
    double *agent, *prog, *apix, *clix, *runrm, agent_p50, prog_p50;

    if (n < 5)
        n = 5;
    nrun = n / 5;
    agent = calloc((size_t)n, sizeof(double));
    prog = calloc((size_t)n, sizeof(double));
    apix = calloc((size_t)n, sizeof(double));
    clix = calloc((size_t)n, sizeof(double));
    runrm = calloc((size_t)n, sizeof(double));
    config_defaults(&cfg);
    if (backend_open(&be, "docker", NULL, NULL, &err) ||
        be.ops->ping(&be, version, sizeof(version), &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    job_init(&j, &cfg);
    job_set_language(&j, "python", &err);
    job_set_code(&j, PROGRAM, strlen(PROGRAM), &err);
    job_to_proto(&j, &pj, &err);
    exec_spec_for_job(&spec, &cfg, &j, IMAGE);
    if (sandbox_open(&sb, &be, &spec, 60000, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    printf("bench: trivial Python job (%s), %s, Docker %s, %d samples\n", PROGRAM, IMAGE, version,
           n);
    for (int i = -3; i < n; i++) { /* 3 warm-up runs */
        struct proto_result res;
        int64_t t0 = clock_mono_us();
        proto_result_init(&res, 1 << 20);
        if (sandbox_run(&sb, &pj, 30000, &res, &err) != 0 || res.status != STATUS_OK) {
            fprintf(stderr, "bench: agent run failed: %s %s\n", err.msg, status_name(res.status));
            return 1;
        }
        if (i >= 0) {
            agent[i] = (double)(clock_mono_us() - t0) / 1000.0;
            prog[i] = (double)res.duration_ms;
        }
        proto_result_release(&res);
    }
    agent_p50 = bench_pct(agent, n, 0.5);
    prog_p50 = bench_pct(prog, n, 0.5);
    for (int i = 0; i < n; i++) {
        int64_t t0 = clock_mono_us();
        if (api_exec(&be, sb.id) != 0) {
            fprintf(stderr, "bench: api exec failed\n");
            return 1;
        }
        apix[i] = (double)(clock_mono_us() - t0) / 1000.0;
    }
    for (int i = 0; i < n; i++) {
        char *argv[] = {"docker", "exec",    "-u", "10001:10001", "-w", "/work",
                        sb.id,    "python3", "-c", PROGRAM,       NULL};
        int64_t t0 = clock_mono_us();
        if (spawn_quiet(argv) != 0) {
            fprintf(stderr, "bench: docker exec failed (is the docker CLI installed?)\n");
            return 1;
        }
        clix[i] = (double)(clock_mono_us() - t0) / 1000.0;
    }
    for (int i = 0; i < nrun; i++) {
        char *argv[] = {"docker",  "run", "--rm", "--network", "none", "--entrypoint",
                        "python3", IMAGE, "-c",   PROGRAM,     NULL};
        int64_t t0 = clock_mono_us();
        if (spawn_quiet(argv) != 0) {
            fprintf(stderr, "bench: docker run failed\n");
            return 1;
        }
        runrm[i] = (double)(clock_mono_us() - t0) / 1000.0;
    }
    printf("program's own run time (agent-measured) p50 %.1f ms\n", prog_p50);
    report("agent", agent, n, agent_p50, prog_p50);
    report("api-exec", apix, n, agent_p50, prog_p50);
    report("cli-exec", clix, n, agent_p50, prog_p50);
    report("run-rm", runrm, nrun, agent_p50, prog_p50);
    printf("agent overhead above the program p50: %.1f ms (target <= 10 ms)\n",
           agent_p50 - prog_p50);
    sandbox_close(&sb);
    proto_job_release(&pj);
    job_release(&j);
    backend_close(&be);
    free(agent), free(prog), free(apix), free(clix), free(runrm);
    return 0;
}
