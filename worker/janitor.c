/* janitor.c - the janitor thread, on its own Redis connection: the
 * heartbeat, the scheduler's timers (cancellation, leases, reclaim), the
 * delayed jobs that are due (back onto the stream), the engine probe while paused, pool upkeep, expired sessions, and the reaping
 * of containers that dead processes of this queue left behind. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/features.h"
#include "exec/session.h"
#include "worker_int.h"

#define HEARTBEAT_PER_TTL 4 /* heartbeats per heartbeat_ttl */
#define JANITOR_RECONNECT_GIVEUP_MS 5000
#define REAP_MAX 64

/* Delayed jobs due now back onto the stream (queue/delayed.c): every
 * tick, one ZRANGEBYSCORE when none is due.  Returns 0 or the error's
 * code (Redis failed: the caller reconnects). */
static int move_delayed(struct queue *q)
{
    struct llmsb_err err = {0};
    int n = queue_delayed_move(q, clock_wall_ms(), QUEUE_DELAYED_MOVE_MAX, &err);

    if (n > 0)
        log_info("%d delayed job(s) due: back on the jobs stream", n);
    else if (n < 0)
        log_warn("delayed jobs: %s", err.msg);
    return n < 0 ? n : 0;
}

/* Empty lanes out of prefix:lanes (queue_lanes_prune), about once a
 * minute: each pass re-armed 0.75 to 1.25 minutes on, so a fleet's
 * workers do not prune in step.  A failure is logged; the next pass
 * tries again. */
static void prune_lanes(struct queue *q, struct sched_timer *t, int64_t now)
{
    struct llmsb_err err = {0};
    int n;

    if (!sched_timer_due(t, now))
        return;
    t->next_ms += (int64_t)(((uint64_t)now * 2654435761u + (uint64_t)getpid() * 40503u) %
                            (uint64_t)(WORKER_PRUNE_LANES_EVERY_MS / 2)) -
                  WORKER_PRUNE_LANES_EVERY_MS / 4;
    if ((n = queue_lanes_prune(q, &err)) > 0)
        log_info("%d empty lane(s) pruned", n);
    else if (n < 0)
        log_warn("lanes: prune: %s", err.msg);
}

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

void janitor_heartbeat_first(struct worker *w, struct queue *q)
{
    if (heartbeat(w, q) != 0)
        log_warn("worker %s: its first heartbeat was not written; the janitor tries again",
                 w->name);
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
 * the engine's crash swallowed) and they are older than any start; those
 * of an earlier process of our name on this host (killed, then started
 * again) as soon as its pid is gone. */
static void reap_one(void *ud, const struct container_info *ci)
{
    struct reap_ctx *c = ud;
    struct llmsb_err err = {0};
    long long pid;
    int dead = 0;

    if (c->n >= REAP_MAX)
        return;
    if (strcmp(ci->worker, c->w->name) == 0 && strcmp(ci->host, c->w->rn.id.host) == 0)
        dead = (parse_ll(ci->pid, 1, 1 << 30, &pid) == 0 && pid != (long long)getpid() &&
                kill((pid_t)pid, 0) != 0 && errno == ESRCH) ||
               (ci->created_s > 0 &&
                (clock_wall_ms() / 1000 - ci->created_s) * 1000 >
                    c->w->cfg->start_timeout_ms + WORKER_OWN_LEFTOVER_AGE_MS &&
                !pool_knows(&c->w->rn.pool, ci->id));
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

void *janitor_main(void *arg)
{
    struct worker *w = arg;
    struct sched_timer hb = {w->cfg->heartbeat_ttl_ms / HEARTBEAT_PER_TTL, 0};
    struct sched_timer maint = {WORKER_MAINTAIN_EVERY_MS, 0};
    struct sched_timer probe = {WORKER_ENGINE_PROBE_MS, 0};
    struct sched_timer prune = {WORKER_PRUNE_LANES_EVERY_MS, 0};
    struct queue q;

    if (redis_connect(w, &q, 1, &w->janitor_stop, 0) != 0)
        return NULL;
    prune.next_ms = clock_mono_ms() + WORKER_PRUNE_LANES_EVERY_MS / 2; /* not at start */
    while (!atomic_load(&w->janitor_stop)) {
        int64_t now = clock_mono_ms();
        int rc = scheduler_tick(&w->sched, &q, now);

        if (rc == 0 && sched_timer_due(&hb, now))
            rc = heartbeat(w, &q);
        if (rc == 0)
            rc = move_delayed(&q);
        if (rc == 0 && !atomic_load(&worker_stop))
            prune_lanes(&q, &prune, now);
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
