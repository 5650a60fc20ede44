/* features.h - what a worker of this build understands beyond the job
 * fields every worker has known: a protocol level and named features,
 * each the job field that uses it.  A worker publishes both in its
 * heartbeat; a front end asks the live workers' heartbeats before it uses
 * a feature (queue/queue.h, queue_workers_check), and a job may name the
 * features it cannot do without in its needs field, so that a worker that
 * does not know one hands the job on instead of calling it invalid
 * (docs/operations.md, rolling upgrades; docs/jobs.md, needs).  A new
 * feature is a row of the table in features.c and a step of the level. */
#ifndef LLMSB_FEATURES_H
#define LLMSB_FEATURES_H

#include <stddef.h>

#include "common.h"

/* The protocol level: 1 added the heartbeat's protocol and features and
 * the needs field.  A heartbeat without them is a worker of level 0,
 * which knows none of the features below (older than dedup and live
 * output) and calls a job with a field it does not know invalid. */
#define LLMSB_PROTOCOL 1

#define FEATURE_NAME_MAX 32 /* bytes of a feature's name */
#define FEATURES_MAX 16     /* names in one list */

enum llmsb_feature { FEATURE_DEDUP = 0, FEATURE_RECHECK, FEATURE_LIVE, FEATURE_COUNT };

struct feature_info {
    const char *name;  /* as published and as needs names it */
    const char *field; /* the job field that uses it */
    const char *what;  /* for messages: "dedup (copies)" */
};

const struct feature_info *feature_info(enum llmsb_feature f);
/* This build's features, comma-separated: "dedup,recheck,live". */
const char *features_all(void);
/* 1 when the comma-separated list (len bytes) names name. */
int features_has(const char *list, size_t len, const char *name);
/* Checks a list as field gives it: 1 to FEATURES_MAX names of 1 to
 * FEATURE_NAME_MAX bytes of a-z, 0-9 and _, comma-separated.  Returns 0
 * when this build knows every name, 1 with the first it does not know in
 * unknown (usz bytes; NUL-terminated), or LLMSB_ERR_INVALID (err names
 * field, the value and why). */
int features_check(const char *field, const char *list, size_t len, char *unknown, size_t usz,
                   struct llmsb_err *err);

#endif
