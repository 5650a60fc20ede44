/* bench_run.c - per-job latency of three Python programs (trivial, numpy,
 * a matplotlib plot), all in one run on the same machine and image, then
 * of a trivial Ruby and R program (zygote and fresh only):
 *   zygote     a warm container, the job sent over the attached agent
 *              stream, the program forked by the image's preloaded zygote
 *   fresh      the same with fresh_interpreter: a new python3 per job
 *   api-exec   the engine's own exec API (the backend's exec op: create +
 *              start + inspect) into the same warm container (trivial only)
 *   cli-exec   `docker exec <id> python3 -c ...` (the docker CLI)
 *   run-rm     `docker run --rm ... python3 -c ...` (the docker CLI)
 * Prints p50/p99, the agent's own overhead (its round trip minus the
 * program's time as the agent measured it) and the ratios.  BENCH_N sets
 * the trivial program's sample count (default 100; the others N/3, run-rm
 * N/5). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "sandbox/sandbox.h"
#include "bench/agent_runs.h"
#include "bench/stats.h"
#include "exec/exec.h"
#include "exec/runner.h"
#include "job/job.h"

extern char **environ;

#define IMAGE "llmsb/python:latest"

struct program {
    const char *name;
    const char *code;      /* as a job */
    const char *exec_code; /* for python3 -c, where no plot hook saves it */
};

static const struct program programs[] = {
    {"trivial", "print(1)", "print(1)"},
    {"numpy", "import numpy as np\nprint(int(np.arange(10).sum()) - 44)",
     "import numpy as np\nprint(int(np.arange(10).sum()) - 44)"},
    {"plot", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nprint(1)",
     "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.savefig('/tmp/p.png')\nprint(1)"},
};

/* The other languages with a zygote: a trivial program, zygote vs fresh. */
static const struct other {
    const char *lang, *image, *code;
} others[] = {{"ruby", "llmsb/ruby:latest", "puts 1"}, {"r", "llmsb/r:latest", "cat(1, \"\\n\")"}};

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
    static const char *const argv[] = {"python3", "-c", "print(1)", NULL};
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

static double report(const char *prog, const char *name, double *v, int n, double base_p50)
{
    double p50 = bench_pct(v, n, 0.5), p99 = bench_pct(v, n, 0.99);
    printf("%-8s %-9s n=%-4d p50 %8.1f ms  p99 %8.1f ms", prog, name, n, p50, p99);
    if (base_p50 > 0)
        printf("   %6.1fx the zygote's p50", p50 / base_p50);
    putchar('\n');
    return p50;
}

static int cli_runs(const char *id, const char *code, int n, double *lat)
{
    for (int i = 0; i < n; i++) {
        char *exec_argv[] = {"docker",   "exec",
                             "-u",       "10001:10001",
                             "-w",       "/tmp",
                             "-e",       "MPLBACKEND=Agg",
                             "-e",       "MPLCONFIGDIR=/tmp/.mpl",
                             (char *)id, "python3",
                             "-c",       (char *)code,
                             NULL};
        char *run_argv[] = {
            "docker",       "run",     "--rm", "--network", "none",       "-e", "MPLBACKEND=Agg",
            "--entrypoint", "python3", IMAGE,  "-c",        (char *)code, NULL};
        int64_t t0 = clock_mono_us();
        if (spawn_quiet(id ? exec_argv : run_argv) != 0) {
            fprintf(stderr, "bench: docker %s failed (is the docker CLI installed?)\n",
                    id ? "exec" : "run");
            return -1;
        }
        lat[i] = (double)(clock_mono_us() - t0) / 1000.0;
    }
    return 0;
}

int main(void)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_RUN, .slots = 1};
    struct config cfg;
    struct runner rn;
    struct backend *be = &rn.be;
    struct llmsb_err err = {0};
    struct sandbox sb;
    const char *ns = getenv("BENCH_N");
    int n = ns ? atoi(ns) : 100; /* bench input, not untrusted */
    double *lat, *prog;

    if (n < 15)
        n = 15;
    lat = calloc((size_t)n, sizeof(double));
    prog = calloc((size_t)n, sizeof(double));
    config_defaults(&cfg);
    snprintf(cfg.backend, sizeof(cfg.backend), "docker");
    if (runner_open(&rn, &cfg, &ro, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    if (open_sandbox(&sb, be, &cfg, "python", IMAGE) != 0)
        return 1;
    printf("bench: Python jobs, %s, Docker %s, one warm container\n", IMAGE, rn.engine_version);
    for (size_t p = 0; p < sizeof(programs) / sizeof(programs[0]); p++) {
        const struct program *pg = &programs[p];
        int m = p == 0 ? n : n / 3;
        double zyg, fresh, zprog, fprog, cli, rm, api = 0;

        if (agent_runs(&sb, &cfg, "python", pg->code, 0, m, lat, prog) != 0)
            return 1;
        zprog = bench_pct(prog, m, 0.5);
        zyg = report(pg->name, "zygote", lat, m, 0);
        if (agent_runs(&sb, &cfg, "python", pg->code, 1, m, lat, prog) != 0)
            return 1;
        fprog = bench_pct(prog, m, 0.5);
        fresh = report(pg->name, "fresh", lat, m, zyg);
        if (p == 0) {
            for (int i = 0; i < m; i++) {
                int64_t t0 = clock_mono_us();
                if (api_exec(be, sb.id) != 0)
                    return 1;
                lat[i] = (double)(clock_mono_us() - t0) / 1000.0;
            }
            api = report(pg->name, "api-exec", lat, m, zyg);
        }
        if (cli_runs(sb.id, pg->exec_code, m, lat) != 0)
            return 1;
        cli = report(pg->name, "cli-exec", lat, m, zyg);
        if (cli_runs(NULL, pg->exec_code, m / 5 > 3 ? m / 5 : 3, lat) != 0)
            return 1;
        rm = report(pg->name, "run-rm", lat, m / 5 > 3 ? m / 5 : 3, zyg);
        printf("%-8s the program's own time p50: zygote %.1f ms, fresh %.1f ms; the agent's "
               "own overhead p50: zygote %.1f ms, fresh %.1f ms\n",
               pg->name, zprog, fprog, zyg - zprog, fresh - fprog);
        printf("%-8s zygote is %.1fx fresh, %.1fx cli-exec, %.1fx run-rm", pg->name, fresh / zyg,
               cli / zyg, rm / zyg);
        if (api > 0)
            printf(", %.1fx api-exec", api / zyg);
        printf("\n");
    }
    printf("targets: plot job p50 <= 100 ms through the zygote; agent overhead <= 2 ms\n");
    sandbox_close(&sb);
    /* Ruby's and R's zygotes (llmsb_zygote.rb, .R): a trivial program */
    for (size_t l = 0; l < sizeof(others) / sizeof(others[0]); l++) {
        const struct other *o = &others[l];
        int m = n / 3;
        double zyg, fresh, zprog, fprog;

        if (open_sandbox(&sb, be, &cfg, o->lang, o->image) != 0 ||
            agent_runs(&sb, &cfg, o->lang, o->code, 0, m, lat, prog) != 0)
            return 1;
        zprog = bench_pct(prog, m, 0.5);
        zyg = report(o->lang, "zygote", lat, m, 0);
        if (agent_runs(&sb, &cfg, o->lang, o->code, 1, m, lat, prog) != 0)
            return 1;
        fprog = bench_pct(prog, m, 0.5);
        fresh = report(o->lang, "fresh", lat, m, zyg);
        printf("%-8s trivial: the program's own time p50: zygote %.1f ms, fresh %.1f ms; zygote "
               "is %.1fx fresh\n",
               o->lang, zprog, fprog, fresh / zyg);
        sandbox_close(&sb);
    }
    runner_close(&rn, "the bench ended");
    free(lat), free(prog);
    return 0;
}
