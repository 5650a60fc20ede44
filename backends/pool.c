/* pool.c - the warm container pool (see pool.h).  The mutex guards only
 * bookkeeping; containers are created, checked and destroyed outside it. */
#include "pool.h"

#include <stdlib.h>
#include <string.h>

#define HEALTH_TIMEOUT_MS 5000

int pool_init(struct pool *p, struct backend *tmpl, const struct pool_config *cfg)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->tmpl = tmpl;
    p->cfg = *cfg;
    if (p->cfg.max_size < 1)
        p->cfg.max_size = 1;
    return 0;
}

static void destroy(struct pool *p, struct sandbox *sb)
{
    sandbox_close(sb);
    free(sb);
    pthread_mutex_lock(&p->mu);
    p->destroyed++;
    pthread_mutex_unlock(&p->mu);
}

/* Remembers a key so maintenance keeps min_idle warm for it. Locked. */
static void note_key(struct pool *p, const char *key, const struct sandbox *sb)
{
    const struct container_spec *spec = &sb->spec;
    int i;
    for (i = 0; i < p->nwarm; i++)
        if (strcmp(p->warm[i].key, key) == 0)
            break;
    if (i == p->nwarm) {
        if (p->nwarm == POOL_MAX_KEYS)
            return;
        p->nwarm++;
        snprintf(p->warm[i].key, sizeof(p->warm[i].key), "%s", key);
        snprintf(p->warm[i].image, sizeof(p->warm[i].image), "%s", spec->image);
        p->warm[i].spec = *spec;
        p->warm[i].spec.image = p->warm[i].image;
    }
    p->warm[i].last_used_ms = clock_mono_ms();
}

/* Takes the idle entry at index i out. Locked. */
static struct sandbox *take_idle(struct pool *p, size_t i)
{
    struct sandbox *sb = p->idle[i].sb;
    p->idle[i] = p->idle[--p->nidle];
    return sb;
}

static int create(struct pool *p, const struct container_spec *spec, struct sandbox **out,
                  struct llmsb_err *err)
{
    struct sandbox *sb = calloc(1, sizeof(*sb));
    int rc;

    if (!sb)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "pool: out of memory");
    if ((rc = sandbox_open(sb, p->tmpl, spec, p->cfg.start_timeout_ms, err)) != 0) {
        free(sb);
        return rc;
    }
    *out = sb;
    return 0;
}

int pool_acquire(struct pool *p, const struct container_spec *spec, struct pool_lease *lease,
                 struct llmsb_err *err)
{
    int64_t deadline = clock_mono_ms() + p->cfg.wait_ms;
    int rc;

    memset(lease, 0, sizeof(*lease));
    exec_spec_key(spec, lease->key, sizeof(lease->key));
    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct sandbox *sb = NULL;
        size_t i;

        for (i = 0; i < p->nidle; i++)
            if (strcmp(p->idle[i].key, lease->key) == 0)
                break;
        if (i < p->nidle) {
            sb = take_idle(p, i);
            pthread_mutex_unlock(&p->mu);
            if (sandbox_ping(sb, HEALTH_TIMEOUT_MS, err) == 0) {
                pthread_mutex_lock(&p->mu);
                p->reused++;
                pthread_mutex_unlock(&p->mu);
                lease->sb = sb;
                return 0;
            }
            log_warn("pool: container %.12s failed its health check (%s); replacing it", sb->id,
                     err->msg);
            llmsb_err_clear(err);
            destroy(p, sb);
            pthread_mutex_lock(&p->mu);
            p->total--;
            continue;
        }
        if (p->total < p->cfg.max_size) {
            p->total++;
            p->created++;
            pthread_mutex_unlock(&p->mu);
            if ((rc = create(p, spec, &lease->sb, err)) != 0) {
                pthread_mutex_lock(&p->mu);
                p->total--;
                pthread_cond_broadcast(&p->cv);
                pthread_mutex_unlock(&p->mu);
            }
            return rc;
        }
        if (p->nidle > 0) {   /* full, but an idle container of another key can go */
            sb = take_idle(p, 0);
            p->total--;
            pthread_mutex_unlock(&p->mu);
            destroy(p, sb);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        if (p->cfg.on_exhausted == POOL_FAIL_FAST) {
            pthread_mutex_unlock(&p->mu);
            return llmsb_err_set(err, LLMSB_ERR_LIMIT, "pool: all %d containers are busy "
                                                       "(pool.on_exhausted: fail_fast)",
                                 p->cfg.max_size);
        }
        if (p->cfg.on_exhausted == POOL_TEMPORARY) {
            pthread_mutex_unlock(&p->mu);
            lease->temporary = 1;
            return create(p, spec, &lease->sb, err);
        }
        {
            struct timespec ts;
            int64_t left = deadline - clock_mono_ms();
            if (left <= 0) {
                pthread_mutex_unlock(&p->mu);
                return llmsb_err_set(err, LLMSB_ERR_TIMEOUT, "pool: no container free within "
                                                             "%lld ms", (long long)p->cfg.wait_ms);
            }
            clock_gettime(CLOCK_REALTIME, &ts);
            left = left > 200 ? 200 : left;
            ts.tv_nsec += (long)(left % 1000) * 1000000;
            ts.tv_sec += left / 1000 + ts.tv_nsec / 1000000000;
            ts.tv_nsec %= 1000000000;
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        }
    }
}

void pool_put(struct pool *p, struct pool_lease *lease, int reusable)
{
    struct sandbox *sb = lease->sb;
    int keep;

    if (!sb)
        return;
    lease->sb = NULL;
    keep = reusable && !lease->temporary && sb->healthy && sb->open &&
           (p->cfg.max_uses <= 0 || sb->jobs < p->cfg.max_uses) &&
           (p->cfg.max_age_ms <= 0 || clock_mono_ms() - sb->born_ms < p->cfg.max_age_ms);
    sb->cancel = NULL;
    pthread_mutex_lock(&p->mu);
    if (keep && p->nidle == p->aidle) {
        size_t na = p->aidle ? p->aidle * 2 : 8;
        struct pool_idle *ni = realloc(p->idle, na * sizeof(*ni));
        if (ni) {
            p->idle = ni;
            p->aidle = na;
        } else {
            keep = 0;
        }
    }
    if (keep) {
        note_key(p, lease->key, sb);   /* only keys that worked are kept warm */
        p->idle[p->nidle].sb = sb;
        p->idle[p->nidle].idle_since_ms = clock_mono_ms();
        snprintf(p->idle[p->nidle].key, sizeof(p->idle[0].key), "%s", lease->key);
        p->nidle++;
    } else if (!lease->temporary) {
        p->total--;
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (!keep)
        destroy(p, sb);
}

void pool_maintain(struct pool *p)
{
    int64_t now = clock_mono_ms();

    for (;;) {   /* expire idle containers, one at a time */
        struct sandbox *sb = NULL;
        pthread_mutex_lock(&p->mu);
        for (size_t i = 0; i < p->nidle; i++) {
            struct sandbox *c = p->idle[i].sb;
            int too_idle = p->cfg.idle_timeout_ms > 0 &&
                           now - p->idle[i].idle_since_ms > p->cfg.idle_timeout_ms;
            int too_old = p->cfg.max_age_ms > 0 && now - c->born_ms > p->cfg.max_age_ms;
            if (too_idle || too_old) {
                sb = take_idle(p, i);
                p->total--;
                break;
            }
        }
        pthread_mutex_unlock(&p->mu);
        if (!sb)
            break;
        destroy(p, sb);
    }
    for (int w = 0;; w++) {   /* top up min_idle for keys in use */
        struct container_spec spec;
        struct sandbox *sb;
        struct llmsb_err err = {0};
        char key[512], image[256];
        int have = 0;

        pthread_mutex_lock(&p->mu);
        if (w >= p->nwarm || p->total >= p->cfg.max_size) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        for (size_t i = 0; i < p->nidle; i++)
            have += strcmp(p->idle[i].key, p->warm[w].key) == 0;
        if (have >= p->cfg.min_idle ||
            (p->cfg.idle_timeout_ms > 0 && now - p->warm[w].last_used_ms > p->cfg.idle_timeout_ms)) {
            pthread_mutex_unlock(&p->mu);
            continue;
        }
        spec = p->warm[w].spec;
        snprintf(image, sizeof(image), "%s", p->warm[w].image);
        spec.image = image;
        snprintf(key, sizeof(key), "%s", p->warm[w].key);
        p->total++;
        p->created++;
        pthread_mutex_unlock(&p->mu);
        if (create(p, &spec, &sb, &err) != 0) {
            log_warn("pool: cannot warm a container of %s: %s", image, err.msg);
            pthread_mutex_lock(&p->mu);
            p->total--;
            pthread_mutex_unlock(&p->mu);
            break;
        }
        struct pool_lease l = {sb, 0, ""};
        snprintf(l.key, sizeof(l.key), "%s", key);
        pool_put(p, &l, 1);
        w--;   /* this key may want more */
    }
}

void pool_release_all(struct pool *p)
{
    for (;;) {
        struct sandbox *sb = NULL;
        pthread_mutex_lock(&p->mu);
        if (p->nidle) {
            sb = take_idle(p, p->nidle - 1);
            p->total--;
        }
        pthread_mutex_unlock(&p->mu);
        if (!sb)
            break;
        destroy(p, sb);
    }
    free(p->idle);
    p->idle = NULL;
    p->nidle = p->aidle = 0;
}

int pool_size(struct pool *p, int *idle)
{
    int t;
    pthread_mutex_lock(&p->mu);
    t = p->total;
    if (idle)
        *idle = (int)p->nidle;
    pthread_mutex_unlock(&p->mu);
    return t;
}
