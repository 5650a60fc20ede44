/* convert_int.h - what the converter (convert.c) and the benchmark formats
 * (fmt_humaneval.c, fmt_multiple.c, fmt_open.c, fmt_crux.c) share: a task,
 * that is one row of a dataset, and a format's row in the table the
 * converter tries each dataset row against.  A new benchmark is a new row
 * of convert_formats[], nothing else in convert.c. */
#ifndef LLMSB_EVAL_CONVERT_INT_H
#define LLMSB_EVAL_CONVERT_INT_H

#include <cjson/cJSON.h>

#include "eval/convert.h"

#include "common/common.h"
#include "languages/languages.h"

struct convert_format;

/* One row of a dataset: a task the jobs are built from. */
struct convert_task {
    const char *id; /* the format's id field (task_id), borrowed from row */
    const cJSON *row;
    const struct convert_format *format;
    const struct language *lang;
    const struct convert_opts *opts; /* the set's, never NULL */
    int samples;                     /* sample jobs written so far */
    size_t order;                    /* the row's place in the dataset */
    size_t line;                     /* and the line it starts on */
};

/* What a format asks of a job beyond id, lang, code, expect_exit 0, the
 * timeout and meta; NULL where it asks nothing. */
struct convert_job_fields {
    const char *expect_stdout;
    const char *compile_flags[2];
    long timeout_s; /* the harness's own limit, used without --timeout; 0: none */
    int as_script;  /* Python: the program is the job's code, run as python3 FILE,
                     * not in the harness's process */
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
    /* Rows whose id is not task_id (MultiPL-E's name), or whose test is
     * not test (MultiPL-E's tests); NULL: those. */
    const char *id_key, *test_key;
    /* Rows of another shape than HumanEval's, with no field to be claimed
     * by (CRUXEval's): 1 when row is this benchmark's, with t->id and
     * t->lang set (the row may be given fields: t->id must point into it),
     * 0 when not, or an error.  Asked of every row before any claim. */
    int (*adopt)(struct convert_task *t, cJSON *row, const char *file, size_t line,
                 struct llmsb_err *err);
    /* The whole program, in place of head, prompt, solution, "\n", test,
     * tail; NULL: those.  Then no prompt or test is asked of a row. */
    int (*program)(const struct convert_task *t, const char *sol, struct buf *b);
    /* A row's reference solution, NULL when it has none; NULL hook: its
     * canonical_solution. */
    const char *(*reference)(const struct convert_task *t);
    /* Adds to the job (and its meta) what the format keeps of the row, or
     * an error naming the field, its value and why (at: "file:line"). */
    int (*job)(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
               struct llmsb_err *err);
    /* A samples file of this benchmark's own shape (see convert.h); NULL:
     * human-eval's rows. */
    int (*samples)(struct convert_set *s, const char *name, const char *text, struct convert_out *o,
                   struct llmsb_err *err);
};

/* The formats, NULL-terminated, in the order a row is tried: the one with
 * the most specific mark first (convert.c). */
extern const struct convert_format *const convert_formats[];

/* row[key] when it is a string, else NULL. */
const char *convert_str(const cJSON *row, const char *key);

/* The rows of text, each a JSON object: one per line (JSON Lines), the
 * elements of a JSON array ([{...}, {...}]: MultiPL-E's and CRUXEval-X's
 * files), or objects one after another over any lines (MultiPL-E's
 * per-problem .json).  Calls fn(obj, line, ctx) with the line the object
 * starts on; fn consumes obj.  What is not an object is an error naming its
 * line (and its index in an array), name being the file's name. */
int convert_each_row(const char *name, const char *text,
                     int (*fn)(cJSON *, size_t, void *, struct llmsb_err *), void *ctx,
                     struct llmsb_err *err);
/* Copies the members of from but those named in skip (NULL-terminated, or
 * NULL) and those meta has into meta; 0 or LLMSB_ERR_NOMEM. */
int convert_meta_copy(cJSON *meta, const cJSON *from, const char *const *skip);
/* The options s was read with (never NULL). */
const struct convert_opts *convert_set_opts(const struct convert_set *s);
/* Task i of s (i < convert_set_size(s)), in the order of their ids. */
struct convert_task *convert_set_task(struct convert_set *s, size_t i);
/* The task of s with that id, or NULL. */
struct convert_task *convert_set_find(struct convert_set *s, const char *id);
/* The job of task t with solution sol, id id, as one line of o->out; code
 * is a scratch buffer; at ("file:line") places the format's errors. */
int convert_job_write(struct convert_out *o, const struct convert_task *t, const char *id,
                      const char *sol, struct buf *code, const char *at, struct llmsb_err *err);

/* The formats, each in the file of its family: HumanEval, HumanEval-X and
 * MBXP (fmt_humaneval.c), MultiPL-E (fmt_multiple.c), the open JSON Lines
 * format (fmt_open.c), CRUXEval (facebookresearch/cruxeval) and CRUXEval-X
 * (fmt_crux.c). */
extern const struct convert_format convert_humaneval, convert_humaneval_x, convert_mbxp;
extern const struct convert_format convert_multiple, convert_open;
extern const struct convert_format convert_cruxeval, convert_cruxeval_x;

#endif
