/* entry.c - one entry on a slot: a slot's thread takes an entry from the
 * scheduler only when it is free, marks the job running, admits it, runs
 * one attempt through the runner and carries out the scheduler's decision
 * (the result and its acknowledgement, a retry, a hand-over, a dead letter). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/features.h"
#include "exec/exec.h"
#include "worker_int.h"

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
    if (rc >= 0 && j && j->live) /* after the result: a follower reads it at the end */
        live_end(s, r->id, status_name(r->r.status), ttl_s);
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

    if (scheduler_dead_fields(&s->w->sched, e, reason, attempts, &dead) != 0 ||
        (!fields_get(&dead, "id", NULL) && fields_adds(&dead, "id", r->id) != 0))
        log_error("entry %s: out of memory building its dead letter", e->id);
    job_result_set_status(r, STATUS_INTERNAL_ERROR, "%s", reason);
    finish(s, e, j, r, ttl_s, &dead);
    fields_release(&dead);
}

static int64_t entry_ms(const char *id)
{
    long long v = 0;
    char ms[24];
    const char *slash = strchr(id, '/'); /* a lane's entry: "high/1700000000000-0" */
    if (slash)
        id = slash + 1;
    snprintf(ms, sizeof(ms), "%.*s", (int)strcspn(id, "-"), id);
    return parse_ll(ms, 0, (long long)1 << 62, &v) == 0 ? v : 0;
}

/* A job not due yet (not_before, delay_ms; checked valid by the parser)
 * goes to the delayed set until it is: 1 deferred, 0 run it now (due, or
 * more than JOB_DUE_EARLY_MS early could not be kept: it runs early
 * rather than never). */
static int defer_early(struct slot *s, const struct queue_entry *e, const struct job_result *r)
{
    struct llmsb_err err = {0};
    struct fields kept;
    int64_t due = 0, now = clock_wall_ms();
    char shown[160];

    if (job_due_ms(&e->f, entry_ms(e->id), &due, &err) != 0 || due <= now + JOB_DUE_EARLY_MS)
        return 0;
    llmsb_escape(shown, sizeof(shown), r->id, strlen(r->id));
    if (job_due_fields(&e->f, r->id, due, &kept) != 0) {
        log_error("job=%s: out of memory deferring it; it runs now", shown);
        return 0;
    }
    if (scheduler_defer(&s->w->sched, &s->q, e, r->id, due, &kept) == 0)
        log_info("job=%s: not due for %lld ms (not_before %lld); deferred", shown,
                 (long long)(due - now), (long long)due);
    fields_release(&kept);
    return 1;
}

/* The job's "running" record, for this delivery: scheduler_mark_running's
 * answer (1 marked, 3 marked with a cancel request waiting, 0 a final
 * result exists already, 2 another entry of the id runs it); 1 when Redis
 * failed or memory ran out (logged: the job runs, at least once). */
static int mark_running(struct slot *s, const struct queue_entry *e, const struct job *j,
                        const struct job_result *r)
{
    struct fields p;
    char attempts[16], started[24], queued[24];
    const char **ids = NULL, **metas = NULL;
    struct queue_copies c;
    int rc = 1;

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
        log_warn("job=%s: cannot mark running: out of memory", j->id);
    else
        rc = scheduler_mark_running(&s->w->sched, &s->q, e, j->id, &p, &c, j->result_ttl_s);
    free(ids);
    free(metas);
    fields_release(&p);
    return rc;
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
    int cancel = mark == 3; /* marked, and a cancel request waits */

    if (cancel)
        mark = 1;

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
        if (scheduler_hand_over(&s->w->sched, &s->q, e, to, 1, &err) != 0)
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
        if (scheduler_hand_over(&s->w->sched, &s->q, e, c.best, e->deliveries, &err) == 0)
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
        scheduler_ack(&s->w->sched, &s->q, e);
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
    } else if (defer_early(s, e, &r)) {
        /* in the delayed set now; the mover brings it back when due */
    } else {
        live_begin(s, &j, e->deliveries);
        run_entry(s, e, &j, &r);
    }
    scheduler_end(&s->w->sched, s->index);
    job_result_release(&r);
    job_release(&j);
}

void *slot_main(void *arg)
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
