/* store.c - the worker's session store: the runner's session table
 * (exec/session.h) records who holds which session in Redis through these
 * callbacks, on a connection of the worker's own, so that exec/ never
 * includes the queue. */
#include <pthread.h>
#include <stdio.h>

#include "exec/session.h"
#include "worker_int.h"

#define SESSION_LOST_KEEP_S 86400 /* a lost session's record, for its late calls */

static long long session_ttl_s(const struct worker *w)
{
    return w->cfg->session_life_ms / 1000 + SESSION_LOST_KEEP_S;
}

/* Runs one store command; one reconnect on a retryable failure. */
static int store_call(struct worker *w, int (*fn)(struct worker *, void *, struct llmsb_err *),
                      void *arg)
{
    struct llmsb_err err = {0};
    int rc = -1;

    pthread_mutex_lock(&w->store_mu);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!w->store_open && queue_open(&w->store_q, w->cfg->redis_url, w->cfg->redis_prefix,
                                         w->name, WORKER_CONTROL_TIMEOUT_MS, &err) != 0) {
            queue_close(&w->store_q);
            continue;
        }
        w->store_open = 1;
        llmsb_err_clear(&err);
        if ((rc = fn(w, arg, &err)) >= 0 || !queue_err_retryable(&err))
            break;
        queue_close(&w->store_q);
        w->store_open = 0;
    }
    pthread_mutex_unlock(&w->store_mu);
    if (rc < 0)
        log_warn("sessions: redis: %s", err.msg);
    return rc;
}

struct claim_args {
    const char *id;
    char *owner, *why;
    size_t osz, wsz;
};

static int do_claim(struct worker *w, void *arg, struct llmsb_err *err)
{
    struct claim_args *a = arg;
    char text[256];
    int rc =
        queue_session_claim(&w->store_q, a->id, w->name, session_ttl_s(w), text, sizeof(text), err);
    snprintf(rc == 1 ? a->owner : a->why, rc == 1 ? a->osz : a->wsz, "%s", text);
    return rc;
}

/* The store's claim: queue_session_claim's 0..3 are enum session_claim's
 * values (free, another worker's, lost, ours by name). */
static int store_claim(void *ud, const char *id, char *owner, size_t osz, char *why, size_t wsz)
{
    struct claim_args a = {id, owner, why, osz, wsz};
    return store_call(ud, do_claim, &a);
}

static int do_drop(struct worker *w, void *arg, struct llmsb_err *err)
{
    return queue_session_drop(&w->store_q, arg, err);
}

static int store_drop(void *ud, const char *id)
{
    return store_call(ud, do_drop, (void *)id);
}

struct id_text {
    const char *id, *text; /* a session id and a why, or an entry id */
};

static int do_lose(struct worker *w, void *arg, struct llmsb_err *err)
{
    struct id_text *a = arg;
    return queue_session_lose(&w->store_q, a->id, a->text, SESSION_LOST_KEEP_S, err);
}

static int store_lose(void *ud, const char *id, const char *why)
{
    struct id_text a = {id, why};
    return store_call(ud, do_lose, &a);
}

static int do_earlier(struct worker *w, void *arg, struct llmsb_err *err)
{
    struct id_text *a = arg;
    return queue_session_earlier(&w->store_q, a->text, a->id, err);
}

static int store_earlier(void *ud, const char *id, const char *entry_id)
{
    struct id_text a = {id, entry_id};
    return store_call(ud, do_earlier, &a);
}

void store_attach(struct worker *w)
{
    struct session_store st = {store_claim, store_drop, store_lose, store_earlier, w, w->name};

    pthread_mutex_init(&w->store_mu, NULL);
    session_store_set(&w->rn.sessions, &st);
}

void store_detach(struct worker *w)
{
    session_store_set(&w->rn.sessions, NULL);
    if (w->store_open)
        queue_close(&w->store_q);
}
