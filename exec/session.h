/* session.h - the sessions this process holds (docs/jobs.md "Sessions"):
 * the calls of one session run in order in one sandbox of its own, taken
 * from the pool at the first call and never given back (destroyed when the
 * session ends), whose interpreter keeps its state between calls.  A
 * session ends when it is closed (a session_close job), idle past
 * sessions.idle_ttl, older than sessions.max_lifetime, or when a call ends
 * its process (a timeout, a memory or output limit, exit); its later calls
 * are session_lost until it is closed, which frees the id.  Thread-safe. */
#ifndef LLMSB_SESSION_H
#define LLMSB_SESSION_H

#include <stdint.h>
#include "sandbox/pool.h"
#include "config/config.h"
#include "job/job.h"
#include "job/result.h"

/* Where a worker's sessions are recorded for the other workers (Redis);
 * NULL in-process.  claim: 0 this process holds id now (it was free), 3
 * it held it already, 1 another worker holds it (owner written), 2 it is
 * lost (why written), <0 the store failed.  drop: the id is free again (closed);
 * lose: the session ended with why. */
struct session_store {
    int (*claim)(void *ud, const char *id, char *owner, size_t osz, char *why, size_t wsz);
    int (*drop)(void *ud, const char *id);
    int (*lose)(void *ud, const char *id, const char *why);
    /* 1 when a call of id that came before entry_id is still to finish */
    int (*earlier)(void *ud, const char *id, const char *entry_id);
    void *ud;
    const char *self; /* this worker's name, for messages */
};

void session_store_set(const struct session_store *st);

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

/* Takes the session's sandbox for j's call, waiting while another call of
 * it runs, and checks the call against what the session fixed.  Returns 0
 * with *lang the language the call runs in (the session's), *policy and
 * *security what it is scanned with (the session's: new strings, caller
 * frees; both NULL for a first call, scanned as it says) and *sb its
 * sandbox, or *sb NULL for a first call: the session is then this call's
 * to start (session_start), or to give up (session_put: it never was).  1
 * when r is final (session_lost, too many sessions, or invalid: a call
 * that differs from its session, a first call without lang); 2 when
 * another worker holds the session (owner written) or, owner "" with a
 * store, an earlier call of it has to run first (the caller comes back to
 * it); <0 with err set. */
int session_take(struct pool *pool, const struct config *cfg, const struct job *j,
                 const struct language **lang, char **policy, char **security, struct sandbox **sb,
                 struct job_result *r, char *owner, size_t osz, struct llmsb_err *err);
/* A first call's: the session's sandbox for spec from the pool.  On
 * failure (err set) there is no session: the call may be tried again. */
int session_start(struct pool *pool, const char *id, const struct container_spec *spec,
                  struct sandbox **sb, struct llmsb_err *err);
/* After the call: ended (the agent said the process is gone, or the run
 * failed) destroys the sandbox and makes the session lost with why.  A
 * session that was never started (a first call refused before it ran) is
 * forgotten, its id free. */
void session_put(struct pool *pool, const char *id, int ended, const char *why);
/* A session_close job: ends the session (if this process holds it) and
 * frees its id; r gets status ok.  Returns 1 (nothing done) when another
 * worker holds it (owner written): the job is that worker's. */
int session_close(struct pool *pool, const char *id, const char *entry_id, struct job_result *r,
                  char *owner, size_t osz);
/* Ends the sessions of pool idle or old past the config's limits. */
void session_expire(struct pool *pool, const struct config *cfg);
/* Ends every session of pool (shutdown), recording why. */
void session_end_all(struct pool *pool, const char *why);
/* How many sessions of pool this process holds (open, not lost). */
int session_count(const struct pool *pool);

#endif
