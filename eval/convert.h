/* convert.h - the rows of a code benchmark (see eval/formats.c for which)
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

/* Reads a dataset: JSON objects, one a line (JSON Lines), in a JSON array
 * or pretty-printed one after another, named name in errors ("FILE:LINE:
 * ..." with the field, its value and why).
 * Returns a new set (caller frees with convert_set_free) or NULL with err
 * set (LLMSB_ERR_INVALID for bad input). */
struct convert_set *convert_set_read(const char *name, const char *text, struct llmsb_err *err);
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
    size_t jobs; /* jobs written so far */
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
 * at a line comes after the jobs of the lines before it. */
int convert_write_samples(struct convert_set *s, const char *name, const char *text,
                          struct convert_out *o, struct llmsb_err *err);

#endif
