/* convert.h - the rows of a code benchmark (see eval/convert.c for which)
 * and, when given, a model's samples for them, turned into a JSON Lines
 * job file: one job per program, each program put together exactly as the
 * benchmark's own harness does, so a job's exit code grades it and
 * meta.task_id groups the jobs for pass@k.  Text in, jobs out: reading the
 * files and the process's exit code are the caller's. */
#ifndef LLMSB_EVAL_CONVERT_H
#define LLMSB_EVAL_CONVERT_H

#include <stdio.h>

#include "common/common.h"

/* A dataset read into tasks. */
struct convert_set;

/* What a dataset's rows leave to the user (NULL: not given): the task a
 * CRUXEval or CRUXEval-X row is read for ("input" or "output" prediction)
 * and the language of a CRUXEval-X file (else its file name's: cpp.jsonl). */
struct convert_opts {
    const char *mode;
    const char *lang;
};

/* Reads a dataset: JSON objects, one a line (JSON Lines), in a JSON array
 * or pretty-printed one after another, named name in errors ("FILE:LINE:
 * ..." with the field, its value and why).
 * Returns a new set (caller frees with convert_set_free) or NULL with err
 * set (LLMSB_ERR_INVALID for bad input). */
struct convert_set *convert_set_read(const char *name, const char *text, struct llmsb_err *err);
/* The same with opts (borrowed: they must outlive the set; NULL: none). */
struct convert_set *convert_set_read_opts(const char *name, const char *text,
                                          const struct convert_opts *opts, struct llmsb_err *err);
void convert_set_free(struct convert_set *s);
size_t convert_set_size(const struct convert_set *s);

/* What the writers need besides the set: where jobs go, the name of that
 * stream in errors, and each job's timeout in seconds (0: none). */
struct convert_out {
    FILE *out;
    const char *name;
    long timeout_s;
    /* cut each solution before the first of its row's stop_tokens, as
     * MultiPL-E's generator does (stop_at_stop_token) */
    int cut_at_stop_tokens;
    size_t jobs;    /* jobs written so far */
    size_t skipped; /* samples the benchmark's harness leaves out (CRUXEval) */
};

/* One job per task that has a reference solution (canonical_solution),
 * id = task id, or per completion of a row's completions list (MultiPL-E's
 * files), id = TASK#N, in the dataset's order; counts the tasks with
 * neither into *unsolved. */
int convert_write_references(struct convert_set *s, struct convert_out *o, size_t *unsolved,
                             struct llmsb_err *err);
/* One job per sample, a row of {"task_id", "completion"} (human-eval),
 * {"task_id", "generation"} (CodeGeeX), or {"name", "completions": [...]}
 * (MultiPL-E; "name" or "id" names the task too) of text (named name in
 * errors), id = TASK#N.  Jobs are written as the rows are read: an error
 * at a line comes after the jobs of the lines before it.  A format may
 * read samples of its own shape instead (CRUXEval's {"sample_N": [...]},
 * CRUXEval-X's array of {"id", "answer"}). */
int convert_write_samples(struct convert_set *s, const char *name, const char *text,
                          struct convert_out *o, struct llmsb_err *err);

/* The stdin/stdout benchmarks (fmt_stdio.c: CodeContests, APPS,
 * LiveCodeBench), recognised by their fields: one job per program with
 * `cases` and the harness's `compare`. */

/* What a stdin/stdout conversion read and left out. */
struct convert_stdio_counts {
    char benchmark[32];
    size_t tasks;    /* problems read */
    size_t unsolved; /* with tests but without a reference solution */
    size_t no_tests; /* with no tests: nothing can grade them */
    size_t skipped;  /* reference solutions in a language with no image (Python 2) */
};

/* 1 when the first row of text (JSON Lines or a JSON array) is a
 * stdin/stdout benchmark's. */
int convert_stdio_detect(const char *text);
/* Reads the dataset text (named name in errors) and writes a job per
 * reference solution, or with samples_text (named samples_name), per
 * sample in the benchmark's own samples format; lang (or NULL) is a
 * sample's language where the file gives none.  0, or -1 with err set
 * (LLMSB_ERR_INVALID for bad input, naming file:line, the field and why). */
int convert_stdio_write(const char *name, const char *text, const char *samples_name,
                        const char *samples_text, const char *lang, struct convert_out *o,
                        struct convert_stdio_counts *counts, struct llmsb_err *err);

/* cJSON ends a string at a NUL, so a \u0000 in JSON text would silently cut
 * a program, a stdin or an expected output.  0 when the JSON text json
 * (line 1 of file name at line `line`) has none in its strings; else an
 * error naming name:line and the key of the nearest object holding it. */
int convert_check_nul(const char *name, size_t line, const char *json, struct llmsb_err *err);

#endif
