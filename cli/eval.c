/* eval.c - the eval verb: a benchmark measured in one command, convert's
 * jobs run as submit runs them (here with --local, else through the queue,
 * waited for) and graded: the summary, pass@k and the per-phase table on
 * stdout, --report and --out as submit writes them.  A thin caller of
 * convert's and submit's own functions (cli/convert.c, cli/submit.c,
 * batch/); `convert` and `submit` stay for scripts.  Its exit code says
 * whether the measurement is whole, not how well the model did. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/jobfile.h"

static const char eval_usage[] =
    "usage: llm-sandbox eval DATASET [SAMPLES] [--extract MODE] [--report FILE]\n"
    "                        [--out RESULTS.jsonl] [--jobs JOBS.jsonl] [--local | --redis URL]\n"
    "                        [--slots N] [--timeout S] [--wait-timeout S]\n"
    "                        [--cut-at-stop-tokens] [--mode input|output] [--lang LANG]\n"
    "                        [--group-by KEY] [--rerun | --reuse] [--no-dedup]\n"
    "                        [--recheck-timeouts] [--artifacts DIR]\n"
    "\n"
    "convert + submit --wait + the report in one command. Converts DATASET (any\n"
    "benchmark `convert` reads) with the model's SAMPLES (or --samples; without\n"
    "them the reference solutions: a check of the harness), runs the jobs through\n"
    "the queue (--redis URL or the config's, waited for) or here with --local, and\n"
    "prints the summary, pass@1/10/100 and the per-phase table (p50/p95/p99);\n"
    "--report FILE writes them as JSON to FILE and Markdown to FILE.md, --out one\n"
    "result per job. The jobs go to a temporary file, removed after, unless --jobs\n"
    "FILE keeps them. EvalPlus (HumanEval+, MBPP+): the ground truth (the\n"
    "canonical solutions' outputs) runs first unless --expected FILE gives it;\n"
    "--keep-expected FILE keeps it for next time. convert's options: --timeout S\n"
    "(each job's time, replacing the harness's), --cut-at-stop-tokens, --mode,\n"
    "--lang, --extract MODE (code out of raw answers), --expected FILE; submit's: --local, --out, --report, --slots, --group-by,\n"
    "--rerun/--reuse (ids the queue already has results for), --no-dedup,\n"
    "--recheck-timeouts, --artifacts, and --wait-timeout S (submit's --timeout:\n"
    "the wait's bound, exit 124).\n"
    "\n"
    "Exit codes: 0 when every job ran and was graded, whatever the pass rate;\n"
    "1 when a job has no verdict (internal_error, invalid, not finished); 2 on\n"
    "bad usage or input (a flag, the dataset, the samples, jobs refused); 3 when\n"
    "we failed (Redis unreachable, a file not written); 124 --wait-timeout,\n"
    "130 interrupted. (`submit --wait` exits 1 when a job did not pass.)\n"
    "See docs/eval.md, \"One command\".\n";

struct eval_args {
    struct cli_convert_args conv;
    struct submit_opts run;
    const char *jobs; /* --jobs: where the jobs are kept; NULL: a temporary file */
    /* --keep-expected: where the ground truth's results are kept (EvalPlus:
     * give it as --expected next time); NULL: a temporary file */
    const char *keep_expected;
};

/* Consumes eval's own option at argv[*i]; 1, 0 (not one), or 2: --help
 * (printed). */
static int eval_opt(int argc, char **argv, int *i, struct eval_args *a)
{
    if (strcmp(argv[*i], "--help") == 0 || strcmp(argv[*i], "-h") == 0) {
        fputs(eval_usage, stdout);
        return 2;
    }
    if (strcmp(argv[*i], "--jobs") == 0 && *i + 1 < argc)
        a->jobs = argv[++*i];
    else if (strcmp(argv[*i], "--keep-expected") == 0 && *i + 1 < argc)
        a->keep_expected = argv[++*i];
    else
        return 0;
    return 1;
}

/* The positional DATASET and SAMPLES (or --samples); 0, or -1 said. */
static int eval_positional(const char *arg, struct eval_args *a)
{
    if (!a->conv.dataset) {
        a->conv.dataset = arg;
    } else if (!a->conv.samples) {
        a->conv.samples = arg;
    } else {
        cli_error("eval: one dataset and one samples file (\"%s\" is one too many)", arg);
        return -1;
    }
    return 0;
}

/* 1 to go on, else the exit code. */
static int eval_args(struct cli_globals *g, int argc, char **argv, struct eval_args *a)
{
    for (int i = 1; i < argc; i++) {
        int rc = eval_opt(argc, argv, &i, a);
        if (rc == 0)
            rc = cli_convert_opt(argc, argv, &i, &a->conv);
        if (rc == 0)
            rc = cli_submit_opt(g, argc, argv, &i, &a->run);
        if (rc == 2)
            return 0;
        if (rc < 0)
            return EXIT_USAGE;
        if (rc > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("eval: unknown or incomplete option '%s' (llm-sandbox eval --help)", argv[i]);
            return EXIT_USAGE;
        }
        if (eval_positional(argv[i], a) != 0)
            return EXIT_USAGE;
    }
    if (!a->conv.dataset) {
        fputs(eval_usage, stderr);
        return EXIT_USAGE;
    }
    a->conv.g = g;
    return cli_submit_opts_check(&a->run) == 0 ? 1 : EXIT_USAGE;
}

/* Converts into path (a new file; kept with --jobs); 0 or the exit code. */
static int eval_convert(const struct cli_convert_args *conv, const char *path, int fd)
{
    struct convert_out o = {.name = path};
    int rc;

    o.out = fd >= 0 ? fdopen(fd, "w") : fopen(path, "we");
    if (!o.out) {
        if (fd >= 0)
            close(fd);
        cli_error("--jobs: cannot write \"%s\"", path);
        return EXIT_INTERNAL;
    }
    rc = cli_convert_write(conv, &o);
    if (fclose(o.out) != 0 && rc == 0) {
        cli_error("--jobs: cannot write \"%s\"", path);
        rc = EXIT_INTERNAL;
    }
    if (rc == 0 && o.jobs == 0) {
        cli_error("eval: %s gave no jobs: nothing to measure", conv->dataset);
        rc = EXIT_USAGE;
    }
    return rc;
}

/* One pass: conv's jobs written to path (fd: open on it, or -1), run as
 * run says and graded.  Returns the exit code. */
static int eval_pass(struct cli_globals *g, const struct cli_convert_args *conv,
                     const struct submit_opts *run, const char *path, int fd)
{
    struct llmsb_err err = {0};
    struct jobfile jf;
    int rc;

    if ((rc = eval_convert(conv, path, fd)) != 0)
        return rc;
    if (jobfile_load(&jf, path, &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_INTERNAL; /* convert's own output: ours to fix */
    }
    if (fd >= 0) /* the summary's FILE:LINE: a file removed after is no name */
        snprintf(jf.name, sizeof(jf.name), "%s", "<jobs>");
    rc = cli_submit_jobs(g, run, &jf);
    jobfile_release(&jf);
    return rc;
}

/* EvalPlus's first step: the reference solutions' jobs (convert without
 * samples) run and their results written to truth (--keep-expected, or a
 * temporary file the caller removes), for the samples' convert as
 * --expected.  Returns 0, or the exit code (said). */
static int eval_truth(struct cli_globals *g, const struct eval_args *a, char *truth, size_t truthsz)
{
    struct cli_convert_args conv = a->conv;
    struct submit_opts run = a->run;
    const char *dir = getenv("TMPDIR");
    char jobs[4096];
    int rc, fd, tfd = -1;

    if (!dir || !*dir)
        dir = "/tmp";
    if (a->keep_expected) {
        if (snprintf(truth, truthsz, "%s", a->keep_expected) >= (int)truthsz) {
            cli_error("--keep-expected: the path is too long");
            return EXIT_USAGE;
        }
    } else if (snprintf(truth, truthsz, "%s/llmsb-eval-truth-XXXXXX.jsonl", dir) >= (int)truthsz ||
               (tfd = mkstemps(truth, 6)) < 0) {
        cli_error("eval: cannot make a temporary file for the ground truth in %s (TMPDIR)", dir);
        *truth = '\0';
        return EXIT_INTERNAL;
    }
    if (tfd >= 0)
        close(tfd);
    if (snprintf(jobs, sizeof(jobs), "%s/llmsb-eval-truth-jobs-XXXXXX.jsonl", dir) >=
            (int)sizeof(jobs) ||
        (fd = mkstemps(jobs, 6)) < 0) {
        cli_error("eval: cannot make a temporary file for the jobs in %s (TMPDIR)", dir);
        if (!a->keep_expected)
            unlink(truth);
        *truth = '\0';
        return EXIT_INTERNAL;
    }
    conv.samples = NULL;
    conv.expected = NULL;
    conv.timeout_s = 0; /* --timeout is the samples': the ground truth keeps the harness's */
    conv.extract = EXTRACT_OFF;
    run.out = truth;
    run.report = NULL;
    run.artifacts = NULL;
    run.phases = 0;
    fprintf(stderr,
            "eval: step 1 of 2, the ground truth: the canonical solutions on every input "
            "(EvalPlus's expected outputs; --keep-expected FILE keeps them for --expected)\n");
    rc = eval_pass(g, &conv, &run, jobs, fd);
    unlink(jobs);
    if (rc != 0) {
        cli_error("eval: the ground truth did not run to the end (exit %d): no samples graded", rc);
        if (!a->keep_expected)
            unlink(truth);
        *truth = '\0';
        return rc == EXIT_USAGE ? EXIT_USAGE : EXIT_INTERNAL;
    }
    fprintf(stderr, "eval: step 2 of 2, the samples against it%s%s\n",
            a->keep_expected ? "; the ground truth is in " : "",
            a->keep_expected ? a->keep_expected : "");
    return 0;
}

int cmd_eval(struct cli_globals *g, int argc, char **argv)
{
    struct eval_args a = {
        .run = {
            .verb = "eval", .wait = 1, .graded = 1, .phases = 1, .timeout_flag = "--wait-timeout"}};
    const char *dir = getenv("TMPDIR");
    char tmp[4096], truth[4096] = "";
    int rc, fd = -1;

    if ((rc = eval_args(g, argc, argv, &a)) != 1)
        return rc;
    if (cli_config_finish(g) != 0)
        return EXIT_USAGE;
    if (!a.jobs) {
        if (snprintf(tmp, sizeof(tmp), "%s/llmsb-eval-XXXXXX.jsonl", dir && *dir ? dir : "/tmp") >=
                (int)sizeof(tmp) ||
            (fd = mkstemps(tmp, 6)) < 0) {
            cli_error("eval: cannot make a temporary file for the jobs in %s (TMPDIR)",
                      dir && *dir ? dir : "/tmp");
            return EXIT_INTERNAL;
        }
    }
    /* EvalPlus: its reference solutions' pass first (the ground truth),
     * whose results convert then takes as --expected */
    if (a.conv.samples && !a.conv.expected && cli_convert_truth_first(&a.conv)) {
        /* the samples must be there before minutes go into the ground truth */
        if (access(a.conv.samples, R_OK) != 0) {
            cli_error("eval: samples \"%s\": %s", a.conv.samples, strerror(errno));
            rc = EXIT_USAGE;
        } else {
            rc = eval_truth(g, &a, truth, sizeof(truth));
        }
        if (rc != 0) {
            if (fd >= 0) {
                close(fd);
                unlink(tmp);
            }
            return rc;
        }
        a.conv.expected = truth;
    } else if (a.keep_expected) {
        fprintf(stderr, "eval: --keep-expected \"%s\" is not written: %s\n", a.keep_expected,
                a.conv.expected  ? "--expected gives the ground truth"
                : a.conv.samples ? "this benchmark has no ground-truth step (EvalPlus has)"
                                 : "no samples: the reference solutions are what runs");
    }
    rc = eval_pass(g, &a.conv, &a.run, a.jobs ? a.jobs : tmp, fd);
    if (*truth && !a.keep_expected) {
        if (rc == 0) /* else kept: minutes of work the next try can give as --expected */
            unlink(truth);
        else
            fprintf(stderr, "eval: the ground truth is kept in %s (give it as --expected %s)\n",
                    truth, truth);
    }
    if (a.jobs)
        fprintf(stderr, "eval: the jobs are in %s\n", a.jobs);
    else
        unlink(tmp);
    if (a.run.report && rc != EXIT_USAGE && rc != EXIT_INTERNAL)
        fprintf(stderr, "eval: report in %s and %s.md\n", a.run.report, a.run.report);
    return rc;
}
