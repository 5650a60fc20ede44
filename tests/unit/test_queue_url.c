/* test_queue_url.c - the queue's URL forms (queue/url.c): plain, ACL
 * user, TLS with its parameters, Sentinel, Cluster, unix socket; bad input
 * refused naming the part and never showing a password; the redaction;
 * and the parsers of MOVED/ASK, SENTINEL, ROLE and CLUSTER SLOTS replies
 * (fed through hiredis's reader, as they come off the wire). */
#include "queue/queue_int.h"
#include "test.h"

static int parse(struct queue *q, const char *url, struct llmsb_err *err)
{
    memset(q, 0, sizeof(*q));
    memset(err, 0, sizeof(*err));
    return queue__url_parse(q, url, err);
}

/* The reply of RESP bytes s (caller frees). */
static redisReply *resp(const char *s)
{
    redisReader *rd = redisReaderCreate();
    void *r = NULL;

    redisReaderFeed(rd, s, strlen(s));
    if (redisReaderGetReply(rd, &r) != REDIS_OK)
        r = NULL;
    redisReaderFree(rd);
    return r;
}

TEST(plain_forms_and_the_old_password_form)
{
    struct queue q;
    struct llmsb_err err;

    ASSERT_EQ(parse(&q, NULL, &err), 0);
    ASSERT_STR(q.host, "127.0.0.1");
    ASSERT_EQ(q.port, 6379);
    ASSERT_EQ(q.wait_replicas, 0);
    ASSERT_EQ(parse(&q, "redis://10.0.0.5:6380/3", &err), 0);
    ASSERT_STR(q.host, "10.0.0.5");
    ASSERT_EQ(q.port, 6380);
    ASSERT_EQ(q.db, 3);
    ASSERT_EQ(parse(&q, "redis://:p@ss/w@host", &err), 0); /* the last '@' ends it */
    ASSERT_STR(q.password, "p@ss/w");
    ASSERT_STR(q.user, "");
    ASSERT_STR(q.host, "host");
    ASSERT_EQ(parse(&q, "redis://secret@host", &err), 0); /* no ':' : a password alone */
    ASSERT_STR(q.password, "secret");
    ASSERT_EQ(parse(&q, "redis://bob:pa%3Fss%40@[::1]:7000/2?wait=2&wait_ms=900", &err), 0);
    ASSERT_STR(q.user, "bob");
    ASSERT_STR(q.password, "pa?ss@");
    ASSERT_STR(q.host, "::1");
    ASSERT_EQ(q.port, 7000);
    ASSERT_EQ(q.db, 2);
    ASSERT_EQ(q.wait_replicas, 2);
    ASSERT_EQ(q.wait_ms, 900);
    ASSERT_EQ(parse(&q, "unix:///run/redis.sock?db=4", &err), 0);
    ASSERT_STR(q.unix_path, "/run/redis.sock");
    ASSERT_EQ(q.db, 4);
}

TEST(tls_forms)
{
    struct queue q;
    struct llmsb_err err;

    ASSERT_EQ(parse(&q,
                    "rediss://u:p@h:6390?ca=/c/ca.pem&cert=/c/me.pem&key=/c/me.key&sni=r.example",
                    &err),
              0);
    ASSERT_EQ(q.tls.on, 1);
    ASSERT_STR(q.tls.ca, "/c/ca.pem");
    ASSERT_STR(q.tls.cert, "/c/me.pem");
    ASSERT_STR(q.tls.key, "/c/me.key");
    ASSERT_STR(q.tls.sni, "r.example");
    ASSERT_EQ(q.tls.insecure, 0);
    ASSERT_EQ(parse(&q, "rediss://h?insecure=1", &err), 0);
    ASSERT_EQ(q.tls.insecure, 1);
    ASSERT_EQ(parse(&q, "redis-sentinel://s1:1,s2?tls=1&ca=/ca", &err), 0);
    ASSERT_EQ(q.tls.on, 1);
}

TEST(sentinel_and_cluster_forms)
{
    struct queue q;
    struct llmsb_err err;

    ASSERT_EQ(parse(&q,
                    "redis-sentinel://bob:pw@s1:26380,s2,10.0.0.3:5000/prod/2"
                    "?sentinel_user=sen&sentinel_password=spw",
                    &err),
              0);
    ASSERT_EQ(q.mode, QUEUE_MODE_SENTINEL);
    ASSERT_EQ(q.nnodes, 3);
    ASSERT_STR(q.nodes[0].host, "s1");
    ASSERT_EQ(q.nodes[0].port, 26380);
    ASSERT_EQ(q.nodes[1].port, 26379);
    ASSERT_EQ(q.nodes[2].port, 5000);
    ASSERT_STR(q.master, "prod");
    ASSERT_EQ(q.db, 2);
    ASSERT_STR(q.sentinel_user, "sen");
    ASSERT_STR(q.sentinel_password, "spw");
    ASSERT_EQ(q.wait_replicas, 1); /* on by default behind sentinels */
    ASSERT_EQ(parse(&q, "redis-sentinel://s1?wait=0", &err), 0);
    ASSERT_STR(q.master, "mymaster");
    ASSERT_EQ(q.wait_replicas, 0);
    ASSERT_EQ(parse(&q, "redis-cluster://n1:7001,n2:7002,n3:7003/", &err), 0);
    ASSERT_EQ(q.mode, QUEUE_MODE_CLUSTER);
    ASSERT_EQ(q.nnodes, 3);
    ASSERT_EQ(q.nodes[2].port, 7003);
    ASSERT_EQ(q.wait_replicas, 0);
}

TEST(bad_urls_name_the_part_and_hide_the_password)
{
    static const struct {
        const char *url, *says;
    } bad[] = {
        {"http://x", "must start with redis://"},
        {"redis://h:0", "port \"0\" is not a number from 1 to 65535"},
        {"redis://h:99999", "port \"99999\""},
        {"redis://h:12ab", "port \"12ab\""},
        {"redis://h/x", "db number: \"x\""},
        {"redis://h/1001", "db number: \"1001\""},
        {"redis://a,b", "several hosts need redis-sentinel://"},
        {"redis://h?ca=/x", "TLS parameters given but TLS is off"},
        {"rediss://h?cert=/x", "cert and key go together"},
        {"redis://h?color=red", "unknown parameter \"color\""},
        {"redis://h?wait", "parameter \"wait\" has no =value"},
        {"redis://h?wait=x", "wait: \"x\" is not a number"},
        {"redis://h?insecure=2", "insecure: \"2\""},
        {"redis://:bad%zzpw@h", "the password: a bad %-escape"},
        {"redis://:x%00y@h", "a bad %-escape or a NUL byte"},
        {"redis://h?sentinel_password=pw", "need redis-sentinel://"},
        {"redis-cluster://a:1/3", "a cluster has db 0 only"},
        {"redis-cluster://a:1?db=3", "a cluster has db 0 only"},
        {"redis-sentinel://a,,b", "a host is empty"},
        {"redis-sentinel://[::1", "no closing ]"},
        {"redis-sentinel://1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "over 16 hosts"},
        {"unix://", "the socket path is empty"},
        {"unix:///s?tls=1", "not taken over a unix socket"},
    };
    struct queue q;
    struct llmsb_err err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ASSERT_MSG(parse(&q, bad[i].url, &err) == LLMSB_ERR_INVALID, bad[i].url);
        ASSERT_MSG(strstr(err.msg, bad[i].says) != NULL, err.msg);
        ASSERT_MSG(strncmp(err.msg, "redis: URL \"", 12) == 0, err.msg);
    }
    ASSERT(parse(&q, "redis://bob:hunter2@h:x", &err) != 0);
    ASSERT(!strstr(err.msg, "hunter2"));
    ASSERT_CONTAINS(err.msg, "bob:***@h:x");
}

TEST(redaction_hides_both_passwords)
{
    char out[256];

    queue_url_redact("redis://bob:pw@h:1/2", out, sizeof(out));
    ASSERT_STR(out, "redis://bob:***@h:1/2");
    queue_url_redact("redis://pw@h", out, sizeof(out));
    ASSERT_STR(out, "redis://***@h");
    queue_url_redact("redis-sentinel://:a@b@s1,s2/m?sentinel_password=x&wait=1", out, sizeof(out));
    ASSERT_STR(out, "redis-sentinel://:***@s1,s2/m?sentinel_password=***&wait=1");
    queue_url_redact("redis://h:1", out, sizeof(out));
    ASSERT_STR(out, "redis://h:1");
    queue_url_redact("redis://bob:pw@h", out, 8);
    ASSERT_STR(out, "redis:/");
}

/* A password may hold '?', '/' and '@' (the userinfo ends at the last
 * '@' before the query), and none of it reaches an error or a log. */
TEST(a_password_with_a_question_mark_or_slash_stays_hidden)
{
    static const char *const bad[] = {
        "redis://admin:S3cr?et@127.0.0.1:x", "redis://admin:S3cr?et@h:1/zz",
        "redis://admin:S3cr?et@h?color=1",   "redis://admin:S3cr/et@h:0",
        "redis-sentinel://:S3cr?et@a,,b",    "redis-cluster://admin:S3cr?et@h/3",
    };
    struct queue q;
    struct llmsb_err err;
    char out[256];

    ASSERT_EQ(parse(&q, "redis://admin:S3cr?et@127.0.0.1:7601", &err), 0);
    ASSERT_STR(q.user, "admin");
    ASSERT_STR(q.password, "S3cr?et");
    ASSERT_STR(q.host, "127.0.0.1");
    ASSERT_EQ(q.port, 7601);
    ASSERT_EQ(parse(&q, "redis://u:a/b?c@h:1/2?wait=1&wait_ms=9", &err), 0);
    ASSERT_STR(q.password, "a/b?c");
    ASSERT_STR(q.host, "h");
    ASSERT_EQ(q.db, 2);
    ASSERT_EQ(q.wait_replicas, 1);
    ASSERT_EQ(q.wait_ms, 9);
    ASSERT_EQ(parse(&q, "redis-sentinel://u:p@s1/m?sentinel_password=a@b", &err), 0);
    ASSERT_STR(q.password, "p"); /* an '@' in the query is not the userinfo's */
    ASSERT_STR(q.sentinel_password, "a@b");
    ASSERT_STR(q.nodes[0].host, "s1");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ASSERT_MSG(parse(&q, bad[i], &err) == LLMSB_ERR_INVALID, bad[i]);
        ASSERT_MSG(!strstr(err.msg, "S3cr") && !strstr(err.msg, "et@"), err.msg);
    }
    queue_url_redact("redis://admin:S3cr?et@127.0.0.1:7601", out, sizeof(out));
    ASSERT_STR(out, "redis://admin:***@127.0.0.1:7601");
    queue_url_redact("redis://:a/b?c@h:1/2?wait=1", out, sizeof(out));
    ASSERT_STR(out, "redis://:***@h:1/2?wait=1");
    queue_url_redact("redis-sentinel://u:p@s1/m?sentinel_password=a@b&db=1", out, sizeof(out));
    ASSERT_STR(out, "redis-sentinel://u:***@s1/m?sentinel_password=***&db=1");
}

/* The redaction goes by the decoded name, and shows only the values of
 * the parameters known to hold no secret. */
TEST(redaction_by_decoded_name_and_a_safe_list)
{
    struct queue q;
    struct llmsb_err err;
    char out[256];

    queue_url_redact("redis-sentinel://s1?sentinel%5Fpassword=topsecret&bogus=1", out, sizeof(out));
    ASSERT_STR(out, "redis-sentinel://s1?sentinel%5Fpassword=***&bogus=***");
    ASSERT_EQ(parse(&q, "redis-sentinel://s1?sentinel%5Fpassword=topsecret&bogus=1", &err),
              LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "unknown parameter \"bogus\"");
    ASSERT(!strstr(err.msg, "topsecret"));
    queue_url_redact("redis://h?color=red&wait_ms=90&sentinel_password", out, sizeof(out));
    ASSERT_STR(out, "redis://h?color=***&wait_ms=90&***");
    queue_url_redact("rediss://h?ca=/c/ca.pem&sni=r.example", out, sizeof(out));
    ASSERT_STR(out, "rediss://h?ca=/c/ca.pem&sni=r.example");
}

TEST(key_slots_match_the_clusters)
{
    /* values from CLUSTER KEYSLOT on Redis 7 */
    ASSERT_EQ(queue__key_slot("foo", 3), 12182u);
    ASSERT_EQ(queue__key_slot("{llmsb}:jobs", 12), queue__key_slot("llmsb", 5));
    ASSERT_EQ(queue__key_slot("{llmsb}:result:x", 16), queue__key_slot("{llmsb}:dead", 12));
    ASSERT_EQ(queue__key_slot("a{}b", 4), queue__key_slot("a{}b", 4));
    ASSERT_EQ(queue__key_slot("123456789", 9), 12739u); /* CRC16/XMODEM 0x31C3 */
}

TEST(redirects_parse)
{
    struct queue_node n;
    int ask = -1;
    static const char *const no[] = {"MOVED",     "MOVED x 1:2", "MOVED 99999 h:1", "ASK 1 h",
                                     "ASK 1 h:0", "MOVED 1 h:",  "ERR x",           "MOVED  h:1"};

    ASSERT_EQ(queue__redirect_parse("MOVED 3999 10.0.0.1:6381", 24, &ask, &n), 1);
    ASSERT_EQ(ask, 0);
    ASSERT_STR(n.host, "10.0.0.1");
    ASSERT_EQ(n.port, 6381);
    ASSERT_EQ(queue__redirect_parse("ASK 1 ::1:7000", 14, &ask, &n), 1);
    ASSERT_EQ(ask, 1);
    ASSERT_STR(n.host, "::1");
    ASSERT_EQ(queue__redirect_parse("MOVED 5 :7001", 13, &ask, &n), 1);
    ASSERT_STR(n.host, "");
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        ASSERT_MSG(queue__redirect_parse(no[i], strlen(no[i]), &ask, &n) == 0, no[i]);
}

TEST(sentinel_role_and_slots_replies_parse)
{
    struct queue_node n;
    char role[32];
    redisReply *r;

    r = resp("*2\r\n$8\r\n10.0.0.2\r\n$4\r\n6380\r\n");
    ASSERT_EQ(queue__sentinel_addr_parse(r, &n), 1);
    ASSERT_STR(n.host, "10.0.0.2");
    ASSERT_EQ(n.port, 6380);
    freeReplyObject(r);
    r = resp("$-1\r\n");
    ASSERT_EQ(queue__sentinel_addr_parse(r, &n), 0);
    freeReplyObject(r);
    r = resp("*2\r\n$1\r\nh\r\n$5\r\n70000\r\n");
    ASSERT_EQ(queue__sentinel_addr_parse(r, &n), -1);
    freeReplyObject(r);
    r = resp("*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");
    ASSERT_EQ(queue__role_parse(r, role, sizeof(role)), 1);
    freeReplyObject(r);
    r = resp("*5\r\n$5\r\nslave\r\n$1\r\nh\r\n:1\r\n$9\r\nconnected\r\n:0\r\n");
    ASSERT_EQ(queue__role_parse(r, role, sizeof(role)), 0);
    ASSERT_STR(role, "slave");
    freeReplyObject(r);
    r = resp(
        "*2\r\n*3\r\n:0\r\n:8000\r\n*2\r\n$1\r\na\r\n:7001\r\n"
        "*4\r\n:8001\r\n:16383\r\n*3\r\n$0\r\n\r\n:7002\r\n$2\r\nid\r\n*2\r\n$1\r\nr\r\n:7005\r\n");
    ASSERT_EQ(queue__cluster_slots_find(r, 12182, &n), 1);
    ASSERT_STR(n.host, "");
    ASSERT_EQ(n.port, 7002);
    ASSERT_EQ(queue__cluster_slots_find(r, 5, &n), 1);
    ASSERT_STR(n.host, "a");
    ASSERT_EQ(queue__cluster_slots_find(r, 8000, &n), 1);
    freeReplyObject(r);
    r = resp("*1\r\n*3\r\n:0\r\n:10\r\n*2\r\n$1\r\na\r\n:1\r\n");
    ASSERT_EQ(queue__cluster_slots_find(r, 11, &n), 0);
    freeReplyObject(r);
    r = resp("*1\r\n:1\r\n");
    ASSERT_EQ(queue__cluster_slots_find(r, 11, &n), -1);
    freeReplyObject(r);
}

TEST_MAIN("queue_url", T(plain_forms_and_the_old_password_form), T(tls_forms),
          T(sentinel_and_cluster_forms), T(bad_urls_name_the_part_and_hide_the_password),
          T(redaction_hides_both_passwords),
          T(a_password_with_a_question_mark_or_slash_stays_hidden),
          T(redaction_by_decoded_name_and_a_safe_list), T(key_slots_match_the_clusters),
          T(redirects_parse), T(sentinel_role_and_slots_replies_parse))
