/* test_integ_queue_wait.c - the durable writes (WAIT N after enqueue,
 * finish, release) against a real primary and replica that the test
 * starts: after a NOSCRIPT the write and its WAIT go again as a pair, in
 * that order on the wire (MONITOR says); a write WAIT does not confirm
 * is done with a "not confirmed" warning and never sent again later; a
 * connection killed during a write leaves exactly the entries the caller
 * sent.  The replica is stopped with SIGSTOP where a WAIT must not be
 * confirmed.  LLMSB_QUEUE_WAIT_PORT sets the primary's port (the replica
 * takes the next); a missing redis-server is a failure. */
#include "tests/unit/test.h"

#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "queue/queue.h"
#include "queue/queue_int.h"

extern char **environ;

static pid_t pids[2] = {-1, -1};
static int ports[2];
static char url[128];
static int prefix_seq;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void stop_all(void)
{
    for (int i = 0; i < 2; i++)
        if (pids[i] > 0) {
            kill(pids[i], SIGCONT);
            kill(pids[i], SIGKILL);
            waitpid(pids[i], NULL, 0);
            pids[i] = -1;
        }
    for (int i = 0; i < 2; i++) {
        char rdb[64];
        snprintf(rdb, sizeof(rdb), "/tmp/llmsb-queue-wait-%d.rdb", ports[i]);
        unlink(rdb);
    }
}

/* A command on port's server, its reply (caller frees; NULL: none). */
static redisReply *admin(int port, const char *fmt, ...)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    redisReply *r = NULL;
    va_list ap;

    if (!c || c->err) {
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    redisFree(c);
    return r;
}

static int spawn_redis(int i, int replica_of)
{
    char port[16], master[16], rdb[64];
    /* a replica keeps the primary's snapshot in a file: in /tmp, removed at the end */
    char *argv[] = {"redis-server",
                    "--port",
                    port,
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    "/tmp",
                    "--dbfilename",
                    rdb,
                    replica_of ? "--replicaof" : NULL,
                    "127.0.0.1",
                    master,
                    NULL};
    posix_spawn_file_actions_t fa;
    int rc;

    snprintf(port, sizeof(port), "%d", ports[i]);
    snprintf(master, sizeof(master), "%d", replica_of);
    snprintf(rdb, sizeof(rdb), "llmsb-queue-wait-%d.rdb", ports[i]);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    rc = posix_spawnp(&pids[i], "redis-server", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? 0 : -1;
}

/* 1 when the replica confirms a write within 200 ms (online, caught up:
 * after a SIGCONT it takes a moment). */
static int replica_caught_up(void)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", ports[0], tv);
    redisReply *r = NULL;
    int ok = 0;

    if (c && !c->err) {
        redisSetTimeout(c, tv);
        redisAppendCommand(c, "SET llmsb-probe 1");
        redisAppendCommand(c, "WAIT 1 200");
        if (redisGetReply(c, (void **)&r) == REDIS_OK) {
            freeReplyObject(r);
            ok = redisGetReply(c, (void **)&r) == REDIS_OK && r->type == REDIS_REPLY_INTEGER &&
                 r->integer == 1;
            freeReplyObject(r);
        }
    }
    redisFree(c);
    return ok;
}

static int replica_online(void)
{
    for (int i = 0; i < 100; i++) {
        if (replica_caught_up())
            return 1;
        sleep_ms(100);
    }
    return 0;
}

static void start_pair(void) __attribute__((constructor));
static void start_pair(void)
{
    const char *env = getenv("LLMSB_QUEUE_WAIT_PORT");

    ports[0] = env && *env ? atoi(env) : 21000 + (int)(getpid() % 8000);
    ports[1] = ports[0] + 1;
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d?wait=1&wait_ms=300", ports[0]);
    if (spawn_redis(0, 0) != 0 || spawn_redis(1, ports[0]) != 0) {
        fprintf(stderr, "integration_queue_wait: cannot start redis-server (apt-get install "
                        "redis-server)\n");
        stop_all();
        return;
    }
    atexit(stop_all);
    if (!replica_online())
        fprintf(stderr, "integration_queue_wait: no replica online on ports %d/%d\n", ports[0],
                ports[1]);
}

static int open_as(struct queue *q, const char *consumer, char *prefix, size_t psz)
{
    struct llmsb_err err = {0};

    snprintf(prefix, psz, "w%d-%d", (int)getpid(), ++prefix_seq);
    if (queue_open(q, url, prefix, consumer, 5000, &err) != 0 || queue_group_ensure(q, &err)) {
        fprintf(stderr, "  open: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int enqueue(struct queue *q, const char *id, char *entry, struct llmsb_err *err)
{
    struct fields f;
    int rc;

    fields_init(&f, 2);
    fields_adds(&f, "id", id);
    fields_adds(&f, "code", "print(1)");
    rc = queue_enqueue(q, &f, entry, QUEUE_ENTRY_ID_MAX, err);
    fields_release(&f);
    return rc;
}

/* stderr (the log) into a file between capture_begin and capture_end. */
static int saved_fd = -1;
static FILE *captured;

static void capture_begin(void)
{
    fflush(stderr);
    captured = tmpfile();
    saved_fd = dup(2);
    dup2(fileno(captured), 2);
}

static void capture_end(char *out, size_t outsz)
{
    size_t n;

    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    rewind(captured);
    n = fread(out, 1, outsz - 1, captured);
    out[n] = '\0';
    fclose(captured);
    fputs(out, stderr);
}

static long long xlen(const struct queue *q)
{
    redisReply *r = admin(ports[0], "XLEN %s", q->k_jobs);
    long long n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    freeReplyObject(r);
    return n;
}

TEST(a_finish_after_noscript_waits_after_its_write)
{
    struct queue q;
    struct llmsb_err err = {0};
    struct queue_entry *e = NULL;
    struct fields res;
    struct timeval tv = {1, 0};
    redisContext *mon = NULL;
    redisReply *r;
    char prefix[64], entry[QUEUE_ENTRY_ID_MAX], log[8192];
    int eval = 0, wait_after = 0, evalsha = 0, rc;
    size_t n = 0;

    ASSERT(replica_online());
    ASSERT_EQ(open_as(&q, "w1", prefix, sizeof(prefix)), 0);
    ASSERT_EQ(enqueue(&q, "j1", entry, &err), 0);
    ASSERT_EQ(queue_read(&q, 1, 100, &e, &n, &err), 0);
    ASSERT_EQ(n, 1u);
    kill(pids[1], SIGSTOP);
    freeReplyObject(admin(ports[0], "SCRIPT FLUSH"));
    mon = redisConnectWithTimeout("127.0.0.1", ports[0], tv);
    ASSERT(mon && !mon->err);
    redisSetTimeout(mon, tv);
    freeReplyObject(redisCommand(mon, "MONITOR"));
    fields_init(&res, 2);
    fields_adds(&res, "id", "j1");
    fields_adds(&res, "status", "ok");
    capture_begin();
    rc = queue_finish(&q, e[0].id, "j1", "ok", &res, NULL, NULL, 60, &err);
    capture_end(log, sizeof(log));
    kill(pids[1], SIGCONT);
    fields_release(&res);
    ASSERT_MSG(rc == 1, err.msg);
    ASSERT_CONTAINS(log, "not confirmed by 1 replica");
    while (redisGetReply(mon, (void **)&r) == REDIS_OK) {
        if (r->type == REDIS_REPLY_STATUS) {
            evalsha |= strstr(r->str, "] \"EVALSHA\" ") != NULL;
            eval |= strstr(r->str, "] \"EVAL\" ") != NULL;
            wait_after |= eval && strstr(r->str, "] \"WAIT\" ") != NULL;
        }
        freeReplyObject(r);
        if (wait_after)
            break;
    }
    redisFree(mon);
    ASSERT(evalsha);
    ASSERT(eval);
    ASSERT_MSG(wait_after, "no WAIT after the EVAL that follows NOSCRIPT");
    queue_entries_free(e, n);
    queue_close(&q);
}

/* The owner of entry in q's group ("" none). */
static void owner_of(const struct queue *q, const char *entry, char *out, size_t outsz)
{
    redisReply *r = admin(ports[0], "XPENDING %s %s %s %s 1", q->k_jobs, q->group, entry, entry);

    out[0] = '\0';
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->elements >= 2)
        snprintf(out, outsz, "%s", r->element[0]->element[1]->str);
    freeReplyObject(r);
}

TEST(a_release_is_never_sent_again)
{
    struct queue q;
    struct llmsb_err err = {0};
    struct queue_entry *e = NULL;
    char prefix[64], entry[QUEUE_ENTRY_ID_MAX], log[8192], owner[QUEUE_CONSUMER_MAX];
    size_t n = 0;
    int rc;

    ASSERT(replica_online());
    ASSERT_EQ(open_as(&q, "A", prefix, sizeof(prefix)), 0);
    ASSERT_EQ(enqueue(&q, "j2", entry, &err), 0);
    ASSERT_EQ(queue_read(&q, 1, 100, &e, &n, &err), 0);
    ASSERT_EQ(n, 1u);
    kill(pids[1], SIGSTOP);
    capture_begin();
    rc = queue_release(&q, e[0].id, 0, -1, &err);
    capture_end(log, sizeof(log));
    kill(pids[1], SIGCONT);
    ASSERT_MSG(rc == 0, err.msg);
    /* a release is not a durable write (docs/operations.md): no WAIT after it */
    ASSERT(strstr(log, "not confirmed") == NULL);
    /* another worker takes it; A's next connection must not take it back */
    freeReplyObject(admin(ports[0], "XCLAIM %s %s B 0 %s", q.k_jobs, q.group, e[0].id));
    ASSERT_EQ(queue_reconnect(&q, &err), 0);
    ASSERT_EQ(enqueue(&q, "j3", entry, &err), 0);
    owner_of(&q, e[0].id, owner, sizeof(owner));
    ASSERT_STR(owner, "B");
    queue_entries_free(e, n);
    queue_close(&q);
}

/* Kills every client of the primary but the replica's link after
 * delay_ms (a thread; the test's queue is the only other one). */
struct killer {
    int delay_ms;
    pthread_t t;
};

static void *kill_after(void *arg)
{
    struct killer *k = arg;

    sleep_ms(k->delay_ms);
    freeReplyObject(admin(ports[0], "CLIENT KILL TYPE normal SKIPME yes"));
    return NULL;
}

TEST(a_connection_killed_during_the_wait_keeps_one_entry)
{
    struct queue q;
    struct llmsb_err err = {0};
    struct killer k = {400, 0};
    char prefix[64], entry[QUEUE_ENTRY_ID_MAX], log[8192];
    int rc;

    ASSERT(replica_online());
    ASSERT_EQ(open_as(&q, "C", prefix, sizeof(prefix)), 0);
    q.wait_ms = 2000; /* the kill lands inside it */
    kill(pids[1], SIGSTOP);
    pthread_create(&k.t, NULL, kill_after, &k);
    capture_begin();
    rc = enqueue(&q, "j4", entry, &err); /* XADD answered, then the WAIT cut off */
    capture_end(log, sizeof(log));
    pthread_join(k.t, NULL);
    kill(pids[1], SIGCONT);
    ASSERT_MSG(rc == 0, err.msg);
    ASSERT_CONTAINS(log, "not confirmed");
    ASSERT_EQ(queue_reconnect(&q, &err), 0);
    ASSERT_EQ(queue_group_ensure(&q, &err), 0);
    ASSERT_EQ(xlen(&q), 1);
    queue_close(&q);
}

TEST(a_write_cut_off_before_its_reply_is_sent_once_by_its_caller)
{
    struct queue q;
    struct llmsb_err err = {0};
    struct killer k = {400, 0};
    char prefix[64], entry[QUEUE_ENTRY_ID_MAX];
    int rc, unanswered, tries = 0;

    ASSERT(replica_online());
    ASSERT_EQ(open_as(&q, "D", prefix, sizeof(prefix)), 0);
    freeReplyObject(admin(ports[0], "CLIENT PAUSE 3000 WRITE"));
    pthread_create(&k.t, NULL, kill_after, &k);
    rc = enqueue(&q, "j5", entry, &err); /* held by the pause, then killed */
    pthread_join(k.t, NULL);
    freeReplyObject(admin(ports[0], "CLIENT UNPAUSE"));
    unanswered = queue_last_unanswered(&q);
    ASSERT_MSG(rc != 0 && queue_err_retryable(&err), err.msg);
    ASSERT(unanswered);
    /* the caller's retry (submit's enqueue_retrying does this) */
    while (rc != 0 && tries++ < 20) {
        sleep_ms(100);
        if (queue_reconnect(&q, &err) == 0)
            rc = enqueue(&q, "j5", entry, &err);
    }
    ASSERT_MSG(rc == 0, err.msg);
    ASSERT_EQ(queue_last_unanswered(&q), 0);
    ASSERT_EQ(xlen(&q), 1);
    queue_close(&q);
}

TEST_MAIN("integration_queue_wait", T(a_finish_after_noscript_waits_after_its_write),
          T(a_release_is_never_sent_again), T(a_connection_killed_during_the_wait_keeps_one_entry),
          T(a_write_cut_off_before_its_reply_is_sent_once_by_its_caller))
