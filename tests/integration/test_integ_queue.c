/* test_integ_queue.c - queue/ against a real redis-server that the test
 * starts on a temporary port (hiredis's own pattern): enqueue and read
 * through the group, the atomic finish (first final result wins, exactly
 * one notification and results entry), leases (renew, lost, release),
 * reclaim of dead consumers with their delivery counted, recovery of own
 * deliveries, cancel keys, heartbeats, entries that are too big, and the
 * argument bound of a plain command.  No sleeps stand in for
 * synchronisation: idle times are set with XCLAIM IDLE where a test needs
 * an entry to look old.  A missing redis-server is a
 * failure. */
#include "tests/unit/test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "queue/queue.h"
#include "queue/queue_int.h"
#include "scheduler/scheduler.h"

extern char **environ;

static pid_t redis_pid = -1;
static char url[64];
static int redis_ok;
static int prefix_seq;

static void stop_redis(void)
{
    if (redis_pid > 0) {
        kill(redis_pid, SIGKILL);
        waitpid(redis_pid, NULL, 0);
        redis_pid = -1;
    }
}

/* Starts redis-server on port; 0 when it answers PING, -1 when it died
 * (the port was taken) or did not answer. */
static int try_port(int port)
{
    char ports[16];
    char *argv[] = {"redis-server", "--port", ports,          "--bind", "127.0.0.1",
                    "--save",       "",       "--appendonly", "no",     NULL};
    posix_spawn_file_actions_t fa;
    struct llmsb_err err = {0};
    struct queue q;

    snprintf(ports, sizeof(ports), "%d", port);
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (posix_spawnp(&redis_pid, "redis-server", &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        redis_pid = -1;
        return -2;
    }
    posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 100; i++) {
        struct timespec ts = {0, 50 * 1000000};
        if (waitpid(redis_pid, NULL, WNOHANG) == redis_pid) {
            redis_pid = -1; /* it exited: the port is someone else's */
            return -1;
        }
        if (queue_open(&q, url, "probe", NULL, 1000, &err) == 0) {
            queue_close(&q);
            return 0;
        }
        queue_close(&q);
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "integration_queue: redis-server did not answer: %s\n", err.msg);
    stop_redis();
    return -1;
}

/* Below the kernel's ephemeral range (32768-60999), so no client socket
 * holds the port; a taken one is retried on the next.  QUEUE_REDIS_PORT
 * picks the first port to try (a host that gives each run a range). */
static void start_redis(void) __attribute__((constructor));
static void start_redis(void)
{
    const char *env = getenv("QUEUE_REDIS_PORT");
    int base = 20000 + (int)(getpid() % 10000);

    if (env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end != env && *end == '\0' && v > 0 && v < 65536 - 370)
            base = (int)v;
    }

    for (int k = 0; k < 20; k++) {
        int rc = try_port(base + k * 37 % 10000);
        if (rc == 0) {
            atexit(stop_redis);
            redis_ok = 1;
            return;
        }
        if (rc == -2)
            break;
    }
    fprintf(stderr, "integration_queue: cannot start redis-server (apt-get install "
                    "redis-server)\n");
}

/* A connection as consumer on a prefix of its own (one per test). */
static int open_as(struct queue *q, const char *prefix, const char *consumer)
{
    struct llmsb_err err = {0};
    if (queue_open(q, url, prefix, consumer, 5000, &err) != 0 || queue_group_ensure(q, &err)) {
        fprintf(stderr, "  open: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void new_prefix(char *out, size_t n)
{
    snprintf(out, n, "t%d-%d", (int)getpid(), ++prefix_seq);
}

static int enqueue(struct queue *q, const char *id, char *entry)
{
    struct llmsb_err err = {0};
    struct fields f;
    int rc;

    fields_init(&f, 4);
    fields_adds(&f, "id", id);
    fields_adds(&f, "lang", "python");
    fields_adds(&f, "code", "print(1)");
    rc = queue_enqueue(q, &f, entry, QUEUE_ENTRY_ID_MAX, &err);
    fields_release(&f);
    return rc;
}

static int finish_with(struct queue *q, const char *entry, const char *id, const char *status,
                       const char *meta, const struct queue_copies *c)
{
    struct llmsb_err err = {0};
    struct fields f;
    int rc;

    fields_init(&f, 4);
    fields_adds(&f, "id", id);
    fields_adds(&f, "status", status);
    if (meta)
        fields_adds(&f, "meta", meta);
    rc = queue_finish(q, entry, id, status, &f, NULL, c, 60, &err);
    fields_release(&f);
    return rc;
}

static int finish(struct queue *q, const char *entry, const char *id, const char *status)
{
    return finish_with(q, entry, id, status, NULL, NULL);
}

/* Enqueues id and reads it back as consumer q (delivery 1). */
static int take_new(struct queue *q, const char *id, char *entry)
{
    struct llmsb_err err = {0};
    struct queue_entry *e;
    size_t n = 0;
    int rc = enqueue(q, id, entry);

    if (rc == 0)
        rc = queue_read(q, 1, 100, &e, &n, &err);
    if (rc == 0) {
        rc = n == 1 && strcmp(e[0].id, entry) == 0 ? 0 : -1;
        queue_entries_free(e, n);
    }
    return rc;
}

/* Counts entries for id on the results stream. */
static int results_for(struct queue *q, const char *id)
{
    struct llmsb_err err = {0};
    struct queue_entry *e;
    char last[64] = "0-0";
    size_t n;
    int count = 0;

    if (queue_results_read(q, last, sizeof(last), 0, &e, &n, &err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *v = fields_get(&e[i].f, "id", NULL);
        count += v && strcmp(v, id) == 0;
    }
    queue_entries_free(e, n);
    return count;
}

TEST(enqueue_read_finish_exactly_once)
{
    struct queue q;
    struct queue_entry *e;
    struct llmsb_err err = {0};
    struct fields r;
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX], status[32];
    size_t n;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(enqueue(&q, "job-a", entry), 0);
    ASSERT_EQ(queue_read(&q, 1, 100, &e, &n, &err), 0);
    ASSERT_EQ(n, 1);
    ASSERT_STR(e[0].id, entry);
    ASSERT_EQ(e[0].deliveries, 1);
    ASSERT_STR(fields_get(&e[0].f, "code", NULL), "print(1)");
    queue_entries_free(e, n);
    ASSERT_EQ(queue_read(&q, 1, 100, &e, &n, &err), 0); /* nothing else for the group */
    ASSERT_EQ(n, 0);
    queue_entries_free(e, n);
    ASSERT_EQ(finish(&q, entry, "job-a", "ok"), 1);
    ASSERT_EQ(finish(&q, entry, "job-a", "runtime_error"), 0); /* the first final result wins */
    ASSERT_EQ(queue_result_get(&q, "job-a", &r, &err), 1);
    ASSERT_STR(fields_get(&r, "status", NULL), "ok");
    fields_release(&r);
    ASSERT_EQ(results_for(&q, "job-a"), 1);
    ASSERT_EQ(queue_wait_done(&q, "job-a", 1, status, sizeof(status), &err), 1);
    ASSERT_STR(status, "ok");
    queue_close(&q);
}

TEST(mark_running_never_replaces_a_final_result)
{
    struct queue q;
    struct llmsb_err err = {0};
    struct fields f, r;
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX];

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    fields_init(&f, 2);
    fields_adds(&f, "worker", "w1");
    ASSERT_EQ(queue_mark_running(&q, "job-b", NULL, &f, NULL, 60, &err), 1);
    /* a cancel request comes back with the mark, in the same round trip */
    ASSERT_EQ(queue_cancel(&q, "job-c", 60, &err), 0);
    ASSERT_EQ(queue_mark_running(&q, "job-c", NULL, &f, NULL, 60, &err), 3);
    ASSERT_EQ(enqueue(&q, "job-b", entry), 0);
    ASSERT_EQ(finish(&q, entry, "job-b", "timeout"), 1);
    ASSERT_EQ(queue_mark_running(&q, "job-b", NULL, &f, NULL, 60, &err), 0);
    fields_release(&f);
    ASSERT_EQ(queue_result_get(&q, "job-b", &r, &err), 1);
    ASSERT_STR(fields_get(&r, "status", NULL), "timeout");
    fields_release(&r);
    queue_close(&q);
}

/* Two entries of one id: the first delivery marks it running, the other
 * is told another runs it (2) while that entry is delivered and not
 * acknowledged, whoever redelivers it; then it takes the mark, or finds
 * the final result. */
TEST(one_run_of_an_id_at_a_time)
{
    struct queue q;
    struct llmsb_err err = {0};
    struct fields f;
    char prefix[32], e1[QUEUE_ENTRY_ID_MAX], e2[QUEUE_ENTRY_ID_MAX], e3[QUEUE_ENTRY_ID_MAX];

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(take_new(&q, "twin", e1), 0);
    ASSERT_EQ(take_new(&q, "twin", e2), 0);
    fields_init(&f, 2);
    fields_adds(&f, "worker", "w1");
    ASSERT_EQ(queue_mark_running(&q, "twin", e1, &f, NULL, 60, &err), 1);
    ASSERT_EQ(queue_mark_running(&q, "twin", e2, &f, NULL, 60, &err), 2);
    ASSERT_EQ(queue_mark_running(&q, "twin", e1, &f, NULL, 60, &err), 1); /* e1 again */
    ASSERT_EQ(queue_release(&q, e1, 0, 0, &err), 0); /* given back: still pending */
    ASSERT_EQ(queue_mark_running(&q, "twin", e2, &f, NULL, 60, &err), 2);
    ASSERT_EQ(queue_ack(&q, e1, &err), 0); /* gone without a result */
    ASSERT_EQ(queue_mark_running(&q, "twin", e2, &f, NULL, 60, &err), 1);
    ASSERT_EQ(take_new(&q, "twin", e3), 0);
    ASSERT_EQ(queue_mark_running(&q, "twin", e3, &f, NULL, 60, &err), 2);
    ASSERT_EQ(finish(&q, e2, "twin", "ok"), 1);
    ASSERT_EQ(queue_mark_running(&q, "twin", e3, &f, NULL, 60, &err), 0);
    fields_release(&f);
    queue_close(&q);
}

/* The status (and copy_of, meta) of id's result, "" when absent. */
static void result_of(struct queue *q, const char *id, char *out, size_t n)
{
    struct llmsb_err err = {0};
    struct fields r;
    const char *of, *meta;

    out[0] = '\0';
    if (queue_result_get(q, id, &r, &err) != 1)
        return;
    of = fields_get(&r, "copy_of", NULL);
    meta = fields_get(&r, "meta", NULL);
    snprintf(out, n, "%s %s %s %s", fields_get(&r, "status", NULL), fields_get(&r, "id", NULL),
             of ? of : "-", meta ? meta : "-");
    fields_release(&r);
}

/* The copies of a run get its result in the same write, each under its own
 * id and meta, each first-wins on its own (one already final keeps its
 * result; one with a cancel request ends cancelled); a recheck replaces a
 * result of the status it rechecks once, and no other. */
TEST(copies_are_written_with_the_run_and_a_recheck_replaces_once)
{
    static const char *ids[] = {"c#1", "c#2", "c#3"};
    static const char *metas[] = {"{\"s\":1}", NULL, "{\"s\":3}"};
    struct queue_copies c = {ids, metas, 3, NULL};
    struct queue q;
    struct llmsb_err err = {0};
    struct fields f;
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX], got[200], status[32];

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(finish(&q, NULL, "c#3", "ok"), 1); /* c#3 has a result of its own already */
    ASSERT_EQ(queue_cancel(&q, "c#2", 60, &err), 0);
    fields_init(&f, 2);
    fields_adds(&f, "worker", "w1");
    ASSERT_EQ(queue_mark_running(&q, "c#0", NULL, &f, &c, 60, &err), 1);
    result_of(&q, "c#1", got, sizeof(got));
    ASSERT_STR(got, "running c#1 c#0 -");
    ASSERT_EQ(take_new(&q, "c#0", entry), 0);
    ASSERT_EQ(finish_with(&q, entry, "c#0", "timeout", "{\"s\":0}", &c), 1);
    result_of(&q, "c#0", got, sizeof(got));
    ASSERT_STR(got, "timeout c#0 - {\"s\":0}");
    result_of(&q, "c#1", got, sizeof(got));
    ASSERT_STR(got, "timeout c#1 c#0 {\"s\":1}");
    result_of(&q, "c#2", got, sizeof(got));
    ASSERT_STR(got, "cancelled c#2 c#0 -");
    result_of(&q, "c#3", got, sizeof(got));
    ASSERT_STR(got, "ok c#3 - -");
    ASSERT_EQ(queue_wait_done(&q, "c#1", 1, status, sizeof(status), &err), 1);
    ASSERT_STR(status, "timeout");
    ASSERT_EQ(results_for(&q, "c#1"), 1);
    ASSERT_EQ(finish_with(&q, entry, "c#0", "ok", "{\"s\":0}", &c),
              0); /* not a recheck: the first stands */
    result_of(&q, "c#1", got, sizeof(got));
    ASSERT_STR(got, "timeout c#1 c#0 {\"s\":1}");
    /* a recheck: mark_running leaves the timeout in place, the finish replaces it */
    c.recheck = "timeout";
    ASSERT_EQ(queue_mark_running(&q, "c#0", NULL, &f, &c, 60, &err), 1);
    result_of(&q, "c#0", got, sizeof(got));
    ASSERT_STR(got, "timeout c#0 - {\"s\":0}");
    fields_adds(&f, "rechecked", "true");
    {
        struct fields rf;
        fields_init(&rf, 4);
        fields_adds(&rf, "id", "c#0");
        fields_adds(&rf, "status", "ok");
        fields_adds(&rf, "rechecked", "true");
        ASSERT_EQ(queue_finish(&q, NULL, "c#0", "ok", &rf, NULL, &c, 60, &err), 1);
        ASSERT_EQ(queue_finish(&q, NULL, "c#0", "timeout", &rf, NULL, &c, 60, &err), 0);
        fields_release(&rf);
    }
    result_of(&q, "c#1", got, sizeof(got));
    ASSERT_STR(got, "ok c#1 c#0 {\"s\":1}");
    result_of(&q, "c#3", got, sizeof(got));
    ASSERT_STR(got, "ok c#3 - -");
    ASSERT_EQ(queue_mark_running(&q, "c#0", NULL, &f, &c, 60, &err), 0); /* rechecked: final */
    fields_release(&f);
    queue_close(&q);
}

/* ---- copies of a large result ----------------------------------------------- */

#define BIG_COPIES 1000
#define BIG_BYTES ((size_t)1 << 20)

/* A run "big" with BIG_COPIES copies and a result of BIG_BYTES of stdout. */
struct big_run {
    char ids[BIG_COPIES][24];
    const char *idp[BIG_COPIES], *metas[BIG_COPIES];
    struct queue_copies c;
    struct fields f;
    char *out;
};

static struct big_run *big_new(void)
{
    struct big_run *b = calloc(1, sizeof(*b));

    if (!b || !(b->out = malloc(BIG_BYTES))) {
        free(b);
        return NULL;
    }
    memset(b->out, 'x', BIG_BYTES);
    for (int i = 0; i < BIG_COPIES; i++) {
        snprintf(b->ids[i], sizeof(b->ids[i]), "big#%d", i);
        b->idp[i] = b->ids[i];
    }
    b->c = (struct queue_copies){b->idp, b->metas, BIG_COPIES, NULL};
    fields_init(&b->f, 4);
    fields_adds(&b->f, "id", "big");
    fields_adds(&b->f, "status", "ok");
    fields_add(&b->f, "stdout", b->out, BIG_BYTES);
    return b;
}

static void big_free(struct big_run *b)
{
    if (!b)
        return;
    fields_release(&b->f);
    free(b->out);
    free(b);
}

/* A command of up to 8 plain strings; its reply (caller frees) or NULL. */
static redisReply *ask(struct queue *q, int argc, ...)
{
    const char *argv[8];
    size_t lens[8];
    struct llmsb_err err = {0};
    redisReply *r = NULL;
    va_list ap;

    va_start(ap, argc);
    for (int i = 0; i < argc && i < 8; i++) {
        argv[i] = va_arg(ap, const char *);
        lens[i] = strlen(argv[i]);
    }
    va_end(ap);
    if (argc > 8 || queue__cmd(q, argc, argv, lens, &r, &err) != 0) {
        fprintf(stderr, "  redis: %s\n", err.msg);
        return NULL;
    }
    return r;
}

static long long ask_int(struct queue *q, const char *verb, const char *key)
{
    redisReply *r = ask(q, 2, verb, key);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    freeReplyObject(r);
    return v;
}

/* What is wrong with the copies of b (NULL: nothing): each has the run's
 * whole result under its own id, one notification and one results-stream
 * entry, as has the run. */
static const char *big_check(struct queue *q, const char *prefix, char *why, size_t wsz)
{
    static int seen[BIG_COPIES + 1];
    char key[QUEUE_KEY_MAX];
    redisReply *r;

    memset(seen, 0, sizeof(seen));
    snprintf(key, sizeof(key), "%s:results", prefix);
    if (!(r = ask(q, 6, "XRANGE", key, "-", "+", "COUNT", "5000")))
        return "XRANGE failed";
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const redisReply *kv = r->element[i]->element[1];
        for (size_t k = 0; k + 1 < kv->elements; k += 2) {
            const char *id = kv->element[k + 1]->str;
            char *end;
            long n;
            if (strcmp(kv->element[k]->str, "id") != 0)
                continue;
            if (strcmp(id, "big") == 0)
                seen[BIG_COPIES]++;
            else if (strncmp(id, "big#", 4) == 0 && (n = strtol(id + 4, &end, 10)) >= 0 &&
                     n < BIG_COPIES && !*end)
                seen[n]++;
        }
    }
    freeReplyObject(r);
    for (int i = 0; i <= BIG_COPIES; i++) {
        const char *id = i < BIG_COPIES ? NULL : "big";
        char one[24];
        long long len, done;
        if (!id) {
            snprintf(one, sizeof(one), "big#%d", i);
            id = one;
        }
        snprintf(key, sizeof(key), "%s:result:%s", prefix, id);
        r = ask(q, 3, "HSTRLEN", key, "stdout");
        len = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
        freeReplyObject(r);
        r = ask(q, 3, "HGET", key, i < BIG_COPIES ? "copy_of" : "status");
        snprintf(key, sizeof(key), "%s:done:%s", prefix, id);
        done = ask_int(q, "LLEN", key);
        if (seen[i] != 1 || len != (long long)BIG_BYTES || done != 1 || !r ||
            r->type != REDIS_REPLY_STRING || strcmp(r->str, i < BIG_COPIES ? "big" : "ok") != 0)
            snprintf(why, wsz, "%s: %d results-stream entries, %lld stdout bytes, %lld done, %s",
                     id, seen[i], len, done, r && r->str ? r->str : "(no copy_of/status)");
        freeReplyObject(r);
        if (why[0])
            return why;
    }
    return NULL;
}

/* Deletes what big_check looks at, so the next test has the memory. */
static void big_drop(struct queue *q, const char *prefix)
{
    char key[QUEUE_KEY_MAX];

    for (int i = 0; i <= BIG_COPIES; i++) {
        char id[24];
        snprintf(id, sizeof(id), i < BIG_COPIES ? "big#%d" : "big", i);
        snprintf(key, sizeof(key), "%s:result:%s", prefix, id);
        freeReplyObject(ask(q, 2, "DEL", key));
        snprintf(key, sizeof(key), "%s:done:%s", prefix, id);
        freeReplyObject(ask(q, 2, "DEL", key));
    }
}

/* The EVALs (sent as EVALSHA) SLOWLOG holds (every command since the
 * reset, at a threshold of 0): how many, the longest and all together,
 * in microseconds. */
static int evals_logged(struct queue *q, long long *longest_us, long long *all_us)
{
    redisReply *r = ask(q, 3, "SLOWLOG", "GET", "-1");
    int n = 0;

    *longest_us = *all_us = 0;
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const redisReply *e = r->element[i];
        if (e->elements < 4 || e->element[3]->elements < 1 ||
            strncmp(e->element[3]->element[0]->str, "EVAL", 4) != 0)
            continue;
        n++;
        *all_us += e->element[2]->integer;
        if (e->element[2]->integer > *longest_us)
            *longest_us = e->element[2]->integer;
    }
    freeReplyObject(r);
    return n;
}

/* 1,000 copies of a 1 MiB result: no script writes more than
 * QUEUE_COPIES_BATCH copies or goes past QUEUE_COPIES_BATCH_BYTES by more
 * than one result (seen as the number of scripts SLOWLOG holds, printed
 * with the longest), and every copy gets the whole result once. */
TEST(copies_of_a_large_result_are_written_in_bounded_scripts)
{
    struct big_run *b = big_new();
    struct queue q;
    struct llmsb_err err = {0};
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX], why[300] = "";
    long long longest = 0, all = 0;
    const char *bad;
    int scripts, least;

    ASSERT(redis_ok);
    ASSERT(b);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(take_new(&q, "big", entry), 0);
    freeReplyObject(ask(&q, 4, "CONFIG", "SET", "slowlog-max-len", "100000"));
    freeReplyObject(ask(&q, 4, "CONFIG", "SET", "slowlog-log-slower-than", "0"));
    freeReplyObject(ask(&q, 2, "SLOWLOG", "RESET"));
    ASSERT_EQ(queue_finish(&q, entry, "big", "ok", &b->f, NULL, &b->c, 600, &err), 1);
    scripts = evals_logged(&q, &longest, &all);
    freeReplyObject(ask(&q, 4, "CONFIG", "SET", "slowlog-log-slower-than", "10000"));
    fprintf(stderr,
            "  %d copies of a %zu KiB result: %d scripts, the longest %.1f ms, all of them "
            "%.1f ms\n",
            BIG_COPIES, BIG_BYTES >> 10, scripts, (double)longest / 1000, (double)all / 1000);
    least = (int)(((size_t)BIG_COPIES * BIG_BYTES + QUEUE_COPIES_BATCH_BYTES + BIG_BYTES - 1) /
                  (QUEUE_COPIES_BATCH_BYTES + BIG_BYTES));
    ASSERT(scripts >= least);
    bad = big_check(&q, prefix, why, sizeof(why));
    ASSERT_STR(bad ? bad : "", "");
    ASSERT_EQ(ask_int(&q, "XLEN", q.k_jobs), 0); /* acknowledged and deleted */
    big_drop(&q, prefix);
    big_free(b);
    queue_close(&q);
}

/* A worker killed between the scripts of a write with copies: the entry
 * stays pending, and its next delivery (which finds the result final)
 * gives every copy still without one the stored result: each copy ends
 * with exactly one result, notification and results-stream entry. */
TEST(copies_are_each_written_once_when_the_writer_dies_between_scripts)
{
    struct big_run *b = big_new();
    struct queue q;
    struct llmsb_err err = {0};
    struct fields wrong;
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX], why[300] = "";
    const char *bad;
    long long written = 0;
    pid_t child;
    redisReply *r;

    ASSERT(redis_ok);
    ASSERT(b);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(take_new(&q, "big", entry), 0);
    child = fork();
    ASSERT(child >= 0);
    if (child == 0) { /* the worker that dies */
        struct queue cq;
        if (queue_open(&cq, url, prefix, "w1", 60000, &err) != 0)
            _exit(2);
        _exit(queue_finish(&cq, entry, "big", "ok", &b->f, NULL, &b->c, 600, &err) == 1 ? 0 : 1);
    }
    for (int i = 0; i < 20000 && written < 2; i++) { /* the run's entry and a copy's */
        struct timespec ts = {0, 500000};
        written = ask_int(&q, "XLEN", q.k_results);
        if (written < 2)
            nanosleep(&ts, NULL);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    written = ask_int(&q, "XLEN", q.k_results);
    fprintf(stderr, "  killed after %lld of %d results\n", written, BIG_COPIES + 1);
    ASSERT(written >= 2);
    ASSERT_MSG(written < BIG_COPIES + 1, "the write ended before the kill: no script between");
    r = ask(&q, 3, "XPENDING", q.k_jobs, q.group);
    ASSERT(r && r->type == REDIS_REPLY_ARRAY && r->element[0]->integer == 1);
    freeReplyObject(r);
    /* the next delivery: its own result (another) loses to the stored one */
    fields_init(&wrong, 4);
    fields_adds(&wrong, "id", "big");
    fields_adds(&wrong, "status", "internal_error");
    fields_adds(&wrong, "stdout", "not this");
    ASSERT_EQ(queue_finish(&q, entry, "big", "internal_error", &wrong, NULL, &b->c, 600, &err), 0);
    fields_release(&wrong);
    bad = big_check(&q, prefix, why, sizeof(why));
    ASSERT_STR(bad ? bad : "", "");
    ASSERT_EQ(ask_int(&q, "XLEN", q.k_jobs), 0);
    big_drop(&q, prefix);
    big_free(b);
    queue_close(&q);
}

static char lost_id[QUEUE_ENTRY_ID_MAX];
static void on_lost(void *ud, const char *id)
{
    (void)ud;
    snprintf(lost_id, sizeof(lost_id), "%s", id);
}

TEST(renew_reports_a_lease_taken_by_another_worker)
{
    struct queue a, b;
    struct queue_entry *e;
    struct llmsb_err err = {0};
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX], *ids[1];
    size_t n;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&a, prefix, "wa"), 0);
    ASSERT_EQ(open_as(&b, prefix, "wb"), 0);
    ASSERT_EQ(take_new(&a, "job-c", entry), 0);
    ids[0] = entry;
    lost_id[0] = '\0';
    ASSERT_EQ(queue_renew(&a, ids, 1, on_lost, NULL, &err), 0);
    ASSERT_STR(lost_id, "");
    /* wa goes silent; wb takes the entry once it looks older than the lease */
    ASSERT_EQ(queue_release(&a, entry, 60000, -1, &err), 0); /* sets idle 60 s, parked */
    ASSERT_EQ(queue_claim_stale(&b, 30000, 4, &e, &n, &err), 0);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(e[0].deliveries, 2);
    queue_entries_free(e, n);
    ASSERT_EQ(queue_renew(&a, ids, 1, on_lost, NULL, &err), 0);
    ASSERT_STR(lost_id, entry);
    queue_close(&a);
    queue_close(&b);
}

static int never_running(void *ud, const char *id)
{
    (void)ud, (void)id;
    return 0;
}

static int always_running(void *ud, const char *id)
{
    (void)ud, (void)id;
    return 1;
}

/* The defect of the architecture issue: a job of a dead worker that ran
 * once must show its second run as attempt 2. */
TEST(dead_workers_jobs_are_reclaimed_with_their_delivery_counted)
{
    struct queue dead, live;
    struct queue_entry *e;
    struct llmsb_err err = {0};
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX];
    size_t n;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&dead, prefix, "wdead"), 0);
    ASSERT_EQ(open_as(&live, prefix, "wlive"), 0);
    ASSERT_EQ(take_new(&dead, "job-d", entry), 0);
    queue_close(&dead); /* no heartbeat was ever written: it is dead */
    /* but it read a moment ago: alive as far as the sweep can tell (a
     * worker's first heartbeat may be on its way), until it is idle */
    ASSERT_EQ(queue_free_dead_consumers(&live, 30000, &err), 0);
    usleep((QUEUE_CONSUMER_BUSY_MS + 100) * 1000);
    ASSERT_EQ(queue_free_dead_consumers(&live, 30000, &err), 1);
    /* the live worker's own recovery must not take it without a count */
    ASSERT_EQ(queue_recover_own(&live, 0, 4, never_running, NULL, &e, &n, &err), 0);
    ASSERT_EQ(n, 0);
    free(e);
    ASSERT_EQ(queue_claim_stale(&live, 30000, 4, &e, &n, &err), 0);
    ASSERT_EQ(n, 1);
    ASSERT_STR(e[0].id, entry);
    ASSERT_EQ(e[0].deliveries, 2);
    queue_entries_free(e, n);
    queue_close(&live);
}

TEST(own_deliveries_not_running_are_recovered_without_a_count)
{
    struct queue q;
    struct queue_entry *e;
    struct llmsb_err err = {0};
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX];
    size_t n;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(take_new(&q, "job-e", entry), 0);
    ASSERT_EQ(queue_recover_own(&q, 0, 4, always_running, NULL, &e, &n, &err), 0);
    ASSERT_EQ(n, 0); /* running here: left alone */
    free(e);
    ASSERT_EQ(queue_recover_own(&q, 0, 4, never_running, NULL, &e, &n, &err), 0);
    ASSERT_EQ(n, 1);
    ASSERT_STR(e[0].id, entry);
    ASSERT_EQ(e[0].deliveries, 1);
    ASSERT_STR(fields_get(&e[0].f, "id", NULL), "job-e");
    queue_entries_free(e, n);
    queue_close(&q);
}

TEST(released_entries_wait_their_back_off)
{
    struct queue q;
    struct queue_entry *e;
    struct llmsb_err err = {0};
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX];
    size_t n;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(take_new(&q, "job-f", entry), 0);
    /* given back with 10 s of back-off left before a 30 s lease */
    ASSERT_EQ(queue_release(&q, entry, 20000, -1, &err), 0);
    ASSERT_EQ(queue_claim_stale(&q, 30000, 4, &e, &n, &err), 0);
    ASSERT_EQ(n, 0);
    free(e);
    ASSERT_EQ(queue_claim_stale(&q, 15000, 4, &e, &n, &err), 0);
    ASSERT_EQ(n, 1);
    queue_entries_free(e, n);
    queue_close(&q);
}

/* Given back uncounted (an engine outage, a held entry that never ran):
 * the next claim shows the same attempt again; and the reclaim can tell a
 * parked entry from one whose lease expired. */
TEST(uncounted_release_keeps_the_attempt)
{
    struct queue q, other;
    struct queue_entry *e;
    struct llmsb_err err = {0};
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX];
    size_t n;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(open_as(&other, prefix, "w2"), 0);
    ASSERT_EQ(take_new(&q, "job-u", entry), 0); /* delivery 1 */
    ASSERT_EQ(queue_release(&q, entry, 60000, 0, &err), 0);
    ASSERT_EQ(queue_claim_stale(&other, 30000, 4, &e, &n, &err), 0);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(e[0].deliveries, 1); /* not 2: the outage did not count */
    ASSERT(queue_is_retry_consumer(&other, e[0].owner));
    queue_entries_free(e, n);
    /* w2 goes silent: an expired lease is not a parked entry */
    ASSERT_EQ(queue_claim_stale(&q, 0, 4, &e, &n, &err), 0);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(e[0].deliveries, 2);
    ASSERT(!queue_is_retry_consumer(&q, e[0].owner));
    ASSERT_STR(e[0].owner, "w2");
    queue_entries_free(e, n);
    queue_close(&q);
    queue_close(&other);
}

/* While a recheck waits or runs alone, the scheduler's reclaim claims
 * nothing (no stale entry is held without a slot to run it or a lease
 * renewed), and held entries go back; after it, reclaim claims again. */
TEST(reclaim_claims_nothing_while_a_recheck_is_alone)
{
    struct sched_config cfg = {1000, 100, "w1", NULL};
    struct scheduler s;
    struct queue q, other;
    struct llmsb_err err = {0};
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX];
    int64_t now = 1000000;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(open_as(&other, prefix, "w2"), 0);
    ASSERT_EQ(scheduler_init(&s, 2, &cfg, &err), 0);
    ASSERT_EQ(take_new(&other, "job-alone", entry), 0); /* w2's, its lease runs out */
    usleep(1200 * 1000);
    scheduler_alone_begin(&s, &q);
    ASSERT_EQ(scheduler_tick(&s, &q, now), 0);
    ASSERT_EQ(s.nheld, 0);
    scheduler_alone_end(&s);
    ASSERT_EQ(scheduler_tick(&s, &q, now + 60000), 0);
    ASSERT_EQ(s.nheld, 1);
    /* a recheck that starts gives back what was held */
    scheduler_alone_begin(&s, &q);
    ASSERT_EQ(s.nheld, 0);
    scheduler_alone_end(&s);
    scheduler_release(&s);
    queue_close(&q);
    queue_close(&other);
}

/* The scheduler writes an entry's state for the worker: its running mark
 * (one run of an id at a time), a hand-over to the worker named (whose
 * recovery of its own deliveries takes it, with the count given), the
 * acknowledgement of an entry with nothing to run. */
TEST(the_scheduler_marks_hands_over_and_acknowledges_an_entry)
{
    struct sched_config cfg = {1000, 100, "w2", NULL};
    struct scheduler s;
    struct queue q, other;
    struct queue_entry mine = {0}, twin = {0}, *e;
    struct llmsb_err err = {0};
    struct fields f;
    char prefix[32];
    size_t n;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(open_as(&other, prefix, "w2"), 0);
    ASSERT_EQ(scheduler_init(&s, 2, &cfg, &err), 0);
    ASSERT_EQ(take_new(&other, "job-h", mine.id), 0);
    ASSERT_EQ(take_new(&other, "job-h", twin.id), 0);
    fields_init(&f, 2);
    fields_adds(&f, "worker", "w2");
    ASSERT_EQ(scheduler_mark_running(&s, &other, &mine, "job-h", &f, NULL, 60), 1);
    ASSERT_EQ(scheduler_mark_running(&s, &other, &twin, "job-h", &f, NULL, 60), 2);
    fields_release(&f);
    ASSERT_EQ(scheduler_hand_over(&s, &other, &mine, "w1", 1, &err), 0);
    ASSERT_EQ(queue_recover_own(&q, scheduler_own_idle_ms(cfg.block_ms), 4, never_running, NULL, &e,
                                &n, &err),
              0);
    ASSERT_EQ(n, 1);
    ASSERT_STR(e[0].id, mine.id);
    ASSERT_EQ(e[0].deliveries, 1);
    queue_entries_free(e, n);
    scheduler_ack(&s, &q, &mine);
    ASSERT_EQ(queue_recover_own(&q, 0, 4, never_running, NULL, &e, &n, &err), 0);
    ASSERT_EQ(n, 0); /* acknowledged: nothing of w1's left pending */
    free(e);
    scheduler_release(&s);
    queue_close(&q);
    queue_close(&other);
}

TEST(cancel_keys_and_heartbeats)
{
    struct queue q, ctl;
    struct llmsb_err err = {0};
    struct fields hb;
    char prefix[32];

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    ASSERT_EQ(queue_cancel_requested(&q, "job-g", &err), 0);
    ASSERT_EQ(queue_worker_alive(&q, "w1", &err), 0);
    fields_init(&hb, 4);
    fields_adds(&hb, "host", "h");
    ASSERT_EQ(queue_heartbeat(&q, "w1", &hb, 60000, &err), 0);
    fields_release(&hb);
    ASSERT_EQ(queue_worker_alive(&q, "w1", &err), 1);
    ASSERT_EQ(open_as(&ctl, prefix, NULL), 0);
    ASSERT_EQ(queue_cancel(&ctl, "job-g", 60, &err), 0);
    ASSERT_EQ(queue_cancel_requested(&q, "job-g", &err), 1);
    {
        struct queue_stats st;
        ASSERT_EQ(queue_stats(&ctl, &st, NULL, NULL, &err), 0);
        ASSERT_EQ(st.workers, 1);
    }
    ASSERT_EQ(queue_heartbeat_delete(&q, "w1", &err), 0);
    ASSERT_EQ(queue_worker_alive(&q, "w1", &err), 0);
    queue_close(&ctl);
    queue_close(&q);
}

/* A heartbeat of name: slots, busy, and protocol and features unless NULL. */
static int beat(struct queue *q, const char *name, const char *slots, const char *busy,
                const char *protocol, const char *features)
{
    struct llmsb_err err = {0};
    struct fields hb;
    int rc;

    fields_init(&hb, 8);
    fields_adds(&hb, "slots", slots);
    fields_adds(&hb, "busy", busy);
    if (protocol)
        fields_adds(&hb, "protocol", protocol);
    if (features)
        fields_adds(&hb, "features", features);
    rc = queue_heartbeat(q, name, &hb, 60000, &err);
    fields_release(&hb);
    return rc;
}

/* What the live workers understand: a heartbeat without features (a
 * worker of protocol 0) lacks every one, a list asked for is lacked when
 * one of it is, those lacking are named with their level (the list cut
 * short with "..."), and the best of the rest has the most free slots. */
TEST(workers_check_names_those_lacking_a_feature)
{
    struct queue q;
    struct llmsb_err err = {0};
    struct queue_workers_check c;
    char prefix[32], name[48];

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, NULL), 0);
    ASSERT_EQ(queue_workers_check(&q, "live", &c, &err), 0);
    ASSERT(c.alive == 0 && c.lacking == 0 && !c.best[0] && !c.lacking_names[0]);
    ASSERT_EQ(beat(&q, "w-old", "2", "0", NULL, NULL), 0);
    ASSERT_EQ(beat(&q, "w-a", "2", "2", "1", "dedup,recheck,live"), 0);
    ASSERT_EQ(beat(&q, "w-b", "4", "1", "1", "dedup,recheck,live"), 0);
    ASSERT_EQ(beat(&q, "w-c", "8", "0", "1", "dedup"), 0);
    ASSERT_EQ(queue_workers_check(&q, "live", &c, &err), 0);
    ASSERT_EQ(c.alive, 4);
    ASSERT_EQ(c.lacking, 2);
    ASSERT_CONTAINS(c.lacking_names, "w-old (protocol 0)");
    ASSERT_CONTAINS(c.lacking_names, "w-c (protocol 1)");
    ASSERT_STR(c.best, "w-b");
    ASSERT_EQ(queue_workers_check(&q, "dedup,live", &c, &err), 0);
    ASSERT_EQ(c.lacking, 2);
    ASSERT_EQ(queue_workers_check(&q, "dedup", &c, &err), 0);
    ASSERT_EQ(c.lacking, 1);
    ASSERT_STR(c.lacking_names, "w-old (protocol 0)");
    ASSERT_STR(c.best, "w-c");
    ASSERT_EQ(queue_workers_check(&q, "teleport", &c, &err), 0);
    ASSERT(c.lacking == 4 && !c.best[0]);
    for (int i = 0; i < 60; i++) {
        snprintf(name, sizeof(name), "worker-of-a-long-name-%d", i);
        ASSERT_EQ(beat(&q, name, "1", "0", NULL, NULL), 0);
    }
    ASSERT_EQ(queue_workers_check(&q, "live", &c, &err), 0);
    ASSERT_EQ(c.lacking, 62);
    ASSERT(strlen(c.lacking_names) < sizeof(c.lacking_names));
    ASSERT_STR(c.lacking_names + strlen(c.lacking_names) - 5, ", ...");
    queue_close(&q);
}

TEST(entries_with_too_many_or_too_big_fields_are_counted)
{
    struct queue q;
    struct queue_entry *e;
    struct llmsb_err err = {0};
    struct fields f;
    char prefix[32], entry[QUEUE_ENTRY_ID_MAX], names[80][16];
    size_t n;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, "w1"), 0);
    fields_init(&f, 80);
    for (int i = 0; i < 70; i++) {
        snprintf(names[i], sizeof(names[i]), "f%d", i);
        fields_adds(&f, names[i], "v");
    }
    ASSERT_EQ(queue_enqueue(&q, &f, entry, sizeof(entry), &err), 0);
    fields_release(&f);
    ASSERT_EQ(queue_read(&q, 1, 100, &e, &n, &err), 0);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(e[0].f.n, QUEUE_MAX_FIELDS);
    ASSERT_EQ(e[0].f.dropped, 70 - QUEUE_MAX_FIELDS);
    queue_entries_free(e, n);
    queue_close(&q);
}

TEST(a_bad_url_is_refused_at_once)
{
    struct queue q;
    struct llmsb_err err = {0};

    ASSERT(queue_connect_retry(&q, "http://x", "p", NULL, 1000, 1, NULL, 0, &err) != 0);
    ASSERT_CONTAINS(err.msg, "must start with redis://");
    queue_close(&q);
}

/* A plain command of more than 16 arguments (queue.c once read past a
 * 16-slot array there) runs with every one; past QUEUE__ARGS_MAX it is
 * refused, naming the verb and the count, and nothing is sent. */
TEST(a_plain_command_takes_its_bound_and_refuses_more)
{
    struct queue q;
    struct llmsb_err err = {0};
    char prefix[32], keys[QUEUE__ARGS_MAX + 1][48];
    const char *exists[2] = {"EXISTS", NULL};
    redisReply *r = NULL;
    int alive = 0;

    ASSERT(redis_ok);
    new_prefix(prefix, sizeof(prefix));
    ASSERT_EQ(open_as(&q, prefix, NULL), 0);
    for (int i = 0; i <= QUEUE__ARGS_MAX; i++) {
        snprintf(keys[i], sizeof(keys[i]), "%s:k%d", prefix, i);
        ASSERT_EQ(queue__simple(&q, &err, 3, "SET", keys[i], "1"), 0);
    }
    /* DEL of 20 keys: 21 arguments */
    ASSERT_EQ(queue__simple(&q, &err, 21, "DEL", keys[0], keys[1], keys[2], keys[3], keys[4],
                            keys[5], keys[6], keys[7], keys[8], keys[9], keys[10], keys[11],
                            keys[12], keys[13], keys[14], keys[15], keys[16], keys[17], keys[18],
                            keys[19]),
              0);
    for (int i = 0; i <= QUEUE__ARGS_MAX; i++) {
        size_t lens[2] = {6, strlen(keys[i])};
        exists[1] = keys[i];
        ASSERT_EQ(queue__cmd(&q, 2, exists, lens, &r, &err), 0);
        alive += r->integer == 1;
        ASSERT_MSG(r->integer == (i >= 20), keys[i]);
        freeReplyObject(r);
    }
    ASSERT_EQ(alive, QUEUE__ARGS_MAX + 1 - 20);
    /* 33 arguments: refused before a word goes out; the keys stay */
    ASSERT_EQ(queue__simple(&q, &err, 33, "DEL", keys[20], keys[21], keys[22], keys[23], keys[24],
                            keys[25], keys[26], keys[27], keys[28], keys[29], keys[30], keys[31],
                            keys[32], keys[20], keys[21], keys[22], keys[23], keys[24], keys[25],
                            keys[26], keys[27], keys[28], keys[29], keys[30], keys[31], keys[32],
                            keys[20], keys[21], keys[22], keys[23], keys[24], keys[25]),
              LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "DEL: 33 arguments");
    exists[1] = keys[32];
    {
        size_t lens[2] = {6, strlen(keys[32])};
        ASSERT_EQ(queue__cmd(&q, 2, exists, lens, &r, &err), 0);
        ASSERT_EQ(r->integer, 1);
        freeReplyObject(r);
    }
    queue_close(&q);
}

TEST_MAIN("integration_queue", T(enqueue_read_finish_exactly_once),
          T(mark_running_never_replaces_a_final_result), T(one_run_of_an_id_at_a_time),
          T(copies_are_written_with_the_run_and_a_recheck_replaces_once),
          T(renew_reports_a_lease_taken_by_another_worker),
          T(dead_workers_jobs_are_reclaimed_with_their_delivery_counted),
          T(own_deliveries_not_running_are_recovered_without_a_count),
          T(released_entries_wait_their_back_off), T(uncounted_release_keeps_the_attempt),
          T(reclaim_claims_nothing_while_a_recheck_is_alone),
          T(the_scheduler_marks_hands_over_and_acknowledges_an_entry),
          T(cancel_keys_and_heartbeats), T(workers_check_names_those_lacking_a_feature),
          T(entries_with_too_many_or_too_big_fields_are_counted), T(a_bad_url_is_refused_at_once),
          T(a_plain_command_takes_its_bound_and_refuses_more),
          T(copies_of_a_large_result_are_written_in_bounded_scripts),
          T(copies_are_each_written_once_when_the_writer_dies_between_scripts))
