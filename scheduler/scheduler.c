/* scheduler.c - the worker's scheduler (see scheduler.h): the in-flight
 * table of its slots, the timers of the janitor thread, and the writes
 * that carry out a decision.
 *
 * A slot asks the stream for one job only when it is free, so a worker
 * never holds more deliveries than it has slots, plus what the reclaim
 * timer took for free slots (held here until a slot picks it up). */
#include "scheduler.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int scheduler_init(struct scheduler *s, int nslots, const struct sched_config *cfg,
                   struct llmsb_err *err)
{
    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    s->nslots = nslots;
    if (sched_pick_init(&s->pick, cfg->priority_weights, err) != 0)
        return err->code;
    if (!(s->slots = calloc((size_t)nslots, sizeof(*s->slots))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "scheduler: out of memory");
    for (int i = 0; i < nslots; i++)
        atomic_init(&s->slots[i].cancel, SCHED_GO);
    atomic_init(&s->draining, 0);
    atomic_init(&s->paused, 0);
    atomic_init(&s->alone, 0);
    atomic_init(&s->done, 0);
    pthread_mutex_init(&s->mu, NULL);
    s->renew.every_ms = cfg->lease_ms / 3;
    s->reclaim.every_ms = SCHED_RECLAIM_EVERY_MS;
    return 0;
}

void scheduler_release(struct scheduler *s)
{
    queue_entries_free(s->held, s->nheld);
    s->held = NULL;
    s->nheld = 0;
    free(s->slots);
    s->slots = NULL;
    pthread_mutex_destroy(&s->mu);
}

/* ---- slots ------------------------------------------------------------------ */

/* The class of an entry id's lane ("high/1-0"; no lane: the default,
 * normal). */
static enum lane_class entry_class(const char *id)
{
    const char *slash = strchr(id, '/');
    struct lane l;

    if (slash && lane_parse(id, (size_t)(slash - id), &l) == 0)
        return l.cls;
    return LANE_NORMAL;
}

/* The held entry to serve first: the highest class, the oldest held of
 * it (reclaim holds a pass's entries in order). */
static int take_held(struct scheduler *s, struct queue_entry **out)
{
    int got = 0;

    pthread_mutex_lock(&s->mu);
    if (s->nheld > 0 && (*out = malloc(sizeof(**out))) != NULL) {
        size_t best = 0;
        for (size_t i = 1; i < s->nheld; i++)
            if (entry_class(s->held[i].id) < entry_class(s->held[best].id))
                best = i;
        **out = s->held[best];
        memmove(s->held + best, s->held + best + 1, (s->nheld - best - 1) * sizeof(*s->held));
        s->nheld--;
        got = 1;
    }
    pthread_mutex_unlock(&s->mu);
    return got;
}

/* Entries a blocking read over several lanes brought past the first go
 * back for any worker at once, their delivery to us uncounted. */
static void give_back_extra(struct scheduler *s, struct queue *q, struct queue_entry *e, size_t n)
{
    struct llmsb_err err = {0};

    for (size_t i = 0; i < n; i++)
        if (queue_release(q, e[i].id, s->cfg.lease_ms, e[i].deliveries - 1, &err) != 0)
            log_warn("entry %s: give back failed (%s); its lease will expire instead", e[i].id,
                     err.msg);
}

/* One read in the order the lane pick gives; the first entry into *e. */
static int read_lanes(struct scheduler *s, struct queue *q, const struct lane *lanes, size_t nl,
                      struct queue_entry **e, struct llmsb_err *err)
{
    size_t *order = malloc(nl * sizeof(*order)), n = 0, pos = nl;
    struct queue_entry *got = NULL;
    int rc;

    if (!order)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "scheduler: out of memory");
    pthread_mutex_lock(&s->mu);
    sched_pick_order(&s->pick, lanes, nl, order);
    pthread_mutex_unlock(&s->mu);
    rc = queue_read_lanes(q, lanes, order, nl, (int)s->cfg.block_ms, &got, &n, &pos, err);
    if (rc == 0 && n > 0) {
        pthread_mutex_lock(&s->mu);
        sched_pick_done(&s->pick, lanes, order, nl, pos);
        pthread_mutex_unlock(&s->mu);
        give_back_extra(s, q, got + 1, n - 1);
        for (size_t i = 1; i < n; i++)
            fields_release(&got[i].f);
        *e = got;
        got = NULL;
    }
    free(got);
    free(order);
    return rc;
}

int scheduler_next(struct scheduler *s, struct queue *q, struct queue_entry **e,
                   struct llmsb_err *err)
{
    const struct lane *lanes;
    size_t n = 0, nl = 0;
    int rc;

    *e = NULL;
    if (atomic_load(&s->paused))
        return 0;
    if (take_held(s, e))
        return 0;
    if ((rc = queue_lanes_list(q, &lanes, &nl, err)) != 0)
        return rc;
    if (nl > 1)
        return read_lanes(s, q, lanes, nl, e, err);
    if ((rc = queue_read(q, 1, (int)s->cfg.block_ms, e, &n, err)) != 0)
        return rc;
    if (n == 0) {
        queue_entries_free(*e, n);
        *e = NULL;
    }
    return 0;
}

void scheduler_begin(struct scheduler *s, int slot, const char *entry_id, const char *job_id)
{
    struct sched_slot *sl = &s->slots[slot];

    pthread_mutex_lock(&s->mu);
    sl->busy = 1;
    snprintf(sl->entry_id, sizeof(sl->entry_id), "%s", entry_id);
    snprintf(sl->job_id, sizeof(sl->job_id), "%s", job_id ? job_id : "");
    atomic_store(&sl->cancel, SCHED_GO);
    pthread_mutex_unlock(&s->mu);
}

void scheduler_end(struct scheduler *s, int slot)
{
    struct sched_slot *sl = &s->slots[slot];

    pthread_mutex_lock(&s->mu);
    sl->busy = 0;
    sl->entry_id[0] = sl->job_id[0] = '\0';
    atomic_store(&sl->cancel, SCHED_GO);
    pthread_mutex_unlock(&s->mu);
}

atomic_int *scheduler_cancel_flag(struct scheduler *s, int slot)
{
    return &s->slots[slot].cancel;
}

static int busy_locked(const struct scheduler *s)
{
    int b = (int)s->nheld;
    for (int i = 0; i < s->nslots; i++)
        b += s->slots[i].busy;
    return b;
}

int scheduler_busy(struct scheduler *s)
{
    int b;
    pthread_mutex_lock(&s->mu);
    b = busy_locked(s);
    pthread_mutex_unlock(&s->mu);
    return b;
}

int scheduler_running(struct scheduler *s)
{
    int b = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nslots; i++)
        b += s->slots[i].busy;
    pthread_mutex_unlock(&s->mu);
    return b;
}

void scheduler_abort_all(struct scheduler *s)
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nslots; i++)
        if (s->slots[i].busy) {
            log_warn("job=%s: still running at the drain deadline; giving it back",
                     s->slots[i].job_id);
            atomic_store(&s->slots[i].cancel, SCHED_CANCEL_ABORT);
        }
    pthread_mutex_unlock(&s->mu);
}

/* ---- timers ----------------------------------------------------------------- */

struct inflight {
    char entry[SCHED_RENEW_BATCH][QUEUE_ENTRY_ID_MAX];
    char job[SCHED_RENEW_BATCH][SCHED_JOB_ID_MAX];
    int slot[SCHED_RENEW_BATCH];
    int n;
};

static void snapshot(struct scheduler *s, struct inflight *in)
{
    in->n = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nslots && in->n < SCHED_RENEW_BATCH; i++)
        if (s->slots[i].busy) {
            snprintf(in->entry[in->n], QUEUE_ENTRY_ID_MAX, "%s", s->slots[i].entry_id);
            snprintf(in->job[in->n], SCHED_JOB_ID_MAX, "%s", s->slots[i].job_id);
            in->slot[in->n++] = i;
        }
    pthread_mutex_unlock(&s->mu);
}

/* A renewal found an entry owned by another worker now: stop it here. */
static void lease_lost(void *ud, const char *id)
{
    struct scheduler *s = ud;

    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nslots; i++)
        if (s->slots[i].busy && strcmp(s->slots[i].entry_id, id) == 0) {
            log_warn("entry %s now belongs to another worker; aborting it here", id);
            atomic_store(&s->slots[i].cancel, SCHED_CANCEL_ABORT);
        }
    pthread_mutex_unlock(&s->mu);
}

static int poll_cancels(struct scheduler *s, struct queue *q, const struct inflight *in)
{
    struct llmsb_err err = {0};

    for (int i = 0; i < in->n; i++) {
        int c = in->job[i][0] ? queue_cancel_requested(q, in->job[i], &err) : 0;
        atomic_int *flag = &s->slots[in->slot[i]].cancel;
        int expect = SCHED_GO;
        if (c < 0)
            return c;
        if (c == 1 && atomic_compare_exchange_strong(flag, &expect, SCHED_CANCEL_USER))
            log_info("job=%s: cancel requested", in->job[i]);
    }
    return 0;
}

static int renew_leases(struct scheduler *s, struct queue *q, const struct inflight *in)
{
    char *ids[SCHED_RENEW_BATCH];
    struct llmsb_err err = {0};

    for (int i = 0; i < in->n; i++)
        ids[i] = (char *)in->entry[i];
    return in->n ? queue_renew(q, ids, (size_t)in->n, lease_lost, s, &err) : 0;
}

static int running_here(void *ud, const char *id)
{
    struct scheduler *s = ud;
    int found = 0;

    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nslots && !found; i++)
        found = s->slots[i].busy && strcmp(s->slots[i].entry_id, id) == 0;
    for (size_t i = 0; i < s->nheld && !found; i++)
        found = strcmp(s->held[i].id, id) == 0;
    pthread_mutex_unlock(&s->mu);
    return found;
}

/* Keeps reclaimed entries for the slots (consumes e). */
static void hold(struct scheduler *s, struct queue_entry *e, size_t n)
{
    struct queue_entry *nh;

    pthread_mutex_lock(&s->mu);
    nh = realloc(s->held, (s->nheld + n) * sizeof(*nh));
    if (nh) {
        s->held = nh;
        memcpy(s->held + s->nheld, e, n * sizeof(*e));
        s->nheld += n;
        free(e);
        e = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    if (e)
        queue_entries_free(e, n); /* cannot hold them: their leases will expire */
}

static int budget(struct scheduler *s)
{
    int b;
    if (atomic_load(&s->alone))
        return 0;
    pthread_mutex_lock(&s->mu);
    b = scheduler_claim_budget(s->nslots, busy_locked(s), 0);
    pthread_mutex_unlock(&s->mu);
    return b;
}

int64_t scheduler_own_idle_ms(int64_t block_ms)
{
    return block_ms * 3 > SCHED_MIN_OWN_IDLE_MS ? block_ms * 3 : SCHED_MIN_OWN_IDLE_MS;
}

/* Own deliveries that are not running here (a slot died between read and
 * start), dead workers' jobs, then any entry whose lease expired. */
static int reclaim(struct scheduler *s, struct queue *q)
{
    struct llmsb_err err = {0};
    struct queue_entry *e;
    size_t n;
    int64_t own_idle = scheduler_own_idle_ms(s->cfg.block_ms);
    int free_slots = budget(s);

    if (free_slots <= 0)
        return 0;
    if (queue_recover_own(q, own_idle, free_slots, running_here, s, &e, &n, &err) != 0)
        return err.code;
    if (n) {
        log_info("recovered %zu job(s) delivered to this worker but not running", n);
        hold(s, e, n);
    } else {
        free(e);
    }
    if (queue_free_dead_consumers(q, s->cfg.lease_ms, &err) < 0)
        return err.code;
    if ((free_slots = budget(s)) <= 0)
        return 0;
    if (queue_claim_stale(q, s->cfg.lease_ms, free_slots, &e, &n, &err) != 0)
        return err.code;
    if (n) {
        size_t retries = 0;
        for (size_t i = 0; i < n; i++)
            retries += queue_is_retry_consumer(q, e[i].owner);
        if (retries)
            log_info("took %zu job(s) due for another attempt (retry back-off over, or given "
                     "back)",
                     retries);
        if (n > retries)
            log_info("reclaimed %zu job(s) whose lease expired", n - retries);
        hold(s, e, n);
    } else {
        free(e);
    }
    return 0;
}

int scheduler_tick(struct scheduler *s, struct queue *q, int64_t now)
{
    struct inflight *in = malloc(sizeof(*in));
    int rc;

    if (!in)
        return LLMSB_ERR_NOMEM;
    snapshot(s, in);
    rc = poll_cancels(s, q, in);
    if (rc == 0 && sched_timer_due(&s->renew, now))
        rc = renew_leases(s, q, in);
    if (rc == 0 && !atomic_load(&s->draining) && !atomic_load(&s->paused) &&
        sched_timer_due(&s->reclaim, now))
        rc = reclaim(s, q);
    free(in);
    return rc;
}

void scheduler_give_back_held(struct scheduler *s, struct queue *q)
{
    struct llmsb_err err = {0};

    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nheld; i++)
        if (queue_release(q, s->held[i].id, s->cfg.lease_ms, s->held[i].deliveries - 1, &err) != 0)
            log_warn("entry %s: give back failed (%s); its lease will expire instead",
                     s->held[i].id, err.msg);
    queue_entries_free(s->held, s->nheld);
    s->held = NULL;
    s->nheld = 0;
    pthread_mutex_unlock(&s->mu);
}

void scheduler_alone_begin(struct scheduler *s, struct queue *q)
{
    atomic_fetch_add(&s->alone, 1);
    scheduler_give_back_held(s, q);
}

void scheduler_alone_end(struct scheduler *s)
{
    atomic_fetch_sub(&s->alone, 1);
}

int scheduler_pause(struct scheduler *s, struct queue *q)
{
    int was = 0;

    if (!atomic_compare_exchange_strong(&s->paused, &was, 1))
        return 0;
    scheduler_give_back_held(s, q);
    return 1;
}

int scheduler_resume(struct scheduler *s)
{
    int was = 1;
    return atomic_compare_exchange_strong(&s->paused, &was, 0);
}

/* ---- acting on decisions ------------------------------------------------------ */

int scheduler_mark_running(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                           const char *job_id, const struct fields *running,
                           const struct queue_copies *c, long long ttl_s)
{
    struct llmsb_err err = {0};
    int rc;

    (void)s;
    rc = queue_mark_running(q, job_id, e->id, running, c, ttl_s, &err);
    if (rc < 0)
        log_warn("job=%s: cannot mark running: %s", job_id, err.msg);
    return rc < 0 ? 1 : rc;
}

void scheduler_ack(struct scheduler *s, struct queue *q, const struct queue_entry *e)
{
    struct llmsb_err err = {0};

    (void)s;
    queue_ack(q, e->id, &err);
}

int scheduler_hand_over(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                        const char *to, long long count, struct llmsb_err *err)
{
    return queue_hand_over(q, e->id, to, scheduler_own_idle_ms(s->cfg.block_ms), count, err);
}

int scheduler_finish(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                     const char *job_id, const char *status, const struct fields *result,
                     const struct fields *dead, const struct queue_copies *c, long long ttl_s)
{
    struct llmsb_err err = {0};
    int64_t start = clock_mono_ms();
    char shown[160];
    int rc;

    llmsb_escape(shown, sizeof(shown), job_id, strlen(job_id));
    for (;;) {
        rc = queue_finish(q, e->id, job_id, status, result, dead, c, ttl_s, &err);
        if (rc >= 0)
            break;
        if (!queue_err_retryable(&err) || clock_mono_ms() - start > SCHED_FINISH_GIVEUP_MS) {
            log_error("job=%s: cannot write the result: %s", shown, err.msg);
            return rc;
        }
        log_warn("job=%s: result write failed (%s); retrying", shown, err.msg);
        if (queue_connect_retry(q, NULL, NULL, NULL, 0, 0, NULL, SCHED_FINISH_GIVEUP_MS, &err) != 0)
            return err.code;
    }
    atomic_fetch_add(&s->done, 1);
    return rc;
}

int scheduler_dead_fields(const struct scheduler *s, const struct queue_entry *e,
                          const char *reason, char attempts[24], struct fields *out)
{
    int rc = 0;

    fields_init(out, QUEUE_MAX_FIELDS + 3);
    for (size_t i = 0; i < e->f.n && rc == 0; i++)
        rc = fields_add_copy(out, e->f.v[i].name, e->f.v[i].name_len, e->f.v[i].value,
                             e->f.v[i].len);
    snprintf(attempts, 24, "%lld", e->deliveries);
    rc |= fields_adds(out, "reason", reason);
    rc |= fields_adds(out, "attempts", attempts);
    rc |= fields_adds(out, "last_worker", s->cfg.worker);
    return rc ? LLMSB_ERR_NOMEM : 0;
}

void scheduler_give_back(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                         int64_t delay_ms, int counted)
{
    struct llmsb_err err = {0};
    int64_t idle = s->cfg.lease_ms - delay_ms;

    if (idle < 0)
        idle = 0;
    /* parked with an idle time that reaches the lease after delay_ms */
    if (queue_release(q, e->id, idle, counted ? -1 : e->deliveries - 1, &err) != 0)
        log_warn("entry %s: give back failed (%s); the lease will expire instead", e->id, err.msg);
}

int scheduler_defer(struct scheduler *s, struct queue *q, const struct queue_entry *e,
                    const char *job_id, int64_t due_ms, const struct fields *fields)
{
    struct llmsb_err err = {0};
    int rc;

    (void)s;
    if ((rc = queue_defer(q, e->id, job_id, due_ms, fields, &err)) != 0)
        log_warn("job=%s: cannot defer it: %s; its lease brings it back", job_id, err.msg);
    return rc;
}
