/* lane.h - priority and tenant lanes (docs/operations.md, priorities and
 * tenants): a job's lane is its class (high, normal, low) and its tenant
 * (or none), read from its fields priority and tenant.  The names here
 * are the contract between the job parser (which validates the fields),
 * the queue (one stream per lane) and the scheduler (which picks a lane):
 * "" is the default lane (normal, no tenant), else "high", "low",
 * "normal:acme", "high:acme", ... */
#ifndef LLMSB_LANE_H
#define LLMSB_LANE_H

#include <stddef.h>
#include "common/common.h"
#include "common/fields.h"

enum lane_class { LANE_HIGH = 0, LANE_NORMAL = 1, LANE_LOW = 2 };
#define LANE_CLASSES 3

#define LANE_TENANT_MAX 32 /* [A-Za-z0-9_.-]{1,32} */
/* "normal:" + a tenant + NUL */
#define LANE_NAME_MAX (sizeof("normal:") + LANE_TENANT_MAX)

struct lane {
    enum lane_class cls;
    char tenant[LANE_TENANT_MAX + 1]; /* "": none */
};

/* "high", "normal" or "low". */
const char *lane_class_name(enum lane_class c);
/* The priority field's value v (n bytes) into *out; err names the field,
 * the value and the values allowed. */
int lane_class_parse(const char *v, size_t n, enum lane_class *out, struct llmsb_err *err);
/* 0 when v (n bytes) is a tenant name, else err names the field and why. */
int lane_tenant_check(const char *v, size_t n, struct llmsb_err *err);
/* The lane of a job's fields (priority, tenant; absent: normal, none). */
int lane_of_fields(const struct fields *f, struct lane *out, struct llmsb_err *err);
/* 1 for the default lane (normal, no tenant). */
int lane_is_default(const struct lane *l);
/* The lane's name into out ("" for the default lane). */
void lane_name(const struct lane *l, char out[LANE_NAME_MAX]);
/* The weights of the classes high, normal, low: "H,N,L" (each 1 to
 * LANE_WEIGHT_MAX) into weight, or "strict" (*strict = 1); NULL or "":
 * LANE_WEIGHTS_DEFAULT.  err names the value and what is allowed. */
#define LANE_WEIGHT_MAX 1000
#define LANE_WEIGHTS_DEFAULT "8,4,1"
int lane_weights_parse(const char *s, int weight[LANE_CLASSES], int *strict, struct llmsb_err *err);
/* A lane name (n bytes, not "") into *out: 0, or -1 when it names none. */
int lane_parse(const char *name, size_t n, struct lane *out);

#endif
