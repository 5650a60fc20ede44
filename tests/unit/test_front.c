/* test_front.c - the HTTP front's own parts that need no server: the
 * per-client rate limit (front/rate.c: a token bucket per address, an
 * IPv6 /64 as one client, the table forgetting the least recently seen)
 * and the callback allowlist (front/callback.c: names, addresses and
 * CIDRs; every address of a name checked; schemes). */
#include "test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "front/front_int.h"
#include "scheduler/decide.h"

static struct sockaddr_in v4(const char *a)
{
    struct sockaddr_in s = {.sin_family = AF_INET};
    inet_pton(AF_INET, a, &s.sin_addr);
    return s;
}

static struct sockaddr_in6 v6(const char *a)
{
    struct sockaddr_in6 s = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, a, &s.sin6_addr);
    return s;
}

TEST(rate_off_without_a_rate)
{
    int nomem = 1;

    ASSERT(front_rate_new(0, 10, &nomem) == NULL);
    ASSERT_EQ(nomem, 0);
    ASSERT_EQ(front_rate_take(NULL, NULL, 0), 0); /* no limit: every call goes */
}

TEST(rate_bucket_per_address)
{
    int nomem;
    struct front_rate *r = front_rate_new(2, 3, &nomem); /* 2 a second, 3 at once */
    struct sockaddr_in a = v4("10.0.0.1"), b = v4("10.0.0.2");

    ASSERT(r);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 1000), 0);
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 1000), 1); /* the burst is spent */
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&b, 1000), 0); /* another client goes */
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 1500), 0); /* half a second: a token */
    ASSERT(front_rate_take(r, (struct sockaddr *)&a, 1500) >= 1);
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 60000), 0); /* refilled, to the burst */
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 60000), 0);
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 60000), 0);
    ASSERT(front_rate_take(r, (struct sockaddr *)&a, 60000) >= 1);
    front_rate_free(r);
}

TEST(rate_ipv6_slash64_is_one_client)
{
    int nomem;
    struct front_rate *r = front_rate_new(1, 1, &nomem);
    struct sockaddr_in6 a = v6("2001:db8:1:2::1"), b = v6("2001:db8:1:2:ffff::9"),
                        c = v6("2001:db8:1:3::1");

    ASSERT(r);
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 0), 0);
    ASSERT(front_rate_take(r, (struct sockaddr *)&b, 0) >= 1); /* same /64 */
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&c, 0), 0);
    front_rate_free(r);
}

/* On a dual-stack socket an IPv4 client comes as ::ffff:a.b.c.d, whose
 * first 64 bits are the same for every IPv4 address: each is its own
 * client still, as it is on an IPv4 socket. */
TEST(rate_ipv4_mapped_is_its_ipv4_address)
{
    int nomem;
    struct front_rate *r = front_rate_new(1, 1, &nomem);
    struct sockaddr_in6 a = v6("::ffff:192.0.2.1"), b = v6("::ffff:198.51.100.7");
    struct sockaddr_in a4 = v4("192.0.2.1");

    ASSERT(r);
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 0), 0);
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&b, 0), 0); /* another client */
    ASSERT(front_rate_take(r, (struct sockaddr *)&a4, 0) >= 1); /* a itself, as IPv4 */
    front_rate_free(r);
}

TEST(rate_table_full_forgets_the_oldest)
{
    int nomem;
    struct front_rate *r = front_rate_new(0.001, 1, &nomem);
    struct sockaddr_in a = v4("192.0.2.1");
    char ip[32];

    ASSERT(r);
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 0), 0);
    ASSERT(front_rate_take(r, (struct sockaddr *)&a, 1) >= 1);
    /* many more clients than the table holds, seen later: a is forgotten,
     * and comes back with a full bucket (never refused wrongly) */
    for (int i = 0; i < 4 * FRONT_CLIENTS_KEPT; i++) {
        struct sockaddr_in x;
        snprintf(ip, sizeof(ip), "10.%d.%d.%d", (i >> 16) & 255, (i >> 8) & 255, i & 255);
        x = v4(ip);
        front_rate_take(r, (struct sockaddr *)&x, 2 + i);
    }
    ASSERT_EQ(front_rate_take(r, (struct sockaddr *)&a, 5 * FRONT_CLIENTS_KEPT), 0);
    front_rate_free(r);
}

TEST(callback_allowlist)
{
    static const struct {
        const char *url, *allow;
        int ok;
        const char *why;
    } rows[] = {
        {"http://127.0.0.1:8000/cb", "127.0.0.1", 1, NULL},
        {"http://127.0.0.1:8000/cb", "127.0.0.0/8", 1, NULL},
        {"https://127.0.0.5/cb", "10.0.0.0/8, 127.0.0.0/30", 0, "not one --callback-allow names"},
        {"https://127.0.0.3/cb", "10.0.0.0/8, 127.0.0.0/30", 1, NULL},
        {"http://[::1]:9/cb", "::1", 1, NULL},
        {"http://[::1]:9/cb", "127.0.0.1", 0, "not one"},
        {"http://127.0.0.1/cb", NULL, 0, "no callback is allowed"},
        {"http://127.0.0.1/cb", "", 0, "no callback is allowed"},
        {"http://169.254.169.254/latest", "127.0.0.1", 0, "not one"},
        {"ftp://127.0.0.1/cb", "127.0.0.1", 0, NULL}, /* curl may know no ftp: refused either way */
        {"file:///etc/passwd", "127.0.0.1", 0, NULL},
        {"gopher://127.0.0.1/", "127.0.0.1", 0, NULL},
        {"not a url", "127.0.0.1", 0, "is not a URL"},
        {"http://127.0.0.1/cb", "127.0.0.1/33", 0, "not one"}, /* a CIDR that is none */
        {"http://127.0.0.1/cb", "127.0.0.1/", 0, "not one"},
        /* a name listed is allowed as named; localhost resolves here */
        {"http://localhost:1/cb", "LOCALHOST", 1, NULL},
        {"http://localhost:1/cb", "127.0.0.1", -1, NULL}, /* as its addresses: see below */
        /* an IPv4-mapped IPv6 address reaches its IPv4 address: only IPv4
         * entries hold it, never an IPv6 range such as ::/0 */
        {"http://[::ffff:127.0.0.1]:9/cb", "::/0", 0, "not one"},
        {"http://[::ffff:169.254.169.254]/x", "::/0, 2001:db8::/32", 0, "not one"},
        {"http://[::ffff:127.0.0.1]:9/cb", "127.0.0.1", 1, NULL},
        {"http://[::ffff:7f00:1]:9/cb", "10.0.0.0/8", 0, "not one"},
        /* other spellings of 127.0.0.1 are checked as the address they are */
        {"http://0x7f.1:9/cb", "10.0.0.0/8", 0, "not one"},
        {"http://2130706433:9/cb", "10.0.0.0/8", 0, "not one"},
        {"http://017700000001:9/cb", "::/0", 0, "not one"},
        /* userinfo names no host */
        {"http://10.0.0.1@127.0.0.1:9/cb", "10.0.0.0/8", 0, "not one"},
    };
    char why[300];

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int ok;
        why[0] = '\0';
        ok = front_callback_allowed(rows[i].url, rows[i].allow, why, sizeof(why));
        if (rows[i].ok < 0)
            continue;
        ASSERT_MSG(ok == rows[i].ok, rows[i].url);
        if (rows[i].why)
            ASSERT_CONTAINS(why, rows[i].why);
    }
    /* a name not listed: every address it resolves to must be; localhost
     * may resolve to ::1 as well, which 127.0.0.1 alone does not hold */
    ASSERT_EQ(front_callback_allowed("http://localhost:1/cb", "127.0.0.0/8, ::1", why, sizeof(why)),
              1);
}

/* A listener on 127.0.0.1 (a port of the kernel's choosing). */
static int listen_local(int *port)
{
    struct sockaddr_in a = v4("127.0.0.1");
    socklen_t n = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &n) != 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

/* Test double: two HTTP listeners, the callback's target and a proxy;
 * the first connection to either is answered 200 and counted. */
struct two_ears {
    int fd[2], hits[2];
};

static void *answer_one(void *arg)
{
    struct two_ears *t = arg;
    struct pollfd p[2] = {{t->fd[0], POLLIN, 0}, {t->fd[1], POLLIN, 0}};
    static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    char req[4096];

    if (poll(p, 2, 10000) <= 0)
        return NULL;
    for (int i = 0; i < 2; i++)
        if (p[i].revents & POLLIN) {
            int c = accept(t->fd[i], NULL, NULL);
            t->hits[i]++;
            if (c >= 0) {
                usleep(100 * 1000); /* the request's head and body are in */
                (void)!read(c, req, sizeof(req));
                (void)!write(c, ok, sizeof(ok) - 1);
                close(c);
            }
            break;
        }
    return NULL;
}

/* A proxy in the server's environment (http_proxy) would resolve the
 * callback's host itself, past the address checked and pinned: the
 * callback goes straight to its target. */
TEST(callback_goes_past_no_proxy)
{
    struct two_ears t = {{-1, -1}, {0, 0}};
    int target, proxy;
    char url[64], env[64];
    pthread_t th;

    ASSERT((t.fd[0] = listen_local(&target)) >= 0);
    ASSERT((t.fd[1] = listen_local(&proxy)) >= 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/cb", target);
    snprintf(env, sizeof(env), "http://127.0.0.1:%d", proxy);
    setenv("http_proxy", env, 1);
    setenv("HTTPS_PROXY", env, 1);
    setenv("ALL_PROXY", env, 1);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    ASSERT_EQ(pthread_create(&th, NULL, answer_one, &t), 0);
    ASSERT_EQ(front_callback_put(url, "127.0.0.1", "{}"), 0);
    pthread_join(th, NULL);
    unsetenv("http_proxy");
    unsetenv("HTTPS_PROXY");
    unsetenv("ALL_PROXY");
    close(t.fd[0]);
    close(t.fd[1]);
    ASSERT_EQ(t.hits[1], 0); /* not the proxy */
    ASSERT_EQ(t.hits[0], 1);
}

/* In process a job started without a wait (Judge0's wait=false) is a
 * thread holding a copy of its fields until it ends: a client starting
 * batch after batch must be refused long before thousands of threads
 * (and their code and files) pile up.  No slot: every job waits, none
 * runs (no engine is needed), until the executor stops them. */
TEST(started_jobs_bounded_in_process)
{
    struct config cfg;
    struct front_options o = {.cfg = &cfg, .slots = 0, .max_calls = 1};
    struct llmsb_err err = {0};
    struct front_exec *x;
    atomic_int cancel;
    struct front_call c;
    struct front_host h;
    int started = 0, refused = 0;

    config_defaults(&cfg);
    atomic_init(&cancel, SCHED_GO);
    ASSERT((x = front_exec_new(&o, &err)) != NULL);
    c = (struct front_call){x, &cancel};
    front_exec_host(&c, &h);
    while (started < 2000 && !refused) {
        struct fields f[FRONT_BATCH_MAX];
        char id[FRONT_BATCH_MAX][32];
        for (int i = 0; i < FRONT_BATCH_MAX; i++) {
            snprintf(id[i], sizeof(id[i]), "t-%d", started + i);
            fields_init(&f[i], 8);
            fields_adds(&f[i], "id", id[i]);
            fields_adds(&f[i], "lang", "python");
            fields_adds(&f[i], "code", "print(1)");
        }
        if (h.start(h.ud, f, FRONT_BATCH_MAX, NULL, NULL, NULL, NULL, &err) == 0)
            started += FRONT_BATCH_MAX;
        else
            refused = 1;
        for (int i = 0; i < FRONT_BATCH_MAX; i++)
            fields_release(&f[i]);
    }
    ASSERT_MSG(refused, "2,000 started jobs were taken: no bound");
    ASSERT_EQ(err.code, LLMSB_ERR_LIMIT);
    ASSERT(started <= FRONT_BACKGROUND_MAX);
    front_exec_free(x); /* stops the waiting jobs */
}

/* ... and their bytes are bounded too: 1,024 jobs of a 48 MiB body each
 * would hold tens of GB.  Jobs of 4 MiB of stdin each: refused long
 * before 1,024 of them. */
TEST(started_jobs_bytes_bounded_in_process)
{
    struct config cfg;
    struct front_options o = {.cfg = &cfg, .slots = 0, .max_calls = 1};
    struct llmsb_err err = {0};
    size_t big = (size_t)4 << 20;
    char *in = malloc(big);
    struct front_exec *x;
    atomic_int cancel;
    struct front_call c;
    struct front_host h;
    int started = 0, refused = 0;

    ASSERT(in);
    memset(in, 'a', big);
    config_defaults(&cfg);
    atomic_init(&cancel, SCHED_GO);
    ASSERT((x = front_exec_new(&o, &err)) != NULL);
    c = (struct front_call){x, &cancel};
    front_exec_host(&c, &h);
    while (started < FRONT_BACKGROUND_MAX && !refused) {
        struct fields f;
        char id[32];
        snprintf(id, sizeof(id), "b-%d", started);
        fields_init(&f, 8);
        fields_adds(&f, "id", id);
        fields_adds(&f, "lang", "python");
        fields_adds(&f, "code", "print(1)");
        fields_add(&f, "stdin", in, big);
        if (h.start(h.ud, &f, 1, NULL, NULL, NULL, NULL, &err) == 0)
            started++;
        else
            refused = 1;
        fields_release(&f);
    }
    free(in);
    ASSERT_MSG(refused, "1,024 jobs of 4 MiB each were taken: no bound on bytes");
    ASSERT_EQ(err.code, LLMSB_ERR_LIMIT);
    ASSERT((size_t)started * big <= FRONT_BACKGROUND_BYTES);
    front_exec_free(x);
}

/* A job a route runs with an id of its own (Judge0's wait=true) is one it
 * will be asked about later (GET /submissions/{token}): in process its
 * result is kept for lookups as a started job's is.  A job the parser
 * refuses has a result without running, so no engine is needed. */
TEST(run_with_id_is_kept_for_lookup)
{
    struct config cfg;
    struct front_options o = {.cfg = &cfg, .slots = 0, .max_calls = 1};
    struct llmsb_err err = {0};
    struct front_exec *x;
    atomic_int cancel;
    struct front_call c;
    struct front_host h;
    struct fields f;
    cJSON *res = NULL, *kept = NULL;

    config_defaults(&cfg);
    atomic_init(&cancel, SCHED_GO);
    ASSERT((x = front_exec_new(&o, &err)) != NULL);
    c = (struct front_call){x, &cancel};
    front_exec_host(&c, &h);
    fields_init(&f, 8);
    fields_adds(&f, "id", "judge0-kept");
    fields_adds(&f, "lang", "python");
    fields_adds(&f, "code", "print(1)");
    fields_adds(&f, "timeout", "abc");
    ASSERT_EQ(h.run(h.ud, &f, 1, &res, &err), 0);
    ASSERT_STR(cJSON_GetStringValue(cJSON_GetObjectItem(res, "status")), "invalid");
    ASSERT_EQ(h.lookup(h.ud, "judge0-kept", &kept), FRONT_DONE);
    ASSERT(kept && cJSON_Compare(kept, res, 1));
    cJSON_Delete(kept);
    cJSON_Delete(res);
    fields_release(&f);
    front_exec_free(x);
}

/* The results kept for lookups are bounded in bytes, not only in count:
 * 10,000 results of a few MiB of output each would be tens of GB.  Here
 * 60 KiB of meta each (copied into the result; 64 KiB is its cap), past
 * FRONT_DONE_BYTES in fewer than FRONT_DONE_KEPT results: the oldest go. */
TEST(kept_results_bytes_bounded)
{
    struct config cfg;
    struct front_options o = {.cfg = &cfg, .slots = 0, .max_calls = 1};
    struct llmsb_err err = {0};
    size_t big = (size_t)60 << 10;
    int n = (int)(FRONT_DONE_BYTES / big) + 16;
    char *meta = malloc(big + 3), id[32];
    struct front_exec *x;
    atomic_int cancel;
    struct front_call c;
    struct front_host h;
    cJSON *res = NULL, *kept = NULL;

    ASSERT(meta);
    meta[0] = '"';
    memset(meta + 1, 'm', big);
    meta[big + 1] = '"';
    meta[big + 2] = '\0';
    config_defaults(&cfg);
    atomic_init(&cancel, SCHED_GO);
    ASSERT((x = front_exec_new(&o, &err)) != NULL);
    c = (struct front_call){x, &cancel};
    front_exec_host(&c, &h);
    for (int i = 0; i < n; i++) {
        struct fields f;
        snprintf(id, sizeof(id), "judge0-%d", i);
        fields_init(&f, 8);
        fields_adds(&f, "id", id);
        fields_adds(&f, "lang", "python");
        fields_adds(&f, "code", "print(1)");
        fields_adds(&f, "meta", meta); /* (parsed before the field refused) */
        fields_adds(&f, "timeout", "abc");
        ASSERT_EQ(h.run(h.ud, &f, 1, &res, &err), 0);
        cJSON_Delete(res);
        fields_release(&f);
    }
    free(meta);
    ASSERT_EQ(h.lookup(h.ud, "judge0-0", &kept), FRONT_UNKNOWN); /* the oldest went */
    snprintf(id, sizeof(id), "judge0-%d", n - 1);
    ASSERT_EQ(h.lookup(h.ud, id, &kept), FRONT_DONE); /* the newest is there */
    cJSON_Delete(kept);
    front_exec_free(x);
}

/* Many calls starting jobs at the same moment: the bound holds for them
 * all (each call's places are taken with its check, not after). */
struct racer {
    struct front_host *h;
    pthread_barrier_t *go;
    int base, started;
};

static void *race_start(void *arg)
{
    struct racer *r = arg;
    struct fields f[FRONT_BATCH_MAX];
    char id[FRONT_BATCH_MAX][32];
    struct llmsb_err err = {0};

    for (int i = 0; i < FRONT_BATCH_MAX; i++) {
        snprintf(id[i], sizeof(id[i]), "r-%d", r->base + i);
        fields_init(&f[i], 8);
        fields_adds(&f[i], "id", id[i]);
        fields_adds(&f[i], "lang", "python");
        fields_adds(&f[i], "code", "print(1)");
    }
    pthread_barrier_wait(r->go);
    if (r->h->start(r->h->ud, f, FRONT_BATCH_MAX, NULL, NULL, NULL, NULL, &err) == 0)
        r->started = FRONT_BATCH_MAX;
    for (int i = 0; i < FRONT_BATCH_MAX; i++)
        fields_release(&f[i]);
    return NULL;
}

TEST(started_jobs_bound_holds_for_calls_at_once)
{
    enum { CALLS = 2 * FRONT_BACKGROUND_MAX / FRONT_BATCH_MAX };
    struct config cfg;
    struct front_options o = {.cfg = &cfg, .slots = 0, .max_calls = 1};
    struct llmsb_err err = {0};
    struct front_exec *x;
    atomic_int cancel;
    struct front_call c;
    struct front_host h;
    pthread_barrier_t go;
    pthread_t th[CALLS];
    struct racer r[CALLS];
    int started = 0;

    config_defaults(&cfg);
    atomic_init(&cancel, SCHED_GO);
    ASSERT((x = front_exec_new(&o, &err)) != NULL);
    c = (struct front_call){x, &cancel};
    front_exec_host(&c, &h);
    pthread_barrier_init(&go, NULL, CALLS);
    for (int i = 0; i < CALLS; i++) {
        r[i] = (struct racer){&h, &go, i * FRONT_BATCH_MAX, 0};
        ASSERT_EQ(pthread_create(&th[i], NULL, race_start, &r[i]), 0);
    }
    for (int i = 0; i < CALLS; i++) {
        pthread_join(th[i], NULL);
        started += r[i].started;
    }
    pthread_barrier_destroy(&go);
    ASSERT(started <= FRONT_BACKGROUND_MAX);
    front_exec_free(x);
}

/* With --dedup-window a finished run's result is kept for the calls that
 * come after it; those results are bounded in bytes too, else a long
 * window and many different calls hold them all.  Each call here is its
 * own (its meta differs) and refused at once (no engine). */
static cJSON *run_meta(struct front_host *h, const char *meta)
{
    struct llmsb_err err = {0};
    struct fields f;
    cJSON *res = NULL;

    fields_init(&f, 8);
    fields_adds(&f, "lang", "python");
    fields_adds(&f, "code", "print(1)");
    fields_adds(&f, "meta", meta);
    fields_adds(&f, "timeout", "abc");
    if (h->run(h->ud, &f, 1, &res, &err) != 0)
        res = NULL;
    fields_release(&f);
    return res;
}

TEST(shared_results_bytes_bounded)
{
    struct config cfg;
    struct front_options o = {.cfg = &cfg, .slots = 0, .max_calls = 1, .dedup_window_ms = 3600000};
    struct llmsb_err err = {0};
    size_t big = (size_t)60 << 10;
    int n = (int)(FRONT_DONE_BYTES / big) + 16;
    char *meta = malloc(big + 16);
    struct front_exec *x;
    atomic_int cancel;
    struct front_call c;
    struct front_host h;
    cJSON *res;

    ASSERT(meta);
    memset(meta, 'm', big + 16);
    config_defaults(&cfg);
    atomic_init(&cancel, SCHED_GO);
    ASSERT((x = front_exec_new(&o, &err)) != NULL);
    c = (struct front_call){x, &cancel};
    front_exec_host(&c, &h);
    for (int i = 0; i < n; i++) {
        snprintf(meta, 16, "\"%08d", i);
        meta[9] = 'm';
        meta[big] = '"';
        meta[big + 1] = '\0';
        ASSERT((res = run_meta(&h, meta)) != NULL);
        cJSON_Delete(res);
    }
    /* the newest is shared (copy_of names its run), the oldest ran again */
    ASSERT((res = run_meta(&h, meta)) != NULL);
    ASSERT(cJSON_IsString(cJSON_GetObjectItem(res, "copy_of")));
    cJSON_Delete(res);
    snprintf(meta, 16, "\"%08d", 0);
    meta[9] = 'm';
    ASSERT((res = run_meta(&h, meta)) != NULL);
    ASSERT(!cJSON_IsString(cJSON_GetObjectItem(res, "copy_of")));
    cJSON_Delete(res);
    free(meta);
    front_exec_free(x);
}

TEST_MAIN("front", T(rate_off_without_a_rate), T(rate_bucket_per_address),
          T(rate_ipv6_slash64_is_one_client), T(rate_ipv4_mapped_is_its_ipv4_address),
          T(rate_table_full_forgets_the_oldest), T(callback_allowlist),
          T(callback_goes_past_no_proxy), T(started_jobs_bounded_in_process),
          T(started_jobs_bytes_bounded_in_process), T(run_with_id_is_kept_for_lookup),
          T(kept_results_bytes_bounded), T(started_jobs_bound_holds_for_calls_at_once),
          T(shared_results_bytes_bounded))
