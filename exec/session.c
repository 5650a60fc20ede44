/* session.c - the sessions this process holds: a table of ids, each with
 * its sandbox (a pool lease never given back), what its first call fixed
 * (language, policy, environment, limits), its times and whether a call runs;
 * ended sessions stay as "lost" records (with why) until closed, so their
 * later calls say so instead of starting afresh. */
#include "exec/session.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sandbox/sandbox.h"

#define LOST_KEEP 1024 /* ended sessions remembered, at most */

struct session {
    char id[JOB_SESSION_MAX + 1];
    struct pool_lease lease;
    const struct pool *pool; /* the pool lease came from (a runner's) */
    int held;                /* lease is its sandbox */
    int busy;                /* a call runs */
    int lost;
    char why[256];
    int64_t created_ms, used_ms;
    struct session_conf conf;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn = PTHREAD_COND_INITIALIZER;
static struct session **tab;
static size_t ntab, captab;
static struct session_store store;
static int have_store;

int session_conf_from_job(struct session_conf *c, const struct job *j, const char *default_policy)
{
    memset(c, 0, sizeof(*c));
    c->lang = j->lang;
    if (!(c->policy = strdup(j->policy ? j->policy : default_policy)) ||
        (j->security && !(c->security = strdup(j->security)))) {
        session_conf_release(c);
        return LLMSB_ERR_NOMEM;
    }
    c->plots = j->plots;
    c->memory_mb = j->limits.memory_mb;
    c->pids = j->limits.pids;
    c->cpus = j->limits.cpus;
    for (size_t i = 0; i < j->nenv; i++)
        if (strlist_add(&c->env, &c->nenv, j->env[i], strlen(j->env[i])) != 0) {
            session_conf_release(c);
            return LLMSB_ERR_NOMEM;
        }
    return 0;
}

void session_conf_release(struct session_conf *c)
{
    strlist_free(c->env, c->nenv);
    free(c->policy);
    free(c->security);
    memset(c, 0, sizeof(*c));
}

/* 1 when the JSON texts a and b (b may be NULL) are the same object, key
 * order and white space aside. */
static int json_same(const char *a, const char *b)
{
    cJSON *pa = cJSON_Parse(a), *pb = b ? cJSON_Parse(b) : NULL;
    int same = pa && pb && cJSON_Compare(pa, pb, 1);

    cJSON_Delete(pa);
    cJSON_Delete(pb);
    return same;
}

/* 1 when the two "K=V" lists hold the same entries (in any order). */
static int env_same(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (!strlist_has(b, nb, a[i]))
            return 0;
    return 1;
}

int session_conf_check(const struct session_conf *c, const struct job *j, struct llmsb_err *err)
{
    static const char why[] = "a session's first call fixes it for all its calls";
    const struct {
        const char *field, *unit;
        double call, session;
    } lim[] = {
        {"memory", "MB", (double)j->limits.memory_mb, (double)c->memory_mb},
        {"cpus", "CPUs", j->limits.cpus, c->cpus},
        {"pids", "processes", (double)j->limits.pids, (double)c->pids},
    };

    if (job_given(j, "lang") && j->lang != c->lang)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "lang: session \"%s\" runs %s, the call names %s (a session has "
                             "one language; leave lang out, or start a session of its own)",
                             j->session, c->lang->name, j->lang->name);
    /* what its interpreter holds was scanned with these: a call under
     * another policy could use what a laxer one let in */
    if (job_given(j, "policy") && j->policy && strcmp(j->policy, c->policy) != 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "policy: \"%s\", session \"%s\"'s calls are scanned with \"%s\" (%s; "
                             "repeat it or leave policy out)",
                             j->policy, j->session, c->policy, why);
    if (job_given(j, "security") && j->security && !json_same(j->security, c->security))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "security: differs from the inline policy session \"%s\"'s calls are "
                             "scanned with (%s; repeat it or leave security out)",
                             j->session, why);
    if (job_given(j, "env") && !env_same(j->env, j->nenv, c->env, c->nenv))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "env: differs from the environment session \"%s\"'s interpreter "
                             "started with (%s; repeat it or leave env out)",
                             j->session, why);
    if (job_given(j, "plots") && !j->plots != !c->plots)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "plots: %s, session \"%s\" has them %s (%s)",
                             j->plots ? "true" : "false", j->session, c->plots ? "on" : "off", why);
    for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
        if (job_given(j, lim[i].field) && lim[i].call != lim[i].session)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s: %g %s, session \"%s\"'s sandbox has %g %s (%s)", lim[i].field,
                                 lim[i].call, lim[i].unit, j->session, lim[i].session, lim[i].unit,
                                 why);
    return 0;
}

void session_store_set(const struct session_store *st)
{
    pthread_mutex_lock(&mu);
    have_store = st != NULL;
    if (st)
        store = *st;
    pthread_mutex_unlock(&mu);
}

/* Locked. */
static struct session *find(const char *id, size_t *at)
{
    for (size_t i = 0; i < ntab; i++)
        if (strcmp(tab[i]->id, id) == 0) {
            if (at)
                *at = i;
            return tab[i];
        }
    return NULL;
}

/* Locked. */
static void unlink_at(size_t i)
{
    session_conf_release(&tab[i]->conf);
    free(tab[i]);
    tab[i] = tab[--ntab];
}

/* Locked: a new record, the oldest lost ones dropped past LOST_KEEP. */
static struct session *add(const char *id)
{
    struct session *s;
    size_t lost = 0, oldest = 0;

    for (size_t i = 0; i < ntab; i++)
        if (tab[i]->lost && lost++ == 0)
            oldest = i;
    if (lost >= LOST_KEEP)
        unlink_at(oldest);
    if (ntab == captab) {
        size_t nc = captab ? captab * 2 : 16;
        struct session **nt = realloc(tab, nc * sizeof(*nt));
        if (!nt)
            return NULL;
        tab = nt;
        captab = nc;
    }
    if (!(s = calloc(1, sizeof(*s))))
        return NULL;
    snprintf(s->id, sizeof(s->id), "%s", id);
    s->created_ms = s->used_ms = clock_mono_ms();
    tab[ntab++] = s;
    return s;
}

/* Locked: s ends with why; its sandbox is handed back in *lease for the
 * caller to destroy unlocked. Returns 1 when there was one. */
static int end_locked(struct session *s, const char *why, struct pool_lease *lease)
{
    int had = s->held;

    if (had)
        *lease = s->lease;
    s->held = 0;
    s->lost = 1;
    snprintf(s->why, sizeof(s->why), "%s", why);
    pthread_cond_broadcast(&turn);
    return had;
}

static void ended(struct pool *pool, const char *id, const char *why, struct pool_lease *lease,
                  int had)
{
    if (had)
        pool_put(pool, lease, 0);
    if (have_store && store.lose)
        store.lose(store.ud, id, why);
}

/* 1 when s is past the config's idle time or lifetime (why written). */
static int expired(const struct session *s, const struct config *cfg, int64_t now, char *why,
                   size_t wsz)
{
    if (now - s->used_ms >= cfg->session_idle_ms)
        snprintf(why, wsz, "expired: no call for %lld s (sessions.idle_ttl)",
                 (long long)(cfg->session_idle_ms / 1000));
    else if (now - s->created_ms >= cfg->session_life_ms)
        snprintf(why, wsz, "expired: %lld s after its first call (sessions.max_lifetime)",
                 (long long)(cfg->session_life_ms / 1000));
    else
        return 0;
    return 1;
}

static int lost_result(struct job_result *r, const char *id, const char *why)
{
    job_result_set_status(r, STATUS_SESSION_LOST, "session \"%s\": %s", id, why);
    return 1;
}

/* Locked: s's call is j (s busy): 0 to run it, 1 when r is final
 * (invalid: j differs from what s fixed; s is free again). */
static int call_fits(struct session *s, const struct job *j, struct job_result *r)
{
    struct llmsb_err e = {0};

    if (session_conf_check(&s->conf, j, &e) == 0)
        return 0;
    s->busy = 0;
    pthread_cond_broadcast(&turn);
    job_result_set_status(r, STATUS_INVALID, "%s", e.msg);
    return 1;
}

/* Locked, then unlocked: a first call's session, new in this process
 * (claimed in the store already when there is one).  0 with s busy (not
 * started); 1 when r is final; <0. */
static int add_new(const struct config *cfg, const struct job *j, struct job_result *r,
                   struct llmsb_err *err)
{
    struct session *s = NULL;
    int n = 0;

    for (size_t i = 0; i < ntab; i++)
        n += tab[i]->held || tab[i]->busy;
    if (!j->lang)
        job_result_set_status(r, STATUS_INVALID,
                              "lang: is required in a session's first call (session \"%s\" is "
                              "not running: its first call fixes its language)",
                              j->session);
    else if (n >= cfg->sessions_max)
        job_result_set_status(r, STATUS_SESSION_LOST,
                              "session \"%s\": not started: this worker holds %lld sessions "
                              "(sessions.max); close one first",
                              j->session, (long long)cfg->sessions_max);
    else if ((s = add(j->session)) != NULL &&
             session_conf_from_job(&s->conf, j, cfg->default_policy) != 0) {
        size_t at;
        if (find(j->session, &at) == s)
            unlink_at(at);
        s = NULL;
    }
    if (s)
        s->busy = 1;
    else if (have_store && store.drop)
        store.drop(store.ud, j->session); /* locked: our next first call may claim it anew */
    pthread_mutex_unlock(&mu);
    if (s)
        return 0;
    if (r->r.status != STATUS_NONE)
        return 1;
    return llmsb_err_set(err, LLMSB_ERR_NOMEM, "session: out of memory");
}

int session_take(struct pool *pool, const struct config *cfg, const struct job *j,
                 const struct language **lang, char **policy, char **security, struct sandbox **sb,
                 struct job_result *r, char *owner, size_t osz, struct llmsb_err *err)
{
    struct session *s;
    char why[256] = "";
    int rc;

    *sb = NULL;
    *lang = j->lang;
    *policy = *security = NULL;
    /* in the stream's order: an earlier call, wherever it is, goes first */
    if (have_store && store.earlier && j->entry_id &&
        store.earlier(store.ud, j->session, j->entry_id) == 1) {
        owner[0] = '\0';
        return 2;
    }
    pthread_mutex_lock(&mu);
    while ((s = find(j->session, NULL)) && s->busy && !s->lost)
        pthread_cond_wait(&turn, &mu); /* calls of one session, one at a time */
    if (s && !s->lost && expired(s, cfg, clock_mono_ms(), why, sizeof(why))) {
        struct pool_lease lease;
        int had = end_locked(s, why, &lease); /* the janitor had not come by yet */
        pthread_mutex_unlock(&mu);
        ended(pool, j->session, why, &lease, had);
        return lost_result(r, j->session, why);
    }
    if (s && s->lost) {
        snprintf(why, sizeof(why), "%s", s->why);
        pthread_mutex_unlock(&mu);
        return lost_result(r, j->session, why);
    }
    if (s) {
        s->busy = 1;
        rc = call_fits(s, j, r);
        if (rc == 0 && (!(*policy = strdup(s->conf.policy)) ||
                        (s->conf.security && !(*security = strdup(s->conf.security))))) {
            free(*policy);
            *policy = NULL;
            s->busy = 0;
            pthread_cond_broadcast(&turn);
            pthread_mutex_unlock(&mu);
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "session: out of memory");
        }
        if (rc == 0) {
            s->used_ms = clock_mono_ms();
            *sb = s->lease.sb;
            *lang = s->conf.lang;
        }
        pthread_mutex_unlock(&mu);
        return rc;
    }
    /* a new session: ours to hold if no other worker does (asked with the
     * table locked, so two slots of ours never both see it new) */
    if (have_store) {
        rc = store.claim(store.ud, j->session, owner, osz, why, sizeof(why));
        if (rc == 3) { /* ours by name, not in this process: a worker of that name restarted */
            snprintf(why, sizeof(why), "the worker that held it (%s) restarted",
                     store.self ? store.self : "-");
            if (store.lose)
                store.lose(store.ud, j->session, why);
            rc = 2;
        }
        if (rc != 0)
            pthread_mutex_unlock(&mu);
        if (rc < 0)
            return llmsb_err_set(err, LLMSB_ERR_BACKEND, "session \"%s\": the queue failed",
                                 j->session);
        if (rc == 1)
            return 2;
        if (rc == 2)
            return lost_result(r, j->session, why);
    }
    return add_new(cfg, j, r, err);
}

int session_start(struct pool *pool, const char *id, const struct container_spec *spec,
                  struct sandbox **sb, struct llmsb_err *err)
{
    struct pool_lease lease;
    struct session *s;
    int rc = pool_acquire(pool, spec, &lease, err);

    if (rc != 0) {
        session_put(pool, id, 0, NULL); /* no sandbox, no session */
        return rc;
    }
    pthread_mutex_lock(&mu);
    s = find(id, NULL);
    assert(s && s->busy && !s->held); /* the call's own until it ends */
    s->lease = lease;
    s->pool = pool;
    s->held = 1;
    *sb = lease.sb;
    pthread_mutex_unlock(&mu);
    return 0;
}

void session_put(struct pool *pool, const char *id, int end, const char *why)
{
    struct pool_lease lease;
    struct session *s;
    size_t at;
    int had = 0;

    pthread_mutex_lock(&mu);
    if ((s = find(id, &at)) != NULL) {
        s->busy = 0;
        s->used_ms = clock_mono_ms();
        if (!s->held && !s->lost) { /* its first call never started it */
            unlink_at(at);
            s = NULL;
            if (have_store && store.drop)
                store.drop(store.ud, id); /* locked, as in add_new */
        } else if (end) {
            had = end_locked(s, why, &lease);
        }
        pthread_cond_broadcast(&turn);
    }
    pthread_mutex_unlock(&mu);
    if (s && end)
        ended(pool, id, why, &lease, had);
}

int session_close(struct pool *pool, const char *id, const char *entry_id, struct job_result *r,
                  char *owner, size_t osz)
{
    struct pool_lease lease;
    struct session *s;
    size_t at;
    int had = 0;

    if (have_store && store.earlier && entry_id && store.earlier(store.ud, id, entry_id) == 1) {
        owner[0] = '\0'; /* its earlier calls first */
        return 1;
    }
    pthread_mutex_lock(&mu);
    if (!find(id, NULL) && have_store) {
        char why[256];
        if (store.claim(store.ud, id, owner, osz, why, sizeof(why)) == 1) {
            pthread_mutex_unlock(&mu);
            return 1;
        }
    }
    while ((s = find(id, &at)) && s->busy && !s->lost)
        pthread_cond_wait(&turn, &mu);
    if (s) {
        had = s->held;
        lease = s->lease;
        unlink_at(at);
        pthread_cond_broadcast(&turn);
    }
    /* the record goes before a first call of ours can look (it would take
     * a record of ours with no session here for a restart) */
    if (have_store && store.drop)
        store.drop(store.ud, id);
    pthread_mutex_unlock(&mu);
    if (had)
        pool_put(pool, &lease, 0);
    job_result_set_status(r, STATUS_OK, NULL);
    return 0;
}

/* Ends the sessions of pool that are expired (all_why NULL) or all of
 * them (all_why says why), each with its why. */
static void end_some(struct pool *pool, const struct config *cfg, const char *all_why)
{
    struct {
        char id[JOB_SESSION_MAX + 1];
        char why[256];
        struct pool_lease lease;
        int had;
    } *gone = NULL;
    size_t ngone = 0;
    int64_t now = clock_mono_ms();

    pthread_mutex_lock(&mu);
    if (ntab && !(gone = calloc(ntab, sizeof(*gone)))) {
        pthread_mutex_unlock(&mu);
        return;
    }
    for (size_t i = 0; i < ntab; i++) {
        struct session *s = tab[i];
        char why[256] = "";
        if (s->lost || s->busy || !s->held || s->pool != pool)
            continue; /* another runner's pool holds it: that runner ends it */
        if (all_why)
            snprintf(why, sizeof(why), "%s", all_why);
        else if (!expired(s, cfg, now, why, sizeof(why)))
            continue;
        snprintf(gone[ngone].id, sizeof(gone[ngone].id), "%s", s->id);
        snprintf(gone[ngone].why, sizeof(gone[ngone].why), "%s", why);
        gone[ngone].had = end_locked(s, why, &gone[ngone].lease);
        ngone++;
    }
    pthread_mutex_unlock(&mu);
    for (size_t i = 0; i < ngone; i++)
        ended(pool, gone[i].id, gone[i].why, &gone[i].lease, gone[i].had);
    free(gone);
}

void session_expire(struct pool *pool, const struct config *cfg)
{
    end_some(pool, cfg, NULL);
}

void session_end_all(struct pool *pool, const char *why)
{
    end_some(pool, NULL, why);
}

int session_count(const struct pool *pool)
{
    int n = 0;

    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < ntab; i++)
        n += tab[i]->pool == pool && tab[i]->held && !tab[i]->lost;
    pthread_mutex_unlock(&mu);
    return n;
}
