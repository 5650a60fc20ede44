/* worker.c - slots, janitor and drain (see worker.h).
 *
 * Each slot is a thread with its own Redis connection and engine handle;
 * it asks the stream for one job only when it is free, so a worker never
 * holds more deliveries than it has slots (plus what the janitor claimed
 * for free slots).  The janitor thread, on its own connection, keeps the
 * heartbeat, renews the leases of running jobs, turns cancel keys into
 * cancel flags, reclaims jobs of dead workers and stale leases, keeps the
 * pool warm and removes containers that dead processes left behind. */
#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/jobfile.h"
#include "queue/queue.h"
#include "security/security.h"

volatile sig_atomic_t worker_stop;

#define RECONNECT_MAX_MS 2000
#define JANITOR_TICK_MS 250
#define FINISH_GIVEUP_MS 120000

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- executing one job ------------------------------------------------------ */

void worker_pool_config(const struct config *cfg, int slots, struct pool_config *pc)
{
    memset(pc, 0, sizeof(*pc));
    pc->min_idle = (int)cfg->pool_min_idle;
    pc->max_size = cfg->pool_max_size > 0 ? (int)cfg->pool_max_size : slots + 1;
    pc->max_uses = (int)cfg->pool_max_uses;
    pc->max_age_ms = cfg->pool_max_age_ms;
    pc->idle_timeout_ms = cfg->pool_idle_timeout_ms;
    pc->wait_ms = cfg->pool_wait_ms;
    pc->on_exhausted = strcmp(cfg->pool_on_exhausted, "fail_fast") == 0   ? POOL_FAIL_FAST
                       : strcmp(cfg->pool_on_exhausted, "temporary") == 0 ? POOL_TEMPORARY
                                                                           : POOL_WAIT;
    pc->start_timeout_ms = cfg->start_timeout_ms;
}

/* Images known to exist, so the hot path asks the engine once a minute per
 * image rather than once per job. */
#define IMAGE_CACHE 32
#define IMAGE_CACHE_MS 60000
static pthread_mutex_t image_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char name[256];
    int64_t until_ms;
} image_seen[IMAGE_CACHE];

/* 1 present, 0 absent, negative on error (like ops->image_exists). */
static int image_present(struct backend *be, const char *image, struct llmsb_err *err)
{
    int64_t now = clock_mono_ms();
    int rc, slot = 0;

    pthread_mutex_lock(&image_mu);
    for (int i = 0; i < IMAGE_CACHE; i++) {
        if (strcmp(image_seen[i].name, image) == 0 && image_seen[i].until_ms > now) {
            pthread_mutex_unlock(&image_mu);
            return 1;
        }
        if (image_seen[i].until_ms < image_seen[slot].until_ms)
            slot = i;
    }
    pthread_mutex_unlock(&image_mu);
    if ((rc = be->ops->image_exists(be, image, err)) == 1) {
        pthread_mutex_lock(&image_mu);
        snprintf(image_seen[slot].name, sizeof(image_seen[0].name), "%s", image);
        image_seen[slot].until_ms = now + IMAGE_CACHE_MS;
        pthread_mutex_unlock(&image_mu);
    }
    return rc;
}

/* Scans before anything runs. Returns 0 to go on, 1 when r is final
 * (blocked, or invalid when the job's own policy does not compile). */
static int check_security(const struct config *cfg, const struct job *j, struct job_result *r,
                          struct llmsb_err *err)
{
    struct sec_result *sr = calloc(1, sizeof(*sr));
    int rc = 0;

    if (!sr)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "security: out of memory");
    if (job_scan(cfg, j, sr, err) != 0) {
        /* a job's bad inline policy is its own fault; scanning limits hit
         * by hostile code block it rather than let it through */
        job_result_set_status(r, err->code == LLMSB_ERR_LIMIT ? "blocked" : "invalid", "%s",
                              err->msg);
        rc = 1;
    } else if (sr->blocked) {
        job_result_set_status(r, "blocked", "the security policy refused this code (see "
                                            "violations); nothing ran");
        rc = 1;
    }
    if (sr->n)
        r->violations = sec_result_json(sr);
    free(sr);
    return rc;
}

int worker_execute(struct pool *pool, struct backend *be, const struct config *cfg,
                   const struct job *j, volatile int *cancel, struct job_result *r,
                   struct llmsb_err *err)
{
    struct container_spec spec;
    struct pool_lease lease;
    struct proto_job pj;
    char image[256];
    int rc;

    if (j->image)
        snprintf(image, sizeof(image), "%s", j->image);
    else
        config_image(cfg, j->lang, image, sizeof(image));
    snprintf(r->image, sizeof(r->image), "%s", image);
    snprintf(r->backend, sizeof(r->backend), "%s", be->ops->name);
    if (check_security(cfg, j, r, err) != 0)
        return WORK_DONE;
    if (j->nlibraries && !cfg->libraries_enabled) {
        job_result_set_status(r, "invalid", "libraries: installs are turned off on this worker "
                                            "(libraries.enabled: false)");
        return WORK_DONE;
    }
    /* libraries baked into the configured image (pool.preinstall) need no
     * install; a job that names another image installs its own */
    int install = j->nlibraries &&
                  (j->image || !config_preinstalled(cfg, j->lang, j->libraries, j->nlibraries));
    if (job_to_proto(j, &pj, err) != 0 || (install && job_add_install(j, cfg, &pj, err) != 0)) {
        proto_job_release(&pj);
        job_result_set_status(r, "invalid", "%s", err->msg);
        return WORK_DONE;
    }
    if ((rc = image_present(be, image, err)) <= 0) {
        proto_job_release(&pj);
        return rc < 0 ? rc : llmsb_err_set(err, LLMSB_ERR_NOTFOUND,
                                            "image \"%s\" is missing on this worker's engine "
                                            "(llm-sandbox images build %s)", image, j->lang->name);
    }
    exec_spec_for_job(&spec, cfg, j, image);
    if (install && !j->network && strcmp(cfg->libraries_network, "none") != 0) {
        /* the install step gets a network; the agent pauses after it and the
         * container is taken off the network before the program runs */
        spec.network = 1;
        spec.network_name = strcmp(cfg->libraries_network, "egress") == 0
                                ? EGRESS_NETWORK : cfg->libraries_network;
        pj.install_pause = 1;
    }
    if (spec.network && strcmp(spec.network_name, EGRESS_NETWORK) == 0 &&
        (rc = backend_egress_ensure(be, err)) != 0) {
        proto_job_release(&pj);
        return rc;
    }
    if ((rc = pool_acquire(pool, &spec, &lease, err)) != 0) {
        proto_job_release(&pj);
        return rc;
    }
    lease.sb->cancel = cancel;
    r->started_at = clock_wall_ms();
    rc = sandbox_run(lease.sb, &pj, exec_backstop_ms(cfg, j), &r->r, err);
    r->finished_at = clock_wall_ms();
    proto_job_release(&pj);
    if (rc == LLMSB_ERR_INTERRUPTED && cancel && *cancel == 1) {
        pool_put(pool, &lease, 0);
        job_result_set_status(r, "cancelled", "cancelled while running");
        return WORK_CANCELLED;
    }
    if (rc == LLMSB_ERR_INTERRUPTED) {
        pool_put(pool, &lease, 0);
        return WORK_ABORTED;
    }
    if (rc != 0) {
        if (lease.sb->agent_log.len) {
            char shown[200];
            llmsb_escape(shown, sizeof(shown), lease.sb->agent_log.data, lease.sb->agent_log.len);
            log_warn("job=%s: agent log: %s", j->id ? j->id : "-", shown);
        }
        pool_put(pool, &lease, 0);
        return rc;
    }
    /* a container that installed libraries goes with its job */
    pool_put(pool, &lease, lease.sb->healthy && !install);
    job_result_check(r, j);
    if (job_result_artifacts(r) != 0)
        log_warn("job=%s: artifacts could not be encoded", j->id ? j->id : "-");
    return WORK_DONE;
}

int worker_execute_once(struct backend *be, const struct config *cfg, const struct job *j,
                        struct job_result *r, struct llmsb_err *err)
{
    struct pool_config pc;
    struct pool pool;
    int rc;

    worker_pool_config(cfg, 1, &pc);
    pc.min_idle = 0;
    pc.max_size = 1;
    pool_init(&pool, be, &pc);
    rc = worker_execute(&pool, be, cfg, j, NULL, r, err);
    snprintf(r->worker, sizeof(r->worker), "%s", exec_worker_name());
    pool_release_all(&pool);
    if (rc == WORK_ABORTED)
        return llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted; container removed");
    return rc < 0 ? rc : 0;
}

cJSON *worker_result_json(const struct job_result *r)
{
    struct job_field f[JOB_RESULT_MAX_FIELDS];
    char nums[16][32];
    size_t n = job_result_fields(r, nums, f, JOB_RESULT_MAX_FIELDS);
    return job_result_fields_json(f, n);
}

/* ---- the Redis worker ---------------------------------------------------------- */

struct worker;

struct slot {
    struct worker *w;
    int index;
    pthread_t th;
    struct queue q;
    long long client_id;
    struct backend be;
    volatile int cancel;
    int busy;                   /* under w->mu */
    char entry_id[64];
    char job_id[128];
};

struct worker {
    const struct config *cfg;
    char name[160];
    char host[256];
    int nslots;
    struct slot *slots;
    struct pool pool;
    struct backend be;
    pthread_mutex_t mu;
    struct queue_entry *local;  /* claimed by the janitor, waiting for a slot */
    size_t nlocal;
    long long done;
    volatile int janitor_stop;
    pthread_t janitor;
    int64_t started_wall_ms;
};

/* Connects (again) with back-off until it works or the worker stops
 * (stop_ok = 0: keep trying even while draining, for final writes). */
static int connect_retry(struct worker *w, struct queue *q, int fresh, int stop_ok,
                         int64_t giveup_ms)
{
    struct llmsb_err err = {0};
    int64_t backoff = 100, start = clock_mono_ms();

    for (;;) {
        int rc = fresh ? queue_open(q, w->cfg->redis_url, w->cfg->redis_prefix, w->name,
                                    (int)w->cfg->block_ms + 3000, &err)
                       : queue_reconnect(q, &err);
        if (rc == 0 && queue_group_ensure(q, &err) == 0)
            return 0;
        fresh = 0;
        if ((stop_ok && worker_stop) || (giveup_ms && clock_mono_ms() - start > giveup_ms))
            return -1;
        log_warn("redis: %s; retrying in %lld ms", err.msg, (long long)backoff);
        sleep_ms(backoff);
        backoff = backoff * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : backoff * 2;
    }
}

static void set_inflight(struct slot *s, const char *entry_id, const char *job_id)
{
    pthread_mutex_lock(&s->w->mu);
    s->busy = entry_id != NULL;
    snprintf(s->entry_id, sizeof(s->entry_id), "%s", entry_id ? entry_id : "");
    snprintf(s->job_id, sizeof(s->job_id), "%s", job_id ? job_id : "");
    if (!entry_id)
        s->cancel = 0;
    pthread_mutex_unlock(&s->w->mu);
}

static int take_local(struct worker *w, struct queue_entry **out)
{
    int got = 0;
    pthread_mutex_lock(&w->mu);
    if (w->nlocal > 0 && (*out = malloc(sizeof(**out))) != NULL) {
        **out = w->local[--w->nlocal];
        got = 1;
    }
    pthread_mutex_unlock(&w->mu);
    return got;
}

/* Writes the final result, retrying through Redis outages: a result is
 * never dropped while there is hope; if we give up, the entry stays
 * pending and is run again elsewhere (at-least-once). */
static void finish(struct slot *s, const struct queue_entry *e, struct job_result *r,
                   const struct queue_pairs *dead)
{
    struct job_field f[JOB_RESULT_MAX_FIELDS];
    struct queue_pairs pairs = {.n = 0};
    char nums[16][32];
    size_t n = job_result_fields(r, nums, f, JOB_RESULT_MAX_FIELDS);
    struct llmsb_err err = {0};
    int64_t start = clock_mono_ms();
    int rc;

    for (size_t i = 0; i < n; i++)
        queue_pairs_add(&pairs, f[i].name, f[i].value, f[i].len);
    for (;;) {
        rc = queue_finish(&s->q, e->id, r->id, r->r.status, &pairs, dead,
                          s->w->cfg->result_ttl_s, &err);
        if (rc >= 0)
            break;
        if (!queue_err_retryable(&err) || clock_mono_ms() - start > FINISH_GIVEUP_MS) {
            log_error("job=%s: cannot write the result: %s", r->id, err.msg);
            return;
        }
        log_warn("job=%s: result write failed (%s); retrying", r->id, err.msg);
        if (connect_retry(s->w, &s->q, 0, 0, FINISH_GIVEUP_MS) != 0)
            return;
    }
    pthread_mutex_lock(&s->w->mu);
    s->w->done++;
    pthread_mutex_unlock(&s->w->mu);
    log_info("job=%s status=%s attempts=%d%s", r->id, r->r.status, r->attempts,
             rc == 0 ? " (a final result existed already; acknowledged)" : "");
}

static void dead_letter(struct slot *s, const struct queue_entry *e, struct job_result *r,
                        const char *reason)
{
    struct queue_pairs dead = {.n = 0};
    char attempts[24];

    for (size_t i = 0; i < e->n && i < QUEUE_MAX_FIELDS - 4; i++)
        queue_pairs_add(&dead, e->f[i].name, e->f[i].value, e->f[i].len);
    snprintf(attempts, sizeof(attempts), "%lld", e->deliveries);
    queue_pairs_adds(&dead, "reason", reason);
    queue_pairs_adds(&dead, "attempts", attempts);
    queue_pairs_adds(&dead, "last_worker", s->w->name);
    job_result_set_status(r, "internal_error", "%s", reason);
    finish(s, e, r, &dead);
}

static void release(struct slot *s, const struct queue_entry *e, int64_t idle_ms)
{
    struct llmsb_err err = {0};
    if (queue_release(&s->q, e->id, idle_ms, &err) != 0)
        log_warn("entry %s: release failed (%s); the lease will expire instead", e->id, err.msg);
}

static int64_t entry_ms(const char *id)
{
    long long v = 0;
    char ms[24];
    snprintf(ms, sizeof(ms), "%.*s", (int)strcspn(id, "-"), id);
    return parse_ll(ms, 0, (long long)1 << 62, &v) == 0 ? v : 0;
}

/* Starts the job's "running" record; 0 = a final result exists already. */
static int mark_running(struct slot *s, const struct job *j, struct job_result *r)
{
    struct queue_pairs p = {.n = 0};
    struct llmsb_err err = {0};
    char attempts[16], started[24], queued[24];
    int rc;

    snprintf(attempts, sizeof(attempts), "%d", r->attempts);
    snprintf(started, sizeof(started), "%lld", (long long)clock_wall_ms());
    snprintf(queued, sizeof(queued), "%lld", (long long)r->queued_at);
    queue_pairs_adds(&p, "id", j->id);
    queue_pairs_adds(&p, "worker", s->w->name);
    queue_pairs_adds(&p, "attempts", attempts);
    queue_pairs_adds(&p, "queued_at", queued);
    queue_pairs_adds(&p, "started_at", started);
    rc = queue_mark_running(&s->q, j->id, &p, j->result_ttl_s, &err);
    if (rc < 0)
        log_warn("job=%s: cannot mark running: %s", j->id, err.msg);
    return rc != 0;
}

static void run_entry(struct slot *s, struct queue_entry *e, struct job *j, struct job_result *r)
{
    const struct config *cfg = s->w->cfg;
    struct llmsb_err err = {0};
    int rc;

    set_inflight(s, e->id, j->id);
    if (e->deliveries > j->max_attempts) {
        dead_letter(s, e, r, "delivered more times than max_attempts (a worker died running it, "
                             "or its infrastructure kept failing)");
        return;
    }
    if (queue_cancel_requested(&s->q, j->id, &err) == 1) {
        job_result_set_status(r, "cancelled", "cancelled before it started");
        finish(s, e, r, NULL);
        return;
    }
    if (!mark_running(s, j, r)) {
        finish(s, e, r, NULL);   /* acknowledges: the first final result stands */
        return;
    }
    rc = worker_execute(&s->w->pool, &s->be, cfg, j, &s->cancel, r, &err);
    if (rc == WORK_DONE || rc == WORK_CANCELLED) {
        finish(s, e, r, NULL);
    } else if (rc == WORK_ABORTED) {
        log_info("job=%s: aborted (drain or lease lost); released for another worker", j->id);
        release(s, e, cfg->lease_ms);
    } else if (e->deliveries >= j->max_attempts) {
        char reason[300];
        snprintf(reason, sizeof(reason), "infrastructure failed %lld times; last: %s",
                 e->deliveries, err.msg);
        dead_letter(s, e, r, reason);
    } else {
        int64_t backoff = 1000LL << (e->deliveries - 1 < 6 ? e->deliveries - 1 : 6);
        if (backoff > cfg->lease_ms / 2)
            backoff = cfg->lease_ms / 2;
        log_warn("job=%s attempt %lld failed: %s; retrying in %lld ms", j->id, e->deliveries,
                 err.msg, (long long)backoff);
        release(s, e, cfg->lease_ms - backoff);
    }
}

static void handle_entry(struct slot *s, struct queue_entry *e)
{
    struct job_field f[QUEUE_MAX_FIELDS];
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;

    if (e->deleted) {
        log_warn("entry %s has no fields (trimmed or deleted); acknowledging it", e->id);
        queue_ack(&s->q, e->id, &err);
        return;
    }
    for (size_t i = 0; i < e->n; i++)
        f[i] = (struct job_field){e->f[i].name, e->f[i].value, e->f[i].len};
    job_init(&j, s->w->cfg);
    if (job_from_fields(&j, s->w->cfg, f, e->n, e->id, &err) != 0) {
        job_result_init(&r, &j);
        if (!r.id[0])
            snprintf(r.id, sizeof(r.id), "%s", e->id);
        job_result_set_status(&r, "invalid", "%s", err.msg);
        log_info("job=%s invalid: %s", r.id, err.msg);
    } else {
        job_result_init(&r, &j);
    }
    r.attempts = (int)e->deliveries;
    r.queued_at = entry_ms(e->id);
    snprintf(r.worker, sizeof(r.worker), "%s", s->w->name);
    if (strcmp(r.r.status, "invalid") == 0) {
        set_inflight(s, e->id, r.id);
        finish(s, e, &r, NULL);
    } else {
        run_entry(s, e, &j, &r);
    }
    set_inflight(s, NULL, NULL);
    job_result_release(&r);
    job_release(&j);
}

static void *slot_main(void *arg)
{
    struct slot *s = arg;
    struct worker *w = s->w;
    struct llmsb_err err = {0};

    if (connect_retry(w, &s->q, 1, 1, 0) != 0)
        return NULL;
    s->client_id = queue_client_id(&s->q, &err);
    while (!worker_stop) {
        struct queue_entry *e = NULL;
        size_t n = 0;

        if (take_local(w, &e)) {
            n = 1;
        } else if (queue_read(&s->q, 1, (int)w->cfg->block_ms, &e, &n, &err) != 0) {
            if (!worker_stop)
                log_warn("slot %d: read: %s", s->index, err.msg);
            if (queue_err_retryable(&err) && connect_retry(w, &s->q, 0, 1, 0) == 0)
                s->client_id = queue_client_id(&s->q, &err);
            else if (!worker_stop)
                sleep_ms(500);
            continue;
        }
        for (size_t i = 0; i < n; i++)
            handle_entry(s, &e[i]);
        queue_entries_free(e, n);
    }
    queue_close(&s->q);
    return NULL;
}

/* ---- janitor --------------------------------------------------------------------- */

static int busy_count(struct worker *w)
{
    int b = 0;
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < w->nslots; i++)
        b += w->slots[i].busy;
    b += (int)w->nlocal;
    pthread_mutex_unlock(&w->mu);
    return b;
}

static int is_running_here(void *ud, const char *id)
{
    struct worker *w = ud;
    int found = 0;
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < w->nslots && !found; i++)
        found = w->slots[i].busy && strcmp(w->slots[i].entry_id, id) == 0;
    for (size_t i = 0; i < w->nlocal && !found; i++)
        found = strcmp(w->local[i].id, id) == 0;
    pthread_mutex_unlock(&w->mu);
    return found;
}

static void push_local(struct worker *w, struct queue_entry *e, size_t n)
{
    pthread_mutex_lock(&w->mu);
    struct queue_entry *nl = realloc(w->local, (w->nlocal + n) * sizeof(*nl));
    if (nl) {
        w->local = nl;
        memcpy(w->local + w->nlocal, e, n * sizeof(*e));
        w->nlocal += n;
        free(e);
        e = NULL;
    }
    pthread_mutex_unlock(&w->mu);
    if (e)
        queue_entries_free(e, n);   /* cannot hold them: leases will expire */
}

static void lease_lost(void *ud, const char *id)
{
    struct worker *w = ud;
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < w->nslots; i++)
        if (w->slots[i].busy && strcmp(w->slots[i].entry_id, id) == 0) {
            log_warn("entry %s now belongs to another worker; aborting it here", id);
            w->slots[i].cancel = 2;
        }
    pthread_mutex_unlock(&w->mu);
}

static int janitor_cancels_and_leases(struct worker *w, struct queue *q, int renew)
{
    char ids[256][64], jobs[256][128];
    char *idp[256];
    int n = 0, slot_of[256];
    struct llmsb_err err = {0};

    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < w->nslots && n < 256; i++)
        if (w->slots[i].busy) {
            snprintf(ids[n], sizeof(ids[0]), "%s", w->slots[i].entry_id);
            snprintf(jobs[n], sizeof(jobs[0]), "%s", w->slots[i].job_id);
            idp[n] = ids[n];
            slot_of[n++] = i;
        }
    pthread_mutex_unlock(&w->mu);
    for (int i = 0; i < n; i++) {
        int c = jobs[i][0] ? queue_cancel_requested(q, jobs[i], &err) : 0;
        if (c < 0)
            return -1;
        if (c == 1 && w->slots[slot_of[i]].cancel == 0) {
            log_info("job=%s: cancel requested", jobs[i]);
            w->slots[slot_of[i]].cancel = 1;
        }
    }
    if (renew && n > 0 && queue_renew(q, idp, (size_t)n, lease_lost, w, &err) != 0)
        return -1;
    return 0;
}

static int janitor_heartbeat(struct worker *w, struct queue *q)
{
    struct queue_pairs p = {.n = 0};
    struct llmsb_err err = {0};
    char slots[16], busy[16], done[24], pid[16], started[24];
    int idle = 0, total = pool_size(&w->pool, &idle);
    char pooled[32];

    snprintf(slots, sizeof(slots), "%d", w->nslots);
    snprintf(busy, sizeof(busy), "%d", busy_count(w));
    pthread_mutex_lock(&w->mu);
    snprintf(done, sizeof(done), "%lld", w->done);
    pthread_mutex_unlock(&w->mu);
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    snprintf(started, sizeof(started), "%lld", (long long)w->started_wall_ms);
    snprintf(pooled, sizeof(pooled), "%d/%d", idle, total);
    queue_pairs_adds(&p, "host", w->host);
    queue_pairs_adds(&p, "pid", pid);
    queue_pairs_adds(&p, "slots", slots);
    queue_pairs_adds(&p, "busy", busy);
    queue_pairs_adds(&p, "done", done);
    queue_pairs_adds(&p, "version", LLMSB_VERSION);
    queue_pairs_adds(&p, "backend", w->be.ops->name);
    queue_pairs_adds(&p, "state", worker_stop ? "draining" : "running");
    queue_pairs_adds(&p, "started_at", started);
    queue_pairs_adds(&p, "pool_idle_total", pooled);
    return queue_heartbeat(q, w->name, &p, w->cfg->heartbeat_ttl_ms, &err);
}

static int janitor_claim(struct worker *w, struct queue *q)
{
    struct llmsb_err err = {0};
    struct queue_entry *e;
    size_t n;
    int free_slots = w->nslots - busy_count(w);
    int64_t own_idle = w->cfg->block_ms * 3 > 5000 ? w->cfg->block_ms * 3 : 5000;

    if (free_slots <= 0)
        return 0;
    if (queue_recover_own(q, own_idle, free_slots, is_running_here, w, &e, &n, &err) != 0)
        return -1;
    if (n) {
        log_info("recovered %zu job(s) delivered to this worker but not running", n);
        push_local(w, e, n);
        free_slots -= (int)n;
    } else {
        free(e);
    }
    if (queue_free_dead_consumers(q, w->cfg->lease_ms, &err) < 0)
        return -1;
    if (free_slots <= 0)
        return 0;
    if (queue_claim_stale(q, w->cfg->lease_ms, free_slots, &e, &n, &err) != 0)
        return -1;
    if (n) {
        log_info("reclaimed %zu job(s) whose lease expired", n);
        push_local(w, e, n);
    } else {
        free(e);
    }
    return 0;
}

struct reap_ctx {
    struct worker *w;
    struct queue *q;
    char ids[64][80];
    int n;
};

static void reap_one(void *ud, const struct container_info *ci)
{
    struct reap_ctx *c = ud;
    struct llmsb_err err = {0};
    long long pid;
    int dead = 0;

    if (c->n >= 64 || strcmp(ci->worker, c->w->name) == 0)
        return;
    if (strcmp(ci->kind, "worker") == 0)
        dead = queue_worker_alive(c->q, ci->worker, &err) == 0;
    else if (parse_ll(ci->pid, 1, 1 << 30, &pid) == 0)
        dead = kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    if (dead)
        snprintf(c->ids[c->n++], sizeof(c->ids[0]), "%s", ci->id);
}

/* Removes containers of this host whose worker has no heartbeat (or whose
 * run/local process is gone). */
static void janitor_reap(struct worker *w, struct queue *q)
{
    struct reap_ctx c = {w, q, {{0}}, 0};
    struct llmsb_err err = {0};
    char label[320];

    snprintf(label, sizeof(label), "llmsb.host=%s", w->host);
    if (w->be.ops->list(&w->be, label, reap_one, &c, &err) != 0) {
        log_warn("reaper: %s", err.msg);
        return;
    }
    for (int i = 0; i < c.n; i++) {
        log_info("reaper: removing container %.12s left by a dead process", c.ids[i]);
        if (w->be.ops->remove(&w->be, c.ids[i], &err) != 0)
            log_warn("reaper: %s", err.msg);
    }
}

static void *janitor_main(void *arg)
{
    struct worker *w = arg;
    struct queue q;
    int64_t next_hb = 0, next_renew = 0, next_claim = 0, next_maint = 0;

    if (connect_retry(w, &q, 1, 0, 0) != 0)
        return NULL;
    while (!w->janitor_stop) {
        int64_t now = clock_mono_ms();
        int rc = janitor_cancels_and_leases(w, &q, now >= next_renew);

        if (rc == 0 && now >= next_renew)
            next_renew = now + w->cfg->lease_ms / 3;
        if (rc == 0 && now >= next_hb) {
            rc = janitor_heartbeat(w, &q);
            next_hb = now + w->cfg->heartbeat_ttl_ms / 4;
        }
        if (rc == 0 && !worker_stop && now >= next_claim) {
            rc = janitor_claim(w, &q);
            next_claim = now + 1000;
        }
        if (!worker_stop && now >= next_maint) {
            pool_maintain(&w->pool);
            janitor_reap(w, &q);
            next_maint = now + 10000;
        }
        if (rc != 0) {
            log_warn("janitor: redis unavailable; reconnecting");
            connect_retry(w, &q, 0, 0, 5000);
        }
        sleep_ms(JANITOR_TICK_MS);
    }
    queue_close(&q);
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------------ */

static void on_signal(int sig)
{
    (void)sig;
    if (worker_stop)
        _exit(130);   /* second signal: at once */
    worker_stop = 1;
}

static void install_signals(void)
{
    llmsb_signals(on_signal);
}

static void drain(struct worker *w)
{
    struct queue ctl;
    struct llmsb_err err = {0};
    int64_t deadline = clock_mono_ms() + w->cfg->drain_ms;

    log_info("draining: no new jobs; waiting up to %lld ms for %d running",
             (long long)w->cfg->drain_ms, busy_count(w));
    if (queue_open(&ctl, w->cfg->redis_url, w->cfg->redis_prefix, NULL, 3000, &err) == 0) {
        for (int i = 0; i < w->nslots; i++)
            if (w->slots[i].client_id > 0)
                queue_unblock(&ctl, w->slots[i].client_id, &err);
        queue_close(&ctl);
    }
    while (busy_count(w) > 0 && clock_mono_ms() < deadline)
        sleep_ms(100);
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < w->nslots; i++)
        if (w->slots[i].busy) {
            log_warn("job=%s: still running at the drain deadline; releasing it",
                     w->slots[i].job_id);
            w->slots[i].cancel = 2;
        }
    pthread_mutex_unlock(&w->mu);
}

static void release_local(struct worker *w)
{
    struct queue ctl;
    struct llmsb_err err = {0};

    if (w->nlocal == 0)
        return;
    if (queue_open(&ctl, w->cfg->redis_url, w->cfg->redis_prefix, w->name, 3000, &err) == 0) {
        for (size_t i = 0; i < w->nlocal; i++)
            queue_release(&ctl, w->local[i].id, w->cfg->lease_ms, &err);
        queue_close(&ctl);
    }
    queue_entries_free(w->local, w->nlocal);
    w->local = NULL;
    w->nlocal = 0;
}

static void retire(struct worker *w)
{
    struct queue ctl;
    struct llmsb_err err = {0};

    if (queue_open(&ctl, w->cfg->redis_url, w->cfg->redis_prefix, w->name, 3000, &err) != 0)
        return;
    queue_heartbeat_delete(&ctl, w->name, &err);
    queue_consumer_retire(&ctl, &err);
    queue_close(&ctl);
}

int worker_main(const struct config *cfg, int slots, const char *name)
{
    struct worker w;
    struct pool_config pc;
    struct llmsb_err err = {0};
    struct queue probe;
    char version[64];
    int rc = 0;

    memset(&w, 0, sizeof(w));
    w.cfg = cfg;
    w.nslots = slots;
    w.started_wall_ms = clock_wall_ms();
    pthread_mutex_init(&w.mu, NULL);
    if (gethostname(w.host, sizeof(w.host) - 1) != 0)
        snprintf(w.host, sizeof(w.host), "unknown");
    if (name && *name)
        snprintf(w.name, sizeof(w.name), "%s", name);
    else
        snprintf(w.name, sizeof(w.name), "%s-%d", w.host, (int)getpid());
    exec_identity(w.name, "worker");
    install_signals();
    if (backend_open(&w.be, cfg->backend, cfg->docker_host[0] ? cfg->docker_host : NULL, &err) ||
        w.be.ops->ping(&w.be, version, sizeof(version), &err)) {
        log_error("%s", err.msg);
        return 3;
    }
    if (queue_open(&probe, cfg->redis_url, cfg->redis_prefix, w.name, 5000, &err) != 0 ||
        queue_group_ensure(&probe, &err) != 0) {
        log_error("%s (is redis-server running at %s?)", err.msg, cfg->redis_url);
        queue_close(&probe);
        backend_close(&w.be);
        return 3;
    }
    queue_close(&probe);
    worker_pool_config(cfg, slots, &pc);
    pool_init(&w.pool, &w.be, &pc);
    w.slots = calloc((size_t)slots, sizeof(*w.slots));
    if (!w.slots)
        return 3;
    log_info("worker %s: %d slots, %s %s, redis %s prefix %s", w.name, slots, w.be.ops->name,
             version, cfg->redis_url, cfg->redis_prefix);
    pthread_create(&w.janitor, NULL, janitor_main, &w);
    for (int i = 0; i < slots; i++) {
        struct slot *s = &w.slots[i];
        s->w = &w;
        s->index = i;
        backend_open(&s->be, cfg->backend, w.be.host, &err);
        pthread_create(&s->th, NULL, slot_main, s);
    }
    while (!worker_stop)
        sleep_ms(100);
    drain(&w);
    for (int i = 0; i < slots; i++) {
        pthread_join(w.slots[i].th, NULL);
        backend_close(&w.slots[i].be);
    }
    w.janitor_stop = 1;
    pthread_join(w.janitor, NULL);
    release_local(&w);
    retire(&w);
    pool_release_all(&w.pool);
    log_info("worker %s stopped after %lld job(s)", w.name, w.done);
    free(w.slots);
    backend_close(&w.be);
    return rc;
}

/* ---- local (no Redis) ------------------------------------------------------------------ */

struct local_run {
    const struct config *cfg;
    struct pool pool;
    struct backend be;
    cJSON *const *jobs;
    size_t n, next, finished;
    cJSON **results;
    pthread_mutex_t mu;
    void (*progress)(void *, size_t, size_t, const cJSON *);
    void *ud;
    volatile int cancel;
};

static void local_one(struct local_run *lr, struct backend *be, size_t i)
{
    const char *names[QUEUE_MAX_FIELDS], *values[QUEUE_MAX_FIELDS];
    size_t lens[QUEUE_MAX_FIELDS], nf;
    struct job_field f[QUEUE_MAX_FIELDS];
    char **owned = NULL, defid[32];
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;
    int rc = -1;

    nf = jobfile_fields(lr->jobs[i], names, values, lens, QUEUE_MAX_FIELDS, &owned);
    for (size_t k = 0; k < nf; k++)
        f[k] = (struct job_field){names[k], values[k], lens[k]};
    snprintf(defid, sizeof(defid), "job-%zu", i + 1);
    job_init(&j, lr->cfg);
    if (job_from_fields(&j, lr->cfg, f, nf, defid, &err) != 0) {
        job_result_init(&r, &j);
        job_result_set_status(&r, "invalid", "%s", err.msg);
    } else {
        job_result_init(&r, &j);
        for (int attempt = 1; attempt <= j.max_attempts && !lr->cancel; attempt++) {
            r.attempts = attempt;
            rc = worker_execute(&lr->pool, be, lr->cfg, &j, &lr->cancel, &r, &err);
            if (rc >= 0)
                break;
            log_warn("job=%s attempt %d failed: %s", j.id, attempt, err.msg);
            sleep_ms(500LL * attempt);
        }
        if (rc < 0 || rc == WORK_ABORTED)
            job_result_set_status(&r, "internal_error", "%s",
                                  lr->cancel ? "interrupted" : err.msg);
    }
    if (!r.id[0])
        snprintf(r.id, sizeof(r.id), "%s", defid);
    snprintf(r.worker, sizeof(r.worker), "%s", exec_worker_name());
    lr->results[i] = worker_result_json(&r);
    pthread_mutex_lock(&lr->mu);
    lr->finished++;
    if (lr->progress)
        lr->progress(lr->ud, lr->finished, lr->n, lr->results[i]);
    pthread_mutex_unlock(&lr->mu);
    job_result_release(&r);
    job_release(&j);
    jobfile_fields_free(owned, nf);
}

static void *local_main(void *arg)
{
    struct local_run *lr = arg;
    struct backend be;
    struct llmsb_err err = {0};

    if (backend_open(&be, lr->be.ops->name, lr->be.host, &err) != 0)
        return NULL;
    for (;;) {
        size_t i;
        pthread_mutex_lock(&lr->mu);
        i = lr->next++;
        pthread_mutex_unlock(&lr->mu);
        if (i >= lr->n || lr->cancel)
            break;
        local_one(lr, &be, i);
    }
    backend_close(&be);
    return NULL;
}

int worker_run_local(const struct config *cfg, int slots, cJSON *const *jobs, size_t n,
                     cJSON **results, void (*progress)(void *, size_t, size_t, const cJSON *),
                     void *ud)
{
    struct local_run lr;
    struct pool_config pc;
    struct llmsb_err err = {0};
    pthread_t *th;
    char version[64];

    memset(&lr, 0, sizeof(lr));
    lr.cfg = cfg;
    lr.jobs = jobs;
    lr.n = n;
    lr.results = results;
    lr.progress = progress;
    lr.ud = ud;
    pthread_mutex_init(&lr.mu, NULL);
    exec_identity(NULL, "local");
    install_signals();
    if (backend_open(&lr.be, cfg->backend, cfg->docker_host[0] ? cfg->docker_host : NULL, &err) ||
        lr.be.ops->ping(&lr.be, version, sizeof(version), &err)) {
        log_error("%s", err.msg);
        return 3;
    }
    worker_pool_config(cfg, slots, &pc);
    pc.min_idle = 0;   /* nothing to keep warm for after the file */
    pool_init(&lr.pool, &lr.be, &pc);
    th = calloc((size_t)slots, sizeof(*th));
    for (int i = 0; th && i < slots; i++)
        pthread_create(&th[i], NULL, local_main, &lr);
    while (th && !worker_stop) {
        pthread_mutex_lock(&lr.mu);
        int all = lr.finished >= lr.n;
        pthread_mutex_unlock(&lr.mu);
        if (all)
            break;
        sleep_ms(50);
    }
    if (worker_stop)
        lr.cancel = 2;   /* Ctrl-C: running jobs stop, their containers go */
    for (int i = 0; th && i < slots; i++)
        pthread_join(th[i], NULL);
    free(th);
    pool_release_all(&lr.pool);
    backend_close(&lr.be);
    return lr.cancel ? 130 : 0;
}
