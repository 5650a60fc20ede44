/* pool.c - the warm container pool (see pool.h).  The mutex guards only
 * bookkeeping; containers are created, checked and destroyed outside it,
 * by the job's thread where the job needs it (a container to run in) and
 * by the pool's two helper threads where it does not (a retired container
 * removed, the next one of its key made ahead). */
#include "pool.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

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

/* ---- a key's rate (pure) ---------------------------------------------------------- */

void pool_rate_used(struct pool_rate *r, int64_t now_ms)
{
    if (r->last_ms > 0) {
        int64_t gap = now_ms - r->last_ms > 0 ? now_ms - r->last_ms : 1;
        /* after a pause the stream starts afresh: its next gap is its first */
        if (gap > POOL_RATE_WINDOW_MS)
            r->gap_ms = 0;
        else
            r->gap_ms = r->gap_ms > 0 ? (3 * r->gap_ms + gap) / 4 : gap;
    }
    r->last_ms = now_ms;
}

void pool_rate_created(struct pool_rate *r, int64_t took_ms)
{
    if (took_ms < 1)
        took_ms = 1;
    r->create_ms = r->create_ms > 0 ? (3 * r->create_ms + took_ms) / 4 : took_ms;
}

int pool_rate_target(const struct pool_rate *r, int64_t now_ms, int cap)
{
    int64_t since = now_ms - r->last_ms, gap, make, n;

    if (r->last_ms <= 0 || r->gap_ms <= 0 || since > POOL_RATE_WINDOW_MS)
        return 0;
    /* no container used up for longer than the average gap: the rate is
     * falling, and the wait so far is the gap to go by */
    gap = since > r->gap_ms ? since : r->gap_ms;
    make = r->create_ms > 0 ? r->create_ms : POOL_CREATE_GUESS_MS;
    n = (make + gap - 1) / gap;
    if (n > POOL_MAX_KEYS * 8) /* beyond any max_size worth having */
        n = POOL_MAX_KEYS * 8;
    if (cap > 0 && n > cap)
        n = cap;
    return (int)n;
}

int pool_init(struct pool *p, const struct backend *tmpl, const struct pool_config *cfg)
{
    memset(p, 0, sizeof(*p));
    if (clock_cond_init(&p->cv) != 0)
        return LLMSB_ERR_SYS;
    if (clock_cond_init(&p->helper_cv) != 0) {
        pthread_cond_destroy(&p->cv);
        return LLMSB_ERR_SYS;
    }
    pthread_mutex_init(&p->mu, NULL);
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

/* The index of key among the warm keys, or -1. Locked. */
static int key_index(const struct pool *p, const char *key)
{
    for (int i = 0; i < p->nwarm; i++)
        if (strcmp(p->warm[i].key, key) == 0)
            return i;
    return -1;
}

/* Remembers a key its lease's job worked in, so its containers are made
 * ahead: min_idle kept warm, with the start view of its last job (what its
 * next container is prestarted with), and its rate (used_up: the job used
 * its container up; the lease's create time, when one was made for it).
 * Locked. */
static void note_key(struct pool *p, const struct pool_lease *lease, const struct sandbox *sb,
                     int used_up)
{
    int64_t now = clock_mono_ms();
    int i = key_index(p, lease->key);

    if (i < 0) {
        if (p->nwarm == POOL_MAX_KEYS)
            return;
        i = p->nwarm++;
        memset(&p->warm[i], 0, sizeof(p->warm[i]));
        snprintf(p->warm[i].key, sizeof(p->warm[i].key), "%s", lease->key);
        snprintf(p->warm[i].image, sizeof(p->warm[i].image), "%s", sb->image);
        p->warm[i].spec = sb->spec;
        p->warm[i].spec.image = p->warm[i].image;
    }
    p->warm[i].last_used_ms = now;
    if (used_up)
        pool_rate_used(&p->warm[i].rate, now);
    if (lease->create_ms > 0)
        pool_rate_created(&p->warm[i].rate, lease->create_ms);
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

/* Puts sb among the idle containers of key. 0, or -1 out of memory.
 * Locked. */
static int idle_add(struct pool *p, struct sandbox *sb, const char *key)
{
    if (p->nidle == p->aidle) {
        size_t na = p->aidle ? p->aidle * 2 : 8;
        struct pool_idle *ni = realloc(p->idle, na * sizeof(*ni));
        if (!ni)
            return -1;
        p->idle = ni;
        p->aidle = na;
    }
    p->idle[p->nidle].sb = sb;
    p->idle[p->nidle].idle_since_ms = clock_mono_ms();
    snprintf(p->idle[p->nidle].key, sizeof(p->idle[0].key), "%s", key);
    p->nidle++;
    return 0;
}

/* Idle containers of key. Locked. */
static int idle_count(const struct pool *p, const char *key)
{
    int n = 0;

    for (size_t i = 0; i < p->nidle; i++)
        n += strcmp(p->idle[i].key, key) == 0;
    return n;
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

/* ---- the helpers ------------------------------------------------------------------ */

static void *remover_main(void *arg);
static void *refiller_main(void *arg);

/* Starts a helper thread with every signal blocked (they go to the front
 * end's threads, as before the helpers); 0 or -1. */
static int helper_start(pthread_t *th, void *(*fn)(void *), struct pool *p)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(th, NULL, fn, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc == 0 ? 0 : -1;
}

/* Starts the helpers at the pool's first work for them; a pool whose
 * helpers cannot start removes on the caller's path and warms on
 * maintenance's tick, as it did before them. Locked. */
static void helpers_start(struct pool *p)
{
    if (p->helpers != 0 || p->stopping)
        return;
    if (helper_start(&p->remover, remover_main, p) != 0) {
        log_warn("pool: cannot start the remover thread; containers are removed as they retire");
        p->helpers = -1;
        return;
    }
    while (p->nrefillers < POOL_REFILLERS &&
           helper_start(&p->refiller[p->nrefillers], refiller_main, p) == 0)
        p->nrefillers++;
    if (p->nrefillers == 0)
        log_warn("pool: cannot start a refiller thread; containers are made ahead only by "
                 "maintenance");
    p->helpers = p->nrefillers ? 1 : 2; /* 2: the remover alone */
}

/* The containers key w should have ready (idle or being made): min_idle
 * while the key was used within idle_timeout, and what its rate asks.
 * ahead: the refiller's part, only for a key whose containers are being
 * used up (the last within POOL_RATE_WINDOW_MS): one that keeps its
 * containers (runc, max_uses not reached) has its min_idle made by
 * maintenance, as the jobs in use come back to it. Locked. */
static int want_ready(const struct pool *p, int w, int64_t now, int ahead)
{
    const struct pool_rate *r = &p->warm[w].rate;
    int floor = p->cfg.idle_timeout_ms > 0 && now - p->warm[w].last_used_ms > p->cfg.idle_timeout_ms
                    ? 0
                    : p->cfg.min_idle;
    /* two a slot: its next job's container and the one after, so a create
     * slower than the gap (a busy host) still finds one made */
    int rate = pool_rate_target(r, now, 2 * p->cfg.slots);

    if (ahead && (r->last_ms <= 0 || now - r->last_ms > POOL_RATE_WINDOW_MS))
        floor = 0;
    return floor > rate ? floor : rate;
}

/* 1 when key w wants one more container made (want_ready) and the pool
 * has room for it (and its last failure is not too recent). Locked. */
static int make_due(const struct pool *p, int w, int64_t now, int ahead)
{
    return p->total < p->cfg.max_size && now >= p->warm[w].retry_ms &&
           idle_count(p, p->warm[w].key) + p->warm[w].making < want_ready(p, w, now, ahead);
}

/* A key with a container for the refiller to make, or -1. Locked. */
static int make_due_any(const struct pool *p, int64_t now)
{
    for (int w = 0; w < p->nwarm; w++)
        if (make_due(p, w, now, 1))
            return w;
    return -1;
}

/* Tells the refillers the pool changed; starts the helpers when a key
 * wants a container made. Locked. */
static void refill_kick(struct pool *p)
{
    if (p->helpers == 0 && make_due_any(p, clock_mono_ms()) >= 0)
        helpers_start(p);
    pthread_cond_broadcast(&p->helper_cv);
}

/* Removes sb off the caller's path: hands it to the remover, or removes it
 * here when the remover is not running or has POOL_REMOVE_MAX waiting. Until
 * it is removed, pool_knows names it (the reaper leaves it alone); a crash
 * meanwhile leaves it to the reaper by its labels. */
static void retire(struct pool *p, struct sandbox *sb)
{
    pthread_mutex_lock(&p->mu);
    helpers_start(p);
    if ((p->helpers == 1 || p->helpers == 2) && !p->stopping && p->ndoomed < POOL_REMOVE_MAX) {
        p->doomed[p->ndoomed++] = sb;
        pthread_cond_broadcast(&p->helper_cv);
        sb = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (sb)
        destroy(p, sb);
}

/* The remover: the retired containers, oldest first; once the pool is
 * released, those left, then it ends. */
static void *remover_main(void *arg)
{
    struct pool *p = arg;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct sandbox *sb;
        if (p->ndoomed == 0) {
            if (p->stopping)
                break;
            pthread_cond_wait(&p->helper_cv, &p->mu);
            continue;
        }
        sb = p->doomed[0];
        memmove(&p->doomed[0], &p->doomed[1], --p->ndoomed * sizeof(p->doomed[0]));
        p->removing++;
        pthread_mutex_unlock(&p->mu); /* the remove: the engine's time, unlocked */
        destroy(p, sb);
        pthread_mutex_lock(&p->mu);
        p->removing--;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* What making one container ahead for a key needs, copied out of the
 * pool under the lock. */
struct warm_make {
    int w;
    struct container_spec spec;
    char image[256];
    char key[POOL_KEY_MAX];
    struct proto_job view; /* what it is prestarted with (empty: nothing) */
};

/* Reserves the making of one container for key w when make_due says so:
 * counted in total and in the key's making from now. 1 reserved, 0 not.
 * Locked. */
static int make_reserve(struct pool *p, int w, int64_t now, int ahead, struct warm_make *m)
{
    if (w >= p->nwarm || !make_due(p, w, now, ahead))
        return 0;
    m->w = w;
    m->spec = p->warm[w].spec;
    snprintf(m->image, sizeof(m->image), "%s", p->warm[w].image);
    m->spec.image = m->image;
    snprintf(m->key, sizeof(m->key), "%s", p->warm[w].key);
    if (!p->cfg.prestart || sandbox_start_view(&p->warm[w].start, &m->view) != 0)
        proto_job_init(&m->view); /* none: its first job prestarts it */
    p->total++;
    p->created++;
    p->warm[w].making++;
    return 1;
}

/* A reserved make that came to nothing: off the counts, the key's next
 * try after POOL_REFILL_BACKOFF_MS. */
static void make_failed(struct pool *p, struct warm_make *m, struct sandbox *sb)
{
    pthread_mutex_lock(&p->mu);
    p->total--;
    p->warm[m->w].making--;
    p->warm[m->w].retry_ms = clock_mono_ms() + POOL_REFILL_BACKOFF_MS;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (sb)
        retire(p, sb);
}

/* Makes the reserved container (unlocked), has its agent start what the
 * key's last job used (pool.prestart: this container's first job finds its
 * zygote ready) and puts it idle.  Returns 1 made, -1 failed. */
static int make_warm(struct pool *p, struct warm_make *m)
{
    struct llmsb_err err = {0};
    struct sandbox *sb = NULL;
    int64_t t0 = clock_mono_ms();
    int rc = 1;

    if (create(p, &m->spec, &sb, &err) != 0) {
        log_warn("pool: cannot warm a container of %s: %s", m->image, err.msg);
        make_failed(p, m, NULL);
        rc = -1;
    } else if (sandbox_prestart_ahead(sb, &m->view, &err) != 0) {
        log_warn("pool: cannot prestart a warm container of %s: %s", m->image, err.msg);
        make_failed(p, m, sb);
        rc = -1;
    } else {
        pthread_mutex_lock(&p->mu);
        p->warm[m->w].making--;
        pool_rate_created(&p->warm[m->w].rate, clock_mono_ms() - t0);
        if (idle_add(p, sb, m->key) != 0) {
            p->total--;
            rc = -1;
        } else {
            sb = NULL;
        }
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        if (sb)
            retire(p, sb);
    }
    proto_job_release(&m->view);
    return rc;
}

/* A refiller: makes containers ahead whenever a key wants more ready than
 * it has (looked at when the pool changes, and every second for rates
 * that fall and failures whose wait ended); with POOL_REFILLERS of them,
 * two keys, or a key whose create is slower than its gap, are made for at
 * once. */
static void *refiller_main(void *arg)
{
    struct pool *p = arg;
    struct warm_make m;

    pthread_mutex_lock(&p->mu);
    while (!p->stopping) {
        int64_t now = clock_mono_ms();
        int w = make_due_any(p, now);
        if (w < 0 || !make_reserve(p, w, now, 1, &m)) {
            clock_cond_wait_ms(&p->helper_cv, &p->mu, 1000);
            continue;
        }
        pthread_mutex_unlock(&p->mu); /* the make: the engine's time, unlocked */
        make_warm(p, &m);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- acquire and put ------------------------------------------------------------------ */

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
        retire(p, sb);
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
    int64_t left = deadline_ms - clock_mono_ms();

    if (left <= 0)
        return LLMSB_ERR_TIMEOUT;
    clock_cond_wait_ms(&p->cv, &p->mu, left < POOL_WAIT_SLICE_MS ? left : POOL_WAIT_SLICE_MS);
    return 0;
}

/* A container being made ahead for key is ready sooner than one made now:
 * waits a turn for it when no other acquire waits for that one, until
 * deadline_ms; so too for one the refiller is about to make (it was told
 * by the put just before this acquire, on this thread).  1 waited, 0
 * nothing to wait for. Locked. */
static int wait_for_made(struct pool *p, const char *key, int64_t deadline_ms)
{
    int w = key_index(p, key), rc;

    if (w < 0 || p->warm[w].making + (p->helpers == 1 && make_due(p, w, clock_mono_ms(), 1)) <=
                     p->warm[w].waiting)
        return 0;
    p->warm[w].waiting++;
    rc = wait_turn(p, deadline_ms);
    p->warm[w].waiting--;
    return rc == 0;
}

/* A new container for the lease, counted in the pool unless temporary.
 * Called locked; unlocks around the create. */
static int acquire_new(struct pool *p, const struct container_spec *spec, struct pool_lease *lease,
                       struct llmsb_err *err)
{
    int64_t t0 = clock_mono_ms();
    int rc;

    if (!lease->temporary) {
        p->total++;
        p->created++;
    }
    pthread_mutex_unlock(&p->mu);
    rc = create(p, spec, &lease->sb, err);
    pthread_mutex_lock(&p->mu);
    lease->create_ms = clock_mono_ms() - t0;
    if (rc != 0 && !lease->temporary) {
        p->total--;
        pthread_cond_broadcast(&p->cv);
    }
    return rc;
}

int pool_acquire(struct pool *p, const struct container_spec *spec, struct pool_lease *lease,
                 struct llmsb_err *err)
{
    int64_t deadline = clock_mono_ms() + p->cfg.wait_ms;
    int64_t made_by = clock_mono_ms() + p->cfg.start_timeout_ms + POOL_HEALTH_TIMEOUT_MS;
    int rc = 0;

    memset(lease, 0, sizeof(*lease));
    sandbox_spec_key(spec, lease->key, sizeof(lease->key));
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if ((lease->sb = reuse_idle(p, lease->key, err)) != NULL) {
            lease->warm = 1;
            refill_kick(p); /* one fewer ready: its next may be due */
            goto out;
        }
        if (wait_for_made(p, lease->key, made_by))
            continue;
        if (p->total < p->cfg.max_size) {
            rc = acquire_new(p, spec, lease, err);
            goto out;
        }
        if (p->nidle > 0) { /* full, but an idle container of another key can go */
            struct sandbox *sb = take_idle(p, 0);
            p->total--;
            pthread_mutex_unlock(&p->mu);
            retire(p, sb);
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
            lease->temporary = 1;
            rc = acquire_new(p, spec, lease, err);
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

void pool_put(struct pool *p, struct pool_lease *lease, int how)
{
    struct sandbox *sb = lease->sb;
    int worked, keep, ended;

    if (!sb)
        return;
    lease->sb = NULL;
    ended = how != POOL_PUT_CUT && sb->healthy && sb->open;
    worked = how == POOL_PUT_REUSE && !lease->temporary && ended;
    keep = worked && !sb->runtime.one_job_per_container &&
           (p->cfg.max_uses <= 0 || sb->jobs < p->cfg.max_uses) &&
           (p->cfg.max_age_ms <= 0 || clock_mono_ms() - sb->born_ms < p->cfg.max_age_ms);
    sb->cancel = NULL;
    pthread_mutex_lock(&p->mu);
    /* only keys that worked are kept warm; a container retired by max_uses
     * or max_age worked too (max_uses 1, or a runtime profile of one job
     * per container, gVisor's: every one), and was used up: its key's rate
     * counts it */
    if (worked)
        note_key(p, lease, sb, !keep);
    /* after pool_release_all, nothing goes back to the idle list */
    if (keep && (p->stopping || idle_add(p, sb, lease->key) != 0))
        keep = 0;
    if (!keep && !lease->temporary)
        p->total--;
    pthread_cond_broadcast(&p->cv);
    refill_kick(p);
    pthread_mutex_unlock(&p->mu);
    /* one whose job ended (the agent killed what it started) is removed off
     * the job's path; one whose job did not (cancelled or cut short, an
     * agent that stopped answering) may still run a program, and is removed
     * now, before its job's result and the slot's next job */
    if (!keep && ended)
        retire(p, sb);
    else if (!keep)
        destroy(p, sb);
}

/* ---- maintenance ---------------------------------------------------------------------- */

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

/* Makes one container ahead for warm key w if it wants one (make_due).
 * Returns 1 made, 0 nothing to do, -1 failed. */
static int warm_one(struct pool *p, int w, int64_t now)
{
    struct warm_make m;
    int reserved;

    pthread_mutex_lock(&p->mu);
    reserved = make_reserve(p, w, now, 0, &m);
    pthread_mutex_unlock(&p->mu);
    return reserved ? make_warm(p, &m) : 0;
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

/* 1 while a helper has work in hand or due. Locked. */
static int helpers_busy(const struct pool *p)
{
    if (p->ndoomed || p->removing)
        return 1;
    for (int w = 0; w < p->nwarm; w++)
        if (p->warm[w].making)
            return 1;
    return p->helpers == 1 && !p->stopping && make_due_any(p, clock_mono_ms()) >= 0;
}

int pool_settle(struct pool *p, int64_t timeout_ms)
{
    int64_t deadline = clock_mono_ms() + timeout_ms;
    int rc = 0;

    pthread_mutex_lock(&p->mu);
    while (rc == 0 && helpers_busy(p))
        rc = wait_turn(p, deadline);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Ends the helpers: the refillers after the container each is making,
 * the remover once none is left to remove. */
static void helpers_stop(struct pool *p)
{
    int h, n;

    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    h = p->helpers;
    n = p->nrefillers;
    p->helpers = -1;
    p->nrefillers = 0;
    pthread_cond_broadcast(&p->helper_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < n; i++)
        pthread_join(p->refiller[i], NULL);
    if (h == 1 || h == 2)
        pthread_join(p->remover, NULL);
}

void pool_release_all(struct pool *p)
{
    helpers_stop(p);
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
