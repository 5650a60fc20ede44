/* lane.c - lane names and the validation of the fields that choose one
 * (lane.h). */
#include "common/lane.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[LANE_CLASSES] = {"high", "normal", "low"};

const char *lane_class_name(enum lane_class c)
{
    return (unsigned)c < LANE_CLASSES ? class_names[c] : "normal";
}

static int class_of(const char *v, size_t n)
{
    for (int c = 0; c < LANE_CLASSES; c++)
        if (strlen(class_names[c]) == n && memcmp(class_names[c], v, n) == 0)
            return c;
    return -1;
}

int lane_class_parse(const char *v, size_t n, enum lane_class *out, struct llmsb_err *err)
{
    char shown[48];
    int c = class_of(v, n);

    if (c < 0) {
        llmsb_escape(shown, sizeof(shown), v, n);
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "priority: \"%s\" is not a priority (high, normal or low)", shown);
    }
    *out = (enum lane_class)c;
    return 0;
}

static int tenant_ok(const char *v, size_t n)
{
    if (n == 0 || n > LANE_TENANT_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)v[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '.' || ch == '-'))
            return 0;
    }
    return 1;
}

int lane_tenant_check(const char *v, size_t n, struct llmsb_err *err)
{
    char shown[48];

    if (tenant_ok(v, n))
        return 0;
    llmsb_escape(shown, sizeof(shown), v, n);
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "tenant: \"%s\" must be 1 to %d of the characters A-Z a-z 0-9 _ . -",
                         shown, LANE_TENANT_MAX);
}

int lane_of_fields(const struct fields *f, struct lane *out, struct llmsb_err *err)
{
    size_t n = 0;
    const char *v;

    memset(out, 0, sizeof(*out));
    out->cls = LANE_NORMAL;
    if ((v = fields_get(f, "priority", &n)) && lane_class_parse(v, n, &out->cls, err) != 0)
        return err->code;
    if ((v = fields_get(f, "tenant", &n))) {
        if (lane_tenant_check(v, n, err) != 0)
            return err->code;
        memcpy(out->tenant, v, n);
        out->tenant[n] = '\0';
    }
    return 0;
}

int lane_is_default(const struct lane *l)
{
    return l->cls == LANE_NORMAL && !l->tenant[0];
}

void lane_name(const struct lane *l, char out[LANE_NAME_MAX])
{
    if (lane_is_default(l))
        out[0] = '\0';
    else
        snprintf(out, LANE_NAME_MAX, "%s%s%s", lane_class_name(l->cls), l->tenant[0] ? ":" : "",
                 l->tenant);
}

int lane_parse(const char *name, size_t n, struct lane *out)
{
    const char *colon = memchr(name, ':', n);
    size_t cl = colon ? (size_t)(colon - name) : n;
    int c = class_of(name, cl);

    memset(out, 0, sizeof(*out));
    if (c < 0)
        return -1;
    out->cls = (enum lane_class)c;
    if (colon) {
        size_t tl = n - cl - 1;
        if (!tenant_ok(colon + 1, tl))
            return -1;
        memcpy(out->tenant, colon + 1, tl);
        out->tenant[tl] = '\0';
    }
    return lane_is_default(out) ? -1 : 0; /* "normal" alone is the default lane: P:jobs */
}

int lane_weights_parse(const char *s, int weight[LANE_CLASSES], int *strict, struct llmsb_err *err)
{
    const char *p = s && *s ? s : LANE_WEIGHTS_DEFAULT;

    *strict = 0;
    memset(weight, 0, LANE_CLASSES * sizeof(*weight));
    if (strcmp(p, "strict") == 0) {
        *strict = 1;
        return 0;
    }
    for (int c = 0; c < LANE_CLASSES; c++) {
        char *end;
        long v;
        errno = 0;
        v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > LANE_WEIGHT_MAX ||
            *end != (c + 1 < LANE_CLASSES ? ',' : '\0'))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "priority weights \"%.40s\" must be \"strict\" or three weights "
                                 "high,normal,low of 1 to %d each (e.g. " LANE_WEIGHTS_DEFAULT ")",
                                 s, LANE_WEIGHT_MAX);
        weight[c] = (int)v;
        p = end + 1;
    }
    return 0;
}
