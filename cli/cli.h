/* cli.h - the verbs of the llm-sandbox binary and the options every verb
 * shares (flags, then environment, then the config file, then defaults). */
#ifndef LLMSB_CLI_H
#define LLMSB_CLI_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include "config/config.h"

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

/* cli/provenance.c: what `submit --report` states beside its figures. */
struct jobfile;
struct report_env;
struct report_timing;
/* Fills e: this machine, the engine the config names and its version,
 * the id of each image the results name, each language's limits as the
 * jobs resolve them; local says whether the jobs ran here. */
void cli_provenance(const struct config *cfg, const struct jobfile *jf, cJSON **results, int local,
                    struct report_env *e);
/* A result object's phases as a report row of language lang (borrowed). */
void cli_timing_of(const cJSON *result, const char *lang, struct report_timing *t);

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
int cmd_mcp(struct cli_globals *g, int argc, char **argv);
int cmd_serve(struct cli_globals *g, int argc, char **argv);
/* A bearer token: FILE's first line, or the environment's env_name; *out
 * NULL without either.  Returns 0 or -1 (said why, verb first). */
int cli_read_token(const char *verb, const char *env_name, const char *file, char *tok,
                   size_t toksz, const char **out);

#endif
