/* test_metrics.c - the worker's Prometheus endpoint (worker/metrics.c)
 * without Redis or an engine: the counters and histograms a finished job
 * adds to, bounded labels (an unknown language is "unknown", never free
 * text), the exposition text, the libmicrohttpd server answering /metrics
 * (and 404 elsewhere, llmsb_queue_up 0 when Redis does not answer) and a
 * bad worker.metrics_addr refused with the address named; the config key,
 * off by default.  The integration
 * suite tests/metrics/run.sh scrapes a real worker and parses the text with
 * promtool. */
#include "test.h"

#include <curl/curl.h>
#include <string.h>

#include "common/common.h"
#include "config/config.h"
#include "job/result.h"
#include "queue/queue.h"
#include "worker/metrics_int.h"

static void fake_gauges(void *ud, struct metrics_gauges *g)
{
    (void)ud;
    g->slots = 4;
    g->busy = 1;
    g->paused = 1;
    g->pool_total = 3;
    g->pool_idle = 2;
    g->sessions = 5;
}

static void done(struct metrics *m, enum job_status st, const char *lang, int64_t run_ms,
                 enum result_acquire acquire)
{
    struct job_result r;

    memset(&r, 0, sizeof(r));
    r.r.status = st;
    r.ph.prepare_ms = r.ph.agent_ms = r.ph.finish_ms = -1;
    r.ph.acquire_ms = 2;
    r.ph.held_ms = run_ms + 2;
    r.r.phases.install_ms = r.r.phases.compile_ms = r.r.phases.collect_ms = -1;
    r.r.phases.run_ms = run_ms;
    r.ph.acquire = acquire;
    metrics_job_done(m, &r, lang ? language_find(lang) : NULL, st == STATUS_INTERNAL_ERROR);
}

static void text_of(struct metrics *m, const struct queue_stats *qs, struct buf *b)
{
    struct metrics_gauges g = {0};
    fake_gauges(NULL, &g);
    buf_init(b, METRICS_BODY_CAP);
    ASSERT_EQ(metrics_format(&m->c, &g, qs, b), 0);
}

TEST(jobs_count_by_status_and_language)
{
    struct metrics m;
    struct buf b;
    struct queue_stats qs = {.stream_len = 7, .pending = 2, .dead = 1};

    metrics_init(&m);
    done(&m, STATUS_OK, "python", 30, RESULT_ACQUIRE_WARM);
    done(&m, STATUS_OK, "py", 1500, RESULT_ACQUIRE_COLD);
    done(&m, STATUS_RUNTIME_ERROR, "ruby", 40, RESULT_ACQUIRE_WARM);
    done(&m, STATUS_INTERNAL_ERROR, NULL, 0, RESULT_ACQUIRE_NONE);
    metrics_engine_error(&m);
    text_of(&m, &qs, &b);
    ASSERT_CONTAINS(b.data, "# TYPE llmsb_jobs_total counter\n");
    ASSERT_CONTAINS(b.data, "llmsb_jobs_total{status=\"ok\",lang=\"python\"} 2\n");
    ASSERT_CONTAINS(b.data, "llmsb_jobs_total{status=\"runtime_error\",lang=\"ruby\"} 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_jobs_total{status=\"internal_error\",lang=\"unknown\"} 1\n");
    ASSERT(!strstr(b.data, "status=\"timeout\"")); /* only what happened */
    ASSERT_CONTAINS(b.data, "llmsb_dead_letters_total 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_engine_errors_total 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_pool_acquires_total{how=\"warm\"} 2\n");
    ASSERT_CONTAINS(b.data, "llmsb_pool_acquires_total{how=\"cold\"} 1\n");
    /* status --json's arithmetic: queued = stream length - pending */
    ASSERT_CONTAINS(b.data, "llmsb_queue_up 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_queue_queued 5\n");
    ASSERT_CONTAINS(b.data, "llmsb_queue_pending 2\n");
    ASSERT_CONTAINS(b.data, "llmsb_queue_dead_letters 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_worker_slots 4\n");
    ASSERT_CONTAINS(b.data, "llmsb_worker_slots_busy 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_worker_paused 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_pool_idle 2\n");
    ASSERT_CONTAINS(b.data, "llmsb_sessions_open 5\n");
    buf_release(&b);
    metrics_release(&m);
}

TEST(phases_are_cumulative_histograms_in_seconds)
{
    struct metrics m;
    struct buf b;

    metrics_init(&m);
    done(&m, STATUS_OK, "python", 30, RESULT_ACQUIRE_WARM);   /* run 0.03 s */
    done(&m, STATUS_OK, "python", 1500, RESULT_ACQUIRE_WARM); /* run 1.5 s */
    text_of(&m, NULL, &b);
    ASSERT_CONTAINS(b.data, "# TYPE llmsb_job_phase_seconds histogram\n");
    ASSERT_CONTAINS(b.data, "llmsb_job_phase_seconds_bucket{phase=\"run\",le=\"0.025\"} 0\n");
    ASSERT_CONTAINS(b.data, "llmsb_job_phase_seconds_bucket{phase=\"run\",le=\"0.05\"} 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_job_phase_seconds_bucket{phase=\"run\",le=\"2.5\"} 2\n");
    ASSERT_CONTAINS(b.data, "llmsb_job_phase_seconds_bucket{phase=\"run\",le=\"+Inf\"} 2\n");
    ASSERT_CONTAINS(b.data, "llmsb_job_phase_seconds_sum{phase=\"run\"} 1.530\n");
    ASSERT_CONTAINS(b.data, "llmsb_job_phase_seconds_count{phase=\"run\"} 2\n");
    /* a step that did not run is not observed */
    ASSERT_CONTAINS(b.data, "llmsb_job_phase_seconds_count{phase=\"compile\"} 0\n");
    ASSERT_CONTAINS(b.data, "llmsb_job_phase_seconds_count{phase=\"total\"} 2\n");
    /* Redis did not answer: no queue numbers, and saying so */
    ASSERT_CONTAINS(b.data, "llmsb_queue_up 0\n");
    ASSERT(!strstr(b.data, "llmsb_queue_pending"));
    buf_release(&b);
    metrics_release(&m);
}

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
    buf_append(ud, p, sz * n);
    return sz * n;
}

static long get(const char *url, struct buf *body)
{
    CURL *c = curl_easy_init();
    long code = 0;

    buf_init(body, METRICS_BODY_CAP);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    return code;
}

TEST(server_answers_metrics_and_nothing_else)
{
    struct metrics m;
    struct llmsb_err err = {0};
    struct buf b;
    char addr[64], url[96];
    int port = 0;

    metrics_init(&m);
    done(&m, STATUS_OK, "cpp", 10, RESULT_ACQUIRE_WARM);
    /* a free port: try a few from a pid-derived start */
    for (int i = 0; i < 20 && !port; i++) {
        int p = 20000 + (int)((getpid() * 7 + i * 131) % 20000);
        snprintf(addr, sizeof(addr), "127.0.0.1:%d", p);
        llmsb_err_clear(&err);
        if (metrics_start(&m, addr, "redis://127.0.0.1:1", "llmsbtest", fake_gauges, NULL, &err) ==
            0)
            port = p;
    }
    ASSERT_MSG(port, err.msg);
    snprintf(url, sizeof(url), "http://%s/metrics", addr);
    ASSERT_EQ(get(url, &b), 200);
    ASSERT_CONTAINS(b.data, "llmsb_jobs_total{status=\"ok\",lang=\"cpp\"} 1\n");
    ASSERT_CONTAINS(b.data, "llmsb_queue_up 0\n"); /* nothing listens on port 1 */
    buf_release(&b);
    snprintf(url, sizeof(url), "http://%s/", addr);
    ASSERT_EQ(get(url, &b), 404);
    buf_release(&b);
    metrics_release(&m);
}

TEST(bad_address_is_refused_naming_it)
{
    static const char *const bad[] = {"9464", "127.0.0.1:", "127.0.0.1:70000", "host:port",
                                      "no.such.host.invalid:9464"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct metrics m;
        struct llmsb_err err = {0};
        char want[64];

        metrics_init(&m);
        ASSERT(metrics_start(&m, bad[i], "redis://127.0.0.1:1", "x", fake_gauges, NULL, &err) < 0);
        snprintf(want, sizeof(want), "worker.metrics_addr \"%s\"", bad[i]);
        ASSERT_CONTAINS(err.msg, want);
        metrics_release(&m);
    }
}

TEST(config_key_is_off_by_default)
{
    struct config c;
    struct llmsb_err err = {0};
    const char *y = "worker:\n  metrics_addr: \":9464\"\n";

    config_defaults(&c);
    ASSERT_STR(c.metrics_addr, "");
    ASSERT_EQ(config_load_string(&c, y, strlen(y), "t.yaml", &err), 0);
    ASSERT_STR(c.metrics_addr, ":9464");
}

TEST_MAIN("metrics", T(config_key_is_off_by_default), T(jobs_count_by_status_and_language),
          T(phases_are_cumulative_histograms_in_seconds),
          T(server_answers_metrics_and_nothing_else), T(bad_address_is_refused_naming_it))
