/* jobfile.h - YAML job files (`defaults:` + `jobs:`) and JSON Lines job
 * files (DESIGN §3), read into one JSON object of job fields per job, in
 * file order, with the line each job starts on for error messages. */
#ifndef LLMSB_JOBFILE_H
#define LLMSB_JOBFILE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include "common/common.h"

#define JOBFILE_MAX_BYTES ((size_t)256 << 20)
#define JOBFILE_MAX_JOBS 1000000

struct jobfile {
    cJSON **jobs;       /* objects: field -> string/number/bool/array/object */
    size_t *lines;      /* 1-based line of each job */
    size_t n;
    char name[256];
};

/* Loads path; a ".jsonl"/".ndjson" name or a first '{' means JSON Lines.
 * Errors read "file:line: ...". */
int jobfile_load(struct jobfile *jf, const char *path, struct llmsb_err *err);
int jobfile_load_string(struct jobfile *jf, const char *text, size_t len, const char *name,
                        struct llmsb_err *err);
void jobfile_release(struct jobfile *jf);

/* The job's fields as text (strings as they are, other JSON values as
 * JSON text), for job_from_fields. names/values/lens are filled up to max;
 * the texts are owned by *owned (free with jobfile_fields_free). */
size_t jobfile_fields(const cJSON *job, const char **names, const char **values, size_t *lens,
                      size_t max, char ***owned);
void jobfile_fields_free(char **owned, size_t n);

#endif
