/* eval_jobs.h - what the eval/ unit tests (test_eval.c, test_crux.c,
 * test_convert_formats.c) share: the JSON Lines jobs convert wrote to a
 * memory stream, parsed, and the value or string at a dotted path. */
#ifndef LLMSB_TESTS_EVAL_JOBS_H
#define LLMSB_TESTS_EVAL_JOBS_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The jobs written to a memory stream, one JSON object per line. */
struct jobs {
    char *text;
    size_t len;
    cJSON *job[32];
    int n;
};

static inline void jobs_parse(struct jobs *j)
{
    for (char *p = j->text, *nl; p && *p && j->n < 32; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        j->job[j->n++] = cJSON_ParseWithLength(p, nl ? (size_t)(nl - p) : strlen(p));
    }
}

/* Frees the jobs and the text; j can be used again. */
static inline void jobs_release(struct jobs *j)
{
    for (int i = 0; i < j->n; i++)
        cJSON_Delete(j->job[i]);
    free(j->text);
    memset(j, 0, sizeof(*j));
}

/* The value at path ("meta.task_id") in o, or NULL. */
static inline const cJSON *get(const cJSON *o, const char *path)
{
    char key[64];
    const char *dot = strchr(path, '.');
    if (!dot)
        return cJSON_GetObjectItemCaseSensitive(o, path);
    snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
    return get(cJSON_GetObjectItemCaseSensitive(o, key), dot + 1);
}

/* The string at path in o, or NULL. */
static inline const char *str(const cJSON *o, const char *path)
{
    return cJSON_GetStringValue(get(o, path));
}

#endif
