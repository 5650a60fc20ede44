/* convert_int.h - what the converter (convert.c) and the benchmark formats
 * (formats.c) share: a task, that is one row of a dataset, and a format's
 * row in the table the converter tries each dataset row against.  A new
 * benchmark is a new row of convert_formats[], nothing in convert.c. */
#ifndef LLMSB_EVAL_CONVERT_INT_H
#define LLMSB_EVAL_CONVERT_INT_H

#include <cjson/cJSON.h>

#include "eval/convert.h"

#include "common/common.h"
#include "languages/languages.h"

struct convert_format;

/* One row of a dataset: a task the jobs are built from. */
struct convert_task {
    const char *id; /* task_id, borrowed from row */
    const cJSON *row;
    const struct convert_format *format;
    const struct language *lang;
    const struct convert_opts *opts; /* the set's, never NULL */
    int samples;                     /* sample jobs written so far */
};

/* What a format asks of a job beyond id, lang, code, expect_exit 0, the
 * timeout and meta; NULL where it asks nothing. */
struct convert_job_fields {
    const char *expect_stdout;
    const char *compile_flags[2];
    long timeout_s; /* the harness's, when convert is given none */
    int plain;      /* Python run as `python3 FILE`, not in the harness's process */
};

/* How one benchmark recognises its rows and builds a program from a row
 * and a solution: head, prompt, solution, "\n", test, tail. */
struct convert_format {
    const char *name;  /* meta.benchmark of its jobs */
    const char *label; /* the benchmark and what marks its rows, for an error */
    /* 1 when t->row is this benchmark's (t->lang set), 0 when not, or an
     * error naming file:line, the field, its value and why. */
    int (*claim)(struct convert_task *t, const char *file, size_t line, struct llmsb_err *err);
    /* What goes before the prompt; may move *prompt past text it replaces. */
    int (*head)(const struct convert_task *t, const char *sol, struct buf *b, const char **prompt);
    int (*tail)(const struct convert_task *t, struct buf *b);
    void (*fields)(const struct convert_task *t, struct convert_job_fields *f);
    /* Rows of another shape than HumanEval's (no task_id, prompt, test):
     * 1 when row is this benchmark's, with t->id and t->lang set (the row
     * may be given fields: t->id must point into it), 0 when not, or an
     * error.  claim is then not asked. */
    int (*adopt)(struct convert_task *t, cJSON *row, const char *file, size_t line,
                 struct llmsb_err *err);
    /* The whole program, instead of head, prompt, solution, test, tail. */
    int (*build)(const struct convert_task *t, const char *sol, struct buf *b);
    /* What the jobs' meta has beyond task_id and benchmark. */
    void (*meta)(const struct convert_task *t, cJSON *meta);
    /* A samples file of this benchmark's own shape (see convert.h). */
    int (*samples)(struct convert_set *s, const char *name, const char *text, struct convert_out *o,
                   struct llmsb_err *err);
};

/* The formats, NULL-terminated, in the order a row is tried: the one with
 * the most specific mark first. */
extern const struct convert_format *const convert_formats[];

/* row[key] when it is a string, else NULL. */
const char *convert_str(const cJSON *row, const char *key);

/* The options s was read with (never NULL). */
const struct convert_opts *convert_set_opts(const struct convert_set *s);
/* Task i of s (i < convert_set_size(s)), in the order of their ids. */
struct convert_task *convert_set_task(struct convert_set *s, size_t i);
/* The task of s with that id, or NULL. */
struct convert_task *convert_set_find(struct convert_set *s, const char *id);
/* The job of task t with solution sol, id id, as one line of o->out; code
 * is a scratch buffer. */
int convert_job_write(struct convert_out *o, const struct convert_task *t, const char *id,
                      const char *sol, struct buf *code, struct llmsb_err *err);

/* CRUXEval (facebookresearch/cruxeval) and CRUXEval-X: eval/fmt_crux.c. */
extern const struct convert_format convert_cruxeval, convert_cruxeval_x;

#endif
