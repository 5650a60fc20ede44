/* main.c - llm-sandbox: verb dispatch, global options, signals.  Only this
 * layer prints to the terminal and exits. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "backends/registry/registry.h"

static const char usage[] =
    "usage: llm-sandbox [--config FILE] [--backend B] <command> [<args>]\n"
    "\n"
    "Run untrusted code in hardened, pooled containers.\n"
    "\n"
    "commands:\n"
    "  run [options] FILE|-     run one program now and print its output\n"
    "  images build [LANG...]   build the sandbox images (no registry needed)\n"
    "  worker                   run a worker: pull jobs from Redis until SIGTERM\n"
    "  submit JOBFILE           enqueue a YAML or JSON Lines job file (--wait, --local)\n"
    "  result ID [--wait S]     print one job's result\n"
    "  status [--json]          queue depth, workers, dead letters (--dead N), throughput\n"
    "  cancel ID...             cancel queued or running jobs (--file JOBFILE, --all)\n"
    "  dead list|show|requeue|drop  the dead letters: inspect, run again, delete\n"
    "  scan [--policy P] FILE   run only the security check (exit 0 safe, 1 blocked)\n"
    "  convert DATASET.jsonl    a benchmark's rows (and samples) as a job file\n"
    "  eval DATASET [SAMPLES]   convert + submit + pass@k and the phases, in one command\n"
    "  mcp [--queue]            a Model Context Protocol server on stdio (docs/mcp.md)\n"
    "  serve --http ADDR        SandboxFusion's, Judge0's and Piston's HTTP APIs (docs/http.md)\n"
    "\n"
    "global options (also as environment variables):\n"
    "  --config FILE      YAML config (LLMSB_CONFIG; default ./llm-sandbox.yaml)\n"
    "  --backend NAME     container engine (LLMSB_BACKEND)\n"
    "  --redis URL        Redis URL for the queue verbs (LLMSB_REDIS_URL)\n"
    "  --prefix P         Redis key prefix (LLMSB_PREFIX)\n"
    "  --log-level L      debug, info, warn or error\n"
    "  --version          print the version\n"
    "\n"
    "See 'llm-sandbox <command> --help' and docs/ for more.\n";

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The first signal asks every wait to stop (the summary and the clean-up
 * follow); a second one, when that clean-up hangs, exits at once. */
static void on_signal(int sig)
{
    static const char msg[] = "\nsecond signal: exiting now; containers being removed may be left "
                              "(labels llmsb.managed=1, llmsb.worker=<host>-<pid>)\n";
    (void)sig;
    if (llmsb_interrupted) {
        ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
        (void)w;
        _exit(EXIT_INTERRUPTED);
    }
    llmsb_interrupted = 1;
}

void cli_signals(void)
{
    llmsb_signals(on_signal);
}

int cli_global_opt(struct cli_globals *g, int argc, char **argv, int *i)
{
    static const char *names[] = {"--config", "--backend", "--redis", "--prefix", "--log-level"};
    const char **slots[] = {&g->config_path, &g->backend, &g->redis_url, &g->prefix, NULL};
    const char *a = argv[*i];

    for (int k = 0; k < 5; k++) {
        size_t nl = strlen(names[k]);
        const char *val = NULL;
        if (strncmp(a, names[k], nl) != 0 || (a[nl] != '\0' && a[nl] != '='))
            continue;
        if (a[nl] == '=') {
            val = a + nl + 1;
        } else if (*i + 1 < argc) {
            val = argv[++*i];
        } else {
            cli_error("%s needs a value", names[k]);
            return -1;
        }
        if (slots[k]) {
            *slots[k] = val;
        } else {
            int lvl = llmsb_log_level_parse(val);
            if (lvl < 0) {
                cli_error("--log-level must be debug, info, warn or error (got \"%s\")", val);
                return -1;
            }
            llmsb_log_level = lvl;
        }
        return 1;
    }
    return 0;
}

int cli_config_finish(struct cli_globals *g)
{
    struct llmsb_err err = {0};
    const char *env;

    config_defaults(&g->cfg);
    if (config_load_auto(&g->cfg, g->config_path, &err) != 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (!g->backend && (env = getenv("LLMSB_BACKEND")) && *env)
        g->backend = env;
    if (g->backend) {
        if (!backend_known(g->backend)) {
            cli_error("--backend: \"%s\" is not available in this build (available: %s)",
                      g->backend, backend_names());
            return -1;
        }
        snprintf(g->cfg.backend, sizeof(g->cfg.backend), "%s", g->backend);
    }
    /* backend.runtime for one command: make test-gvisor runs the suites on runsc */
    if ((env = getenv("LLMSB_RUNTIME")) && *env &&
        snprintf(g->cfg.runtime, sizeof(g->cfg.runtime), "%s", env) >=
            (int)sizeof(g->cfg.runtime)) {
        cli_error("LLMSB_RUNTIME: \"%.60s\" is longer than %zu bytes", env,
                  sizeof(g->cfg.runtime) - 1);
        return -1;
    }
    if (!g->redis_url)
        g->redis_url = getenv("LLMSB_REDIS_URL");
    if (!g->prefix)
        g->prefix = getenv("LLMSB_PREFIX");
    if (g->redis_url && *g->redis_url)
        snprintf(g->cfg.redis_url, sizeof(g->cfg.redis_url), "%s", g->redis_url);
    if (g->prefix && *g->prefix)
        snprintf(g->cfg.redis_prefix, sizeof(g->cfg.redis_prefix), "%s", g->prefix);
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(struct cli_globals *g, int argc, char **argv);
} verbs[] = {
    {"run", cmd_run},       {"images", cmd_images}, {"worker", cmd_worker},
    {"submit", cmd_submit}, {"result", cmd_result}, {"status", cmd_status},
    {"cancel", cmd_cancel}, {"scan", cmd_scan},     {"convert", cmd_convert},
    {"eval", cmd_eval},     {"mcp", cmd_mcp},       {"dead", cmd_dead},
    {"serve", cmd_serve},
};

int main(int argc, char **argv)
{
    static struct cli_globals g;
    int i = 1, rc;

    for (; i < argc; i++) {
        if ((rc = cli_global_opt(&g, argc, argv, &i)) < 0)
            return EXIT_USAGE;
        if (rc == 0)
            break;
    }
    if (i >= argc || strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ||
        strcmp(argv[i], "help") == 0) {
        fputs(usage, i >= argc ? stderr : stdout);
        return i >= argc ? EXIT_USAGE : 0;
    }
    if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "version") == 0) {
        printf("llm-sandbox %s\n", LLMSB_VERSION);
        return 0;
    }
    for (size_t k = 0; k < sizeof(verbs) / sizeof(verbs[0]); k++)
        if (strcmp(argv[i], verbs[k].name) == 0)
            return verbs[k].fn(&g, argc - i, argv + i);
    cli_error("unknown command '%s'", argv[i]);
    fputs("hint: see 'llm-sandbox --help'\n", stderr);
    return EXIT_USAGE;
}
