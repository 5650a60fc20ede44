/* bench_queue.c - N trivial Python jobs end to end, same concurrency, one
 * run:
 *   queue      XADD all N to a fresh redis-server; a worker with C slots and
 *              a warm pool runs them; done when its result is on the results
 *              stream
 *   exec       C threads running `docker exec <warm container> python3 -c ...`
 *   run-rm     C threads running `docker run --rm ... python3 -c ...`
 * Latency of a job = its completion minus the moment the batch was
 * submitted (all jobs are submitted at once, as a producer would).  Prints
 * throughput, p50/p99, and the ratios.  BENCH_N (default 200) and
 * BENCH_SLOTS (default 2) set the size; run-rm uses N/4 jobs. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/stats.h"
#include "common/status.h"
#include "queue/queue.h"

extern char **environ;

#define IMAGE "llmsb/python:latest"

static pid_t spawn(char *const argv[], const char *out_path)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

static int run_wait(char *const argv[])
{
    int st = 0;
    pid_t pid = spawn(argv, "/dev/null");
    if (pid < 0)
        return -1;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct result {
    const char *name;
    int n;
    double seconds;
    double p50, p99;
    double run_ms; /* queue: mean time in the sandbox (started_at..finished_at) */
    int zygote;    /* queue: jobs the zygote served */
};

static void report(const struct result *r, const struct result *base)
{
    double tput = r->n / r->seconds;
    printf("%-12s n=%-4d %7.1f jobs/s  latency p50 %8.0f ms  p99 %8.0f ms", r->name, r->n, tput,
           r->p50, r->p99);
    if (base && base != r)
        printf("   queue throughput = %.1fx this", (base->n / base->seconds) / tput);
    putchar('\n');
}

/* ---- baselines: C threads over N commands ------------------------------------- */

struct pool_run {
    int n, next;
    pthread_mutex_t mu;
    int64_t t0;
    double *lat;
    const char *container; /* exec target, or NULL for run --rm */
    int failed;
};

static void *baseline_thread(void *arg)
{
    struct pool_run *p = arg;
    for (;;) {
        int i;
        pthread_mutex_lock(&p->mu);
        i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n)
            return NULL;
        char code[64];
        snprintf(code, sizeof(code), "print(%d)", i);
        char *exec_argv[] = {
            "docker",  "exec", "-u", "10001:10001", "-w", "/tmp", (char *)p->container,
            "python3", "-c",   code, NULL};
        char *run_argv[] = {"docker",  "run", "--rm", "--network", "none", "--entrypoint",
                            "python3", IMAGE, "-c",   code,        NULL};
        if (run_wait(p->container ? exec_argv : run_argv) != 0)
            p->failed++;
        p->lat[i] = (double)(clock_mono_ms() - p->t0);
    }
}

static int baseline(const char *name, int n, int slots, const char *container, struct result *r)
{
    struct pool_run p = {n, 0, PTHREAD_MUTEX_INITIALIZER, clock_mono_ms(), NULL, container, 0};
    pthread_t th[64];

    p.lat = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < slots; i++)
        pthread_create(&th[i], NULL, baseline_thread, &p);
    for (int i = 0; i < slots; i++)
        pthread_join(th[i], NULL);
    r->name = name;
    r->n = n;
    r->seconds = (double)(clock_mono_ms() - p.t0) / 1000.0;
    r->p50 = bench_pct(p.lat, n, 0.5);
    r->p99 = bench_pct(p.lat, n, 0.99);
    free(p.lat);
    if (p.failed)
        fprintf(stderr, "bench: %d %s commands failed\n", p.failed, name);
    return p.failed ? -1 : 0;
}

/* ---- the queue ----------------------------------------------------------------- */

/* Enqueues one trivial job per slot and waits for their results. */
static int warm(struct queue *q, int slots, char *last, size_t lastsz, const char *dir)
{
    struct llmsb_err err = {0};

    for (int i = 0; i < slots; i++) {
        struct fields f;
        char id[64];
        fields_init(&f, 4);
        fields_adds(&f, "lang", "python");
        fields_adds(&f, "code", "print(0)");
        queue_enqueue(q, &f, id, sizeof(id), &err);
        fields_release(&f);
    }
    for (int seen = 0; seen < slots;) {
        struct queue_entry *e;
        size_t ne;
        if (queue_results_read(q, last, lastsz, 30000, &e, &ne, &err) != 0 || ne == 0) {
            fprintf(stderr, "bench: warm-up got no result: %s (see %s/worker.log)\n", err.msg, dir);
            return -1;
        }
        seen += (int)ne;
        queue_entries_free(e, ne);
    }
    return 0;
}

/* The mean of started_at..finished_at over the jobs b0..b(n-1), and how
 * many the zygote served: what the worker spent in the sandbox, so the
 * rest of a job's share of the wall clock is the queue's own cost. */
static void sandbox_time(struct queue *q, int n, struct result *r)
{
    double sum = 0;
    int got = 0;

    r->zygote = 0;
    for (int i = 0; i < n; i++) {
        struct llmsb_err err = {0};
        struct fields f;
        char jid[32];
        long long a = 0, b = 0;
        const char *s, *e, *z;
        snprintf(jid, sizeof(jid), "b%d", i);
        if (queue_result_get(q, jid, &f, &err) != 1) {
            fields_release(&f);
            continue;
        }
        s = fields_get(&f, "started_at", NULL);
        e = fields_get(&f, "finished_at", NULL);
        z = fields_get(&f, "zygote", NULL);
        if (s && e && parse_ll(s, 0, (long long)1 << 62, &a) == 0 &&
            parse_ll(e, 0, (long long)1 << 62, &b) == 0 && b >= a) {
            sum += (double)(b - a);
            got++;
        }
        r->zygote += z && strcmp(z, "true") == 0;
        fields_release(&f);
    }
    r->run_ms = got ? sum / got : 0;
}

static int queue_bench(const char *bin, int n, int slots, int fresh, struct result *r)
{
    char dir[] = "/tmp/llmsb-bench-XXXXXX", url[64], port[16], sl[16], log[128];
    int p = 17000 + getpid() % 1000;
    struct queue q;
    struct llmsb_err err = {0};
    pid_t redis = -1, worker = -1;
    double *lat = calloc((size_t)n, sizeof(double));
    char last[64] = "0-0";
    int done = 0, rc = -1;
    int64_t t0;

    memset(&q, 0, sizeof(q));
    if (!mkdtemp(dir))
        return -1;
    snprintf(port, sizeof(port), "%d", p);
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", p);
    snprintf(sl, sizeof(sl), "%d", slots);
    {
        char *argv[] = {"redis-server", "--port", port, "--bind", "127.0.0.1", "--appendonly",
                        "yes",          "--dir",  dir,  "--save", "",          NULL};
        snprintf(log, sizeof(log), "%s/redis.log", dir);
        redis = spawn(argv, log);
    }
    for (int i = 0; i < 50 && queue_open(&q, url, "bench", NULL, 5000, &err) != 0; i++)
        usleep(100000);
    if (!q.ctx) {
        fprintf(stderr, "bench: redis did not start: %s\n", err.msg);
        goto out;
    }
    setenv("LLMSB_REDIS_URL", url, 1);
    setenv("LLMSB_PREFIX", "bench", 1);
    {
        char cfgp[128];
        FILE *cf;
        snprintf(cfgp, sizeof(cfgp), "%s/config.yaml", dir);
        if (!(cf = fopen(cfgp, "w")))
            goto out;
        fprintf(cf, "jobs:\n  fresh_interpreter: %s\n", fresh ? "true" : "false");
        fclose(cf);
        setenv("LLMSB_CONFIG", cfgp, 1);
    }
    {
        char *argv[] = {(char *)bin, "worker", "--slots", sl, "--name", "bench-worker", NULL};
        snprintf(log, sizeof(log), "%s/worker.log", dir);
        worker = spawn(argv, log);
    }
    /* warm: one job per slot so the pool holds started containers, then
     * one more each (with the zygote: it preloads after the first) */
    if (warm(&q, slots, last, sizeof(last), dir) != 0 || warm(&q, slots, last, sizeof(last), dir))
        goto out;
    t0 = clock_mono_ms();
    for (int i = 0; i < n; i++) {
        struct fields f;
        char id[64], code[32], jid[32];
        int qrc;
        snprintf(code, sizeof(code), "print(%d)", i);
        snprintf(jid, sizeof(jid), "b%d", i);
        fields_init(&f, 4);
        fields_adds(&f, "id", jid);
        fields_adds(&f, "lang", "python");
        fields_adds(&f, "code", code);
        qrc = queue_enqueue(&q, &f, id, sizeof(id), &err);
        fields_release(&f);
        if (qrc != 0)
            goto out;
    }
    while (done < n) {
        struct queue_entry *e;
        size_t ne;
        if (queue_results_read(&q, last, sizeof(last), 60000, &e, &ne, &err) != 0 || ne == 0) {
            fprintf(stderr, "bench: stalled at %d/%d: %s\n", done, n, err.msg);
            goto out;
        }
        for (size_t i = 0; i < ne; i++) {
            const char *status = fields_get(&e[i].f, "status", NULL);
            if (status && strcmp(status, status_name(STATUS_OK)) != 0)
                fprintf(stderr, "bench: a job ended %s\n", status);
            lat[done++] = (double)(clock_mono_ms() - t0);
        }
        queue_entries_free(e, ne);
    }
    r->name = fresh ? "queue-fresh" : "queue";
    r->n = n;
    r->seconds = (double)(clock_mono_ms() - t0) / 1000.0;
    r->p50 = bench_pct(lat, n, 0.5);
    r->p99 = bench_pct(lat, n, 0.99);
    sandbox_time(&q, n, r);
    rc = 0;
out:
    if (worker > 0) {
        kill(worker, SIGTERM);
        waitpid(worker, NULL, 0);
    }
    queue_close(&q);
    if (redis > 0) {
        kill(redis, SIGTERM);
        waitpid(redis, NULL, 0);
    }
    {
        char *argv[] = {"rm", "-rf", dir, NULL};
        run_wait(argv);
    }
    free(lat);
    return rc;
}

int main(int argc, char **argv)
{
    const char *ns = getenv("BENCH_N"), *ss = getenv("BENCH_SLOTS");
    int n = ns ? atoi(ns) : 200, slots = ss ? atoi(ss) : 2; /* bench knobs, not untrusted */
    const char *bin = argc > 1 ? argv[1] : "bin/llm-sandbox";
    struct result rq, rf, rx, rr;
    char cid[128] = "";

    if (n < 8)
        n = 8;
    if (slots < 1 || slots > 64)
        slots = 2;
    printf("bench: %d trivial Python jobs, concurrency %d, image %s\n", n, slots, IMAGE);
    if (queue_bench(bin, n, slots, 0, &rq) != 0 || queue_bench(bin, n, slots, 1, &rf) != 0)
        return 1;
    {
        char *argv_[] = {
            "docker",           "run",          "-d",    "--rm", "--network", "none", "--name",
            "llmsb-bench-exec", "--entrypoint", "sleep", IMAGE,  "3600",      NULL};
        run_wait((char *[]){"docker", "rm", "-f", "llmsb-bench-exec", NULL});
        if (run_wait(argv_) != 0) {
            fprintf(stderr, "bench: cannot start the exec container\n");
            return 1;
        }
        snprintf(cid, sizeof(cid), "llmsb-bench-exec");
    }
    if (baseline("exec", n, slots, cid, &rx) != 0)
        return 1;
    run_wait((char *[]){"docker", "rm", "-f", cid, NULL});
    if (baseline("run-rm", n / 4, slots, NULL, &rr) != 0)
        return 1;
    report(&rq, NULL);
    report(&rf, &rq);
    report(&rx, &rq);
    report(&rr, &rq);
    for (const struct result *q = &rq; q; q = q == &rq ? &rf : NULL)
        printf("%-12s %d/%d jobs through the zygote; per job: %.1f ms of wall clock per slot, "
               "%.1f ms in the sandbox (worker: start to finish), so %.1f ms the queue's own "
               "(claim, mark running, result write, ack)\n",
               q->name, q->zygote, q->n, q->seconds * 1000.0 * slots / q->n, q->run_ms,
               q->seconds * 1000.0 * slots / q->n - q->run_ms);
    printf("targets: queue >= 50x run-rm (got %.1fx), >= 10x exec (got %.1fx)\n",
           (rq.n / rq.seconds) / (rr.n / rr.seconds), (rq.n / rq.seconds) / (rx.n / rx.seconds));
    return 0;
}
