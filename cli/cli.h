/* cli.h - the verbs of the llm-sandbox binary and the options every verb
 * shares (flags, then environment, then the config file, then defaults). */
#ifndef LLMSB_CLI_H
#define LLMSB_CLI_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include "batch/batch.h"
#include "config/config.h"
#include "eval/convert.h"

/* Exit codes of the verbs themselves; `run` exits with its job's status's
 * code from the status table (common/status.h). */
enum cli_exit {
    EXIT_USAGE = 2,             /* bad flag or invalid job */
    EXIT_INTERNAL = 3,          /* the infrastructure failed */
    EXIT_FOLLOW_MISMATCH = 117, /* result --follow printed bytes its result does not hold */
    EXIT_WAIT_TIMEOUT = 124,    /* submit --wait --timeout ran out */
    EXIT_INTERRUPTED = 130
};

struct cli_globals {
    const char *config_path;
    const char *backend;
    const char *redis_url;
    const char *prefix;
    struct config cfg;
};

/* Consumes a global option at argv[*i] if it is one; 1 = consumed,
 * 0 = not global, -1 = error printed. */
int cli_global_opt(struct cli_globals *g, int argc, char **argv, int *i);
/* Loads the config and applies environment and flags over it. */
int cli_config_finish(struct cli_globals *g);
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Installs SIGINT/SIGTERM handlers: the first sets llmsb_interrupted (every
 * wait stops, the clean-up and the summary follow), a second exits at once
 * with EXIT_INTERRUPTED.  The worker verb has its own (cli/worker.c). */
void cli_signals(void);

/* Reads a whole file ("-": stdin) into b; past b's cap is an error naming
 * what, never a silent cut. */
int cli_read_file(const char *path, struct buf *b, const char *what, struct llmsb_err *err);
/* Writes data as dir/name (parents made, never through a link). */
int cli_save_file(const char *dir, const char *name, const char *data, size_t len);
/* Saves a result object's artifacts under dir/<id>/; counts into *saved. */
int cli_save_result_artifacts(const char *dir, const cJSON *result, int *saved);
/* A job id as one directory name: '/', '%', '\\', control characters and
 * a leading '.' become %XX ("HumanEval/0" -> "HumanEval%2F0"). */
void cli_id_dirname(const char *id, char *out, size_t outsz);

/* cli/convert.c: convert's options and its writing of a dataset's jobs,
 * for `convert` and `eval`. */
struct cli_convert_args {
    const char *dataset, *samples, *out_path;
    const char *expected; /* --expected: EvalPlus ground-truth results */
    long timeout_s;
    struct convert_opts read; /* --mode, --lang */
    int cut_at_stop_tokens;
    enum extract_mode extract; /* --extract */
    /* LiveCodeBench's encoded tests: decoded in sandbox jobs on g's engine
     * (cli/convert_decode.c) unless --no-decode; --decode-image */
    int no_decode;
    const char *decode_image;
    struct cli_globals *g;
};
/* Consumes convert's option at argv[*i] if it is one (not --out, whose
 * meaning is the verb's); 1 = consumed, 0 = not one, -1 = error printed. */
int cli_convert_opt(int argc, char **argv, int *i, struct cli_convert_args *o);
/* Reads a->dataset (and a->samples) and writes their jobs to o->out (named
 * o->name in errors; a->timeout_s and a->cut_at_stop_tokens set in o
 * here), then says on stderr what was converted.  Returns 0 or the exit
 * code (said). */
int cli_convert_write(const struct cli_convert_args *a, struct convert_out *o);
/* 1 when a->dataset is a benchmark whose samples are graded against what
 * its reference solutions' jobs give (EvalPlus: convert --expected), else
 * 0 (also when it cannot be read: the conversion itself says why). */
int cli_convert_truth_first(const struct cli_convert_args *a);

/* cli/submit.c: submit's options and its run of a job file, for `submit`
 * and `eval`. */
struct jobfile;
struct submit_opts {
    const char *verb; /* the messages' prefix: "submit", "eval" */
    const char *file, *out, *artifacts, *group_by, *report;
    int wait, local, allow_invalid, no_dedup, recheck;
    int graded; /* exit 0 when every checked job got a verdict, passed or not (eval) */
    int phases; /* print the per-phase table without --report too (eval) */
    enum batch_existing existing;
    long long slots;
    double timeout_s;
    const char *timeout_flag; /* the flag of timeout_s (NULL: --timeout) */
    int64_t not_before_ms;    /* --delay, --not-before: when the jobs are due (0: now) */
    const char *due_flag;     /* which of them gave it */
};
/* Consumes submit's option at argv[*i] (a global option too) if it is one;
 * 1 = consumed, 0 = not one, -1 = error printed. */
int cli_submit_opt(struct cli_globals *g, int argc, char **argv, int *i, struct submit_opts *o);
/* The options' combinations; 0, or -1 said. */
int cli_submit_opts_check(const struct submit_opts *o);
/* Runs jf as a batch (checked, run here or through the queue, waited for
 * with o->wait) with the summary, pass@k, --report, --out and --artifacts;
 * returns the exit code (submit's, or with o->graded eval's). */
int cli_submit_jobs(struct cli_globals *g, const struct submit_opts *o, struct jobfile *jf);

int cmd_run(struct cli_globals *g, int argc, char **argv);
int cmd_images(struct cli_globals *g, int argc, char **argv);
int cmd_worker(struct cli_globals *g, int argc, char **argv);
int cmd_submit(struct cli_globals *g, int argc, char **argv);
int cmd_result(struct cli_globals *g, int argc, char **argv);
int cmd_status(struct cli_globals *g, int argc, char **argv);
int cmd_cancel(struct cli_globals *g, int argc, char **argv);
int cmd_dead(struct cli_globals *g, int argc, char **argv);
int cmd_scan(struct cli_globals *g, int argc, char **argv);
int cmd_convert(struct cli_globals *g, int argc, char **argv);
int cmd_eval(struct cli_globals *g, int argc, char **argv);
int cmd_mcp(struct cli_globals *g, int argc, char **argv);
int cmd_serve(struct cli_globals *g, int argc, char **argv);
/* A bearer token: FILE's first line, or the environment's env_name; *out
 * NULL without either.  Returns 0 or -1 (said why, verb first). */
int cli_read_token(const char *verb, const char *env_name, const char *file, char *tok,
                   size_t toksz, const char **out);

#endif
