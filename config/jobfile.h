/* jobfile.h - YAML job files (`defaults:` + `jobs:`) and JSON Lines job
 * files (docs/jobs.md), read into one JSON object of job fields per job, in
 * file order, with the line each job starts on for error messages. */
#ifndef LLMSB_JOBFILE_H
#define LLMSB_JOBFILE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include "common/common.h"
#include "common/fields.h"

/* 1 GiB: a job file of EvalPlus samples carries each task's inputs and
 * expected outputs in every sample's job (HumanEval+ x 10: 325 MB) */
#define JOBFILE_MAX_BYTES ((size_t)1 << 30)
#define JOBFILE_MAX_JOBS 1000000
#define JOBFILE_MAX_DEPTH 32 /* YAML nesting */

struct jobfile {
    cJSON **jobs;  /* objects: field -> string/number/bool/array/object */
    size_t *lines; /* 1-based line of each job */
    size_t n;
    char name[256];
};

/* Loads path; a ".jsonl"/".ndjson" name or a first '{' means JSON Lines.
 * Errors read "file:line: ...". */
int jobfile_load(struct jobfile *jf, const char *path, struct llmsb_err *err);
int jobfile_load_string(struct jobfile *jf, const char *text, size_t len, const char *name,
                        struct llmsb_err *err);
void jobfile_release(struct jobfile *jf);

/* Adds the job's fields to out as text (strings as they are, other JSON
 * values as JSON text), owned by out.  Returns 0, LLMSB_ERR_LIMIT when out
 * is full (out->dropped counts the rest) or LLMSB_ERR_NOMEM. */
int jobfile_fields(const cJSON *job, struct fields *out);

#endif
