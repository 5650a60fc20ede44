/* bench_queue_scale.c - the queue's ceiling with many worker processes on
 * one machine against one redis-server (make bench-queue; issue 36,
 * docs/benchmarks.md).  For each runner (BENCH_RUNNERS: null, fake) and
 * each worker count W (BENCH_WORKERS), on a redis-server of its own
 * (BENCH_PORT, default 7400; no persistence):
 *   1. N trivial jobs (BENCH_N) are enqueued by pipelined XADDs: Redis
 *      memory per pending job = (used_memory with N pending - empty) / N;
 *   2. W processes of the test-only worker (bin/bench/llm-sandbox-fake
 *      worker --backend RUNNER, BENCH_SLOTS slots each) drain them: the
 *      rate between 10% and 90% done is the ceiling, with Redis's CPU
 *      (/proc), the workers' (their agents' included), the machine's, and
 *      INFO commandstats deltas per job (commands run inside the Lua
 *      scripts are counted too, and EVAL's time includes theirs);
 *   3. jobs at half that rate for BENCH_LAT_SECONDS (open loop): p50/p99
 *      from enqueue (the entry id's time) to start (the result's
 *      started_at, when the worker marked it running).
 * Prints a table, then each run's commands per job.  The worker binary
 * and the fake agent are test doubles: never a production build. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/stats.h"

#define PREFIX "bq"
#define MAX_W 16
#define MAX_PROCS 1024
#define MAX_CMDS 96
#define PIPE_BATCH 1000

struct cmdstat {
    char name[48];
    long long calls, usec;
};

/* What is read at a point of a run. */
struct snap {
    double t;                         /* monotonic seconds */
    long long done;                   /* jobs finished */
    double redis_cpu, workers_cpu_s;  /* CPU seconds so far */
    double machine_busy, machine_all; /* /proc/stat jiffies */
    struct cmdstat cmd[MAX_CMDS];
    int ncmd;
};

struct run {
    const char *runner;
    int workers, slots;
    long n;
    double enqueue_rate, jobs_s, redis_cpu_pct, lua_pct, workers_cores, machine_cores;
    double cmds_job, p50_ms, p99_ms, lat_rate;
    double redis_us_job, workers_us_job;
    /* MONITOR's sample after the 90% mark: commands clients sent (not a
     * script's) by name, and all commands */
    struct cmdstat sent[MAX_CMDS];
    int nsent;
    long long mon_sent, mon_all;
    double mem_pending_b, mem_done_b;
    struct snap a, b;
    int failed;
};

static const char *bin;
static int port;
static char dir[256];
static pid_t redis_pid;
static pid_t wpids[MAX_PROCS];
static int nwpids;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long env_long(const char *name, long def)
{
    const char *v = getenv(name);
    char *end;
    long x;

    if (!v || !*v)
        return def;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || *end || x <= 0) {
        fprintf(stderr, "bench_queue_scale: %s must be a positive number (got \"%s\")\n", name, v);
        exit(2);
    }
    return x;
}

/* ---- processes ------------------------------------------------------------ */

/* Starts argv[0] in dir with stdout and stderr to log. */
static pid_t spawn_in_dir(char *const argv[], const char *log)
{
    pid_t pid = fork();

    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644), null = open("/dev/null", O_RDONLY);
        if (fd < 0 || null < 0 || chdir(dir) != 0)
            _exit(126);
        dup2(null, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Waits up to ms for pid; then SIGKILL. */
static void reap(pid_t pid, int ms)
{
    for (int i = 0; i < ms / 10; i++)
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        else
            usleep(10000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* utime + stime (+ its reaped children's with children) of pid, seconds. */
static double proc_cpu(pid_t pid, int children, pid_t *ppid)
{
    char path[64], buf[1024], *p;
    unsigned long long f[4] = {0};
    int ppid_v = 0;
    FILE *fp;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(fp = fopen(path, "r")))
        return 0;
    p = fgets(buf, sizeof(buf), fp) ? strrchr(buf, ')') : NULL;
    fclose(fp);
    /* after "comm)": state ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime stime cutime cstime */
    if (!p || sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
                     &ppid_v, &f[0], &f[1], &f[2], &f[3]) != 5)
        return 0;
    if (ppid)
        *ppid = ppid_v;
    return (double)(f[0] + f[1] + (children ? f[2] + f[3] : 0)) / (double)sysconf(_SC_CLK_TCK);
}

static int is_worker(pid_t pid)
{
    for (int i = 0; i < nwpids; i++)
        if (wpids[i] == pid)
            return 1;
    return 0;
}

/* The workers' CPU seconds: theirs, their reaped children's, and their
 * live children's (the fake agents: a container each). */
static double workers_cpu(void)
{
    double sum = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;

    for (int i = 0; i < nwpids; i++)
        sum += proc_cpu(wpids[i], 1, NULL);
    while (d && (de = readdir(d))) {
        pid_t pid = (pid_t)strtol(de->d_name, NULL, 10), pp = 0;
        double c;
        if (pid <= 0)
            continue;
        c = proc_cpu(pid, 0, &pp);
        if (is_worker(pp))
            sum += c;
    }
    if (d)
        closedir(d);
    return sum;
}

static void machine_cpu(double *busy, double *all)
{
    unsigned long long v[8] = {0};
    FILE *fp = fopen("/proc/stat", "r");

    *busy = *all = 0;
    if (!fp)
        return;
    if (fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++)
            *all += (double)v[i];
        *busy = *all - (double)v[3] - (double)v[4]; /* idle, iowait */
    }
    fclose(fp);
}

/* ---- redis ---------------------------------------------------------------- */

static redisContext *redis_start(void)
{
    char ports[16], logp[300];
    char *argv[] = {"redis-server", "--port", ports,          "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no",     "--maxclients", "10000",  NULL};
    redisContext *c = NULL;

    snprintf(ports, sizeof(ports), "%d", port);
    snprintf(logp, sizeof(logp), "%s/redis.log", dir);
    if ((redis_pid = spawn_in_dir(argv, logp)) < 0) {
        perror("bench_queue_scale: fork");
        exit(1);
    }
    for (int i = 0; i < 200; i++) {
        usleep(25000);
        c = redisConnect("127.0.0.1", port);
        if (c && !c->err)
            return c;
        redisFree(c);
    }
    fprintf(stderr, "bench_queue_scale: redis-server on port %d did not answer (see %s)\n", port,
            logp);
    exit(1);
}

static void redis_stop(redisContext *c)
{
    redisFree(c);
    kill(redis_pid, SIGTERM);
    reap(redis_pid, 5000);
}

static long long cmd_int(redisContext *c, const char *fmt, const char *arg)
{
    redisReply *r = redisCommand(c, fmt, arg);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    if (!r) {
        fprintf(stderr, "bench_queue_scale: redis: %s\n", c->errstr);
        exit(1);
    }
    freeReplyObject(r);
    return v;
}

/* The value of "field:" in INFO section. */
static long long info_ll(redisContext *c, const char *section, const char *field)
{
    redisReply *r = redisCommand(c, "INFO %s", section);
    long long v = -1;
    const char *p;

    if (r && r->type == REDIS_REPLY_STRING && (p = strstr(r->str, field)))
        v = strtoll(p + strlen(field) + 1, NULL, 10);
    freeReplyObject(r);
    return v;
}

static void info_cmdstats(redisContext *c, struct snap *s)
{
    redisReply *r = redisCommand(c, "INFO commandstats");
    const char *p = r && r->type == REDIS_REPLY_STRING ? r->str : "";

    s->ncmd = 0;
    while ((p = strstr(p, "cmdstat_")) && s->ncmd < MAX_CMDS) {
        struct cmdstat *m = &s->cmd[s->ncmd];
        if (sscanf(p, "cmdstat_%47[^:]:calls=%lld,usec=%lld", m->name, &m->calls, &m->usec) == 3)
            s->ncmd++;
        p += 8;
    }
    freeReplyObject(r);
}

/* XADDs jobs first..first+n-1 (ids tag-i), pipelined. */
static void enqueue(redisContext *c, const char *tag, long first, long n)
{
    for (long i = 0; i < n; i += PIPE_BATCH) {
        long m = n - i < PIPE_BATCH ? n - i : PIPE_BATCH;
        for (long k = 0; k < m; k++) {
            char id[48];
            snprintf(id, sizeof(id), "%s-%ld", tag, first + i + k);
            redisAppendCommand(c, "XADD " PREFIX ":jobs * id %s lang bash code true", id);
        }
        for (long k = 0; k < m; k++) {
            redisReply *r = NULL;
            if (redisGetReply(c, (void **)&r) != REDIS_OK || r->type == REDIS_REPLY_ERROR) {
                fprintf(stderr, "bench_queue_scale: XADD: %s\n", r ? r->str : c->errstr);
                exit(1);
            }
            freeReplyObject(r);
        }
    }
}

/* ---- a run ---------------------------------------------------------------- */

static void workers_start(const struct run *rn)
{
    char url[64], slots[16], name[32], logp[300], cfgp[300];
    FILE *fp;

    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
    snprintf(slots, sizeof(slots), "%d", rn->slots);
    snprintf(cfgp, sizeof(cfgp), "%s/bench.yaml", dir);
    if ((fp = fopen(cfgp, "w"))) {
        /* BENCH_LOG_LEVEL info: each job's line (costs the workers CPU) */
        fprintf(fp, "log_level: %s\n",
                getenv("BENCH_LOG_LEVEL") ? getenv("BENCH_LOG_LEVEL") : "warn");
        fclose(fp);
    }
    nwpids = 0;
    for (int i = 0; i < rn->workers; i++) {
        char *argv[] = {(char *)bin,        "worker",  "--config", cfgp,       "--backend",
                        (char *)rn->runner, "--redis", url,        "--prefix", PREFIX,
                        "--slots",          slots,     "--name",   name,       NULL};
        snprintf(name, sizeof(name), "bq-%s-w%d", rn->runner, i);
        snprintf(logp, sizeof(logp), "%s/%s.log", dir, name);
        wpids[nwpids++] = spawn_in_dir(argv, logp);
    }
}

static void workers_stop(void)
{
    for (int i = 0; i < nwpids; i++)
        kill(wpids[i], SIGTERM);
    for (int i = 0; i < nwpids; i++)
        reap(wpids[i], 20000);
    nwpids = 0;
}

static void snap_take(redisContext *c, struct snap *s, long long done)
{
    s->t = now_s();
    s->done = done;
    s->redis_cpu = proc_cpu(redis_pid, 0, NULL);
    s->workers_cpu_s = workers_cpu();
    machine_cpu(&s->machine_busy, &s->machine_all);
    info_cmdstats(c, s);
}

/* Counts by name what clients send (a line "[db host:port] "CMD" ...")
 * apart from what scripts run ("[db lua] ..."), for secs of MONITOR. */
static void monitor_sample(struct run *rn, double secs)
{
    redisContext *m = redisConnect("127.0.0.1", port);
    struct timeval tv = {2, 0}; /* a loaded machine: a reply may wait */
    double until = now_s() + secs;
    redisReply *r = NULL;

    if (!m || m->err || redisSetTimeout(m, tv) != REDIS_OK || !(r = redisCommand(m, "MONITOR"))) {
        redisFree(m);
        return;
    }
    freeReplyObject(r);
    while (now_s() < until && redisGetReply(m, (void **)&r) == REDIS_OK) {
        const char *q = r->type == REDIS_REPLY_STATUS ? strchr(r->str, '"') : NULL;
        char name[48] = "";
        int i;
        if (q && sscanf(q + 1, "%47[^\"]", name) == 1) {
            rn->mon_all++;
            if (!strstr(r->str, " lua]")) {
                rn->mon_sent++;
                for (i = 0; i < rn->nsent && strcasecmp(rn->sent[i].name, name) != 0; i++)
                    ;
                if (i == rn->nsent && i < MAX_CMDS)
                    snprintf(rn->sent[rn->nsent++].name, sizeof(name), "%s", name);
                if (i < rn->nsent)
                    rn->sent[i].calls++;
            }
        }
        freeReplyObject(r);
    }
    redisFree(m);
}

/* Waits until the jobs stream is empty, taking the snapshots at 10% and
 * 90% of total done.  Returns 0, or -1 when nothing moved for 60 s. */
static int drain(redisContext *c, struct run *rn, long total)
{
    long long last = -1;
    double moved = now_s();
    int have_a = 0, have_b = 0;

    for (;;) {
        long long left = cmd_int(c, "XLEN %s", PREFIX ":jobs"), done = total - left;
        if (!have_a && done >= total / 10)
            snap_take(c, &rn->a, done), have_a = 1;
        if (!have_b && done >= total - total / 10) {
            snap_take(c, &rn->b, done), have_b = 1;
            if (rn->runner)
                monitor_sample(rn, 0.5);
        }
        if (left == 0)
            return 0;
        if (left != last)
            last = left, moved = now_s();
        else if (now_s() - moved > 60)
            return -1;
        usleep(100000);
    }
}

static long long cmd_of(const struct snap *s, const char *name, int usec)
{
    for (int i = 0; i < s->ncmd; i++)
        if (strcmp(s->cmd[i].name, name) == 0)
            return usec ? s->cmd[i].usec : s->cmd[i].calls;
    return 0;
}

static void figures(struct run *rn)
{
    const struct snap *a = &rn->a, *b = &rn->b;
    double dt = b->t - a->t, jobs = (double)(b->done - a->done), calls = 0;
    double ncpu = (double)sysconf(_SC_NPROCESSORS_ONLN);

    rn->jobs_s = jobs / dt;
    rn->redis_us_job = 1e6 * (b->redis_cpu - a->redis_cpu) / jobs;
    rn->workers_us_job = 1e6 * (b->workers_cpu_s - a->workers_cpu_s) / jobs;
    rn->redis_cpu_pct = 100 * (b->redis_cpu - a->redis_cpu) / dt;
    rn->workers_cores = (b->workers_cpu_s - a->workers_cpu_s) / dt;
    rn->machine_cores =
        ncpu * (b->machine_busy - a->machine_busy) / (b->machine_all - a->machine_all);
    rn->lua_pct = 100 *
                  (double)(cmd_of(b, "eval", 1) - cmd_of(a, "eval", 1) + cmd_of(b, "evalsha", 1) -
                           cmd_of(a, "evalsha", 1)) /
                  1e6 / (b->redis_cpu - a->redis_cpu);
    for (int i = 0; i < b->ncmd; i++)
        calls += (double)(b->cmd[i].calls - cmd_of(a, b->cmd[i].name, 0));
    rn->cmds_job = calls / jobs;
}

/* Open loop at rate jobs/s for secs; then enqueue-to-start percentiles
 * from the results (started_at - queued_at, both ms). */
static void latency(redisContext *c, struct run *rn, double rate, double secs)
{
    long n = (long)(rate * secs), sent = 0, got = 0;
    double t0 = now_s(), *v = calloc((size_t)n + 1, sizeof(*v));

    rn->lat_rate = rate;
    while (sent < n) {
        long due = (long)((now_s() - t0) * rate);
        if (due > n)
            due = n;
        if (due > sent)
            enqueue(c, "lat", sent, due - sent), sent = due;
        usleep(5000);
    }
    if (drain(c, &(struct run){0}, n) != 0)
        fprintf(stderr, "bench_queue_scale: the latency jobs did not finish\n");
    for (long i = 0; i < n; i++)
        redisAppendCommand(c, "HMGET " PREFIX ":result:lat-%ld queued_at started_at", i);
    for (long i = 0; i < n; i++) {
        redisReply *r = NULL;
        if (redisGetReply(c, (void **)&r) == REDIS_OK && r->type == REDIS_REPLY_ARRAY &&
            r->elements == 2 && r->element[0]->str && r->element[1]->str)
            v[got++] = (double)(strtoll(r->element[1]->str, NULL, 10) -
                                strtoll(r->element[0]->str, NULL, 10));
        freeReplyObject(r);
    }
    rn->p50_ms = got ? bench_pct(v, (int)got, 0.50) : -1;
    rn->p99_ms = got ? bench_pct(v, (int)got, 0.99) : -1;
    free(v);
}

static void run_one(struct run *rn, double lat_secs)
{
    redisContext *c = redis_start();
    long long empty = info_ll(c, "memory", "used_memory"), full;
    double t0 = now_s();

    enqueue(c, "job", 0, rn->n);
    rn->enqueue_rate = (double)rn->n / (now_s() - t0);
    full = info_ll(c, "memory", "used_memory");
    rn->mem_pending_b = (double)(full - empty) / (double)rn->n;
    workers_start(rn);
    if (drain(c, rn, rn->n) != 0) {
        fprintf(stderr, "bench_queue_scale: %s W=%d: no progress for 60 s (logs in %s)\n",
                rn->runner, rn->workers, dir);
        rn->failed = 1;
    } else {
        figures(rn);
        rn->mem_done_b = (double)(info_ll(c, "memory", "used_memory") - empty) / (double)rn->n;
        latency(c, rn, rn->jobs_s / 2, lat_secs);
    }
    workers_stop();
    redis_stop(c);
}

/* ---- report --------------------------------------------------------------- */

/* Client round trips a job: Redis's commands a job, scaled by the share
 * MONITOR saw clients send. */
static double sent_per_job(const struct run *r, long long calls)
{
    return r->mon_all ? r->cmds_job * (double)calls / (double)r->mon_all : -1;
}

static void print_table(const struct run *r, int n)
{
    printf("\n%-6s %4s %5s %8s %7s %6s %7s %5s %5s %7s %5s %7s %6s %7s %6s %6s %6s %6s\n", "runner",
           "W", "slots", "N", "jobs/s", "redis%", "r_us/j", "lua%", "wrk", "w_us/j", "mach",
           "cmd/job", "rt/job", "lat@r/s", "p50ms", "p99ms", "B/pend", "B/done");
    for (int i = 0; i < n; i++, r++) {
        if (r->failed) {
            printf("%-6s %4d %5d %8ld   (failed: no progress)\n", r->runner, r->workers, r->slots,
                   r->n);
            continue;
        }
        printf("%-6s %4d %5d %8ld %7.0f %6.0f %7.0f %5.0f %5.2f %7.0f %5.2f %7.2f %6.2f %7.0f "
               "%6.0f %6.0f %6.0f %6.0f\n",
               r->runner, r->workers, r->slots, r->n, r->jobs_s, r->redis_cpu_pct, r->redis_us_job,
               r->lua_pct, r->workers_cores, r->workers_us_job, r->machine_cores, r->cmds_job,
               sent_per_job(r, r->mon_sent), r->lat_rate, r->p50_ms, r->p99_ms, r->mem_pending_b,
               r->mem_done_b);
    }
}

static void print_commands(const struct run *r)
{
    double jobs = (double)(r->b.done - r->a.done);

    printf("%s W=%d: sent by clients a job:", r->runner, r->workers);
    for (int i = 0; i < r->nsent; i++)
        if (sent_per_job(r, r->sent[i].calls) >= 0.005)
            printf(" %s %.2f", r->sent[i].name, sent_per_job(r, r->sent[i].calls));
    printf("\n  run in Redis a job (calls, usec; a script's commands included, EVAL's usec "
           "includes theirs):");
    for (int i = 0; i < r->b.ncmd; i++) {
        double calls = (double)(r->b.cmd[i].calls - cmd_of(&r->a, r->b.cmd[i].name, 0)) / jobs;
        double usec = (double)(r->b.cmd[i].usec - cmd_of(&r->a, r->b.cmd[i].name, 1)) / jobs;
        if (calls >= 0.005)
            printf(" %s %.2f %.1f;", r->b.cmd[i].name, calls, usec);
    }
    putchar('\n');
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    char *end;

    while (*s && n < max) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > MAX_PROCS) {
            fprintf(stderr,
                    "bench_queue_scale: BENCH_WORKERS: \"%s\" is not a list of counts "
                    "1..%d\n",
                    s, MAX_PROCS);
            exit(2);
        }
        out[n++] = (int)v;
        s = end + strspn(end, " ,");
    }
    return n;
}

int main(int argc, char **argv)
{
    static struct run runs[2 * MAX_W];
    int ws[MAX_W], nw, nr = 0;
    long n = env_long("BENCH_N", 200000), fake_n = env_long("BENCH_FAKE_N", n / 10);
    const char *runners = getenv("BENCH_RUNNERS") ? getenv("BENCH_RUNNERS") : "null fake";
    char loadavg[64] = "?";
    FILE *fp;

    if (argc != 2) {
        fprintf(stderr, "usage: bench_queue_scale bin/bench/llm-sandbox-fake\n");
        return 2;
    }
    if (!(bin = realpath(argv[1], NULL))) { /* the workers start in dir */
        fprintf(stderr, "bench_queue_scale: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    port = (int)env_long("BENCH_PORT", 7400);
    nw = parse_list(getenv("BENCH_WORKERS") ? getenv("BENCH_WORKERS") : "10 50 100 200", ws, MAX_W);
    snprintf(dir, sizeof(dir), "/tmp/bench-queue-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("bench_queue_scale: mkdtemp");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    if ((fp = fopen("/proc/loadavg", "r"))) {
        if (!fgets(loadavg, sizeof(loadavg), fp))
            loadavg[0] = 0;
        fclose(fp);
    }
    printf("bench_queue_scale: %ld jobs a run (fake runner: %ld), %s, slots %ld, redis port %d, "
           "%ld cores, loadavg %s",
           n, fake_n, runners, env_long("BENCH_SLOTS", 2), port, sysconf(_SC_NPROCESSORS_ONLN),
           loadavg);
    for (const char *r = runners; *r; r += strspn(r, " ")) {
        size_t len = strcspn(r, " ");
        const char *name = strncmp(r, "null", len) == 0 && len == 4   ? "null"
                           : strncmp(r, "fake", len) == 0 && len == 4 ? "fake"
                                                                      : NULL;
        if (!name) {
            fprintf(stderr, "bench_queue_scale: BENCH_RUNNERS: \"%.*s\" is not null or fake\n",
                    (int)len, r);
            return 2;
        }
        for (int i = 0; i < nw; i++) {
            struct run *rn = &runs[nr++];
            rn->runner = name;
            rn->workers = ws[i];
            rn->slots = (int)env_long("BENCH_SLOTS", 2);
            rn->n = name[0] == 'f' ? fake_n : n;
            run_one(rn, (double)env_long("BENCH_LAT_SECONDS", 5));
            print_table(rn, 1);
            fflush(stdout);
        }
        r += len;
    }
    print_table(runs, nr);
    putchar('\n');
    for (int i = 0; i < nr; i++)
        if (!runs[i].failed)
            print_commands(&runs[i]);
    if ((fp = fopen("/proc/loadavg", "r"))) {
        if (fgets(loadavg, sizeof(loadavg), fp))
            printf("loadavg at the end: %s", loadavg);
        fclose(fp);
    }
    printf("logs: %s\n", dir);
    return 0;
}
