/* live.c - a live job's sink (jobs.md, live output): the chunks its agent
 * sends before its RESULT go onto the job's Redis stream (queue/live.c),
 * from the slot's thread, which reads the agent's frames. */
#include <string.h>

#include "common/clock.h"
#include "exec/exec.h"
#include "worker_int.h"

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
void live_begin(struct slot *s, struct job *j, long long attempt)
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

void live_sink_init(struct slot *s)
{
    s->live_sink = (struct proto_chunk_sink){live_chunk, s, live_restart};
}

/* The end entry of job_id's stream, once its final result is written (a
 * follower stops at it, and reads the result then).  job_id, not the
 * slot's live_id: a job that ends before live_begin (invalid, or handed
 * on) may still say live. */
void live_end(struct slot *s, const char *job_id, const char *status, long long ttl_s)
{
    char shown[160];

    if (queue_live_end(&s->q, job_id, status, ttl_s, &s->live_err) == 0)
        return;
    llmsb_escape(shown, sizeof(shown), job_id, strlen(job_id));
    log_warn("job=%s: cannot end its live output: %s", shown, s->live_err.msg);
}
