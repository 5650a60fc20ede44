/* job.h - a job as the worker sees it (DESIGN §4 job fields), its result
 * (§4 result fields), limit resolution against the config's ceilings, and
 * the translation of a job into the agent's JOB frame. */
#ifndef LLMSB_JOB_H
#define LLMSB_JOB_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "agent/proto.h"
#include "common/common.h"
#include "config/config.h"
#include "languages/languages.h"

#define JOB_MAX_CODE ((size_t)1 << 20)      /* 1 MiB of source */
#define JOB_MAX_STDIN ((size_t)16 << 20)
#define JOB_MAX_FILES_BYTES ((size_t)32 << 20)

struct job_file {
    char *path;
    char *data;
    size_t len;
};

struct job {
    char *id;
    const struct language *lang;
    char *code;
    size_t code_len;
    char *stdin_data;
    size_t stdin_len;
    char **args;            /* NULL-terminated */
    size_t nargs;
    char **env;             /* "K=V", NULL-terminated */
    size_t nenv;
    struct job_file *files;
    size_t nfiles;
    struct limits limits;   /* resolved: defaults, then the job's values */
    int network;
    char *image;            /* NULL: the language's configured image */
    char *expect_stdout;    /* NULL: not given */
    int has_expect_exit;
    int64_t expect_exit;
    int64_t result_ttl_s;
    int max_attempts;
    int64_t artifact_max_count;
    int64_t artifact_max_file_mb;
    int64_t artifact_max_total_mb;
    char *meta;             /* JSON text, copied to the result untouched */
    int plots;              /* capture plots where the language can (default 1) */
    char **libraries;       /* NULL-terminated; installed before the run */
    size_t nlibraries;
    int64_t libraries_max;
    char **artifact_globs;  /* NULL-terminated; files to bring back */
    size_t nglobs;
    char *policy;           /* preset or config policy name; NULL: the default */
    char *security;         /* inline JSON policy, or NULL */
};

/* One job field as text (a stream entry field, a YAML or JSON value). */
struct job_field {
    const char *name;
    const char *value;
    size_t len;
};

#define JOB_MAX_FIELD ((size_t)64 << 10)   /* any field but code, stdin, files */

/* Builds a job from fields (DESIGN §4). default_id is used when there is
 * no id field (the stream entry id). Every failure names the field, the
 * value and why; j is then still usable for an `invalid` result (its id
 * and meta are kept when they parsed). */
int job_from_fields(struct job *j, const struct config *cfg, const struct job_field *f,
                    size_t n, const char *default_id, struct llmsb_err *err);

struct job_result {
    char id[128];
    struct proto_result r;  /* status, exit_code, signal, output, usage */
    int passed;             /* -1 = no expectations given */
    char error[512];
    char backend[16];
    char image[256];
    char worker[128];
    char *meta;             /* JSON text or NULL; owned */
    char *violations;       /* JSON array text or NULL; owned */
    char *artifacts;        /* JSON array text or NULL; owned */
    int attempts;
    int64_t queued_at;      /* ms since the epoch; for `run`, when it was asked */
    int64_t started_at;
    int64_t finished_at;
};

void job_init(struct job *j, const struct config *cfg);
void job_release(struct job *j);

/* Sets a limit by its job-field name ("timeout", "memory", "cpus", "pids",
 * "output") from text, checking it against cfg's ceiling. The error names
 * the field, the value and the bound. */
int job_set_limit(struct job *j, const struct config *cfg, const char *field, const char *value,
                  struct llmsb_err *err);
int job_set_language(struct job *j, const char *name, struct llmsb_err *err);
int job_set_code(struct job *j, const char *code, size_t len, struct llmsb_err *err);
int job_add_env(struct job *j, const char *kv, struct llmsb_err *err);
/* A preset or a policy of cfg's security.policies; "" = the default. */
int job_set_policy(struct job *j, const struct config *cfg, const char *name, size_t len,
                   struct llmsb_err *err);
int job_add_file(struct job *j, const char *path, const char *data, size_t len,
                 struct llmsb_err *err);

struct sec_result;
/* The security check (worker/scan.c): the config's minimum policy plus the
 * job's (inline security, else policy, else the default) over the code and
 * the files in the job's language. res->blocked decides. A policy that
 * does not compile is an error naming it. */
int job_scan(const struct config *cfg, const struct job *j, struct sec_result *res,
             struct llmsb_err *err);

/* Builds the agent's job: source file, files, argv, env, limits, plots. */
int job_to_proto(const struct job *j, struct proto_job *pj, struct llmsb_err *err);
/* Adds the library install step (the language's installer argv, then one
 * argument per name) with cfg's registries and timeout. */
int job_add_install(const struct job *j, const struct config *cfg, struct proto_job *pj,
                    struct llmsb_err *err);

void job_result_init(struct job_result *r, const struct job *j);
void job_result_release(struct job_result *r);
void job_result_set_status(struct job_result *r, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Turns the agent's collected files into r->artifacts: a JSON array of
 * {name, mime, size, base64}, and {name, skipped} for what was left out. */
int job_result_artifacts(struct job_result *r);
/* Calls fn for each collected file (name validated as a relative path). */
int job_result_each_artifact(const struct job_result *r,
                             int (*fn)(void *ud, const char *name, const char *data, size_t len),
                             void *ud);
/* Adds a library to install (name checked as in the libraries field). */
int job_add_library(struct job *j, const char *name, struct llmsb_err *err);
/* Adds an artifact glob (relative, no ".."). */
int job_add_artifact_glob(struct job *j, const char *glob, struct llmsb_err *err);
/* Fills r->passed from the job's expectations (DESIGN §3). */
void job_result_check(struct job_result *r, const struct job *j);
/* Returns a new JSON text of the result (DESIGN §4 fields); caller frees. */
char *job_result_json(const struct job_result *r, int pretty);

/* The result as the Redis hash's string fields (DESIGN §4): fills out (up
 * to max) pointing into r and into nums, which must outlive out. */
#define JOB_RESULT_MAX_FIELDS 32
size_t job_result_fields(const struct job_result *r, char nums[][32], struct job_field *out,
                         size_t max);
/* A result hash (string fields) as a JSON object: numbers as numbers,
 * booleans as booleans, artifacts/violations/meta as JSON. New cJSON. */
cJSON *job_result_fields_json(const struct job_field *f, size_t n);

#endif
