/* worker.c - the Redis worker (see worker.h): slots, the janitor thread,
 * drain on a stop request.
 *
 * Each slot is a thread with its own Redis connection and engine handle;
 * it takes a job from the scheduler only when it is free, runs one attempt
 * of it through the runner and carries out the scheduler's decision.  The janitor thread,
 * on its own connection, keeps the heartbeat, drives the scheduler's
 * timers (cancellation, leases, reclaim), keeps the pool warm and removes
 * containers that dead processes of this queue left behind.  A live job's
 * output goes to its stream (queue/live.c) as its agent sends it. */
#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/features.h"
#include "queue/queue.h"
#include "scheduler/scheduler.h"
#include "exec/exec.h"
#include "exec/runner.h"
#include "exec/session.h"
#include "metrics_int.h"

static atomic_int worker_stop; /* drain: set by worker_stop_ask */

#define HEARTBEAT_PER_TTL 4         /* heartbeats per heartbeat_ttl */
#define REDIS_EXTRA_TIMEOUT_MS 3000 /* command timeout above the longest BLOCK */
#define JANITOR_RECONNECT_GIVEUP_MS 5000
#define REAP_MAX 64

struct worker;

struct slot {
    struct worker *w;
    int index;
    pthread_t th;
    int started;
    struct queue q;
    long long client_id;
    struct backend be;
    /* the live job it runs (live_chunk) */
    struct proto_chunk_sink live_sink;
    const char *live_id;
    char live_shown[200]; /* live_id escaped, for the log */
    long long live_ttl_s, live_attempt;
    int64_t live_expire_ms; /* when a chunk last set the stream's expiry */
    int live_broken;
    struct llmsb_err live_err;
};

struct worker {
    const struct config *cfg;
    const char *name; /* rn.id.worker */
    int nslots;
    struct slot *slots;
    struct runner rn; /* the engine, the pool, who this worker is */
    struct scheduler sched;
    atomic_int janitor_stop;
    pthread_t janitor;
    int64_t started_wall_ms;
    /* the session store: who holds which session, on a connection of its own */
    pthread_mutex_t store_mu;
    struct queue store_q;
    int store_open;
    /* a recheck runs alone (gate_alone): no other slot claims or runs a job */
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int gate_active;        /* slots claiming or running a job */
    int gate_waiting;       /* rechecks waiting for the others to end */
    int gate_alone;         /* a recheck is running */
    struct metrics metrics; /* served when worker.metrics_addr is set */
};

/* ---- sessions in Redis ---------------------------------------------------------- */

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

static int redis_connect(struct worker *w, struct queue *q, int fresh, const atomic_int *stop,
                         int64_t giveup_ms)
{
    struct llmsb_err err = {0};
    return queue_connect_retry(q, w->cfg->redis_url, w->cfg->redis_prefix, w->name,
                               (int)w->cfg->block_ms + REDIS_EXTRA_TIMEOUT_MS, fresh, stop,
                               giveup_ms, &err);
}

/* ---- running alone -------------------------------------------------------------- */

#define GATE_POLL_MS 200

static void gate_wait(struct worker *w)
{
    clock_cond_wait_ms(&w->gate_cv, &w->gate_mu, GATE_POLL_MS);
}

/* A slot about to claim a job: waits while a recheck waits or runs. */
static void gate_enter(struct worker *w)
{
    pthread_mutex_lock(&w->gate_mu);
    while ((w->gate_waiting || w->gate_alone) && !atomic_load(&worker_stop))
        gate_wait(w);
    w->gate_active++;
    pthread_mutex_unlock(&w->gate_mu);
}

static void gate_leave(struct worker *w)
{
    pthread_mutex_lock(&w->gate_mu);
    w->gate_active--;
    pthread_cond_broadcast(&w->gate_cv);
    pthread_mutex_unlock(&w->gate_mu);
}

/* A recheck (job recheck): waits until no other slot claims or runs a job,
 * then holds them off until gate_alone_end.  0, or -1 when the worker
 * drains meanwhile (the entry goes back). */
static int gate_alone_begin(struct worker *w)
{
    int rc = 0;

    pthread_mutex_lock(&w->gate_mu);
    w->gate_active--; /* this slot's own claim */
    w->gate_waiting++;
    while ((w->gate_active > 0 || w->gate_alone) && !(rc = -atomic_load(&worker_stop)))
        gate_wait(w);
    w->gate_waiting--;
    if (rc == 0)
        w->gate_alone = 1;
    w->gate_active++;
    pthread_cond_broadcast(&w->gate_cv);
    pthread_mutex_unlock(&w->gate_mu);
    return rc ? -1 : 0;
}

static void gate_alone_end(struct worker *w)
{
    pthread_mutex_lock(&w->gate_mu);
    w->gate_alone = 0;
    pthread_cond_broadcast(&w->gate_cv);
    pthread_mutex_unlock(&w->gate_mu);
}

/* ---- one entry ----------------------------------------------------------------- */

/* What j's writes carry besides its result: its copies and recheck. *c
 * points into j and into ids/metas (j->ncopies each; freed by the caller). */
static int copies_of(const struct job *j, struct queue_copies *c, const char ***ids,
                     const char ***metas)
{
    size_t n = j ? j->ncopies : 0;

    *ids = calloc(n + 1, sizeof(**ids));
    *metas = calloc(n + 1, sizeof(**metas));
    if (!*ids || !*metas)
        return -1;
    for (size_t i = 0; i < n; i++) {
        (*ids)[i] = j->copies[i].id;
        (*metas)[i] = j->copies[i].meta;
    }
    c->ids = *ids;
    c->metas = *metas;
    c->n = n;
    c->recheck = j && j->recheck ? status_name(j->recheck) : NULL;
    return 0;
}

static void finish(struct slot *s, const struct queue_entry *e, const struct job *j,
                   struct job_result *r, long long ttl_s, const struct fields *dead)
{
    char nums[RESULT_NUMS][32], shown[160];
    const char **ids = NULL, **metas = NULL;
    struct queue_copies c;
    struct fields f;
    int rc = -1;

    if (job_result_to_fields(r, nums, &f) != 0 || copies_of(j, &c, &ids, &metas) != 0)
        log_error("job=%s: out of memory writing its result", r->id);
    else
        rc = scheduler_finish(&s->w->sched, &s->q, e, r->id, status_name(r->r.status), &f, dead, &c,
                              ttl_s);
    free(ids);
    free(metas);
    fields_release(&f);
    if (rc > 0)
        metrics_job_done(&s->w->metrics, r, j ? j->lang : NULL, dead != NULL);
    llmsb_escape(shown, sizeof(shown), r->id, strlen(r->id));
    /* a follower stops at the end entry, and reads the result then */
    if (rc >= 0 && j && j->live &&
        queue_live_end(&s->q, r->id, status_name(r->r.status), ttl_s, &s->live_err) != 0)
        log_warn("job=%s: cannot end its live output: %s", shown, s->live_err.msg);
    if (rc >= 0)
        log_info("job=%s status=%s attempts=%d%s%s", shown, status_name(r->r.status), r->attempts,
                 rc == 0 ? " (a final result existed already; acknowledged)" : "",
                 j && j->ncopies ? " (and its copies)" : "");
}

static void dead_letter(struct slot *s, const struct queue_entry *e, const struct job *j,
                        struct job_result *r, long long ttl_s, const char *reason)
{
    struct fields dead;
    char attempts[24];

    if (scheduler_dead_fields(&s->w->sched, e, reason, attempts, &dead) != 0)
        log_error("entry %s: out of memory building its dead letter", e->id);
    job_result_set_status(r, STATUS_INTERNAL_ERROR, "%s", reason);
    finish(s, e, j, r, ttl_s, &dead);
    fields_release(&dead);
}

static int64_t entry_ms(const char *id)
{
    long long v = 0;
    char ms[24];
    snprintf(ms, sizeof(ms), "%.*s", (int)strcspn(id, "-"), id);
    return parse_ll(ms, 0, (long long)1 << 62, &v) == 0 ? v : 0;
}

/* The job's "running" record, for this delivery: queue_mark_running's
 * answer (1 marked, 0 a final result exists already, 2 another entry of
 * the id runs it); 1 when Redis failed (logged: the job runs, at least
 * once). */
static int mark_running(struct slot *s, const struct queue_entry *e, const struct job *j,
                        const struct job_result *r)
{
    struct fields p;
    struct llmsb_err err = {0};
    char attempts[16], started[24], queued[24];
    const char **ids = NULL, **metas = NULL;
    struct queue_copies c;
    int rc = -1;

    snprintf(attempts, sizeof(attempts), "%d", r->attempts);
    snprintf(started, sizeof(started), "%lld", (long long)clock_wall_ms());
    snprintf(queued, sizeof(queued), "%lld", (long long)r->queued_at);
    fields_init(&p, 8);
    fields_adds(&p, "id", j->id);
    fields_adds(&p, "worker", s->w->name);
    fields_adds(&p, "attempts", attempts);
    fields_adds(&p, "queued_at", queued);
    fields_adds(&p, "started_at", started);
    if (copies_of(j, &c, &ids, &metas) != 0)
        llmsb_err_set(&err, LLMSB_ERR_NOMEM, "out of memory");
    else
        rc = queue_mark_running(&s->q, j->id, e->id, &p, &c, j->result_ttl_s, &err);
    free(ids);
    free(metas);
    fields_release(&p);
    if (rc < 0)
        log_warn("job=%s: cannot mark running: %s", j->id, err.msg);
    return rc < 0 ? 1 : rc;
}

static void run_entry(struct slot *s, const struct queue_entry *e, const struct job *j,
                      struct job_result *r)
{
    const struct config *cfg = s->w->cfg;
    const struct sched_backoff backoff = {SCHED_BACKOFF_BASE_MS, cfg->lease_ms / 2};
    struct llmsb_err err = {0};
    struct sched_decision d;
    enum sched_outcome o;
    int mark = mark_running(s, e, j, r);
    int cancel = mark == 1 && queue_cancel_requested(&s->q, j->id, &err) == 1;

    switch (scheduler_admit(e->deliveries, j->max_attempts, mark == 0, mark == 2, cancel)) {
    case SCHED_ADMIT_WAIT: {
        char shown[160];
        llmsb_escape(shown, sizeof(shown), j->id, strlen(j->id));
        log_info("job=%s: another entry of this id runs it; entry %s waits for its result", shown,
                 e->id);
        scheduler_give_back(&s->w->sched, &s->q, e, SCHED_WAIT_OTHER_RUN_MS, 0);
        return;
    }
    case SCHED_ADMIT_ACK:
        finish(s, e, j, r, j->result_ttl_s, NULL); /* acknowledges; the first result stands */
        return;
    case SCHED_ADMIT_DEAD_LETTER:
        dead_letter(s, e, j, r, j->result_ttl_s,
                    "delivered more times than max_attempts (a worker "
                    "died running it, or its infrastructure kept "
                    "failing)");
        return;
    case SCHED_ADMIT_CANCEL:
        job_result_set_status(r, STATUS_CANCELLED, "cancelled before it started");
        finish(s, e, j, r, j->result_ttl_s, NULL);
        return;
    case SCHED_ADMIT_RUN:
        break;
    }
    if (j->recheck)
        scheduler_alone_begin(&s->w->sched, &s->q);
    if (j->recheck && gate_alone_begin(s->w) != 0) {
        scheduler_alone_end(&s->w->sched);
        log_info("job=%s: a recheck given back (the worker drains)", j->id);
        scheduler_give_back(&s->w->sched, &s->q, e, 0, 0);
        return;
    }
    o = runner_attempt(&s->w->rn, &s->be, j, scheduler_cancel_flag(&s->w->sched, s->index), r,
                       &err);
    if (j->recheck) {
        gate_alone_end(s->w);
        scheduler_alone_end(&s->w->sched);
    }
    if (o == SCHED_OUT_FAILED || o == SCHED_OUT_UNAVAILABLE)
        metrics_engine_error(&s->w->metrics);
    d = scheduler_decide(o, e->deliveries, j->max_attempts, &backoff);
    switch (d.action) {
    case SCHED_FINISH:
        finish(s, e, j, r, j->result_ttl_s, NULL);
        break;
    case SCHED_GIVE_BACK:
        log_info("job=%s: aborted (drain or lease lost); given back for another worker", j->id);
        scheduler_give_back(&s->w->sched, &s->q, e, 0, 0);
        break;
    case SCHED_PAUSE:
        if (scheduler_pause(&s->w->sched, &s->q))
            log_warn("%s engine does not answer (%s); taking no jobs until it does",
                     s->be.ops->name, err.msg);
        log_info("job=%s: given back, this attempt uncounted (the engine failed, not the job)",
                 j->id);
        scheduler_give_back(&s->w->sched, &s->q, e, 0, 0);
        break;
    case SCHED_RETRY:
        log_warn("job=%s attempt %lld failed: %s; retrying in %lld ms", j->id, e->deliveries,
                 err.msg, (long long)d.delay_ms);
        scheduler_give_back(&s->w->sched, &s->q, e, d.delay_ms, 1);
        break;
    case SCHED_HAND_OVER: {
        /* the session's worker (or this one, "", when an earlier call of the
         * session has to run first) picks it up among its own deliveries
         * within a second.  Its count goes back to one delivery: a call
         * that waits behind a long one may be claimed as stale meanwhile,
         * which counts, and waiting is no attempt (a session's call is never
         * tried again anyway: a lost sandbox ends the session) */
        const char *to = r->worker[0] ? r->worker : s->w->name;
        int64_t idle = scheduler_own_idle_ms(cfg->block_ms);
        if (queue_hand_over(&s->q, e->id, to, idle, 1, &err) != 0)
            log_warn("job=%s: cannot hand it to %s for session %s: %s", j->id, to, j->session,
                     err.msg);
        else if (r->worker[0])
            log_info("job=%s: handed to %s, which holds session %s", j->id, to, j->session);
        else
            log_debug("job=%s: waits for an earlier call of session %s", j->id, j->session);
        break;
    }
    case SCHED_DEAD_LETTER: {
        char reason[400];
        snprintf(reason, sizeof(reason), "infrastructure failed %lld times; last: %.300s",
                 e->deliveries, err.msg);
        dead_letter(s, e, j, r, j->result_ttl_s, reason);
        break;
    }
    }
}

#define LIVE_SLOW_MS 1000         /* a chunk's XADD this slow: the job's chunks stop */
#define LIVE_EXPIRE_EVERY_MS 1000 /* a chunk sets the stream's expiry again this often */
#define LIVE_TTL_MARGIN_S 60      /* a stream outlives its job's backstop by this */

/* A live job's chunk (its sink, in the slot's thread, which reads the
 * agent's frames): onto its stream.  A failed write, or one so slow that
 * the frames behind it wait, stops the job's chunks (logged once): the
 * result still carries all, and a follower takes the rest from it. */
static void live_chunk(void *arg, const struct proto_chunk *c)
{
    struct slot *s = arg;
    int64_t t0 = clock_mono_ms();
    long long ttl_s = 0;

    if (s->live_broken)
        return;
    if (t0 - s->live_expire_ms >= LIVE_EXPIRE_EVERY_MS) {
        ttl_s = s->live_ttl_s; /* the key may have expired and come back without one */
        s->live_expire_ms = t0;
    }
    if (queue_live_add(&s->q, s->live_id, c->fd == 1 ? "stdout" : "stderr", c->offset, c->data,
                       c->len, ttl_s, &s->live_err) != 0) {
        log_warn("job=%s: live output stopped: %s", s->live_shown, s->live_err.msg);
        s->live_broken = 1;
    } else if (clock_mono_ms() - t0 >= LIVE_SLOW_MS) {
        log_warn("job=%s: live output stopped: a chunk took %lld ms to reach Redis", s->live_shown,
                 (long long)(clock_mono_ms() - t0));
        s->live_broken = 1;
    }
}

/* An attempt's JOB frame goes out (its sink's begin, after admission): the
 * stream starts again with its restart entry. */
static void live_restart(void *arg)
{
    struct slot *s = arg;

    s->live_expire_ms = clock_mono_ms();
    s->live_broken =
        queue_live_restart(&s->q, s->live_id, s->live_attempt, s->live_ttl_s, &s->live_err) != 0;
    if (s->live_broken)
        log_warn("job=%s: no live output: %s", s->live_shown, s->live_err.msg);
}

/* A live job's chunks go to its stream (restarted at each attempt),
 * kept while the job may still run (its backstop and a margin) and no
 * shorter than its result. */
static void live_begin(struct slot *s, struct job *j, long long attempt)
{
    long long run_s;

    if (!j->live)
        return;
    s->live_id = j->id;
    llmsb_escape(s->live_shown, sizeof(s->live_shown), j->id, strlen(j->id));
    run_s = (long long)(exec_backstop_ms(s->w->cfg, j) / 1000) + LIVE_TTL_MARGIN_S;
    s->live_ttl_s = j->result_ttl_s > run_s ? j->result_ttl_s : run_s;
    s->live_attempt = attempt;
    s->live_broken = 0;
    j->sink = &s->live_sink;
}

/* The first feature e's needs field names that this build does not know,
 * into missing: 1, else 0 (a malformed list is the parser's to refuse). */
static int needs_unknown(const struct queue_entry *e, char *missing, size_t msz)
{
    struct llmsb_err err = {0};
    size_t len = 0;
    const char *needs = fields_get(&e->f, "needs", &len);

    return needs && features_check("needs", needs, len, missing, msz, &err) == 1;
}

/* A job that needs a feature this worker lacks (a newer front end's) is
 * never invalid: it goes to a live worker that publishes every feature it
 * needs, as a session's call goes to its worker, else (none alive, or it
 * went round more than max_attempts deliveries) it ends internal_error
 * with a dead letter naming the feature. */
static void hand_on(struct slot *s, const struct queue_entry *e, struct job *j,
                    struct job_result *r, const char *missing)
{
    const char *needs = fields_get(&e->f, "needs", NULL);
    struct queue_workers_check c;
    struct llmsb_err err = {0};
    char shown[160], reason[512];

    llmsb_escape(shown, sizeof(shown), r->id, strlen(r->id));
    if (queue_workers_check(&s->q, needs, &c, &err) != 0) {
        log_warn("job=%s: cannot read the workers' heartbeats (%s); given back", shown, err.msg);
        scheduler_give_back(&s->w->sched, &s->q, e, SCHED_BACKOFF_BASE_MS, 0);
        return;
    }
    if (c.best[0] && e->deliveries <= j->max_attempts) {
        if (queue_hand_over(&s->q, e->id, c.best, scheduler_own_idle_ms(s->w->cfg->block_ms),
                            e->deliveries, &err) == 0)
            log_info("job=%s needs %s, which this worker (protocol %d) lacks: handed to %s", shown,
                     needs, LLMSB_PROTOCOL, c.best);
        else
            log_warn("job=%s: cannot hand it to %s: %s", shown, c.best, err.msg);
        return;
    }
    if (c.best[0]) /* handed round: nobody that has it took it */
        snprintf(
            reason, sizeof(reason),
            "needs the feature \"%.32s\", which this worker (protocol %d: %.40s) does not know; "
            "handed to workers that publish all of \"%.100s\" (%.64s), it came back %lld times "
            "(max_attempts %d); see the workers' logs (docs/operations.md, rolling upgrades)",
            missing, LLMSB_PROTOCOL, features_all(), needs, c.best, e->deliveries - 1,
            j->max_attempts);
    else
        snprintf(
            reason, sizeof(reason),
            "needs the feature \"%.32s\", which this worker (protocol %d: %.40s) does not know, "
            "and no live worker publishes all of \"%.100s\" (%d alive); upgrade the workers "
            "(docs/operations.md, rolling upgrades)",
            missing, LLMSB_PROTOCOL, features_all(), needs, c.alive);
    log_info("job=%s: %s", shown, reason);
    dead_letter(s, e, j, r, s->w->cfg->result_ttl_s, reason);
}

static void handle_entry(struct slot *s, struct queue_entry *e)
{
    const struct config *cfg = s->w->cfg;
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;
    char missing[FEATURE_NAME_MAX + 1];
    int invalid;

    if (e->deleted) {
        log_warn("entry %s has no fields (trimmed or deleted); acknowledging it", e->id);
        queue_ack(&s->q, e->id, &err);
        return;
    }
    job_init(&j, cfg);
    invalid = job_from_fields(&j, cfg, &e->f, e->id, &err) != 0;
    j.entry_id = e->id;
    job_result_init(&r, &j);
    if (!r.id[0])
        snprintf(r.id, sizeof(r.id), "%s", e->id);
    r.attempts = (int)e->deliveries;
    r.queued_at = entry_ms(e->id);
    runner_stamp(&s->w->rn, &r);
    scheduler_begin(&s->w->sched, s->index, e->id, r.id);
    if (needs_unknown(e, missing, sizeof(missing))) {
        hand_on(s, e, &j, &r, missing);
    } else if (invalid) {
        job_result_set_status(&r, STATUS_INVALID, "%s", err.msg);
        log_info("job=%s invalid: %s", r.id, err.msg);
        finish(s, e, &j, &r, cfg->result_ttl_s, NULL);
    } else {
        live_begin(s, &j, e->deliveries);
        run_entry(s, e, &j, &r);
    }
    scheduler_end(&s->w->sched, s->index);
    job_result_release(&r);
    job_release(&j);
}

static void *slot_main(void *arg)
{
    struct slot *s = arg;
    struct worker *w = s->w;
    struct llmsb_err err = {0};

    if (redis_connect(w, &s->q, 1, &worker_stop, 0) != 0)
        return NULL;
    s->client_id = queue_client_id(&s->q, &err);
    while (!atomic_load(&worker_stop)) {
        struct queue_entry *e = NULL;

        gate_enter(w);
        if (scheduler_next(&w->sched, &s->q, &e, &err) != 0) {
            gate_leave(w);
            if (!atomic_load(&worker_stop))
                log_warn("slot %d: read: %s", s->index, err.msg);
            if (queue_err_retryable(&err) && redis_connect(w, &s->q, 0, &worker_stop, 0) == 0)
                s->client_id = queue_client_id(&s->q, &err);
            else if (!atomic_load(&worker_stop))
                clock_sleep_ms(500);
            continue;
        }
        if (e)
            handle_entry(s, e);
        gate_leave(w);
        if (!e && atomic_load(&w->sched.paused))
            clock_sleep_ms(WORKER_PAUSED_POLL_MS);
        queue_entries_free(e, e ? 1 : 0);
    }
    queue_close(&s->q);
    return NULL;
}

/* ---- janitor ------------------------------------------------------------------ */

static int heartbeat(struct worker *w, struct queue *q)
{
    struct fields p;
    struct llmsb_err err = {0};
    char slots[16], busy[16], done[24], pid[16], started[24], pooled[32], protocol[16];
    int idle = 0, total = pool_size(&w->rn.pool, &idle), rc;

    snprintf(slots, sizeof(slots), "%d", w->nslots);
    snprintf(busy, sizeof(busy), "%d", scheduler_busy(&w->sched));
    snprintf(done, sizeof(done), "%lld", (long long)atomic_load(&w->sched.done));
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    snprintf(started, sizeof(started), "%lld", (long long)w->started_wall_ms);
    snprintf(pooled, sizeof(pooled), "%d/%d", idle, total);
    snprintf(protocol, sizeof(protocol), "%d", LLMSB_PROTOCOL);
    fields_init(&p, 16);
    fields_adds(&p, "host", w->rn.id.host);
    fields_adds(&p, "pid", pid);
    fields_adds(&p, "slots", slots);
    fields_adds(&p, "busy", busy);
    fields_adds(&p, "done", done);
    fields_adds(&p, "version", LLMSB_VERSION);
    fields_adds(&p, "protocol", protocol);
    fields_adds(&p, "features", features_all());
    fields_adds(&p, "backend", w->rn.be.ops->name);
    fields_adds(&p, "state",
                atomic_load(&worker_stop)       ? "draining"
                : atomic_load(&w->sched.paused) ? "paused (engine not answering)"
                                                : "running");
    fields_adds(&p, "started_at", started);
    fields_adds(&p, "pool_idle_total", pooled);
    rc = queue_heartbeat(q, w->name, &p, w->cfg->heartbeat_ttl_ms, &err);
    fields_release(&p);
    return rc;
}

struct reap_ctx {
    struct worker *w;
    struct queue *q;
    char ids[REAP_MAX][BACKEND_ID_MAX];
    int n;
};

/* A container of this host is left behind when its process is gone: for a
 * worker of this queue, no heartbeat; for run/local, no such pid.  Workers
 * of other queues (another Redis or prefix on the same engine) are never
 * judged here: their heartbeats are not in our Redis.  Our own containers
 * are left behind when the pool does not know them (a create whose answer
 * the engine's crash swallowed) and they are older than any start. */
static void reap_one(void *ud, const struct container_info *ci)
{
    struct reap_ctx *c = ud;
    struct llmsb_err err = {0};
    long long pid;
    int dead = 0;

    if (c->n >= REAP_MAX)
        return;
    if (strcmp(ci->worker, c->w->name) == 0 && strcmp(ci->host, c->w->rn.id.host) == 0)
        dead = ci->created_s > 0 &&
               (clock_wall_ms() / 1000 - ci->created_s) * 1000 >
                   c->w->cfg->start_timeout_ms + WORKER_OWN_LEFTOVER_AGE_MS &&
               !pool_knows(&c->w->rn.pool, ci->id);
    else if (strcmp(ci->kind, "worker") == 0)
        /* older than two heartbeat lifetimes: a worker just started may
         * make pods before its first heartbeat */
        dead = strcmp(ci->queue, c->w->rn.id.queue) == 0 && ci->created_s > 0 &&
               (clock_wall_ms() / 1000 - ci->created_s) * 1000 > 2 * c->w->cfg->heartbeat_ttl_ms &&
               queue_worker_alive(c->q, ci->worker, &err) == 0;
    else if (parse_ll(ci->pid, 1, 1 << 30, &pid) == 0)
        dead = kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    if (dead)
        snprintf(c->ids[c->n++], sizeof(c->ids[0]), "%s", ci->id);
}

static void reap(struct worker *w, struct queue *q)
{
    struct reap_ctx *c = calloc(1, sizeof(*c));
    struct llmsb_err err = {0};
    char label[320];

    if (!c)
        return;
    c->w = w;
    c->q = q;
    /* a host's containers; in a cluster, every worker's pods (a dead
     * worker's pod had a host name of its own) */
    if (w->rn.be.ops->cluster_wide)
        snprintf(label, sizeof(label), "llmsb.kind=" RUNNER_KIND_WORKER);
    else
        snprintf(label, sizeof(label), "llmsb.host=%s", w->rn.id.host);
    if (w->rn.be.ops->list(&w->rn.be, label, reap_one, c, &err) != 0)
        log_warn("reaper: %s", err.msg);
    for (int i = 0; i < c->n; i++) {
        log_info("reaper: removing container %.12s left behind", c->ids[i]);
        if (w->rn.be.ops->remove(&w->rn.be, c->ids[i], &err) != 0)
            log_warn("reaper: %s", err.msg);
    }
    free(c);
}

static void *janitor_main(void *arg)
{
    struct worker *w = arg;
    struct sched_timer hb = {w->cfg->heartbeat_ttl_ms / HEARTBEAT_PER_TTL, 0};
    struct sched_timer maint = {WORKER_MAINTAIN_EVERY_MS, 0};
    struct sched_timer probe = {WORKER_ENGINE_PROBE_MS, 0};
    struct queue q;

    if (redis_connect(w, &q, 1, &w->janitor_stop, 0) != 0)
        return NULL;
    while (!atomic_load(&w->janitor_stop)) {
        int64_t now = clock_mono_ms();
        int rc = scheduler_tick(&w->sched, &q, now);

        if (rc == 0 && sched_timer_due(&hb, now))
            rc = heartbeat(w, &q);
        if (atomic_load(&w->sched.paused) && sched_timer_due(&probe, now) &&
            runner_engine_answers(&w->rn.be) && scheduler_resume(&w->sched))
            log_info("%s engine answers again; taking jobs", w->rn.be.ops->name);
        if (!atomic_load(&worker_stop) && !atomic_load(&w->sched.paused) &&
            sched_timer_due(&maint, now)) {
            pool_maintain(&w->rn.pool);
            session_expire(&w->rn.sessions, w->cfg);
            reap(w, &q);
        }
        if (rc != 0) {
            log_warn("janitor: redis unavailable; reconnecting");
            hb.next_ms = 0;
            redis_connect(w, &q, 0, &w->janitor_stop, JANITOR_RECONNECT_GIVEUP_MS);
        }
        clock_sleep_ms(WORKER_JANITOR_TICK_MS);
    }
    queue_close(&q);
    return NULL;
}

/* ---- lifecycle ---------------------------------------------------------------- */

/* A scrape's gauges, on the metrics server's thread. */
static void metrics_gauges(void *ud, struct metrics_gauges *g)
{
    struct worker *w = ud;

    g->slots = w->nslots;
    g->busy = scheduler_busy(&w->sched);
    g->paused = atomic_load(&w->sched.paused) != 0;
    g->draining = atomic_load(&worker_stop) != 0;
    g->pool_total = pool_size(&w->rn.pool, &g->pool_idle);
    g->sessions = session_count(&w->rn.sessions);
}

int worker_stop_ask(void)
{
    int was = 0;

    return !atomic_compare_exchange_strong(&worker_stop, &was, 1);
}

/* Runs fn on a connection of its own for control commands. */
static void with_control(struct worker *w, const char *consumer,
                         void (*fn)(struct worker *, struct queue *))
{
    struct queue ctl;
    struct llmsb_err err = {0};

    if (queue_open(&ctl, w->cfg->redis_url, w->cfg->redis_prefix, consumer,
                   WORKER_CONTROL_TIMEOUT_MS, &err) == 0)
        fn(w, &ctl);
    else
        log_warn("redis: %s", err.msg);
    queue_close(&ctl);
}

static void unblock_slots(struct worker *w, struct queue *ctl)
{
    struct llmsb_err err = {0};

    for (int i = 0; i < w->nslots; i++)
        if (w->slots[i].client_id > 0)
            queue_unblock(ctl, w->slots[i].client_id, &err);
}

static void drain(struct worker *w)
{
    int64_t deadline = clock_mono_ms() + w->cfg->drain_ms;

    atomic_store(&w->sched.draining, 1);
    log_info("draining: no new jobs; waiting up to %lld ms for %d running",
             (long long)w->cfg->drain_ms, scheduler_running(&w->sched));
    with_control(w, NULL, unblock_slots);
    while (scheduler_running(&w->sched) > 0 && clock_mono_ms() < deadline)
        clock_sleep_ms(WORKER_DRAIN_POLL_MS);
    scheduler_abort_all(&w->sched);
}

static void give_back_held(struct worker *w, struct queue *ctl)
{
    scheduler_give_back_held(&w->sched, ctl);
}

static void retire(struct worker *w, struct queue *ctl)
{
    struct llmsb_err err = {0};

    queue_heartbeat_delete(ctl, w->name, &err);
    queue_consumer_retire(ctl, &err);
}

/* The engine and Redis answer, before any thread starts: the runner
 * (engine, pool, this worker's identity) opened, the consumer group made. */
static int preflight(struct worker *w, const char *name, struct llmsb_err *err)
{
    char queue_label[24];
    struct runner_opts ro = {.kind = RUNNER_KIND_WORKER,
                             .worker_name = name,
                             .queue = queue_label,
                             .slots = w->nslots,
                             .keep_warm = 1,
                             .prestart = 1};
    struct queue probe;
    int rc;

    identity_queue_label(w->cfg->redis_url, w->cfg->redis_prefix, queue_label);
    if ((rc = runner_open(&w->rn, w->cfg, &ro, err)) != 0)
        return rc;
    w->name = w->rn.id.worker;
    rc = queue_open(&probe, w->cfg->redis_url, w->cfg->redis_prefix, w->name, 5000, err);
    if (rc == 0)
        rc = queue_group_ensure(&probe, err);
    queue_close(&probe);
    if (rc != 0) {
        llmsb_err_wrap(err, "is redis-server running at %s?", w->cfg->redis_url);
        runner_close(&w->rn, "the worker did not start");
    }
    return rc;
}

static int start_threads(struct worker *w, struct llmsb_err *err)
{
    int rc;

    for (int i = 0; i < w->nslots; i++) {
        struct slot *s = &w->slots[i];
        s->w = w;
        s->index = i;
        s->live_sink = (struct proto_chunk_sink){live_chunk, s, live_restart};
        if ((rc = backend_clone(&s->be, &w->rn.be, err)) != 0)
            return rc;
        if ((rc = pthread_create(&s->th, NULL, slot_main, s)) != 0)
            return llmsb_err_set(err, LLMSB_ERR_SYS, "worker: cannot start slot %d: %s", i,
                                 strerror(rc));
        s->started = 1;
    }
    if ((rc = pthread_create(&w->janitor, NULL, janitor_main, w)) != 0)
        return llmsb_err_set(err, LLMSB_ERR_SYS, "worker: cannot start the janitor: %s",
                             strerror(rc));
    return 0;
}

int worker_main(const struct config *cfg, int slots, const char *name)
{
    static struct worker w;
    struct sched_config sc;
    struct llmsb_err err = {0};
    int rc = 0, janitor = 0;

    memset(&w, 0, sizeof(w));
    w.cfg = cfg;
    w.nslots = slots;
    w.started_wall_ms = clock_wall_ms();
    atomic_init(&w.janitor_stop, 0);
    metrics_init(&w.metrics);
    if ((rc = preflight(&w, name, &err)) != 0) {
        log_error("%s", err.msg);
        return rc;
    }
    sc = (struct sched_config){cfg->lease_ms, cfg->block_ms, w.name};
    if ((rc = scheduler_init(&w.sched, slots, &sc, &err)) != 0) {
        log_error("%s", err.msg);
        runner_close(&w.rn, "the worker did not start");
        return rc;
    }
    {
        struct session_store st = {store_claim, store_drop, store_lose, store_earlier, &w, w.name};
        pthread_mutex_init(&w.store_mu, NULL);
        session_store_set(&w.rn.sessions, &st);
    }
    pthread_mutex_init(&w.gate_mu, NULL);
    if ((rc = clock_cond_init(&w.gate_cv)) != 0) {
        log_error("worker: its slots' gate (a condition variable): %s", strerror(rc));
        rc = LLMSB_ERR_SYS;
        goto out;
    }
    if (!(w.slots = calloc((size_t)slots, sizeof(*w.slots)))) {
        rc = LLMSB_ERR_NOMEM;
        goto out;
    }
    if (cfg->metrics_addr[0] &&
        (rc = metrics_start(&w.metrics, cfg->metrics_addr, cfg->redis_url, cfg->redis_prefix,
                            metrics_gauges, &w, &err)) != 0) {
        log_error("%s", err.msg);
        goto out;
    }
    log_info("worker %s: %d slots, %s %s, redis %s prefix %s", w.name, slots, w.rn.be.ops->name,
             w.rn.engine_version, cfg->redis_url, cfg->redis_prefix);
    if ((rc = start_threads(&w, &err)) != 0) {
        log_error("%s", err.msg);
        atomic_store(&worker_stop, 1);
    }
    janitor = rc == 0;
    while (!atomic_load(&worker_stop))
        clock_sleep_ms(WORKER_DRAIN_POLL_MS);
    drain(&w);
out:
    for (int i = 0; w.slots && i < slots; i++) {
        if (w.slots[i].started)
            pthread_join(w.slots[i].th, NULL);
        backend_close(&w.slots[i].be);
    }
    atomic_store(&w.janitor_stop, 1);
    if (janitor)
        pthread_join(w.janitor, NULL);
    metrics_release(&w.metrics); /* before what its gauges read goes */
    /* before the jobs are given back and the session store goes: the
     * sessions' ends are recorded in Redis (runner_close finds none left) */
    session_end_all(&w.rn.sessions, "the worker that held it stopped");
    with_control(&w, w.name, give_back_held);
    with_control(&w, w.name, retire);
    session_store_set(&w.rn.sessions, NULL);
    if (w.store_open)
        queue_close(&w.store_q);
    runner_close(&w.rn, "the worker that held it stopped");
    log_info("worker %s stopped after %lld job(s)", w.name, (long long)atomic_load(&w.sched.done));
    free(w.slots);
    scheduler_release(&w.sched);
    return rc;
}
