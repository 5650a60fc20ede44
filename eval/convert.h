/* convert.h - the rows of a code benchmark (see eval/convert.c for which)
 * and, when given, a model's samples for them, turned into a JSON Lines
 * job file: one job per program, each program put together exactly as the
 * benchmark's own harness does and graded as it grades (by the exit code,
 * or for a stdin/stdout benchmark by its tests as `cases` and its output
 * rule), and meta.task_id groups the jobs for pass@k.  Text in, jobs out:
 * reading the files and the process's exit code are the caller's.  One
 * path for every benchmark: convert_set_read_opts, then convert_write. */
#ifndef LLMSB_EVAL_CONVERT_H
#define LLMSB_EVAL_CONVERT_H

#include <stdio.h>

#include "common/common.h"

/* A dataset read into tasks. */
struct convert_set;

/* What a dataset's rows leave to the user (NULL: not given): the task a
 * CRUXEval or CRUXEval-X row is read for ("input" or "output" prediction)
 * and a language: a CRUXEval-X file's (else its file name's: cpp.jsonl),
 * or a stdin/stdout benchmark's sample's where the samples file gives none
 * (else python). */
struct convert_opts {
    const char *mode;
    const char *lang;
    /* EvalPlus (HumanEval+, MBPP+): the results of its ground-truth jobs
     * (what `submit --out` wrote for the jobs convert wrote without
     * samples), named expected_name in errors; a sample's job needs them */
    const char *expected_name, *expected_text;
};

/* Reads a dataset: JSON objects, one a line (JSON Lines), in a JSON array
 * or pretty-printed one after another, named name in errors ("FILE:LINE:
 * ..." with the field, its value and why).  The stdin/stdout benchmarks
 * (CodeContests, APPS, LiveCodeBench) are one per file: the first row's.
 * Returns a new set (caller frees with convert_set_free) or NULL with err
 * set (LLMSB_ERR_INVALID for bad input). */
struct convert_set *convert_set_read(const char *name, const char *text, struct llmsb_err *err);
/* The same with opts (borrowed: they must outlive the set; NULL: none). */
struct convert_set *convert_set_read_opts(const char *name, const char *text,
                                          const struct convert_opts *opts, struct llmsb_err *err);
void convert_set_free(struct convert_set *s);
size_t convert_set_size(const struct convert_set *s);

/* What a set is, for the caller's summary. */
struct convert_set_info {
    /* the benchmark of a file that holds one (a stdin/stdout benchmark's),
     * else NULL: the rows each name theirs */
    const char *benchmark;
    /* what a task left out for want of a reference solution lacks
     * ("canonical_solution nor completions", "reference solution") */
    const char *lacks;
    size_t tasks;
    size_t untested; /* tasks with no tests: nothing can grade them */
};
void convert_set_info(const struct convert_set *s, struct convert_set_info *info);

/* What the writers need besides the set: where jobs go, the name of that
 * stream in errors, and each job's timeout in seconds (0: none); and what
 * they wrote and left out. */
struct convert_out {
    FILE *out;
    const char *name;
    long timeout_s;
    /* cut each solution before the first of its row's stop_tokens, as
     * MultiPL-E's generator does (stop_at_stop_token) */
    int cut_at_stop_tokens;
    size_t jobs;     /* jobs written so far */
    size_t skipped;  /* samples the benchmark's harness leaves out (CRUXEval) */
    size_t unsolved; /* tasks left out: they have no reference solution */
    size_t no_image; /* reference solutions in a language with no image (Python 2) */
};

/* The one entry point: the jobs of a model's samples, samples_text (named
 * samples_name in errors), when it is not NULL, else of the reference
 * solutions (convert_write_samples, convert_write_references).  0, or a
 * negative code with err set (LLMSB_ERR_INVALID for bad input). */
int convert_write(struct convert_set *s, const char *samples_name, const char *samples_text,
                  struct convert_out *o, struct llmsb_err *err);
/* One job per task that has a reference solution (canonical_solution),
 * id = task id, or per completion of a row's completions list (MultiPL-E's
 * files), id = TASK#N, or for a stdin/stdout benchmark per solution of its
 * row that has a language with an image, id = TASK/solutions/N, in the
 * dataset's order; counts the tasks with none into o->unsolved. */
int convert_write_references(struct convert_set *s, struct convert_out *o, struct llmsb_err *err);
/* One job per sample, a row of {"task_id", "completion"} (human-eval),
 * {"task_id", "generation"} (CodeGeeX), or {"name", "completions": [...]}
 * (MultiPL-E; "name" or "id" names the task too) of text (named name in
 * errors), id = TASK#N.  Jobs are written as the rows are read: an error
 * at a line comes after the jobs of the lines before it.  A format may
 * read samples of its own shape instead (CRUXEval's {"sample_N": [...]},
 * CRUXEval-X's array of {"id", "answer"}, APPS's {"PROBLEM_ID": [...]},
 * LiveCodeBench's [{"question_id", "code_list"}], CodeContests' rows of
 * {"task_id", "completion", "language"}). */
int convert_write_samples(struct convert_set *s, const char *name, const char *text,
                          struct convert_out *o, struct llmsb_err *err);

/* The most a gzip-compressed dataset or samples file may unpack to. */
#define CONVERT_MAX_UNPACKED ((size_t)1 << 30)

/* When b holds gzip-compressed data (its magic bytes 1f 8b, whatever the
 * file's name), replaces it by what it unpacks to, which must be text (no
 * NUL byte) of at most max_bytes; else leaves it.  0, or LLMSB_ERR_INVALID
 * with err naming name and why (damaged, over the cap, not text). */
int convert_text_unpack(struct buf *b, const char *name, size_t max_bytes, struct llmsb_err *err);

/* cJSON ends a string at a NUL, so a \u0000 in JSON text would silently cut
 * a program, a stdin or an expected output.  0 when the JSON text json
 * (line 1 of file name at line `line`) has none in its strings; else an
 * error naming name:line and the key of the nearest object holding it. */
int convert_check_nul(const char *name, size_t line, const char *json, struct llmsb_err *err);

#endif
