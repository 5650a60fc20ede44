/* run.c - `llm-sandbox run`: one program, now, in a fresh hardened
 * container, no Redis.  Prints the program's output as written and exits
 * with its exit code, or with a documented code for other statuses. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/random.h"
#include "exec/runner.h"
#include "job/job.h"
#include "job/result.h"

static const char run_usage[] =
    "usage: llm-sandbox run [options] FILE|- [-- ARGS...]\n"
    "\n"
    "  --lang L          language (default: from FILE's extension)\n"
    "  --timeout S       wall-clock limit in seconds (fractions allowed)\n"
    "  --memory MB       memory limit in MB\n"
    "  --cpus N          CPU limit (fractions allowed)\n"
    "  --pids N          process/thread limit\n"
    "  --output BYTES    stdout+stderr cap\n"
    "  --network         allow network (off by default)\n"
    "  --lib NAME        install a library first (repeatable; pip, npm, go get,\n"
    "                    gem, install.packages or a Debian package for C++)\n"
    "  --no-plots        do not capture plots (Python, R)\n"
    "  --image IMAGE     run in this image instead of the language's\n"
    "  --stdin FILE      feed FILE to the program (default: this process's\n"
    "                    stdin when it is not a terminal and FILE is not -)\n"
    "  --env K=V         set an environment variable (repeatable)\n"
    "  --policy P        security policy: a preset or a policy of the config\n"
    "  --artifact GLOB   bring back files of the work dir matching GLOB (repeatable)\n"
    "  --artifacts DIR   save the collected files under DIR (default glob: *)\n"
    "  --json            print the whole result object as JSON\n"
    "\n"
    "exit status: the program's own for ok and runtime_error (128+N when\n"
    "killed by signal N); otherwise 118 compile_error, 120 blocked, 121 output_limit,\n"
    "122 memory_limit, 124 timeout, 2 invalid, 3 internal error,\n"
    "130 interrupted.\n";

static int read_all(int fd, struct buf *b, const char *what, struct llmsb_err *err)
{
    char chunk[65536];
    ssize_t n;

    while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EBADF)
                return 0; /* no stdin at all: empty */
            return llmsb_err_set(err, LLMSB_ERR_SYS, "%s: read: %s", what, strerror(errno));
        }
        if (buf_append(b, chunk, (size_t)n) != 0)
            return llmsb_err_set(err, LLMSB_ERR_LIMIT, "%s: over the %zu byte cap", what, b->cap);
    }
    return 0;
}

int cli_read_file(const char *path, struct buf *b, const char *what, struct llmsb_err *err)
{
    int fd, rc;

    if (strcmp(path, "-") == 0)
        return read_all(STDIN_FILENO, b, what, err);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: cannot open \"%s\": %s", what, path,
                             strerror(errno));
    rc = read_all(fd, b, what, err);
    close(fd);
    return rc;
}

/* A fresh id for a run: "run-" and 12 hex digits from the kernel's RNG.
 * Returns a new string (caller frees), or NULL with err set. */
static char *run_id(struct llmsb_err *err)
{
    char id[32] = "run-", *dup;

    if (random_hex(id + 4, sizeof(id) - 4, 6, "run: the job's id", err) != 0)
        return NULL;
    if (!(dup = strdup(id)))
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "run: out of memory");
    return dup;
}

struct run_opts {
    const char *artifacts_dir;
    const char *file;
    const char *stdin_path;
    const char *lang;
    int json;
    int argstart;
};

struct save_ctx {
    const char *dir;
    const char *skip; /* the program's own source file */
    int saved;
    int failed;
};

static int save_one(void *ud, const char *name, const char *data, size_t len)
{
    struct save_ctx *c = ud;

    if (strcmp(name, c->skip) == 0)
        return 0;
    if (cli_save_file(c->dir, name, data, len) == 0)
        c->saved++;
    else
        c->failed++;
    return 0;
}

static int save_artifacts(const struct run_opts *o, const struct job *j, const struct job_result *r)
{
    struct save_ctx c = {o->artifacts_dir, "", 0, 0};
    struct lang_source src;
    struct llmsb_err err = {0};

    if (mkdir(o->artifacts_dir, 0755) != 0 && errno != EEXIST) {
        cli_error("--artifacts: cannot create \"%s\": %s", o->artifacts_dir, strerror(errno));
        return -1;
    }
    if (language_source(j->lang, j->code, j->code_len, &src, &err) == 0)
        c.skip = src.file;
    job_result_each_artifact(r, save_one, &c);
    fprintf(stderr, "llm-sandbox: %d artifact(s) saved in %s\n", c.saved, o->artifacts_dir);
    return c.failed ? -1 : 0;
}

static int status_exit(const struct job_result *r)
{
    const struct status_info *si = status_info(r->r.status);

    if (si->run_exit == STATUS_EXIT_PROGRAM)
        return (int)(r->r.exit_code & 0xff);
    return si->run_exit;
}

static void print_violations(const struct job_result *r)
{
    cJSON *v = cJSON_Parse(r->violations), *it;

    fprintf(stderr, "llm-sandbox: blocked by the security policy; nothing ran:\n");
    cJSON_ArrayForEach(it, v) {
        const cJSON *line = cJSON_GetObjectItem(it, "line"),
                    *col = cJSON_GetObjectItem(it, "column");
        const cJSON *sev = cJSON_GetObjectItem(it, "severity"),
                    *rule = cJSON_GetObjectItem(it, "rule");
        const cJSON *pol = cJSON_GetObjectItem(it, "policy");
        fprintf(stderr, "  line %d, column %d: %s: %s (%s)\n",
                cJSON_IsNumber(line) ? line->valueint : 0, cJSON_IsNumber(col) ? col->valueint : 0,
                cJSON_IsString(sev) ? sev->valuestring : "?",
                cJSON_IsString(rule) ? rule->valuestring : "?",
                cJSON_IsString(pol) ? pol->valuestring : "?");
    }
    cJSON_Delete(v);
}

/* The program's own output as written, then one line on any other status. */
#define PRINT_SLOW_MS 1000 /* a chunk this slow to print: no more as they come */

/* The program's output as it comes (a live job's sink): printed[0] and
 * printed[1] count what went to stdout and stderr of this attempt, so that
 * print_plain prints only the rest of the result's; printed[2] counts the
 * attempts; printed[3] is 1 once a chunk took PRINT_SLOW_MS to print.  A
 * chunk that does not follow what was printed is left to the result.  (A
 * slow stdout holds up this thread only, never the agent's step; past one
 * slow chunk the rest waits for the end, so that this thread keeps
 * reading the agent's frames.) */
static void print_chunk(void *arg, const struct proto_chunk *c)
{
    size_t *printed = arg;
    FILE *to = c->fd == 1 ? stdout : stderr;
    int64_t t0 = clock_mono_ms();

    if (printed[3] || c->offset != printed[c->fd - 1])
        return;
    fwrite(c->data, 1, c->len, to);
    fflush(to);
    printed[c->fd - 1] += c->len;
    /* a stdout this slow (a pager not paging): the rest at the end */
    printed[3] = clock_mono_ms() - t0 >= PRINT_SLOW_MS;
}

/* An attempt starts: after an earlier one, what was printed is void. */
static void print_attempt(void *arg)
{
    size_t *printed = arg;

    if (printed[2]++ && (printed[0] || printed[1]))
        fprintf(stderr,
                "llm-sandbox: attempt %zu starts again; the output above was the "
                "attempt before's, what follows is the new attempt's\n",
                printed[2]);
    printed[0] = printed[1] = 0;
    printed[3] = 0;
}

/* The result's output past what print_chunk printed of it, then a word on
 * how it ended. */
static void print_plain(const struct job_result *r, const struct job *j, const size_t printed[2])
{
    const struct proto_result *p = &r->r;
    const char *why = r->error[0] ? r->error : p->error;

    if (p->compile_output.len &&
        (p->status == STATUS_COMPILE_ERROR || p->status == STATUS_INSTALL_ERROR))
        fwrite(p->compile_output.data, 1, p->compile_output.len, stderr);
    if (p->out.len > printed[0])
        fwrite(p->out.data + printed[0], 1, p->out.len - printed[0], stdout);
    fflush(stdout);
    if (p->err.len > printed[1])
        fwrite(p->err.data + printed[1], 1, p->err.len - printed[1], stderr);
    switch (p->status) {
    case STATUS_OK:
        break;
    case STATUS_RUNTIME_ERROR:
        if (p->signal)
            fprintf(stderr, "llm-sandbox: killed by signal %lld\n", (long long)p->signal);
        break;
    case STATUS_BLOCKED:
        if (r->violations)
            print_violations(r);
        else
            fprintf(stderr, "llm-sandbox: blocked: %s\n", why);
        break;
    case STATUS_INSTALL_ERROR:
        fprintf(stderr,
                "llm-sandbox: install_error: the libraries could not be installed "
                "(%s's output above); nothing ran\n",
                j->lang->install_what ? j->lang->install_what : "the installer");
        break;
    case STATUS_TIMEOUT:
        fprintf(stderr, "llm-sandbox: timeout: killed after the %.3g s limit\n",
                (double)j->limits.timeout_ms / 1000);
        break;
    case STATUS_MEMORY_LIMIT:
        fprintf(stderr, "llm-sandbox: memory_limit: killed at the %lld MB limit\n",
                (long long)j->limits.memory_mb);
        break;
    case STATUS_OUTPUT_LIMIT:
        fprintf(stderr, "llm-sandbox: output_limit: output passed %lld bytes; killed\n",
                (long long)j->limits.output_bytes);
        break;
    default:
        fprintf(stderr, "llm-sandbox: %s%s%s\n", status_name(p->status), why[0] ? ": " : "", why);
        break;
    }
}

/* A flag that takes a value (--name VAL). Returns 0 when it set something,
 * 1 when name is not such a flag, or a negative code with err set. */
static int value_flag(struct cli_globals *g, const char *name, const char *val, struct job *j,
                      struct run_opts *o, struct llmsb_err *err)
{
    static const char *limit_flags[] = {"timeout", "memory", "cpus", "pids", "output"};

    for (size_t k = 0; k < sizeof(limit_flags) / sizeof(limit_flags[0]); k++)
        if (strcmp(name, limit_flags[k]) == 0)
            return job_set_limit(j, &g->cfg, name, val, err);
    if (strcmp(name, "lang") == 0)
        o->lang = val;
    else if (strcmp(name, "artifacts") == 0)
        o->artifacts_dir = val;
    else if (strcmp(name, "stdin") == 0)
        o->stdin_path = val;
    else if (strcmp(name, "lib") == 0)
        return job_add_library(j, val, err);
    else if (strcmp(name, "artifact") == 0)
        return job_add_artifact_glob(j, val, err);
    else if (strcmp(name, "policy") == 0)
        return job_set_policy(j, &g->cfg, val, strlen(val), err);
    else if (strcmp(name, "image") == 0)
        return job_set_image(j, &g->cfg, val, strlen(val), err);
    else if (strcmp(name, "env") == 0)
        return job_add_env(j, val, err);
    else
        return 1;
    return 0;
}

/* A flag without a value. Returns 1 when a is not one. */
static int bool_flag(const char *a, struct job *j, struct run_opts *o)
{
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
        fputs(run_usage, stdout);
        exit(0);
    }
    if (strcmp(a, "--json") == 0)
        o->json = 1;
    else if (strcmp(a, "--network") == 0)
        j->network = 1;
    else if (strcmp(a, "--no-plots") == 0)
        j->plots = 0;
    else
        return 1;
    return 0;
}

/* Parses run's flags into j (limits checked against the ceilings). */
static int parse_run(struct cli_globals *g, int argc, char **argv, struct job *j,
                     struct run_opts *o, struct llmsb_err *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "bad global option");
        if (rc > 0 || bool_flag(a, j, o) == 0)
            continue;
        if (strcmp(a, "--") == 0) {
            o->argstart = i + 1;
            return 0;
        }
        if (a[0] == '-' && a[1] == '-' && i + 1 < argc &&
            (rc = value_flag(g, a + 2, argv[i + 1], j, o, err)) <= 0) {
            if (rc < 0)
                return rc;
            i++;
            continue;
        }
        if (a[0] == '-' && a[1] != '\0')
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "unknown option \"%s\" (see 'llm-sandbox run --help')", a);
        if (o->file)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "only one FILE may be given (got \"%s\" and \"%s\"); put "
                                 "program arguments after --",
                                 o->file, a);
        o->file = a;
    }
    return 0;
}

static int load_job(struct cli_globals *g, const struct run_opts *o, int argc, char **argv,
                    struct job *j, struct llmsb_err *err)
{
    struct buf code, in;
    int rc;

    if (!o->file)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "no program given (usage: llm-sandbox run "
                             "[options] FILE|-)");
    if (o->lang)
        rc = job_set_language(j, o->lang, err);
    else if (!(j->lang = language_from_path(o->file)))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "lang: cannot tell the language of \"%s\"; "
                           "pass --lang",
                           o->file);
    else
        rc = 0;
    if (rc)
        return rc;
    buf_init(&code, JOB_MAX_CODE);
    buf_init(&in, JOB_MAX_STDIN);
    rc = cli_read_file(o->file, &code, "code", err);
    if (rc == 0)
        rc = job_set_code(j, code.data ? code.data : "", code.len, err);
    if (rc == 0 && o->stdin_path)
        rc = cli_read_file(o->stdin_path, &in, "stdin", err);
    else if (rc == 0 && strcmp(o->file, "-") != 0 && !isatty(STDIN_FILENO))
        rc = read_all(STDIN_FILENO, &in, "stdin", err);
    if (rc == 0 && in.len) {
        j->stdin_len = in.len;
        j->stdin_data = buf_steal(&in);
    }
    if (rc == 0 && o->artifacts_dir && j->nglobs == 0)
        rc = job_add_artifact_glob(j, "*", err);
    for (int i = o->argstart; rc == 0 && o->argstart && i < argc; i++)
        if (strlist_add(&j->args, &j->nargs, argv[i], strlen(argv[i])) != 0)
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "args: too many arguments");
    if (rc == 0)
        rc = job_check_libraries(j, err);
    buf_release(&code);
    buf_release(&in);
    return rc;
}

/* Runs j in a one-container pool that is gone afterwards, with the
 * scheduler's retry policy. Returns 0 with r final, or a negative code. */
static int run_job(struct cli_globals *g, const struct job *j, struct job_result *r,
                   struct llmsb_err *err)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_RUN, .slots = 1, .max_size = 1};
    struct runner rn;
    int rc;

    if ((rc = runner_open(&rn, &g->cfg, &ro, err)) != 0)
        return rc;
    if (runner_run(&rn, NULL, j, NULL, r) == SCHED_OUT_ABORTED)
        rc = llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted; container removed");
    runner_close(&rn, "the run ended");
    return rc;
}

int cmd_run(struct cli_globals *g, int argc, char **argv)
{
    struct llmsb_err err = {0};
    struct run_opts o = {0};
    struct job j;
    struct job_result r;
    size_t printed[4] = {0, 0, 0, 0};
    const struct proto_chunk_sink sink = {print_chunk, printed, print_attempt};
    int rc, code;

    /* --config and the other global options may stand anywhere before
     * "--": take them first, since the job's defaults and ceilings come
     * from the config (parse_run sees them again and skips them). */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (cli_global_opt(g, argc, argv, &i) < 0)
            return EXIT_USAGE;
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    /* Ctrl-C and SIGTERM end the wait and remove the container. */
    cli_signals();
    job_init(&j, &g->cfg);
    if (!(j.id = run_id(&err))) {
        cli_error("%s", err.msg);
        job_release(&j);
        return EXIT_INTERNAL;
    }
    if (parse_run(g, argc, argv, &j, &o, &err) != 0 || load_job(g, &o, argc, argv, &j, &err) != 0) {
        cli_error("%s", err.msg);
        job_release(&j);
        return EXIT_USAGE;
    }
    /* one attempt, as asked: an interactive run reports an infrastructure
     * failure at once rather than retrying behind the user's back */
    j.max_attempts = 1;
    /* printed as it comes; --json prints the result object alone */
    if (!o.json) {
        j.live = 1;
        j.sink = &sink;
    }
    job_result_init(&r, &j);
    rc = run_job(g, &j, &r, &err);
    if (rc != 0) {
        cli_error("%s", err.msg);
        code = rc == LLMSB_ERR_INTERRUPTED || llmsb_interrupted ? EXIT_INTERRUPTED : EXIT_INTERNAL;
    } else {
        int saved_ok = !o.artifacts_dir || save_artifacts(&o, &j, &r) == 0;
        if (o.json) {
            cJSON *json = job_result_json(&r);
            char *text = json ? cJSON_Print(json) : NULL;
            if (text)
                printf("%s\n", text);
            free(text);
            cJSON_Delete(json);
        } else {
            print_plain(&r, &j, printed);
        }
        code = saved_ok ? status_exit(&r) : EXIT_INTERNAL;
    }
    job_result_release(&r);
    job_release(&j);
    return code;
}
