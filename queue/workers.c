/* workers.c - what the live workers understand, from their heartbeats
 * (the worker publishes its protocol level and features there): a front
 * end asks before it uses a feature, so that a worker older than it never
 * gets a job it would call invalid (docs/operations.md, rolling upgrades);
 * a worker asks where to hand a job that needs a feature it lacks. */
#include "queue.h"

#include <stdio.h>
#include <string.h>

#include "common/features.h"

struct check_ctx {
    const char *features;
    struct queue_workers_check *out;
    long long best_free;
};

/* 1 when the heartbeat f publishes every name of the list. */
static int has_all(const struct fields *f, const char *features)
{
    size_t len = 0;
    const char *have = fields_get(f, "features", &len);
    char one[FEATURE_NAME_MAX + 1];

    for (const char *p = features; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(one, sizeof(one), "%.*s", (int)n, p);
        if (!have || !features_has(have, len, one))
            return 0;
        p += n + (p[n] == ',');
    }
    return 1;
}

/* Adds "name (protocol N)" to the list of those lacking, cut with ", ...". */
static void add_lacking(struct queue_workers_check *out, const char *name, const struct fields *f)
{
    const char *proto = fields_get(f, "protocol", NULL);
    size_t at = strlen(out->lacking_names), room = sizeof(out->lacking_names) - at;
    char shown[QUEUE_CONSUMER_MAX + 40], pshown[24];
    int n;

    if (at >= 3 && strcmp(out->lacking_names + at - 3, "...") == 0)
        return;
    llmsb_escape(shown, sizeof(shown), name, strlen(name));
    llmsb_escape(pshown, sizeof(pshown), proto ? proto : "0", strlen(proto ? proto : "0"));
    n = snprintf(out->lacking_names + at, room, "%s%s (protocol %s)", at ? ", " : "", shown,
                 pshown);
    if (n < 0 || (size_t)n >= room) {
        out->lacking_names[at] = '\0';
        if (room > 5)
            snprintf(out->lacking_names + at, room, "%s...", at ? ", " : "");
    }
}

static void check_one(void *ud, const char *name, const struct fields *f)
{
    struct check_ctx *c = ud;
    long long slots = 0, busy = 0;
    const char *v;

    c->out->alive++;
    if (!has_all(f, c->features)) {
        c->out->lacking++;
        add_lacking(c->out, name, f);
        return;
    }
    if ((v = fields_get(f, "slots", NULL)))
        parse_ll(v, 0, 1 << 20, &slots);
    if ((v = fields_get(f, "busy", NULL)))
        parse_ll(v, 0, 1 << 20, &busy);
    if (!c->out->best[0] || slots - busy > c->best_free) {
        snprintf(c->out->best, sizeof(c->out->best), "%s", name);
        c->best_free = slots - busy;
    }
}

int queue_workers_check(struct queue *q, const char *features, struct queue_workers_check *out,
                        struct llmsb_err *err)
{
    struct check_ctx c = {features, out, 0};
    int rc;

    memset(out, 0, sizeof(*out));
    rc = queue_workers_each(q, check_one, &c, err);
    return rc < 0 ? rc : 0;
}
