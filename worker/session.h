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
#include "backends/pool.h"
#include "config/config.h"
#include "worker/job.h"
#include "worker/result.h"

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
};

void session_store_set(const struct session_store *st);

/* Takes the session's sandbox for j's call, waiting while another call of
 * it runs; the first call takes one for spec from the pool.  Returns 0
 * with *sb; 1 when r is final (session_lost, or too many sessions); 2 when
 * another worker holds the session (owner written) or, owner "" with a
 * store, an earlier call of it has to run first (the caller comes back to
 * it); <0 with err set. */
int session_take(struct pool *pool, const struct config *cfg, const struct job *j,
                 const struct container_spec *spec, struct sandbox **sb, struct job_result *r,
                 char *owner, size_t osz, struct llmsb_err *err);
/* After the call: ended (the agent said the process is gone, or the run
 * failed) destroys the sandbox and makes the session lost with why. */
void session_put(struct pool *pool, const char *id, int ended, const char *why);
/* A session_close job: ends the session (if this process holds it) and
 * frees its id; r gets status ok.  Returns 1 (nothing done) when another
 * worker holds it (owner written): the job is that worker's. */
int session_close(struct pool *pool, const char *id, const char *entry_id, struct job_result *r,
                  char *owner, size_t osz);
/* Ends the sessions idle or old past the config's limits. */
void session_expire(struct pool *pool, const struct config *cfg);
/* Ends every session (shutdown), recording why. */
void session_end_all(struct pool *pool, const char *why);

#endif
