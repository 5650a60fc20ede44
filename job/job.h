/* job.h - a job as the worker sees it (its fields: docs/jobs.md), its result
 * (docs/statuses.md), limit resolution against the config's ceilings, and
 * the translation of a job into the agent's JOB frame. */
#ifndef LLMSB_JOB_H
#define LLMSB_JOB_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include "proto/proto.h"
#include "common/common.h"
#include "common/compare.h"
#include "common/fields.h"
#include "common/lane.h"
#include "common/status.h"
#include "common/strlist.h"
#include "config/config.h"
#include "languages/languages.h"

#define JOB_MAX_CODE ((size_t)1 << 20) /* 1 MiB of source */
#define JOB_ID_MAX 200                 /* bytes of an id: any printable UTF-8 text */
#define JOB_ID_MAX_TEXT "200"
#define JOB_MAX_STDIN ((size_t)16 << 20)
#define JOB_MAX_FILES_BYTES ((size_t)32 << 20)
#define JOB_MAX_GLOBS 64
#define JOB_MAX_FIELDS 64 /* fields of one job, at most */
#define JOB_SESSION_MAX 128

struct job_file {
    char *path;
    char *data;
    size_t len;
};

#define JOB_MAX_COPIES 1000 /* ids one run's result is copied to (submit's dedup) */

/* A job identical to this one in everything that can change the verdict
 * (submit's dedup): its result is this job's, under its own id and meta. */
struct job_copy {
    char *id;
    char *meta; /* JSON text or NULL */
};

struct session_scope;

struct job {
    char *id;
    const struct language *lang;
    char *code;
    size_t code_len;
    char *stdin_data;
    size_t stdin_len;
    char **args; /* NULL-terminated */
    size_t nargs;
    char **env; /* "K=V", NULL-terminated */
    size_t nenv;
    struct job_file *files;
    size_t nfiles;
    struct limits limits; /* resolved: defaults, then the job's values */
    int network;
    char *image;         /* NULL: the language's configured image */
    char *expect_stdout; /* NULL: not given */
    int has_expect_exit;
    int64_t expect_exit;
    int64_t result_ttl_s;
    int max_attempts;
    int64_t artifact_max_count;
    int64_t artifact_max_file_mb;
    int64_t artifact_max_total_mb;
    char *meta;            /* JSON text, copied to the result untouched */
    int plots;             /* capture plots where the language can (default 1) */
    int fresh_interpreter; /* 1: a new interpreter, never the image's zygote */
    int live;              /* 1: its output goes to sink as it comes (docs/jobs.md, live) */
    /* the front end's, never a field: where a live job's chunks go while it
     * runs (NULL: nowhere, the job runs as a non-live one) */
    const struct proto_chunk_sink *sink;
    char **libraries; /* NULL-terminated; installed before the run */
    size_t nlibraries;
    int64_t libraries_max;
    char **artifact_globs; /* NULL-terminated; files to bring back */
    size_t nglobs;
    char *policy;             /* preset or config policy name; NULL: the default */
    char *security;           /* inline JSON policy, or NULL */
    struct proto_case *cases; /* ncases > 0: compiled once, run per case */
    size_t ncases;
    struct compare compare;  /* for expect_stdout, the job's and each case's */
    int stop_on_failure;     /* cases: stop at the first that does not pass */
    struct lang_flags flags; /* compile_flags, link_flags (languages with flag_ok) */
    char *session;           /* NULL: none; else the session the job is a call of */
    const char *entry_id;    /* the stream entry it came in (the worker's), or NULL */
    /* the front end's, never a field: whose names session is in
     * (exec/session.h; NULL: the runner's own, as every worker's job) */
    const struct session_scope *session_scope;
    int session_close;       /* ends the session instead of running anything */
    struct job_copy *copies; /* results written with this job's (docs/jobs.md, copies) */
    size_t ncopies;
    enum job_status recheck; /* STATUS_NONE, or the status of the run this one rechecks */
    unsigned long given;     /* the fields the job named (job_given), not defaults */
    char *history;    /* JSON text: its dead letters before a requeue (dead requeue), or NULL */
    struct lane lane; /* priority and tenant: the queue lane it goes in */
};

#define JOB_MAX_FIELD ((size_t)64 << 10) /* any field but code, stdin, files */

/* Builds a job from fields (docs/jobs.md). default_id is used when there is
 * no id field (the stream entry id). Every failure names the field, the
 * value and why; j is then still usable for an `invalid` result (its id
 * and meta are kept when they parsed). */
int job_from_fields(struct job *j, const struct config *cfg, const struct fields *f,
                    const char *default_id, struct llmsb_err *err);

/* The same from a job file's object (config/jobfile.h's form). */
int job_from_json(struct job *j, const struct config *cfg, const cJSON *o, const char *default_id,
                  struct llmsb_err *err);

/* The name of the k-th job field (docs/jobs.md), NULL past the last. */
const char *job_field_name(size_t k);
/* 1 when j named field (job_from_fields), 0 when it holds a default. */
int job_given(const struct job *j, const char *field);

void job_init(struct job *j, const struct config *cfg);
void job_copies_free(struct job_copy *c, size_t n);
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
/* An image the job runs in; it must start with jobs.image_prefix. */
int job_set_image(struct job *j, const struct config *cfg, const char *name, size_t len,
                  struct llmsb_err *err);

/* Builds the agent's job: source file, files, argv, env, limits, plots.
 * Returns 0, LLMSB_ERR_NOTFOUND when the code has nothing to start (a Java
 * file without main: a compile_error, err says why), or another negative
 * code (invalid). */
int job_to_proto(const struct job *j, struct proto_job *pj, struct llmsb_err *err);
/* The warm compiler (the language row's) the job's compile step may ask,
 * or NULL: never for a session's call, a job with libraries or compile or
 * link flags, or one whose env says LLMSB_COMPILE_CACHE=0 (then its
 * sandbox runs no server at all: the plain side of tests/compile-cache). */
const char *job_compile_server(const struct job *j);
/* Adds the library install step (the language's installer argv, then one
 * argument per name) with cfg's registries and timeout. */
int job_add_install(const struct job *j, const struct config *cfg, struct proto_job *pj,
                    struct llmsb_err *err);

/* Adds a library to install (name checked as in the libraries field). */
int job_add_library(struct job *j, const char *name, struct llmsb_err *err);
/* The job's env names none the sandbox sets (PATH, HOME, ..., and the
 * language's own), so nothing a job asks for is silently overridden. */
int job_check_env(const struct job *j, struct llmsb_err *err);
/* Every library is a package name of the job's language's registry (its
 * row's library_ok): never a path, URL, file: or git spec; and
 * job_check_env.  Called once the whole job is read. */
int job_check_libraries(const struct job *j, struct llmsb_err *err);
/* Adds an artifact glob (relative, no ".."). */
int job_add_artifact_glob(struct job *j, const char *glob, struct llmsb_err *err);

/* ---- delayed jobs (job/due.c; docs/jobs.md, not_before and delay_ms) ---- */

#define JOB_DELAY_MAX_MS 31622400000LL /* 366 days */
#define JOB_DELAY_MAX_TEXT "366 days"
#define JOB_NOT_BEFORE_MAX_MS 253402300799999LL /* 9999-12-31T23:59:59.999Z */
/* A worker runs an entry this early at most; later than that it defers it. */
#define JOB_DUE_EARLY_MS 50
/* not_before's value: epoch milliseconds, or an RFC 3339 UTC time
 * ("2026-01-01T00:00:00Z", a fraction and "+00:00" allowed).  The error
 * names the field, the value and why. */
int job_not_before_parse(const char *v, size_t n, int64_t *ms, struct llmsb_err *err);
/* delay_ms's value: whole milliseconds, 0 to JOB_DELAY_MAX_MS. */
int job_delay_parse(const char *v, size_t n, int64_t *ms, struct llmsb_err *err);
/* A duration as a flag takes it ("30s", "500ms", "1.5h"; units ms s m h
 * d), at most JOB_DELAY_MAX_MS; what names the flag in the error. */
int job_duration_parse(const char *what, const char *s, int64_t *ms, struct llmsb_err *err);
/* When the job of fields f is due: not_before, or the entry's time
 * entry_ms plus delay_ms; *due 0 when it names neither.  Both given, or a
 * bad value, is an error (the job is invalid). */
int job_due_ms(const struct fields *f, int64_t entry_ms, int64_t *due, struct llmsb_err *err);
/* The fields a deferred job is kept with: f's, with "id" (id, when f has
 * none, so the job keeps its id), not_before set to due_ms and delay_ms
 * left out, so it is never deferred twice.  out is initialised here
 * (fields_release it); 0 or LLMSB_ERR_NOMEM. */
int job_due_fields(const struct fields *f, const char *id, int64_t due_ms, struct fields *out);

#endif
