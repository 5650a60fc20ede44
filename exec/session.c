/* session.c - the sessions a runner holds: its table of (scope, id), each
 * with its sandbox (a lease of the table's pool never given back), what its
 * first call fixed (language, policy, environment, limits), its times and
 * whether a call runs; ended sessions stay as "lost" records (with why)
 * until closed, so their later calls say so instead of starting afresh.
 * All of it on the table (struct session_table), none on the process. */
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
    const struct session_scope *scope; /* whose id it is (NULL: the table's own) */
    struct pool_lease lease;
    int held; /* lease is its sandbox */
    int busy; /* a call runs */
    int lost;
    char why[256];
    int64_t created_ms, used_ms;
    struct session_conf conf;
};

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

void session_table_init(struct session_table *t, struct pool *pool)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->turn, NULL);
    t->pool = pool;
}

void session_table_release(struct session_table *t)
{
    for (size_t i = 0; i < t->ntab; i++) {
        session_conf_release(&t->tab[i]->conf);
        free(t->tab[i]);
    }
    free(t->tab);
    pthread_cond_destroy(&t->turn);
    pthread_mutex_destroy(&t->mu);
    memset(t, 0, sizeof(*t));
}

void session_store_set(struct session_table *t, const struct session_store *st)
{
    pthread_mutex_lock(&t->mu);
    t->have_store = st != NULL;
    if (st)
        t->store = *st;
    pthread_mutex_unlock(&t->mu);
}

/* The store that records the ids of scope sc: t's, for its own scope
 * only (a store knows ids, not scopes); NULL: none. */
static const struct session_store *store_of(const struct session_table *t,
                                            const struct session_scope *sc)
{
    return t->have_store && !sc ? &t->store : NULL;
}

/* Locked. */
static struct session *find(struct session_table *t, const struct session_scope *sc, const char *id,
                            size_t *at)
{
    for (size_t i = 0; i < t->ntab; i++)
        if (t->tab[i]->scope == sc && strcmp(t->tab[i]->id, id) == 0) {
            if (at)
                *at = i;
            return t->tab[i];
        }
    return NULL;
}

/* Locked. */
static void unlink_at(struct session_table *t, size_t i)
{
    session_conf_release(&t->tab[i]->conf);
    free(t->tab[i]);
    t->tab[i] = t->tab[--t->ntab];
}

/* Locked: a new record, the oldest lost ones dropped past LOST_KEEP. */
static struct session *add(struct session_table *t, const struct session_scope *sc, const char *id)
{
    struct session *s;
    size_t lost = 0, oldest = 0;

    for (size_t i = 0; i < t->ntab; i++)
        if (t->tab[i]->lost && lost++ == 0)
            oldest = i;
    if (lost >= LOST_KEEP)
        unlink_at(t, oldest);
    if (t->ntab == t->captab) {
        size_t nc = t->captab ? t->captab * 2 : 16;
        struct session **nt = realloc(t->tab, nc * sizeof(*nt));
        if (!nt)
            return NULL;
        t->tab = nt;
        t->captab = nc;
    }
    if (!(s = calloc(1, sizeof(*s))))
        return NULL;
    snprintf(s->id, sizeof(s->id), "%s", id);
    s->scope = sc;
    s->created_ms = s->used_ms = clock_mono_ms();
    t->tab[t->ntab++] = s;
    return s;
}

/* Locked: s ends with why; its sandbox is handed back in *lease for the
 * caller to destroy unlocked. Returns 1 when there was one. */
static int end_locked(struct session_table *t, struct session *s, const char *why,
                      struct pool_lease *lease)
{
    int had = s->held;

    if (had)
        *lease = s->lease;
    s->held = 0;
    s->lost = 1;
    snprintf(s->why, sizeof(s->why), "%s", why);
    pthread_cond_broadcast(&t->turn);
    return had;
}

/* Unlocked: the sandbox of a session that ended goes, and the store
 * (st, NULL: none) hears why. */
static void ended(struct session_table *t, const struct session_store *st, const char *id,
                  const char *why, struct pool_lease *lease, int had)
{
    if (had)
        pool_put(t->pool, lease, 0);
    if (st && st->lose)
        st->lose(st->ud, id, why);
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
    return SESSION_FINAL;
}

/* Locked: s's call is j (s busy): SESSION_GO to run it, SESSION_FINAL
 * when r is final (invalid: j differs from what s fixed; s is free again). */
static int call_fits(struct session_table *t, struct session *s, const struct job *j,
                     struct job_result *r)
{
    struct llmsb_err e = {0};

    if (session_conf_check(&s->conf, j, &e) == 0)
        return SESSION_GO;
    s->busy = 0;
    pthread_cond_broadcast(&t->turn);
    job_result_set_status(r, STATUS_INVALID, "%s", e.msg);
    return SESSION_FINAL;
}

/* Locked, then unlocked: a first call's session, new in this table
 * (claimed in the store already when there is one).  SESSION_GO with s
 * busy (not started); SESSION_FINAL when r is final; <0. */
static int add_new(struct session_table *t, const struct config *cfg, const struct job *j,
                   struct job_result *r, struct llmsb_err *err)
{
    const struct session_store *st = store_of(t, j->session_scope);
    struct session *s = NULL;
    int n = 0;

    for (size_t i = 0; i < t->ntab; i++)
        n += t->tab[i]->held || t->tab[i]->busy;
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
    else if ((s = add(t, j->session_scope, j->session)) != NULL &&
             session_conf_from_job(&s->conf, j, cfg->default_policy) != 0) {
        size_t at;
        if (find(t, j->session_scope, j->session, &at) == s)
            unlink_at(t, at);
        s = NULL;
    }
    if (s)
        s->busy = 1;
    else if (st && st->drop)
        st->drop(st->ud, j->session); /* locked: our next first call may claim it anew */
    pthread_mutex_unlock(&t->mu);
    if (s)
        return SESSION_GO;
    if (r->r.status != STATUS_NONE)
        return SESSION_FINAL;
    return llmsb_err_set(err, LLMSB_ERR_NOMEM, "session: out of memory");
}

/* Locked, then unlocked: a later call of s, held here (s busy once it
 * fits); as session_take. */
static int take_held(struct session_table *t, struct session *s, const struct job *j,
                     const struct language **lang, char **policy, char **security,
                     struct sandbox **sb, struct job_result *r, struct llmsb_err *err)
{
    int rc;

    s->busy = 1;
    rc = call_fits(t, s, j, r);
    if (rc == SESSION_GO && (!(*policy = strdup(s->conf.policy)) ||
                             (s->conf.security && !(*security = strdup(s->conf.security))))) {
        free(*policy);
        *policy = NULL;
        s->busy = 0;
        pthread_cond_broadcast(&t->turn);
        pthread_mutex_unlock(&t->mu);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "session: out of memory");
    }
    if (rc == SESSION_GO) {
        s->used_ms = clock_mono_ms();
        *sb = s->lease.sb;
        *lang = s->conf.lang;
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Locked, then unlocked on anything but SESSION_GO: a new session is ours
 * to hold if no other worker does (asked with the table locked, so two
 * slots of ours never both see it new).  SESSION_GO to go on (add_new). */
static int claim_new(struct session_table *t, const struct session_store *st, const struct job *j,
                     struct job_result *r, char *owner, size_t osz, struct llmsb_err *err)
{
    char why[256] = "";
    int rc = st->claim(st->ud, j->session, owner, osz, why, sizeof(why));

    if (rc ==
        SESSION_CLAIM_OURS) { /* ours by name, not in this process: a worker of that name restarted */
        snprintf(why, sizeof(why), "the worker that held it (%s) restarted",
                 st->self ? st->self : "-");
        if (st->lose)
            st->lose(st->ud, j->session, why);
        rc = SESSION_CLAIM_LOST;
    }
    if (rc == SESSION_CLAIM_FREE)
        return SESSION_GO;
    pthread_mutex_unlock(&t->mu);
    if (rc < 0)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "session \"%s\": the queue failed",
                             j->session);
    if (rc == SESSION_CLAIM_OTHER)
        return SESSION_ELSEWHERE;
    return lost_result(r, j->session, why);
}

int session_take(struct session_table *t, const struct config *cfg, const struct job *j,
                 const struct language **lang, char **policy, char **security, struct sandbox **sb,
                 struct job_result *r, char *owner, size_t osz, struct llmsb_err *err)
{
    const struct session_store *st = store_of(t, j->session_scope);
    struct session *s;
    char why[256] = "";
    int rc;

    *sb = NULL;
    *lang = j->lang;
    *policy = *security = NULL;
    /* in the stream's order: an earlier call, wherever it is, goes first */
    if (st && st->earlier && j->entry_id && st->earlier(st->ud, j->session, j->entry_id) == 1) {
        owner[0] = '\0';
        return SESSION_ELSEWHERE;
    }
    pthread_mutex_lock(&t->mu);
    while ((s = find(t, j->session_scope, j->session, NULL)) && s->busy && !s->lost)
        pthread_cond_wait(&t->turn, &t->mu); /* calls of one session, one at a time */
    if (s && !s->lost && expired(s, cfg, clock_mono_ms(), why, sizeof(why))) {
        struct pool_lease lease;
        int had = end_locked(t, s, why, &lease); /* the janitor had not come by yet */
        pthread_mutex_unlock(&t->mu);
        ended(t, st, j->session, why, &lease, had);
        return lost_result(r, j->session, why);
    }
    if (s && s->lost) {
        snprintf(why, sizeof(why), "%s", s->why);
        pthread_mutex_unlock(&t->mu);
        return lost_result(r, j->session, why);
    }
    if (s)
        return take_held(t, s, j, lang, policy, security, sb, r, err);
    if (st && (rc = claim_new(t, st, j, r, owner, osz, err)) != SESSION_GO)
        return rc;
    return add_new(t, cfg, j, r, err);
}

int session_start(struct session_table *t, const struct job *j, const struct container_spec *spec,
                  struct sandbox **sb, struct llmsb_err *err)
{
    struct pool_lease lease;
    struct session *s;
    int rc = pool_acquire(t->pool, spec, &lease, err);

    if (rc != 0) {
        session_put(t, j, 0, NULL); /* no sandbox, no session */
        return rc;
    }
    pthread_mutex_lock(&t->mu);
    s = find(t, j->session_scope, j->session, NULL);
    assert(s && s->busy && !s->held); /* the call's own until it ends */
    s->lease = lease;
    s->held = 1;
    *sb = lease.sb;
    pthread_mutex_unlock(&t->mu);
    return 0;
}

void session_put(struct session_table *t, const struct job *j, int end, const char *why)
{
    const struct session_store *st = store_of(t, j->session_scope);
    struct pool_lease lease;
    struct session *s;
    size_t at;
    int had = 0;

    pthread_mutex_lock(&t->mu);
    if ((s = find(t, j->session_scope, j->session, &at)) != NULL) {
        s->busy = 0;
        s->used_ms = clock_mono_ms();
        if (!s->held && !s->lost) { /* its first call never started it */
            unlink_at(t, at);
            s = NULL;
            if (st && st->drop)
                st->drop(st->ud, j->session); /* locked, as in add_new */
        } else if (end) {
            had = end_locked(t, s, why, &lease);
        }
        pthread_cond_broadcast(&t->turn);
    }
    pthread_mutex_unlock(&t->mu);
    if (s && end)
        ended(t, st, j->session, why, &lease, had);
}

int session_close(struct session_table *t, const struct job *j, struct job_result *r, char *owner,
                  size_t osz)
{
    const struct session_store *st = store_of(t, j->session_scope);
    const char *id = j->session;
    struct pool_lease lease;
    struct session *s;
    size_t at;
    int had = 0;

    if (st && st->earlier && j->entry_id && st->earlier(st->ud, id, j->entry_id) == 1) {
        owner[0] = '\0'; /* its earlier calls first */
        return SESSION_ELSEWHERE;
    }
    pthread_mutex_lock(&t->mu);
    if (!find(t, j->session_scope, id, NULL) && st) {
        char why[256];
        if (st->claim(st->ud, id, owner, osz, why, sizeof(why)) == SESSION_CLAIM_OTHER) {
            pthread_mutex_unlock(&t->mu);
            return SESSION_ELSEWHERE;
        }
    }
    while ((s = find(t, j->session_scope, id, &at)) && s->busy && !s->lost)
        pthread_cond_wait(&t->turn, &t->mu);
    if (s) {
        had = s->held;
        lease = s->lease;
        unlink_at(t, at);
        pthread_cond_broadcast(&t->turn);
    }
    /* the record goes before a first call of ours can look (it would take
     * a record of ours with no session here for a restart) */
    if (st && st->drop)
        st->drop(st->ud, id);
    pthread_mutex_unlock(&t->mu);
    if (had)
        pool_put(t->pool, &lease, 0);
    job_result_set_status(r, STATUS_OK, NULL);
    return SESSION_FINAL;
}

/* What end_some ends: the expired ones (all_why NULL), or all (all_why
 * says why); of one scope only (forgotten then, lost records too), or of
 * every scope (any 1). */
struct ending {
    const struct config *cfg;
    const char *all_why;
    const struct session_scope *scope;
    int any;
};

/* Ends the sessions of t that e names, each with its why; returns how
 * many sandboxes ended. */
static int end_some(struct session_table *t, const struct ending *e)
{
    struct {
        char id[JOB_SESSION_MAX + 1];
        char why[256];
        const struct session_scope *scope;
        struct pool_lease lease;
        int had;
    } *gone = NULL;
    size_t ngone = 0, i = 0;
    int64_t now = clock_mono_ms();
    int n = 0;

    pthread_mutex_lock(&t->mu);
    if (t->ntab && !(gone = calloc(t->ntab, sizeof(*gone)))) {
        pthread_mutex_unlock(&t->mu);
        return 0;
    }
    while (i < t->ntab) {
        struct session *s = t->tab[i];
        char why[256] = "";
        if ((!e->any && s->scope != e->scope) || s->busy) {
            i++;
            continue;
        }
        if (!s->lost && s->held && e->all_why)
            snprintf(why, sizeof(why), "%s", e->all_why);
        else if (!s->lost && s->held && !expired(s, e->cfg, now, why, sizeof(why)))
            why[0] = '\0';
        if (why[0]) {
            snprintf(gone[ngone].id, sizeof(gone[ngone].id), "%s", s->id);
            snprintf(gone[ngone].why, sizeof(gone[ngone].why), "%s", why);
            gone[ngone].scope = s->scope;
            gone[ngone].had = end_locked(t, s, why, &gone[ngone].lease);
            ngone++;
        }
        if (!e->any) /* the scope goes: nothing of it stays */
            unlink_at(t, i);
        else
            i++;
    }
    pthread_mutex_unlock(&t->mu);
    for (i = 0; i < ngone; i++) {
        ended(t, store_of(t, gone[i].scope), gone[i].id, gone[i].why, &gone[i].lease, gone[i].had);
        n += gone[i].had;
    }
    free(gone);
    return n;
}

void session_expire(struct session_table *t, const struct config *cfg)
{
    end_some(t, &(struct ending){.cfg = cfg, .any = 1});
}

void session_end_all(struct session_table *t, const char *why)
{
    end_some(t, &(struct ending){.all_why = why, .any = 1});
}

int session_scope_end(struct session_table *t, const struct session_scope *sc, const char *why)
{
    return end_some(t, &(struct ending){.all_why = why, .scope = sc});
}

int session_count(struct session_table *t)
{
    int n = 0;

    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->ntab; i++)
        n += t->tab[i]->held && !t->tab[i]->lost;
    pthread_mutex_unlock(&t->mu);
    return n;
}
