/* metrics.c - the worker's Prometheus endpoint (metrics_int.h): the
 * numbers, their exposition text (format 0.0.4) and libmicrohttpd serving
 * it.  Every label value comes from a fixed set (statuses, languages[],
 * phases, acquire kinds): no job id or free text ever becomes a label, so a
 * worker's series stay bounded whatever its jobs say. */
#include "metrics_int.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/common.h"
#include "common/http_gate.h"
#include "common/net.h"
#include "queue/queue.h"

/* upper bounds of the duration buckets, seconds */
static const double bucket_s[METRICS_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                 2.5,   5,    10,    30,   60,  120,  300};

/* a counter for each kind of the result's phases.acquire but none */
_Static_assert(METRICS_ACQUIRE_KINDS == RESULT_ACQUIRE_COUNT - 1, "a counter an acquire kind");

_Static_assert(METRICS_LANGS >= 2, "a language and unknown");
_Static_assert(METRICS_PHASES == RESULT_PHASES, "a histogram a phase of the result");

static int lang_index(const struct language *lang)
{
    for (size_t i = 0; lang && i < languages_count && i < METRICS_LANGS - 1; i++)
        if (languages[i] == lang)
            return (int)i;
    return METRICS_LANGS - 1;
}

static const char *lang_label(int i)
{
    return i < METRICS_LANGS - 1 && (size_t)i < languages_count ? languages[i]->name : "unknown";
}

static void hist_add(struct metrics_hist *h, double s)
{
    for (int b = 0; b < METRICS_BUCKETS; b++)
        if (s <= bucket_s[b]) {
            h->buckets[b]++;
            break;
        }
    h->count++;
    h->sum_s += s;
}

void metrics_init(struct metrics *m)
{
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
}

void metrics_job_done(struct metrics *m, const struct job_result *r, const struct language *lang,
                      int dead_letter)
{
    int64_t ms[RESULT_PHASES];
    int acq = r->ph.acquire > RESULT_ACQUIRE_NONE && r->ph.acquire < RESULT_ACQUIRE_COUNT
                  ? (int)r->ph.acquire - 1
                  : -1;

    job_result_phases_ms(r, ms);
    pthread_mutex_lock(&m->mu);
    if (r->r.status > STATUS_NONE && r->r.status < STATUS_COUNT)
        m->c.jobs[r->r.status][lang_index(lang)]++;
    for (int i = 0; i < METRICS_PHASES; i++)
        if (ms[i] >= 0)
            hist_add(&m->c.phase[i], ms[i] / 1000.0);
    if (acq >= 0)
        m->c.acquires[acq]++;
    m->c.dead_letters += dead_letter != 0;
    pthread_mutex_unlock(&m->mu);
}

void metrics_engine_error(struct metrics *m)
{
    pthread_mutex_lock(&m->mu);
    m->c.engine_errors++;
    pthread_mutex_unlock(&m->mu);
}

/* ---- the exposition text ------------------------------------------------------ */

static int head(struct buf *b, const char *name, const char *type, const char *help)
{
    return buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int gauge(struct buf *b, const char *name, const char *help, long long v)
{
    return head(b, name, "gauge", help) | buf_printf(b, "%s %lld\n", name, v);
}

static int counter(struct buf *b, const char *name, const char *help, long long v)
{
    return head(b, name, "counter", help) | buf_printf(b, "%s %lld\n", name, v);
}

static int format_jobs(const struct metrics_counts *c, struct buf *b)
{
    int rc = head(b, "llmsb_jobs_total", "counter",
                  "Final results this worker wrote, by status and language.");

    for (int s = STATUS_NONE + 1; s < STATUS_COUNT; s++)
        for (int l = 0; l < METRICS_LANGS; l++)
            if (c->jobs[s][l])
                rc |= buf_printf(b, "llmsb_jobs_total{status=\"%s\",lang=\"%s\"} %lld\n",
                                 status_name((enum job_status)s), lang_label(l), c->jobs[s][l]);
    return rc;
}

static int format_phases(const struct metrics_counts *c, struct buf *b)
{
    int rc = head(b, "llmsb_job_phase_seconds", "histogram",
                  "Where the jobs' time went, by phase (the result's phases).");

    for (int p = 0; p < METRICS_PHASES; p++) {
        const struct metrics_hist *h = &c->phase[p];
        long long cum = 0;
        for (int k = 0; k < METRICS_BUCKETS; k++) {
            cum += h->buckets[k];
            rc |= buf_printf(b, "llmsb_job_phase_seconds_bucket{phase=\"%s\",le=\"%g\"} %lld\n",
                             result_phase_names[p], bucket_s[k], cum);
        }
        rc |= buf_printf(b, "llmsb_job_phase_seconds_bucket{phase=\"%s\",le=\"+Inf\"} %lld\n",
                         result_phase_names[p], h->count);
        rc |= buf_printf(b, "llmsb_job_phase_seconds_sum{phase=\"%s\"} %.3f\n",
                         result_phase_names[p], h->sum_s);
        rc |= buf_printf(b, "llmsb_job_phase_seconds_count{phase=\"%s\"} %lld\n",
                         result_phase_names[p], h->count);
    }
    return rc;
}

static int format_queue(const struct queue_stats *qs, struct buf *b)
{
    int rc =
        gauge(b, "llmsb_queue_up", "1 when this scrape read the queue from Redis.", qs != NULL);
    long long queued;

    if (!qs)
        return rc;
    queued = qs->stream_len - qs->pending > 0 ? qs->stream_len - qs->pending : 0;
    rc |= gauge(b, "llmsb_queue_queued", "Jobs waiting for a worker (status --json: queued).",
                queued);
    rc |=
        gauge(b, "llmsb_queue_pending",
              "Jobs delivered to a worker and not finished (status --json: pending).", qs->pending);
    rc |= gauge(b, "llmsb_queue_dead_letters",
                "Entries of the dead-letter stream (status --json: dead).", qs->dead);
    return rc;
}

int metrics_format(const struct metrics_counts *c, const struct metrics_gauges *g,
                   const struct queue_stats *qs, struct buf *b)
{
    int rc = format_jobs(c, b) | format_phases(c, b) | format_queue(qs, b);

    rc |= head(b, "llmsb_pool_acquires_total", "counter",
               "Sandboxes jobs ran in, by how they were had (warm: a pool hit).");
    for (int k = 0; k < METRICS_ACQUIRE_KINDS; k++)
        rc |= buf_printf(b, "llmsb_pool_acquires_total{how=\"%s\"} %lld\n",
                         result_acquire_names[k + 1], c->acquires[k]);
    rc |=
        counter(b, "llmsb_dead_letters_total", "Jobs this worker dead-lettered.", c->dead_letters);
    rc |=
        counter(b, "llmsb_engine_errors_total",
                "Attempts the container engine failed (retried or given back).", c->engine_errors);
    rc |= gauge(b, "llmsb_worker_slots", "Jobs this worker runs at once.", g->slots);
    rc |= gauge(b, "llmsb_worker_slots_busy", "Slots running a job.", g->busy);
    rc |= gauge(b, "llmsb_worker_paused", "1 while the engine does not answer (no jobs taken).",
                g->paused);
    rc |= gauge(b, "llmsb_worker_draining", "1 while the worker drains to stop.", g->draining);
    rc |=
        gauge(b, "llmsb_pool_containers", "Warm pool containers, idle and in use.", g->pool_total);
    rc |= gauge(b, "llmsb_pool_idle", "Warm pool containers waiting for a job.", g->pool_idle);
    rc |= gauge(b, "llmsb_sessions_open", "Sessions this worker holds.", g->sessions);
    return rc;
}

/* ---- the server --------------------------------------------------------------- */

/* The queue's depth on the server's own connection; NULL when Redis does
 * not answer within METRICS_REDIS_TIMEOUT_MS (the next scrape reconnects). */
static const struct queue_stats *read_queue(struct metrics *m, struct queue_stats *qs)
{
    struct llmsb_err err = {0};

    if (!m->q) {
        struct queue *q = calloc(1, sizeof(*q));
        if (!q || queue_open(q, m->redis_url, m->redis_prefix, NULL, METRICS_REDIS_TIMEOUT_MS,
                             &err) != 0) {
            if (q)
                queue_close(q);
            free(q);
            log_warn("metrics: redis: %s", err.msg);
            return NULL;
        }
        m->q = q;
    }
    if (queue_depth(m->q, qs, &err) != 0) {
        log_warn("metrics: redis: %s", err.msg);
        queue_close(m->q);
        free(m->q);
        m->q = NULL;
        return NULL;
    }
    return qs;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *type,
                             struct buf *body)
{
    size_t len = body->len;
    char *data = buf_steal(body);
    struct MHD_Response *res = MHD_create_response_from_buffer(
        len, data ? data : (char *)"", data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc;

    if (!res) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    /* a scrape a connection: no client holds a place of the server's few
     * by dribbling a second request (the gate times only the first) */
    MHD_add_response_header(res, MHD_HTTP_HEADER_CONNECTION, "close");
    rc = MHD_queue_response(conn, code, res);
    MHD_destroy_response(res);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct metrics *m = cls;
    struct metrics_counts c;
    struct metrics_gauges g = {0};
    struct queue_stats qs;
    struct buf b;
    unsigned code = MHD_HTTP_OK;

    buf_init(&b, METRICS_BODY_CAP);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        code = MHD_HTTP_METHOD_NOT_ALLOWED;
        buf_append_str(&b, "only GET /metrics\n");
    } else if (strcmp(url, "/metrics") != 0) {
        code = MHD_HTTP_NOT_FOUND;
        buf_append_str(&b, "not found: the metrics are at /metrics\n");
    } else {
        pthread_mutex_lock(&m->mu);
        c = m->c;
        pthread_mutex_unlock(&m->mu);
        m->gauges(m->ud, &g);
        if (metrics_format(&c, &g, read_queue(m, &qs), &b) != 0) {
            code = MHD_HTTP_INTERNAL_SERVER_ERROR;
            buf_reset(&b);
            buf_append_str(&b, "metrics: out of memory\n");
        }
    }
    return reply(conn, code,
                 code == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain",
                 &b);
}

/* A connection whose request's headers are in (http_gate's admit): the
 * server's from now on.  The gate keeps their number within
 * METRICS_CONNECTIONS; libmicrohttpd's cap, above it, is a backstop. */
static int admit(void *ud, int fd, const struct sockaddr *sa, socklen_t salen)
{
    struct metrics *m = ud;

    if (MHD_add_connection(m->daemon, fd, sa, salen) == MHD_YES)
        return 0;
    log_warn("metrics: libmicrohttpd refused a connection: %s", strerror(errno));
    return -1;
}

/* libmicrohttpd closed a connection: one more the gate may hand over. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct metrics *m = cls;

    (void)conn;
    (void)socket_ctx;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED)
        http_gate_closed(m->gate);
}

int metrics_start(struct metrics *m, const char *addr, const char *redis_url,
                  const char *redis_prefix, void (*gauges)(void *, struct metrics_gauges *),
                  void *ud, struct llmsb_err *err)
{
    struct addrinfo *ai = NULL;
    char what[300];
    int rc;

    if ((rc = addr_resolve_listen("worker.metrics_addr", addr, 0, 1, &ai, err)) != 0)
        return rc;
    snprintf(m->redis_url, sizeof(m->redis_url), "%s", redis_url);
    snprintf(m->redis_prefix, sizeof(m->redis_prefix), "%s", redis_prefix);
    snprintf(what, sizeof(what), "worker.metrics_addr \"%s\"", addr);
    m->gauges = gauges;
    m->ud = ud;
    /* one thread answers, one scrape at a time, each bounded in time; the
     * gate accepts and hands over the connections whose headers are in */
    m->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_NO_LISTEN_SOCKET |
                                     MHD_USE_ITC,
                                 0, NULL, NULL, on_request, m, MHD_OPTION_NOTIFY_CONNECTION,
                                 on_connection, m, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)(2 * METRICS_CONNECTIONS + 64),
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
    if (!m->daemon)
        rc = llmsb_err_set(err, LLMSB_ERR_SYS, "%s: cannot start libmicrohttpd", what);
    else
        rc = http_gate_start(ai,
                             &(struct http_gate_opts){what, METRICS_WAITING_MAX,
                                                      METRICS_HEAD_DEADLINE_MS,
                                                      METRICS_CONNECTIONS, admit, m},
                             &m->gate, err);
    freeaddrinfo(ai);
    if (rc != 0) {
        if (m->daemon)
            MHD_stop_daemon(m->daemon);
        m->daemon = NULL;
        return rc;
    }
    log_info("metrics: serving http://%s/metrics", addr);
    return 0;
}

void metrics_release(struct metrics *m)
{
    http_gate_stop(m->gate);
    m->gate = NULL;
    if (m->daemon)
        MHD_stop_daemon(m->daemon);
    m->daemon = NULL;
    if (m->q) {
        queue_close(m->q);
        free(m->q);
        m->q = NULL;
    }
    pthread_mutex_destroy(&m->mu);
}
