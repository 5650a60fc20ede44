/* session.h - the sessions a runner holds (docs/jobs.md "Sessions"):
 * the calls of one session run in order in one sandbox of its own, taken
 * from the pool at the first call and never given back (destroyed when the
 * session ends), whose interpreter keeps its state between calls.  A
 * session ends when it is closed (a session_close job), idle past
 * sessions.idle_ttl, older than sessions.max_lifetime, or when a call ends
 * its process (a timeout, a memory or output limit, exit); its later calls
 * are session_lost until it is closed, which frees the id.  A table per
 * runner, no state of the process's: thread-safe over one table. */
#ifndef LLMSB_SESSION_H
#define LLMSB_SESSION_H

#include <pthread.h>
#include <stdint.h>
#include "sandbox/pool.h"
#include "config/config.h"
#include "job/job.h"
#include "job/result.h"

/* What a store says of an id a first call would hold (claim). */
enum session_claim {
    SESSION_CLAIM_FREE = 0,  /* it was free: this process holds it now */
    SESSION_CLAIM_OTHER = 1, /* another worker holds it (owner written) */
    SESSION_CLAIM_LOST = 2,  /* it is lost (why written) */
    SESSION_CLAIM_OURS = 3,  /* this worker's name held it already */
};

/* Where a worker's sessions are recorded for the other workers (Redis);
 * none in-process.  claim: an enum session_claim, or <0 the store failed.
 * drop: the id is free again (closed); lose: the session ended with why. */
struct session_store {
    int (*claim)(void *ud, const char *id, char *owner, size_t osz, char *why, size_t wsz);
    int (*drop)(void *ud, const char *id);
    int (*lose)(void *ud, const char *id, const char *why);
    /* 1 when a call of id that came before entry_id is still to finish */
    int (*earlier)(void *ud, const char *id, const char *entry_id);
    void *ud;
    const char *self; /* this worker's name, for messages */
};

/* What a call of a session comes to (session_take, session_close). */
enum session_turn {
    SESSION_GO = 0,        /* the call runs (in *sb, or a first call's to start) */
    SESSION_FINAL = 1,     /* r is final (session_lost, too many sessions, invalid; a close: ok) */
    SESSION_ELSEWHERE = 2, /* another worker holds it (owner written), or owner "": an
                            * earlier call of it has to run first */
};

struct session;

/* A caller's own names for sessions in a table: two scopes' "s1" are two
 * sessions, and no call of one scope can reach, use or close a session of
 * another (an MCP client's calls: each client has one).  A scope is its
 * address; NULL (a job's session_scope unset) is the table's own.  Its
 * owner ends it (session_scope_end) before it goes, so that nothing of it
 * is left for a later scope at the same address to meet. */
struct session_scope {
    char unused; /* C11 has no empty struct: only the address counts */
};

/* The sessions of one runner (its pool's sandboxes): never shared by two
 * runners, so two in one process (tests, several MCP clients' runners)
 * never meet.  Fields are session.c's; a runner holds one, which must not
 * move while it is in use. */
struct session_table {
    pthread_mutex_t mu;
    pthread_cond_t turn; /* a call of a session ended, or a session ended */
    struct pool *pool;   /* the sandboxes' (NULL: a table no call starts a session in) */
    struct session **tab;
    size_t ntab, captab;
    struct session_store store;
    int have_store;
};

/* No allocation; pool is the one its sessions' sandboxes come from. */
void session_table_init(struct session_table *t, struct pool *pool);
/* Forgets every record (session_end_all first: a held sandbox is not
 * given back here). */
void session_table_release(struct session_table *t);
/* Where t's sessions are recorded (st copied); NULL: nowhere. */
void session_store_set(struct session_table *t, const struct session_store *st);

/* What a session's first call fixes for all its calls: the language that
 * runs every call (and that every call is scanned as), the environment and
 * plot hooks its interpreter started with, its container's limits. */
struct session_conf {
    const struct language *lang;
    char **env; /* the job's own "K=V", NULL-terminated */
    size_t nenv;
    int plots;
    int64_t memory_mb, pids;
    double cpus;
    char *policy;   /* the policy its calls are scanned with (the default named) */
    char *security; /* its inline policy (JSON), or NULL */
};

/* c from j's call (a first call), default_policy the worker's
 * security.default_policy; 0, or <0 out of memory. */
int session_conf_from_job(struct session_conf *c, const struct job *j, const char *default_policy);
void session_conf_release(struct session_conf *c);
/* 0 when j's call may run in a session c fixed: every one of these fields
 * that j names is c's (a field it leaves out is c's anyway); else
 * LLMSB_ERR_INVALID, the message naming the field, the session's value
 * and the call's. */
int session_conf_check(const struct session_conf *c, const struct job *j, struct llmsb_err *err);

/* The calls below name their session by j->session in j->session_scope
 * (NULL: t's own scope, the only one a store records). */

/* Takes the session's sandbox for j's call, waiting while another call of
 * it runs, and checks the call against what the session fixed.
 * SESSION_GO with *lang the language the call runs in (the session's),
 * *policy and *security what it is scanned with (the session's: new
 * strings, caller frees; both NULL for a first call, scanned as it says)
 * and *sb its sandbox, or *sb NULL for a first call: the session is then
 * this call's to start (session_start), or to give up (session_put: it
 * never was).  SESSION_FINAL when r is final (session_lost, too many
 * sessions, or invalid: a call that differs from its session, a first
 * call without lang); SESSION_ELSEWHERE when another worker holds the
 * session (owner written) or, owner "" with a store, an earlier call of
 * it has to run first (the caller comes back to it); <0 with err set. */
int session_take(struct session_table *t, const struct config *cfg, const struct job *j,
                 const struct language **lang, char **policy, char **security, struct sandbox **sb,
                 struct job_result *r, char *owner, size_t osz, struct llmsb_err *err);
/* A first call's: the session's sandbox for spec from t's pool.  On
 * failure (err set) there is no session: the call may be tried again. */
int session_start(struct session_table *t, const struct job *j, const struct container_spec *spec,
                  struct sandbox **sb, struct llmsb_err *err);
/* After j's call: ended (the agent said the process is gone, or the run
 * failed) destroys the sandbox and makes the session lost with why.  A
 * session that was never started (a first call refused before it ran) is
 * forgotten, its id free. */
void session_put(struct session_table *t, const struct job *j, int ended, const char *why);
/* A session_close job j: ends the session (if this process holds it) and
 * frees its id; r gets status ok (SESSION_FINAL).  SESSION_ELSEWHERE
 * (nothing done) when another worker holds it (owner written): the job is
 * that worker's. */
int session_close(struct session_table *t, const struct job *j, struct job_result *r, char *owner,
                  size_t osz);
/* Ends the sessions of t idle or old past the config's limits. */
void session_expire(struct session_table *t, const struct config *cfg);
/* Ends every session of t (shutdown), recording why. */
void session_end_all(struct session_table *t, const char *why);
/* Ends every session of scope in t (sc not NULL) and forgets them, lost
 * ones too: the scope's owner goes.  Returns how many sandboxes it ended. */
int session_scope_end(struct session_table *t, const struct session_scope *sc, const char *why);
/* How many sessions of t this process holds (open, not lost). */
int session_count(struct session_table *t);

#endif
