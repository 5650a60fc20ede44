/* result.h - a job's result (its fields: docs/statuses.md): one type, one
 * serializer to the Redis hash form (every value a string), and one from
 * that form to JSON (numbers as numbers, booleans as booleans, artifacts,
 * violations and meta as JSON).  `run --json`, `submit --out`, `result` and
 * the worker all go through the same two, so a result reads the same
 * wherever it comes from. */
#ifndef LLMSB_RESULT_H
#define LLMSB_RESULT_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include "proto/proto.h"
#include "common/fields.h"
#include "common/status.h"

struct job;

#define RESULT_ID_MAX 256 /* above JOB_ID_MAX */

/* How an attempt had its sandbox (phases.acquire; its name in
 * result_acquire_names, as the result and the metrics say it). */
enum result_acquire {
    RESULT_ACQUIRE_NONE = 0,  /* none ("", not said) */
    RESULT_ACQUIRE_WARM,      /* an idle one of the pool: "warm" */
    RESULT_ACQUIRE_COLD,      /* made for the job (a session's first call too): "cold" */
    RESULT_ACQUIRE_TEMPORARY, /* an extra one past pool.max_size, gone after: "temporary" */
    RESULT_ACQUIRE_SESSION,   /* the session's own: "session" */
    RESULT_ACQUIRE_COUNT
};
extern const char *const result_acquire_names[RESULT_ACQUIRE_COUNT];

/* Where a job's time went on the host (docs/jobs.md, "phases"); the
 * agent's steps are r.phases.  -1: not measured (that step never came). */
struct result_phases {
    int64_t claimed_ms; /* clock_mono_ms() when this process took the job */
    int64_t claimed_at; /* the same on the wall clock (ms since the epoch) */
    int64_t prepare_ms; /* the scan, the agent's JOB, the image check */
    int64_t acquire_ms; /* a sandbox to run in: pool wait, create, start, prestart */
    /* how it had its sandbox */
    enum result_acquire acquire;
    int64_t agent_ms;  /* JOB sent to RESULT read: the agent's whole turn */
    int64_t finish_ms; /* the sandbox given back, expectations, artifacts */
    int64_t held_ms;   /* the claim to the end of the last attempt; total = wait + held */
};

struct job_result {
    char id[RESULT_ID_MAX];
    struct proto_result r; /* status, exit_code, signal, output, usage */
    int passed;            /* -1 = no expectations given */
    char error[512];
    char backend[16];
    char image[256];
    char worker[160];
    char *meta;       /* JSON text or NULL; owned */
    char *history;    /* the job's history (dead requeue): JSON array text or NULL; owned */
    char *violations; /* JSON array text or NULL; owned */
    char *artifacts;  /* JSON array text or NULL; owned */
    char *cases;      /* JSON array text of the test cases run, or NULL; owned */
    int cases_passed; /* with cases: how many passed */
    int cases_run;    /* with cases: how many the agent reported */
    int cases_total;  /* with cases: how many the job has; -1 without */
    int attempts;
    enum job_status first_status; /* a recheck's (job recheck): what it replaces; else NONE */
    int64_t queued_at;            /* ms since the epoch; for `run`, when it was asked */
    int64_t started_at;
    int64_t finished_at;
    struct result_phases ph;
};

/* j may be NULL (a result for an entry that is not a job at all). */
void job_result_init(struct job_result *r, const struct job *j);
void job_result_release(struct job_result *r);
/* Sets the status and, with fmt, the error text. */
void job_result_set_status(struct job_result *r, enum job_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Fills r->passed from the job's expectations (expect_*), and with test
 * cases r->cases and the counts from the agent's case results. */
void job_result_check(struct job_result *r, const struct job *j);

/* Stamps how long r's job has been held (from the claim to now): at the
 * end of an attempt; a result that never had one is stamped when
 * serialized.  The phases' total is the queue wait plus that. */
void job_result_phases_end(struct job_result *r);
/* The phases' keys (docs/jobs.md), without "_ms", in the documented
 * order, and each one's milliseconds for r (-1: the step did not run). */
#define RESULT_PHASES 10
extern const char *const result_phase_names[RESULT_PHASES];
void job_result_phases_ms(const struct job_result *r, int64_t ms[RESULT_PHASES]);
/* The phases object (docs/jobs.md): host and agent times, steps that did
 * not run left out. New cJSON; caller deletes. */
cJSON *job_result_phases_json(const struct job_result *r);

/* Turns the agent's collected files into r->artifacts: a JSON array of
 * {name, mime, size, base64}, and {name, skipped} for what was left out. */
int job_result_artifacts(struct job_result *r);
/* Calls fn for each collected file (name validated as a relative path). */
int job_result_each_artifact(const struct job_result *r,
                             int (*fn)(void *ud, const char *name, const char *data, size_t len),
                             void *ud);

/* The result as the Redis hash's string fields.  out's values point into r
 * and into nums (RESULT_NUMS strings), which must outlive out. */
#define RESULT_MAX_FIELDS 37
#define RESULT_NUMS 16
int job_result_to_fields(const struct job_result *r, char nums[RESULT_NUMS][32],
                         struct fields *out);
/* A result hash (string fields, as written by job_result_to_fields or read
 * back from Redis) as a JSON object in the documented field order: numbers
 * as numbers, booleans as booleans, artifacts/violations/meta as JSON;
 * unknown names are left out. Returns a new cJSON; caller deletes. */
cJSON *result_fields_json(const struct fields *f);
/* Both in one: r as a JSON object. New cJSON; caller deletes. */
cJSON *job_result_json(const struct job_result *r);
/* A copy of result object r for the job id (submit's dedup): every field
 * of r in the documented order, but id, copy_of (of: the id that ran) and
 * meta (JSON text, NULL: none).  Returns a new cJSON; caller deletes. */
cJSON *result_json_copy(const cJSON *r, const char *id, const char *meta, const char *of);
/* 1 when a result object (result_fields_json's form; NULL is none) has a
 * final status: it will not change. */
int result_json_final(const cJSON *r);

#endif
