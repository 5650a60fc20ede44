/* live.c - a live job's output in Redis (queue.h, "Live output"): the
 * worker appends each chunk to the job's stream as its agent sends it,
 * then an end entry once the final result stands; any client follows it
 * with XREAD (`result ID --follow`, the MCP server in queue mode).  The
 * stream is capped by entries here and, in bytes, by the job's output
 * limit (the agent sends no more, the worker's sandbox passes no more). */
#include "queue_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* XADD key MAXLEN ~ QUEUE_LIVE_MAXLEN * pairs..., then EXPIRE key ttl_s
 * (ttl_s 0: none) in the same round trip. */
static int live_xadd(struct queue *q, const char *job_id, int npairs, const char **pairs,
                     const size_t *lens, long long ttl_s, struct llmsb_err *err)
{
    const char *argv[12] = {"XADD", NULL, "MAXLEN", "~", QUEUE_LIVE_MAXLEN, "*"};
    size_t len[12];
    char key[QUEUE_KEY_MAX], ttl[24];
    redisReply *r = NULL;
    int rc;

    if ((rc = queue_key(q, "out", job_id, key, err)) != 0)
        return rc;
    argv[1] = key;
    for (int i = 0; i < 6; i++)
        len[i] = strlen(argv[i]);
    for (int i = 0; i < 2 * npairs && i < 6; i++) {
        argv[6 + i] = pairs[i];
        len[6 + i] = lens ? lens[i] : strlen(pairs[i]);
    }
    if (ttl_s <= 0) {
        if ((rc = queue__cmd(q, 6 + 2 * npairs, argv, len, &r, err)) != 0)
            return rc;
        freeReplyObject(r);
        return 0;
    }
    snprintf(ttl, sizeof(ttl), "%lld", ttl_s);
    const char *ex[3] = {"EXPIRE", key, ttl};
    const size_t exlen[3] = {6, strlen(key), strlen(ttl)};
    return queue__cmd2(q, 6 + 2 * npairs, argv, len, 3, ex, exlen, err);
}

/* verb (DEL, EXISTS) of job_id's stream key: its integer answer, or a
 * negative code. */
static long long key_verb(struct queue *q, const char *verb, const char *job_id,
                          struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    const char *argv[2] = {verb, key};
    size_t len[2] = {strlen(verb), 0};
    redisReply *r = NULL;
    long long v;
    int rc;

    if ((rc = queue_key(q, "out", job_id, key, err)) != 0)
        return rc;
    len[1] = strlen(key);
    if ((rc = queue__cmd(q, 2, argv, len, &r, err)) != 0)
        return rc;
    v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    return v;
}

int queue_live_restart(struct queue *q, const char *job_id, long long attempt, long long ttl_s,
                       struct llmsb_err *err)
{
    long long rc = key_verb(q, "DEL", job_id, err);
    char n[24];
    const char *pairs[4] = {"fd", "restart", "attempt", n};

    if (rc < 0)
        return (int)rc;
    snprintf(n, sizeof(n), "%lld", attempt);
    return live_xadd(q, job_id, 2, pairs, NULL, ttl_s > 0 ? ttl_s : 1, err);
}

int queue_live_add(struct queue *q, const char *job_id, const char *fd, unsigned long long offset,
                   const char *data, size_t len, long long ttl_s, struct llmsb_err *err)
{
    char off[24];
    const char *pairs[6] = {"fd", fd, "offset", off, "data", data};
    size_t lens[6] = {2, strlen(fd), 6, 0, 4, len};

    snprintf(off, sizeof(off), "%llu", offset);
    lens[3] = strlen(off);
    return live_xadd(q, job_id, 3, pairs, lens, ttl_s, err);
}

int queue_live_end(struct queue *q, const char *job_id, const char *status, long long ttl_s,
                   struct llmsb_err *err)
{
    const char *pairs[4] = {"fd", "end", "status", status};

    return live_xadd(q, job_id, 2, pairs, NULL,
                     ttl_s > 0 && ttl_s < QUEUE_LIVE_END_TTL_S ? ttl_s : QUEUE_LIVE_END_TTL_S, err);
}

int queue_live_read(struct queue *q, const char *job_id, char *last_id, size_t lsz, int count,
                    int block_ms, struct queue_entry **out, size_t *n, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX], blk[16], cnt[16];
    const char *argv[8] = {"XREAD", "COUNT", cnt, "BLOCK", blk, "STREAMS", key, last_id};
    size_t len[8];
    redisReply *r = NULL;
    int rc, argc = 8;

    *out = NULL;
    *n = 0;
    if ((rc = queue_key(q, "out", job_id, key, err)) != 0)
        return rc;
    snprintf(cnt, sizeof(cnt), "%d", count);
    snprintf(blk, sizeof(blk), "%d", block_ms);
    if (block_ms <= 0) { /* no BLOCK at all: XREAD answers at once */
        argv[3] = "STREAMS", argv[4] = key, argv[5] = last_id;
        argc = 6;
    }
    for (int i = 0; i < argc; i++)
        len[i] = strlen(argv[i]);
    if ((rc = queue__cmd(q, argc, argv, len, &r, err)) != 0)
        return rc;
    return queue__xread_reply(r, last_id, lsz, out, n, err);
}

int queue_live_exists(struct queue *q, const char *job_id, struct llmsb_err *err)
{
    long long rc = key_verb(q, "EXISTS", job_id, err);

    return rc < 0 ? (int)rc : rc > 0;
}

/* ---- following ---------------------------------------------------------- */

/* The hash of nothing: where a stream's sum of what was printed starts. */
#define SUM_EMPTY hash_fnv1a(0, "", 0)

void queue_follow_init(struct queue_follow *f)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->last_id, sizeof(f->last_id), "0-0");
    f->sum[0] = f->sum[1] = SUM_EMPTY;
}

/* A restart entry: what came before is void; fn hears of it when this
 * follower saw an earlier attempt. */
static void follow_restart(struct queue_follow *f, const struct fields *e, queue_follow_fn fn,
                           void *arg)
{
    const char *a = fields_get(e, "attempt", NULL);
    long long n = 0;

    if (!a || parse_ll(a, 0, (long long)1 << 40, &n) != 0)
        n = f->attempt + 1;
    if (f->attempt || f->next[0] || f->next[1])
        fn(arg, 0, NULL, (size_t)n);
    f->attempt = n;
    f->next[0] = f->next[1] = 0;
    f->sum[0] = f->sum[1] = SUM_EMPTY;
}

/* One entry: the part of its chunk past what was handed on of its stream. */
static void follow_entry(struct queue_follow *f, const struct fields *e, queue_follow_fn fn,
                         void *arg)
{
    size_t fdlen = 0, len = 0, olen = 0;
    const char *fd = fields_get(e, "fd", &fdlen), *data = fields_get(e, "data", &len);
    const char *off = fields_get(e, "offset", &olen);
    long long at = -1;
    int k;

    if (fd && strcmp(fd, "end") == 0) {
        f->ended = 1;
        return;
    }
    if (fd && strcmp(fd, "restart") == 0) {
        follow_restart(f, e, fn, arg);
        return;
    }
    k = fd && strcmp(fd, "stdout") == 0 ? 0 : fd && strcmp(fd, "stderr") == 0 ? 1 : -1;
    if (k < 0 || !data || !off || parse_ll(off, 0, (long long)1 << 62, &at) != 0)
        return;
    /* past what was handed on: a gap (trimmed entries); the result fills it */
    if ((unsigned long long)at > f->next[k] || (unsigned long long)at + len <= f->next[k])
        return;
    size_t skip = (size_t)(f->next[k] - (unsigned long long)at);
    fn(arg, k + 1, data + skip, len - skip);
    f->sum[k] = hash_fnv1a(f->sum[k], data + skip, len - skip);
    f->next[k] += len - skip;
}

int queue_follow_step(struct queue *q, const char *job_id, struct queue_follow *f, int block_ms,
                      queue_follow_fn fn, void *arg, struct llmsb_err *err)
{
    struct queue_entry *e = NULL;
    size_t n = 0;
    int rc = queue_live_read(q, job_id, f->last_id, sizeof(f->last_id), 100, block_ms, &e, &n, err);

    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        follow_entry(f, &e[i].f, fn, arg);
    queue_entries_free(e, n);
    return (int)n;
}

int queue_follow_rest(struct queue_follow *f, const struct fields *result, queue_follow_fn fn,
                      void *arg)
{
    static const char *const names[2] = {"stdout", "stderr"};

    for (int k = 0; k < 2; k++) {
        size_t len = 0;
        const char *v = fields_get(result, names[k], &len);
        if (f->next[k] &&
            (!v || len < f->next[k] || hash_fnv1a(0, v, (size_t)f->next[k]) != f->sum[k]))
            return 1;
    }
    for (int k = 0; k < 2; k++) {
        size_t len = 0;
        const char *v = fields_get(result, names[k], &len);
        if (v && len > f->next[k]) {
            fn(arg, k + 1, v + f->next[k], len - (size_t)f->next[k]);
            f->next[k] = len;
        }
    }
    return 0;
}
