/* delayed.c - delayed jobs in Redis (docs/operations.md, delayed jobs): a
 * worker that reads an entry not yet due defers it, atomically, into the
 * sorted set P:delayed (member: the job id, score: when it is due) with
 * its fields in the hash P:delayed:<id>, and acknowledges and deletes the
 * entry; every worker's janitor moves the due ones back onto the jobs
 * stream.  No job waits in a worker: a worker killed meanwhile loses none. */
#include "queue.h"
#include "lanes_int.h"
#include "script_int.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

/* KEYS: the delayed set, the job's hash, the stream of the entry's lane,
 * the hash of the delayed jobs' streams.  ARGV: group, the entry's id in
 * its stream, due (ms), job id, then the fields' pairs. */
static const char lua_defer[] = "redis.call('DEL', KEYS[2])\n"
                                "redis.call('HSET', KEYS[2], unpack(ARGV, 5))\n"
                                "redis.call('HSET', KEYS[4], ARGV[4], KEYS[3])\n"
                                "redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])\n"
                                "redis.call('XACK', KEYS[3], ARGV[1], ARGV[2])\n"
                                "redis.call('XDEL', KEYS[3], ARGV[2])\n"
                                "return 1\n";

/* KEYS: the delayed set, the jobs stream, the hash of the delayed jobs'
 * streams, prefix:lanes.  ARGV: now (ms), at most how many, the hashes'
 * key prefix ("P:delayed:"), the lanes' key prefix ("P:jobs:"), the
 * group.  A lane's stream gets its group and its name in prefix:lanes
 * again (it may have been pruned, empty, while the job waited).  Each due job goes back on the stream it came from (its
 * lane's; the jobs stream when none is known) with its fields but not_before (due by the mover's clock, it
 * is due: a reader whose clock lags never defers it again); a member whose
 * hash is gone is dropped. */
static const char lua_move[] =
    "local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])\n"
    "for _, id in ipairs(ids) do\n"
    "  local k = ARGV[3] .. id\n"
    "  local f, a = redis.call('HGETALL', k), {}\n"
    "  for i = 1, #f, 2 do\n"
    "    if f[i] ~= 'not_before' then a[#a + 1] = f[i]; a[#a + 1] = f[i + 1] end\n"
    "  end\n"
    "  local src = redis.call('HGET', KEYS[3], id)\n"
    "  if #a > 0 and src and src ~= KEYS[2] and\n"
    "     string.sub(src, 1, #ARGV[4]) == ARGV[4] then\n"
    "    redis.pcall('XGROUP', 'CREATE', src, ARGV[5], '0', 'MKSTREAM')\n"
    "    redis.call('SADD', KEYS[4], string.sub(src, #ARGV[4] + 1))\n"
    "  end\n"
    "  if #a > 0 then redis.call('XADD', src or KEYS[2], '*', unpack(a)) end\n"
    "  redis.call('HDEL', KEYS[3], id)\n"
    "  redis.call('DEL', k)\n"
    "  redis.call('ZREM', KEYS[1], id)\n"
    "end\n"
    "return #ids\n";

int queue__eval_fields(struct queue *q, const char *script, int nkeys, const char *const *keys,
                       int nargs, const char *const *args, const struct fields *f, redisReply **out,
                       struct llmsb_err *err)
{
    size_t nf = f ? f->n : 0, argc = 3 + (size_t)nkeys + (size_t)nargs + 2 * nf, k = 0;
    const char **argv = malloc(argc * sizeof(*argv));
    size_t *lens = malloc(argc * sizeof(*lens));
    char nk[16];
    int rc;

    *out = NULL;
    if (!argv || !lens) {
        free(argv);
        free(lens);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
    }
    snprintf(nk, sizeof(nk), "%d", nkeys);
    argv[k++] = "EVAL", argv[k++] = script, argv[k++] = nk;
    for (int i = 0; i < nkeys; i++)
        argv[k++] = keys[i];
    for (int i = 0; i < nargs; i++)
        argv[k++] = args[i];
    for (size_t i = 0; i < k; i++)
        lens[i] = strlen(argv[i]);
    for (size_t i = 0; i < nf; i++) {
        argv[k] = f->v[i].name, lens[k++] = f->v[i].name_len;
        argv[k] = f->v[i].value, lens[k++] = f->v[i].len;
    }
    rc = queue__cmd(q, (int)argc, argv, lens, out, err);
    free(argv);
    free(lens);
    return rc;
}

int queue_defer(struct queue *q, const char *entry_id, const char *job_id, int64_t due_ms,
                const struct fields *fields, struct llmsb_err *err)
{
    char k_set[QUEUE_KEY_MAX], k_hash[QUEUE_KEY_MAX], k_from[QUEUE_KEY_MAX], due[24];
    char k_stream[QUEUE_KEY_MAX], raw[QUEUE_ENTRY_ID_MAX];
    const char *keys[4] = {k_set, k_hash, k_stream, k_from};
    const char *args[4] = {q->group, raw, due, job_id};
    redisReply *r = NULL;
    int rc;

    if (!fields || fields->n == 0)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "redis: defer %s: no fields", entry_id);
    if ((rc = queue__entry_where(q, entry_id, k_stream, raw, err)) != 0 ||
        (rc = queue_key(q, "delayed", NULL, k_set, err)) != 0 ||
        (rc = queue_key(q, "delayed", job_id, k_hash, err)) != 0 ||
        (rc = queue_key(q, "delayed-from", NULL, k_from, err)) != 0)
        return rc;
    snprintf(due, sizeof(due), "%lld", (long long)due_ms);
    rc = queue__eval_fields(q, lua_defer, 4, keys, 4, args, fields, &r, err);
    freeReplyObject(r);
    return rc;
}

int queue_delayed_move(struct queue *q, int64_t now_ms, int max, struct llmsb_err *err)
{
    char k_set[QUEUE_KEY_MAX], k_from[QUEUE_KEY_MAX], prefix[QUEUE_KEY_MAX], now[24], cnt[16];
    char k_lanes[QUEUE_KEY_MAX], lanes[QUEUE_KEY_MAX];
    const char *keys[4] = {k_set, q->k_jobs, k_from, k_lanes};
    const char *args[5] = {now, cnt, prefix, lanes, q->group};
    redisReply *r = NULL;
    int rc;

    if ((rc = queue_key(q, "lanes", NULL, k_lanes, err)) != 0 ||
        (rc = queue_key(q, "jobs", "", lanes, err)) != 0 ||
        (rc = queue_key(q, "delayed", NULL, k_set, err)) != 0 ||
        (rc = queue_key(q, "delayed", "", prefix, err)) != 0 ||
        (rc = queue_key(q, "delayed-from", NULL, k_from, err)) != 0)
        return rc;
    snprintf(now, sizeof(now), "%lld", (long long)now_ms);
    snprintf(cnt, sizeof(cnt), "%d", max > 0 ? max : 1);
    if ((rc = queue__eval_fields(q, lua_move, 4, keys, 5, args, NULL, &r, err)) != 0)
        return rc;
    rc = r->type == REDIS_REPLY_INTEGER ? (int)r->integer : 0;
    freeReplyObject(r);
    return rc;
}

int queue_delayed_due(struct queue *q, const char *job_id, int64_t *due_ms, struct llmsb_err *err)
{
    char k_set[QUEUE_KEY_MAX];
    const char *argv[3] = {"ZSCORE", k_set, job_id};
    size_t lens[3];
    redisReply *r = NULL;
    long long v = 0;
    int rc;

    *due_ms = 0;
    if ((rc = queue_key(q, "delayed", NULL, k_set, err)) != 0)
        return rc;
    for (int i = 0; i < 3; i++)
        lens[i] = strlen(argv[i]);
    if ((rc = queue__cmd(q, 3, argv, lens, &r, err)) != 0)
        return rc;
    rc = r->type == REDIS_REPLY_STRING && parse_ll(r->str, 0, (long long)1 << 62, &v) == 0;
    freeReplyObject(r);
    *due_ms = v;
    return rc;
}

long long queue_delayed_count(struct queue *q, struct llmsb_err *err)
{
    char k_set[QUEUE_KEY_MAX];
    const char *argv[2] = {"ZCARD", k_set};
    size_t lens[2];
    redisReply *r = NULL;
    long long n;

    if (queue_key(q, "delayed", NULL, k_set, err) != 0)
        return err->code;
    lens[0] = 5, lens[1] = strlen(k_set);
    if (queue__cmd(q, 2, argv, lens, &r, err) != 0)
        return err->code;
    n = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    return n;
}
