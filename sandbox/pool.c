/* pool.c - the warm container pool (see pool.h).  The mutex guards only
 * bookkeeping; containers are created, checked and destroyed outside it. */
#include "pool.h"

#include <stdlib.h>
#include <string.h>

int pool_config_label(struct pool_config *pc, const char *key, const char *value)
{
    char(*l)[160];

    if (pc->nlabels >= BACKEND_MAX_LABELS || strlen(key) >= sizeof(pc->labels[0][0]) ||
        strlen(value) >= sizeof(pc->labels[0][0]))
        return LLMSB_ERR_LIMIT;
    l = pc->labels[pc->nlabels++];
    snprintf(l[0], sizeof(l[0]), "%s", key);
    snprintf(l[1], sizeof(l[1]), "%s", value);
    return 0;
}

int pool_init(struct pool *p, const struct backend *tmpl, const struct pool_config *cfg)
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

/* Bookkeeping of container ids. Locked. */
static void live_add(struct pool *p, const char *id)
{
    if (p->nlive == p->alive) {
        size_t na = p->alive ? p->alive * 2 : 16;
        char(*nl)[BACKEND_ID_MAX] = realloc(p->live, na * sizeof(*nl));
        if (!nl)
            return; /* unknown to pool_knows: the reaper may take it once it is old */
        p->live = nl;
        p->alive = na;
    }
    snprintf(p->live[p->nlive++], BACKEND_ID_MAX, "%s", id);
}

static void live_del(struct pool *p, const char *id)
{
    for (size_t i = 0; i < p->nlive; i++)
        if (strcmp(p->live[i], id) == 0) {
            memcpy(p->live[i], p->live[--p->nlive], BACKEND_ID_MAX);
            return;
        }
}

/* A container whose remove failed: retried by pool_maintain. Locked. */
static void bury(struct pool *p, const char *id)
{
    if (p->ngrave == POOL_GRAVE_MAX) {
        log_warn("pool: %d removes already pending; container %.12s is left to the reaper",
                 POOL_GRAVE_MAX, id);
        return;
    }
    snprintf(p->grave[p->ngrave++], BACKEND_ID_MAX, "%s", id);
}

static void destroy(struct pool *p, struct sandbox *sb)
{
    sandbox_close(sb);
    pthread_mutex_lock(&p->mu);
    p->destroyed++;
    live_del(p, sb->id);
    if (sb->unremoved)
        bury(p, sb->id);
    pthread_mutex_unlock(&p->mu);
    free(sb);
}

int pool_knows(struct pool *p, const char *id)
{
    int found = 0;

    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->nlive && !found; i++)
        found = strcmp(p->live[i], id) == 0;
    for (size_t i = 0; i < p->ngrave && !found; i++)
        found = strcmp(p->grave[i], id) == 0;
    pthread_mutex_unlock(&p->mu);
    return found;
}

/* Retries the removes that failed. */
static void exhume(struct pool *p)
{
    struct backend be;
    struct llmsb_err err = {0};
    char id[BACKEND_ID_MAX];
    size_t n;

    pthread_mutex_lock(&p->mu);
    n = p->ngrave;
    pthread_mutex_unlock(&p->mu);
    if (n == 0 || backend_clone(&be, p->tmpl, &err) != 0)
        return;
    for (size_t tries = 0; tries < n; tries++) {
        int rc;
        pthread_mutex_lock(&p->mu);
        if (p->ngrave == 0) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        memcpy(id, p->grave[0], sizeof(id));
        memcpy(p->grave[0], p->grave[--p->ngrave], BACKEND_ID_MAX);
        pthread_mutex_unlock(&p->mu);
        rc = be.ops->remove(&be, id, &err);
        pthread_mutex_lock(&p->mu);
        if (rc != 0)
            bury(p, id); /* still down: next time */
        pthread_mutex_unlock(&p->mu);
        if (rc == 0) {
            log_info("pool: removed container %.12s (its earlier remove had failed)", id);
        } else {
            log_debug("pool: container %.12s: remove failed again: %s", id, err.msg);
            break; /* the engine is not back yet */
        }
    }
    backend_close(&be);
}

/* Remembers a key so maintenance keeps min_idle warm for it, with the
 * start view of its last job (what its next container is prestarted
 * with). Locked. */
static void note_key(struct pool *p, const char *key, const struct sandbox *sb)
{
    int i;

    for (i = 0; i < p->nwarm; i++)
        if (strcmp(p->warm[i].key, key) == 0)
            break;
    if (i == p->nwarm) {
        if (p->nwarm == POOL_MAX_KEYS)
            return;
        p->nwarm++;
        snprintf(p->warm[i].key, sizeof(p->warm[i].key), "%s", key);
        snprintf(p->warm[i].image, sizeof(p->warm[i].image), "%s", sb->image);
        p->warm[i].spec = sb->spec;
        p->warm[i].spec.image = p->warm[i].image;
    }
    p->warm[i].last_used_ms = clock_mono_ms();
    if (sb->last.nrun) {
        struct proto_job v;
        if (sandbox_start_view(&sb->last, &v) == 0) {
            proto_job_release(&p->warm[i].start);
            p->warm[i].start = v;
        }
    }
}

/* Takes the idle entry at index i out. Locked. */
static struct sandbox *take_idle(struct pool *p, size_t i)
{
    struct sandbox *sb = p->idle[i].sb;
    p->idle[i] = p->idle[--p->nidle];
    return sb;
}

/* A new container for spec with the pool's labels. */
static int create(struct pool *p, const struct container_spec *spec, struct sandbox **out,
                  struct llmsb_err *err)
{
    struct container_spec labelled = *spec;
    struct sandbox *sb = calloc(1, sizeof(*sb));
    int rc;

    if (!sb)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "pool: out of memory");
    labelled.nlabels = p->cfg.nlabels;
    for (int i = 0; i < p->cfg.nlabels; i++) {
        labelled.labels[i][0] = p->cfg.labels[i][0];
        labelled.labels[i][1] = p->cfg.labels[i][1];
    }
    if ((rc = sandbox_open(sb, p->tmpl, &labelled, p->cfg.start_timeout_ms, err)) != 0) {
        pthread_mutex_lock(&p->mu);
        if (sb->unremoved)
            bury(p, sb->id);
        pthread_mutex_unlock(&p->mu);
        free(sb);
        return rc;
    }
    pthread_mutex_lock(&p->mu);
    live_add(p, sb->id);
    pthread_mutex_unlock(&p->mu);
    *out = sb;
    return 0;
}

/* An idle container of key that answers its health check, or NULL.
 * Called locked; unlocks around the check. */
static struct sandbox *reuse_idle(struct pool *p, const char *key, struct llmsb_err *err)
{
    for (size_t i = 0; i < p->nidle;) {
        struct sandbox *sb;
        if (strcmp(p->idle[i].key, key) != 0) {
            i++;
            continue;
        }
        sb = take_idle(p, i);
        pthread_mutex_unlock(&p->mu);
        if (sandbox_ping(sb, POOL_HEALTH_TIMEOUT_MS, err) == 0) {
            pthread_mutex_lock(&p->mu);
            p->reused++;
            return sb;
        }
        log_warn("pool: container %.12s failed its health check (%s); replacing it", sb->id,
                 err->msg);
        llmsb_err_clear(err);
        destroy(p, sb);
        pthread_mutex_lock(&p->mu);
        p->total--;
        i = 0; /* the list changed while unlocked */
    }
    return NULL;
}

/* Waits on the pool's condition until woken or the deadline. Locked.
 * Returns 0, or LLMSB_ERR_TIMEOUT past the deadline. */
static int wait_turn(struct pool *p, int64_t deadline_ms)
{
    struct timespec ts;
    int64_t left = deadline_ms - clock_mono_ms();

    if (left <= 0)
        return LLMSB_ERR_TIMEOUT;
    if (left > POOL_WAIT_SLICE_MS)
        left = POOL_WAIT_SLICE_MS;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)(left % 1000) * 1000000;
    ts.tv_sec += left / 1000 + ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    return 0;
}

int pool_acquire(struct pool *p, const struct container_spec *spec, struct pool_lease *lease,
                 struct llmsb_err *err)
{
    int64_t deadline = clock_mono_ms() + p->cfg.wait_ms;
    int rc = 0;

    memset(lease, 0, sizeof(*lease));
    sandbox_spec_key(spec, lease->key, sizeof(lease->key));
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if ((lease->sb = reuse_idle(p, lease->key, err)) != NULL) {
            lease->warm = 1;
            goto out;
        }
        if (p->total < p->cfg.max_size) {
            p->total++;
            p->created++;
            pthread_mutex_unlock(&p->mu);
            rc = create(p, spec, &lease->sb, err);
            pthread_mutex_lock(&p->mu);
            if (rc != 0) {
                p->total--;
                pthread_cond_broadcast(&p->cv);
            }
            goto out;
        }
        if (p->nidle > 0) { /* full, but an idle container of another key can go */
            struct sandbox *sb = take_idle(p, 0);
            p->total--;
            pthread_mutex_unlock(&p->mu);
            destroy(p, sb);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        if (p->cfg.on_exhausted == POOL_FAIL_FAST) {
            rc = llmsb_err_set(err, LLMSB_ERR_LIMIT,
                               "pool: all %d containers are busy "
                               "(pool.on_exhausted: fail_fast)",
                               p->cfg.max_size);
            goto out;
        }
        if (p->cfg.on_exhausted == POOL_TEMPORARY) {
            pthread_mutex_unlock(&p->mu);
            lease->temporary = 1;
            rc = create(p, spec, &lease->sb, err);
            pthread_mutex_lock(&p->mu);
            goto out;
        }
        if (wait_turn(p, deadline) != 0) {
            rc = llmsb_err_set(err, LLMSB_ERR_TIMEOUT, "pool: no container free within %lld ms",
                               (long long)p->cfg.wait_ms);
            goto out;
        }
    }
out:
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void pool_put(struct pool *p, struct pool_lease *lease, int reusable)
{
    struct sandbox *sb = lease->sb;
    int worked, keep;

    if (!sb)
        return;
    lease->sb = NULL;
    worked = reusable && !lease->temporary && sb->healthy && sb->open;
    keep = worked && !sb->gvisor && (p->cfg.max_uses <= 0 || sb->jobs < p->cfg.max_uses) &&
           (p->cfg.max_age_ms <= 0 || clock_mono_ms() - sb->born_ms < p->cfg.max_age_ms);
    sb->cancel = NULL;
    pthread_mutex_lock(&p->mu);
    /* only keys that worked are kept warm; a container retired by max_uses
     * or max_age worked too (max_uses 1, or an agent on gVisor: every one) */
    if (worked)
        note_key(p, lease->key, sb);
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

/* Destroys one idle container past idle_timeout or max_age; 0 when none. */
static int expire_one(struct pool *p, int64_t now)
{
    struct sandbox *sb = NULL;

    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->nidle; i++) {
        struct sandbox *c = p->idle[i].sb;
        int too_idle =
            p->cfg.idle_timeout_ms > 0 && now - p->idle[i].idle_since_ms > p->cfg.idle_timeout_ms;
        int too_old = p->cfg.max_age_ms > 0 && now - c->born_ms > p->cfg.max_age_ms;
        if (too_idle || too_old) {
            sb = take_idle(p, i);
            p->total--;
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    if (sb)
        destroy(p, sb);
    return sb != NULL;
}

/* Starts one container for warm key w if it has fewer than min_idle idle
 * ones and was used lately, and (pool.prestart) has its agent start what
 * the key's last job used before it is idle: this container's first job
 * finds its zygote ready. Returns 1 made, 0 nothing to do, -1 failed. */
static int warm_one(struct pool *p, int w, int64_t now)
{
    struct container_spec spec;
    struct sandbox *sb;
    struct llmsb_err err = {0};
    struct pool_lease l = {0};
    struct proto_job view;
    char image[256];
    int have = 0;

    pthread_mutex_lock(&p->mu);
    if (w >= p->nwarm || p->total >= p->cfg.max_size) {
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    for (size_t i = 0; i < p->nidle; i++)
        have += strcmp(p->idle[i].key, p->warm[w].key) == 0;
    if (have >= p->cfg.min_idle ||
        (p->cfg.idle_timeout_ms > 0 && now - p->warm[w].last_used_ms > p->cfg.idle_timeout_ms)) {
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    spec = p->warm[w].spec;
    snprintf(image, sizeof(image), "%s", p->warm[w].image);
    spec.image = image;
    snprintf(l.key, sizeof(l.key), "%s", p->warm[w].key);
    if (!p->cfg.prestart || sandbox_start_view(&p->warm[w].start, &view) != 0)
        proto_job_init(&view); /* none: its first job prestarts it */
    p->total++;
    p->created++;
    pthread_mutex_unlock(&p->mu);
    if (create(p, &spec, &sb, &err) != 0) {
        log_warn("pool: cannot warm a container of %s: %s", image, err.msg);
        pthread_mutex_lock(&p->mu);
        p->total--;
        pthread_mutex_unlock(&p->mu);
        proto_job_release(&view);
        return -1;
    }
    l.sb = sb;
    if (sandbox_prestart_ahead(sb, &view, &err) != 0) {
        log_warn("pool: cannot prestart a warm container of %s: %s", image, err.msg);
        pool_put(p, &l, 0);
        proto_job_release(&view);
        return -1;
    }
    pool_put(p, &l, 1);
    proto_job_release(&view);
    return 1;
}

void pool_maintain(struct pool *p)
{
    int64_t now = clock_mono_ms();

    exhume(p);
    while (expire_one(p, now))
        ;
    for (int w = 0;; w++) {
        pthread_mutex_lock(&p->mu);
        int n = p->nwarm;
        pthread_mutex_unlock(&p->mu);
        if (w >= n)
            break;
        /* this key may want more; one that fails (its image removed, the
         * engine busy) waits for the next round, the other keys go on */
        while (warm_one(p, w, now) == 1)
            ;
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
    for (int w = 0; w < p->nwarm; w++)
        proto_job_release(&p->warm[w].start);
    exhume(p); /* one last try; what is left the reaper of another process takes */
    free(p->live);
    p->live = NULL;
    p->nlive = p->alive = 0;
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
