/* metrics_int.h - the worker's Prometheus endpoint (worker/metrics.c):
 * counters and histograms the slots add to, gauges the worker reports when
 * a scrape asks, and the libmicrohttpd server that answers GET /metrics in
 * the text exposition format 0.0.4 (docs/operations.md, "Metrics").
 *
 * Thread safety: slots call metrics_job_done and metrics_engine_error; each
 * takes the metrics mutex for a few additions.  The server's own thread
 * copies the numbers under that mutex and formats, reads Redis and the
 * gauges outside it, so a scrape never holds a slot up. */
#ifndef LLMSB_WORKER_METRICS_INT_H
#define LLMSB_WORKER_METRICS_INT_H

#include <pthread.h>
#include <stdint.h>

#include "common/common.h"
#include "common/status.h"
#include "job/result.h"
#include "languages/languages.h"

#define METRICS_LANGS (LANG_MAX + 1) /* languages[] rows, and one for "unknown" */
#define METRICS_PHASES 10
#define METRICS_BUCKETS 15 /* finite upper bounds; +Inf is the count */
#define METRICS_ACQUIRE_KINDS 4
#define METRICS_REDIS_TIMEOUT_MS 1000 /* a scrape's Redis read, at most */
#define METRICS_BODY_CAP ((size_t)1 << 20)
#define METRICS_CONNECTIONS 16 /* scrapes served at once */
/* the front door (common/http_gate.h): connections held until their
 * request's headers are in, and the time they have for it */
#define METRICS_WAITING_MAX 256
#define METRICS_HEAD_DEADLINE_MS 10000

/* What the worker knows at the moment of a scrape (metrics_gauges_fn). */
struct metrics_gauges {
    int slots, busy;
    int paused, draining;
    int pool_total, pool_idle;
    int sessions;
};

struct metrics_hist {
    long long buckets[METRICS_BUCKETS]; /* not cumulative: formatted so */
    long long count;
    double sum_s;
};

/* The numbers the slots add to; a copy is formatted. */
struct metrics_counts {
    long long jobs[STATUS_COUNT][METRICS_LANGS];
    struct metrics_hist phase[METRICS_PHASES];
    long long acquires[METRICS_ACQUIRE_KINDS];
    long long dead_letters;
    long long engine_errors;
};

struct http_gate;
struct metrics {
    pthread_mutex_t mu;
    struct metrics_counts c;
    void *daemon; /* struct MHD_Daemon, NULL when off */
    struct http_gate *gate; /* accepts for it */
    /* the scrape's Redis connection (the server's thread alone uses it) */
    char redis_url[256], redis_prefix[64];
    void *q; /* struct queue *, opened on the first scrape */
    void (*gauges)(void *ud, struct metrics_gauges *g);
    void *ud;
};

/* Sets up m with nothing served (metrics_start serves it). */
void metrics_init(struct metrics *m);
/* Serves GET /metrics on addr ("host:port", ":port" for every IPv4
 * address, "[v6]:port"), reading the queue at redis_url/prefix and the
 * worker's gauges through gauges(ud, ...) on the server's thread.
 * Returns 0, or a negative code with err naming addr and why. */
int metrics_start(struct metrics *m, const char *addr, const char *redis_url,
                  const char *redis_prefix, void (*gauges)(void *, struct metrics_gauges *),
                  void *ud, struct llmsb_err *err);
/* Stops the server (a scrape under way ends first) and frees what m holds. */
void metrics_release(struct metrics *m);

/* A final result this worker wrote: its status, language (NULL: unknown)
 * and phases (r's, as the result's `phases` object shows them). */
void metrics_job_done(struct metrics *m, const struct job_result *r, const struct language *lang,
                      int dead_letter);
/* An attempt the engine failed (not the job). */
void metrics_engine_error(struct metrics *m);

/* The exposition text of m's numbers, gauges g and queue depth qs (NULL:
 * Redis did not answer) into out. Returns 0 or a buf error. */
struct queue_stats;
struct buf;
int metrics_format(const struct metrics_counts *c, const struct metrics_gauges *g,
                   const struct queue_stats *qs, struct buf *out);

#endif
