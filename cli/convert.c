/* convert.c - the convert verb: its options, reading the dataset and
 * samples files, writing the jobs to stdout or --out (whole or not at
 * all), its messages and exit codes.  What a benchmark's program is, is
 * eval/convert's. */
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
    "                           [--timeout S] [--cut-at-stop-tokens]\n"
    "\n"
    "Writes one job per program of a benchmark file as JSON Lines (stdout or\n"
    "--out), for `submit`. Rows of HumanEval (openai/human-eval), HumanEval-X\n"
    "(Python/, JavaScript/, Java/, CPP/, Go/ task ids), MBXP (rows with a\n"
    "\"language\"), MultiPL-E (name, language, tests) and the open format (id,\n"
    "language, program) are recognised by their fields; a file is JSON Lines,\n"
    "a JSON array or pretty-printed objects. Without --samples each task's\n"
    "canonical_solution is used (a check of the harness), id = task id, or a\n"
    "row's completions list (MultiPL-E's files), id = TASK#N; with --samples\n"
    "(rows of {\"task_id\", \"completion\"}, as human-eval reads them) one job\n"
    "per sample, id = TASK#N, grouped by meta.task_id for pass@k. Every job\n"
    "expects exit code 0. --cut-at-stop-tokens cuts each completion before the\n"
    "first of its row's stop_tokens (MultiPL-E's rows), as MultiPL-E does when\n"
    "it generates. See docs/eval.md.\n";

struct convert_opts {
    const char *dataset, *samples, *out_path;
    long timeout_s;
    int cut_at_stop_tokens;
};

/* 1 to go on, else the exit code. */
static int convert_args(int argc, char **argv, struct convert_opts *o)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(convert_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
            o->samples = argv[++i];
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

/* Reads path and the dataset in it; NULL when an error was printed. */
static struct convert_set *read_dataset(const char *path)
{
    struct llmsb_err err = {0};
    struct convert_set *s = NULL;
    struct buf b;

    buf_init(&b, CONVERT_MAX_FILE);
    if (cli_read_file(path, &b, "dataset", &err) == 0)
        s = convert_set_read(path, b.data ? b.data : "", &err);
    if (!s)
        cli_error("%s", err.msg);
    buf_release(&b);
    return s;
}

/* The samples of path as jobs; 0, or -1 with err set. */
static int write_samples(struct convert_set *s, const char *path, struct convert_out *o,
                         struct llmsb_err *err)
{
    struct buf b;
    int rc;

    buf_init(&b, CONVERT_MAX_FILE);
    rc = cli_read_file(path, &b, "--samples", err);
    if (rc == 0)
        rc = convert_write_samples(s, path, b.data ? b.data : "", o, err);
    buf_release(&b);
    return rc;
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
    struct convert_opts opt = {0};
    struct llmsb_err err = {0};
    struct convert_set *set = NULL;
    struct convert_out o = {.out = stdout};
    char tmp[4096] = "";
    struct stat st;
    size_t unsolved = 0;
    int rc, direct = 0;

    (void)g;
    if ((rc = convert_args(argc, argv, &opt)) != 1)
        return rc;
    rc = 0;
    if (!(set = read_dataset(opt.dataset)))
        return EXIT_USAGE;
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
    if (opt.samples && write_samples(set, opt.samples, &o, &err) != 0)
        rc = EXIT_USAGE;
    else if (!opt.samples && convert_write_references(set, &o, &unsolved, &err) != 0)
        rc = EXIT_INTERNAL;
    if (rc != 0)
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
    if (rc == 0) {
        fprintf(stderr, "%zu jobs from %zu tasks of %s", o.jobs, convert_set_size(set),
                opt.dataset);
        if (unsolved)
            fprintf(stderr,
                    " (%zu tasks have no canonical_solution nor completions and are left out)",
                    unsolved);
        fputc('\n', stderr);
    }
out:
    convert_set_free(set);
    return rc;
}
