/* queue.c - the Redis side of llm-sandbox on hiredis 0.14: the jobs
 * stream, results, leases, sessions (the connection itself is conn.c's).
 *
 * Replies are checked by type and freed exactly once, here; NOGROUP
 * recreates the group; the writes a failover must not lose (enqueue and
 * the final write) go through queue__cmd_durable. */
#include "queue.h"
#include "queue_int.h"
#include "lanes_int.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "common/clock.h"

/* ---- scripts ------------------------------------------------------------- */

/* A final result stands (first one wins) unless it is the one a recheck
 * replaces: status ARGV[R] (R: the recheck argument's index), not itself a
 * recheck's. */
#define LUA_REPLACEABLE(R)                                   \
    "local function replaceable(k)\n"                        \
    "  local st = redis.call('HGET', k, 'status')\n"         \
    "  if not st or st == 'running' then return true end\n"  \
    "  return ARGV[" R "] ~= '' and st == ARGV[" R "] and\n" \
    "    redis.call('HGET', k, 'rechecked') ~= 'true'\n"     \
    "end\n"

/* An entry id's stream and its id there, in a script that has the
 * default lane's stream (prefix:jobs) as KEYS[K]: "high/1-0" is 1-0 of
 * prefix:jobs:high (queue__entry_where in Lua). */
#define LUA_WHERE(K)                                                                   \
    "local function where(id)\n"                                                       \
    "  local s = string.find(id, '/', 1, true)\n"                                      \
    "  if not s then return KEYS[" K "], id end\n"                                     \
    "  return KEYS[" K "] .. ':' .. string.sub(id, 1, s - 1), string.sub(id, s + 1)\n" \
    "end\n"

/* KEYS: result hash, done list, results stream, jobs stream, dead stream,
 * then per copy its result hash, done list and cancel key.  ARGV: group,
 * entry id, ttl, status, job id, n result pairs, n dead pairs, recheck,
 * n copies, ack (1: acknowledge the entry once every copy is through),
 * the copies' byte budget, the result pairs, the dead pairs, per copy its
 * id and meta ("": none).  Each copy gets the result under its own id and
 * meta with copy_of (a copy with a cancel request: cancelled), each
 * first-wins.  When the run's result is final already (an earlier batch
 * of this write, or a delivery acknowledged), the copies still without
 * one get that stored result.  The copies stop once those written carry
 * the budget's bytes (at least one is written): returns {written, copies
 * gone through}, and the entry is acknowledged only when all are. */
static const char lua_finish[] = LUA_REPLACEABLE(
    "8") "local np, nd, nc = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[9])\n"
         "local res, dead, cps = 12, 12 + 2 * np, 12 + 2 * np + 2 * nd\n"
         "local function publish(kr, kd, id, st)\n"
         "  redis.call('EXPIRE', kr, ARGV[3])\n"
         "  redis.call('LPUSH', kd, st)\n"
         "  redis.call('EXPIRE', kd, ARGV[3])\n"
         "  redis.call('XADD', KEYS[3], 'MAXLEN', '~', '" QUEUE_RESULTS_MAXLEN
         "', '*', 'id', id, 'status', st)\n"
         "end\n"
         "local final = not replaceable(KEYS[1])\n"
         "if not final then\n"
         "  redis.call('DEL', KEYS[1])\n"
         "  redis.call('HSET', KEYS[1], unpack(ARGV, res, dead - 1))\n"
         "  publish(KEYS[1], KEYS[2], ARGV[5], ARGV[4])\n"
         "  if nd > 0 then\n"
         "    redis.call('XADD', KEYS[5], 'MAXLEN', '~', '" QUEUE_RESULTS_MAXLEN
         "', '*', unpack(ARGV, dead, cps - 1))\n"
         "  end\n"
         "end\n"
         "local st0, src = ARGV[4], {unpack(ARGV, res, dead - 1)}\n"
         "if final then\n"
         "  st0, src = redis.call('HGET', KEYS[1], 'status'), redis.call('HGETALL', KEYS[1])\n"
         "end\n"
         "local size, budget, spent, c = 0, tonumber(ARGV[11]), 0, 0\n"
         "for i = 1, #src do size = size + #src[i] end\n"
         "while c < nc and spent < budget do\n"
         "  local kr, kd, id, meta = KEYS[6 + 3 * c], KEYS[7 + 3 * c], ARGV[cps + 2 * c],\n"
         "    ARGV[cps + 2 * c + 1]\n"
         "  if replaceable(kr) then\n"
         "    local st = st0\n"
         "    redis.call('DEL', kr)\n"
         "    if redis.call('EXISTS', KEYS[8 + 3 * c]) == 1 and st ~= 'cancelled' then\n"
         "      st = 'cancelled'\n"
         "      redis.call('HSET', kr, 'status', st, 'error', 'cancelled (a copy: the run it '\n"
         "        .. 'shared went on for ' .. ARGV[5] .. ')')\n"
         "    else\n"
         "      redis.call('HSET', kr, unpack(src))\n"
         "      spent = spent + size\n"
         "    end\n"
         "    redis.call('HSET', kr, 'id', id, 'copy_of', ARGV[5])\n"
         "    if meta ~= '' then redis.call('HSET', kr, 'meta', meta)\n"
         "    else redis.call('HDEL', kr, 'meta') end\n"
         "    publish(kr, kd, id, st)\n"
         "  end\n"
         "  c = c + 1\n"
         "end\n"
         "if ARGV[2] ~= '' and ARGV[10] == '1' and c == nc then\n"
         "  redis.call('XACK', KEYS[4], ARGV[1], ARGV[2])\n"
         "  redis.call('XDEL', KEYS[4], ARGV[2])\n"
         "end\n"
         "return {final and 0 or 1, c}\n";

/* KEYS: result hash, the default lane's stream, then each copy's result hash.  ARGV:
 * ttl, recheck, job id, group, entry id ("": none), n pairs, the pairs,
 * the copies' ids.  0 when a final result stands; a recheck leaves the
 * result it will replace in place until then (1); 2 when another entry
 * of the id holds the mark and is delivered and not acknowledged yet (it
 * runs, or will run again): one run of an id at a time. */
static const char lua_running[] = LUA_REPLACEABLE("2") LUA_WHERE(
    "2") "local function marked()\n"
         "  if redis.call('EXISTS', KEYS[3]) == 1 then return 3 end\n"
         "  return 1\n"
         "end\n"
         "local st = redis.call('HGET', KEYS[1], 'status')\n"
         "if not replaceable(KEYS[1]) then return 0 end\n"
         "if st and st ~= 'running' then return marked() end\n"
         "if st and ARGV[5] ~= '' then\n"
         "  local holder = redis.call('HGET', KEYS[1], 'entry_id')\n"
         "  if holder and holder ~= ARGV[5] then\n"
         "    local k, raw = where(holder)\n"
         "    if #redis.call('XPENDING', k, ARGV[4], raw, raw, 1) == 1 then return 2 end\n"
         "  end\n"
         "end\n"
         "local np = tonumber(ARGV[6])\n"
         "local function mark(k)\n"
         "  redis.call('HSET', k, 'status', 'running', unpack(ARGV, 7, 6 + 2 * np))\n"
         "  redis.call('EXPIRE', k, ARGV[1])\n"
         "end\n"
         "mark(KEYS[1])\n"
         "if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'entry_id', ARGV[5]) end\n"
         "for c = 4, #KEYS do\n"
         "  local s = redis.call('HGET', KEYS[c], 'status')\n"
         "  if not s or s == 'running' then\n"
         "    mark(KEYS[c])\n"
         "    redis.call('HSET', KEYS[c], 'id', ARGV[6 + 2 * np + c - 3], 'copy_of', ARGV[3])\n"
         "  end\n"
         "end\n"
         "return marked()\n";

/* KEYS: session hash, the holder's heartbeat key prefix ("P:worker:").
 * ARGV: me, ttl.  Returns {0} ours now (it was free), {3} ours already,
 * {1, holder} another live worker's, {2, why} lost (a holder without a
 * heartbeat is gone: the session too). */
static const char lua_session_claim[] =
    "local st = redis.call('HGET', KEYS[1], 'state')\n"
    "local w = redis.call('HGET', KEYS[1], 'worker')\n"
    "if not st then\n"
    "  redis.call('HSET', KEYS[1], 'state', 'open', 'worker', ARGV[1])\n"
    "  redis.call('EXPIRE', KEYS[1], ARGV[2])\n"
    "  return {0, ''}\n"
    "end\n"
    "if st == 'lost' then return {2, redis.call('HGET', KEYS[1], 'why') or 'ended'} end\n"
    "if w == ARGV[1] then return {3, ''} end\n"
    "if redis.call('EXISTS', KEYS[2] .. w) == 1 then return {1, w} end\n"
    "local why = 'the worker that held it (' .. w .. ') is gone'\n"
    "redis.call('HSET', KEYS[1], 'state', 'lost', 'why', why)\n"
    "return {2, why}\n";

/* KEYS: jobs stream. ARGV: group, entry id, session id.  1 when an entry
 * before it in the stream, delivered and not acknowledged yet (running,
 * waiting in some worker, or handed over), is a call of the same session:
 * every entry before a delivered one was delivered, so these are all the
 * session's calls that have to run first.  Looks at the first 1000. */
static const char lua_session_earlier[] =
    "local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '(' .. ARGV[2], 1000)\n"
    "for _, e in ipairs(p) do\n"
    "  local r = redis.call('XRANGE', KEYS[1], e[1], e[1])\n"
    "  if r[1] then\n"
    "    local f = r[1][2]\n"
    "    for i = 1, #f, 2 do\n"
    "      if f[i] == 'session' and f[i + 1] == ARGV[3] then return 1 end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return 0\n";

/* KEYS: the default lane's stream. ARGV: group, consumer, entry ids (with
 * their lanes)... Returns ids not ours. */
static const char lua_renew[] =
    LUA_WHERE("1") "local lost = {}\n"
                   "for i = 3, #ARGV do\n"
                   "  local k, raw = where(ARGV[i])\n"
                   "  local p = redis.call('XPENDING', k, ARGV[1], raw, raw, 1)\n"
                   "  if #p == 1 and p[1][2] == ARGV[2] then\n"
                   "    redis.call('XCLAIM', k, ARGV[1], ARGV[2], 0, raw, 'JUSTID')\n"
                   "  else\n"
                   "    table.insert(lost, ARGV[i])\n"
                   "  end\n"
                   "end\n"
                   "return lost\n";

/* ---- plumbing ------------------------------------------------------------ */

int queue_key(const struct queue *q, const char *kind, const char *id, char out[QUEUE_KEY_MAX],
              struct llmsb_err *err)
{
    const char *p = q->key_prefix[0] ? q->key_prefix : q->prefix; /* {prefix} in a cluster */
    int n = snprintf(out, QUEUE_KEY_MAX, "%s:%s%s%s", p, kind, id ? ":" : "", id ? id : "");

    if (n < 0 || n >= QUEUE_KEY_MAX)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "redis: key %s:%s:<%zu bytes> is over %d "
                             "bytes",
                             p, kind, id ? strlen(id) : 0, QUEUE_KEY_MAX - 1);
    return 0;
}

int queue_err_retryable(const struct llmsb_err *err)
{
    return err->code == LLMSB_ERR_BACKEND || err->code == LLMSB_ERR_TIMEOUT;
}

/* One command of argc plain strings from ap: queue__cmd's answer; more
 * than QUEUE__ARGS_MAX is refused before any past the first is read. */
static int cmdv(struct queue *q, redisReply **out, struct llmsb_err *err, int argc, va_list ap)
{
    const char *argv[QUEUE__ARGS_MAX];
    size_t lens[QUEUE__ARGS_MAX];

    *out = NULL;
    if (argc < 1 || argc > QUEUE__ARGS_MAX) {
        const char *verb = argc >= 1 ? va_arg(ap, const char *) : "(none)";
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "redis: %s: %d arguments; a command of plain strings takes 1 to %d",
                             verb, argc, QUEUE__ARGS_MAX);
    }
    for (int i = 0; i < argc; i++) {
        argv[i] = va_arg(ap, const char *);
        lens[i] = strlen(argv[i]);
    }
    return queue__cmd(q, argc, argv, lens, out, err);
}

/* cmd() with string arguments only. */
static int cmds(struct queue *q, redisReply **out, struct llmsb_err *err, int argc, ...)
{
    va_list ap;
    int rc;

    va_start(ap, argc);
    rc = cmdv(q, out, err, argc, ap);
    va_end(ap);
    return rc;
}

/* A command's arguments built up to a size known in advance: a head of
 * plain strings, then the pairs of field lists. */
struct args {
    const char **v;
    size_t *len;
    int n, cap;
    int durable; /* run with queue__cmd_durable */
};

static int args_init(struct args *a, int cap, struct llmsb_err *err)
{
    a->n = 0;
    a->cap = cap;
    a->durable = 0;
    a->v = malloc((size_t)cap * sizeof(*a->v));
    a->len = malloc((size_t)cap * sizeof(*a->len));
    if (!a->v || !a->len) {
        free(a->v);
        free(a->len);
        a->v = NULL;
        a->len = NULL;
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
    }
    return 0;
}

static void args_add(struct args *a, const char *s, size_t len)
{
    if (a->n < a->cap) {
        a->v[a->n] = s;
        a->len[a->n++] = len;
    }
}

static void args_adds(struct args *a, const char *s)
{
    args_add(a, s, strlen(s));
}

static void args_fields(struct args *a, const struct fields *f)
{
    for (size_t i = 0; f && i < f->n; i++) {
        args_add(a, f->v[i].name, f->v[i].name_len);
        args_add(a, f->v[i].value, f->v[i].len);
    }
}

static void args_release(struct args *a)
{
    free(a->v);
    free(a->len);
}

/* Runs the built command; the reply is freed here. */
static int args_run(struct queue *q, struct args *a, redisReply **out, struct llmsb_err *err)
{
    redisReply *r = NULL;
    int rc = a->durable ? queue__cmd_durable(q, a->n, a->v, a->len, &r, err)
                        : queue__cmd(q, a->n, a->v, a->len, &r, err);

    args_release(a);
    if (out)
        *out = r;
    else
        freeReplyObject(r);
    return rc;
}

int queue__simple(struct queue *q, struct llmsb_err *err, int argc, ...)
{
    redisReply *r = NULL;
    va_list ap;
    int rc;

    va_start(ap, argc);
    rc = cmdv(q, &r, err, argc, ap);
    va_end(ap);
    freeReplyObject(r);
    return rc;
}

/* ---- entries ---------------------------------------------------------------- */

void queue_entries_free(struct queue_entry *e, size_t n)
{
    for (size_t i = 0; e && i < n; i++)
        fields_release(&e[i].f);
    free(e);
}

/* Copies one pair of a flat reply into f; 1 when it was skipped. */
static int add_pair(struct fields *f, const redisReply *k, const redisReply *v)
{
    if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
        return 1;
    if (v->len > QUEUE_MAX_VALUE) {
        f->oversized++;
        return 1;
    }
    return fields_add_copy(f, k->str, k->len, v->str, v->len) == LLMSB_ERR_NOMEM ? -1 : 0;
}

/* Copies a flat [name, value, ...] reply into f: "id" first, whatever its
 * place (a job's result is filed under it even when the rest is wrong),
 * then the others up to f->max (the rest counted in f->dropped, values
 * over QUEUE_MAX_VALUE in f->oversized).  Returns 0, 1 when kv is not an
 * array (a deleted entry), or LLMSB_ERR_NOMEM. */
static int fill_pairs(struct fields *f, const redisReply *kv)
{
    size_t id_at = (size_t)-1;

    if (!kv || kv->type != REDIS_REPLY_ARRAY)
        return 1;
    for (size_t i = 0; i + 1 < kv->elements && id_at == (size_t)-1; i += 2)
        if (kv->element[i]->type == REDIS_REPLY_STRING && kv->element[i]->len == 2 &&
            memcmp(kv->element[i]->str, "id", 2) == 0)
            id_at = i;
    if (id_at != (size_t)-1 && add_pair(f, kv->element[id_at], kv->element[id_at + 1]) < 0)
        return LLMSB_ERR_NOMEM;
    for (size_t i = 0; i + 1 < kv->elements; i += 2)
        if (i != id_at && add_pair(f, kv->element[i], kv->element[i + 1]) < 0)
            return LLMSB_ERR_NOMEM;
    return 0;
}

/* Parses [[id, [k, v, ...]], ...] into a new entry array, up to max_fields
 * fields per entry. */
static int parse_entries_max(const redisReply *arr, size_t max_fields, struct queue_entry **out,
                             size_t *n)
{
    struct queue_entry *e;

    *out = NULL;
    *n = 0;
    if (!arr || arr->type != REDIS_REPLY_ARRAY || arr->elements == 0)
        return 0;
    if (!(e = calloc(arr->elements, sizeof(*e))))
        return LLMSB_ERR_NOMEM;
    for (size_t i = 0; i < arr->elements; i++) {
        const redisReply *it = arr->element[i];
        if (it->type != REDIS_REPLY_ARRAY || it->elements < 1 ||
            it->element[0]->type != REDIS_REPLY_STRING)
            continue;
        snprintf(e[*n].id, sizeof(e[*n].id), "%.*s", (int)it->element[0]->len, it->element[0]->str);
        e[*n].deliveries = 1;
        fields_init(&e[*n].f, max_fields);
        int rc = fill_pairs(&e[*n].f, it->elements > 1 ? it->element[1] : NULL);
        if (rc < 0) {
            queue_entries_free(e, *n + 1);
            return LLMSB_ERR_NOMEM;
        }
        e[*n].deleted = rc == 1;
        (*n)++;
    }
    *out = e;
    return 0;
}

int queue__parse_entries(const redisReply *arr, struct queue_entry **out, size_t *n)
{
    return parse_entries_max(arr, QUEUE_MAX_FIELDS, out, n);
}

/* ---- group and reads ----------------------------------------------------------- */

int queue_group_ensure(struct queue *q, struct llmsb_err *err)
{
    int rc = queue__simple(q, err, 6, "XGROUP", "CREATE", q->k_jobs, q->group, "0", "MKSTREAM");
    if (rc != 0 && strstr(err->msg, "BUSYGROUP")) {
        llmsb_err_clear(err);
        return 0;
    }
    return rc;
}

int queue_read(struct queue *q, int count, int block_ms, struct queue_entry **out, size_t *n,
               struct llmsb_err *err)
{
    char cnt[16], blk[16];
    redisReply *r;
    int rc;

    *out = NULL;
    *n = 0;
    snprintf(cnt, sizeof(cnt), "%d", count);
    snprintf(blk, sizeof(blk), "%d", block_ms);
    rc = cmds(q, &r, err, 11, "XREADGROUP", "GROUP", q->group, q->consumer, "COUNT", cnt, "BLOCK",
              blk, "STREAMS", q->k_jobs, ">");
    if (rc != 0) {
        if (strstr(err->msg, "NOGROUP")) {
            struct llmsb_err e2 = {0};
            queue_group_ensure(q, &e2);
        }
        return rc;
    }
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->elements == 2)
        rc = queue__parse_entries(r->element[0]->element[1], out, n);
    freeReplyObject(r);
    return rc ? llmsb_err_set(err, rc, "redis: out of memory") : 0;
}

/* KEYS: a lane's stream, prefix:lanes.  ARGV: group, lane name, the most
 * lanes (QUEUE_LANES_MAX), the fields.  A lane not listed when the set
 * holds the most already is refused (LANES_FULL): past it, workers would
 * leave lanes out and their jobs would never run.  Else the group
 * (BUSYGROUP when it is there: fine), the lane listed, then the XADD;
 * returns the entry id. */
static const char lua_enqueue_lane[] =
    "if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 0 and\n"
    "   redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then\n"
    "  return redis.error_reply('LANES_FULL')\n"
    "end\n"
    "redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')\n"
    "redis.call('SADD', KEYS[2], ARGV[2])\n"
    "return redis.call('XADD', KEYS[1], '*', unpack(ARGV, 4))\n";

static int eval_begin(struct args *a, const char *script, int nkeys, const char *const *keys,
                      int nargs, char nk[16], struct llmsb_err *err);

int queue_enqueue(struct queue *q, const struct fields *fields, char *id, size_t idsz,
                  struct llmsb_err *err)
{
    struct args a;
    struct lane l;
    char name[LANE_NAME_MAX], key[QUEUE_KEY_MAX], set[QUEUE_KEY_MAX], nk[16], most[16];
    const char *keys[2] = {key, set};
    redisReply *r;
    int rc;

    if ((rc = lane_of_fields(fields, &l, err)) != 0)
        return rc;
    lane_name(&l, name);
    if (!name[0]) {
        if ((rc = args_init(&a, 3 + 2 * (int)fields->n, err)) != 0)
            return rc;
        args_adds(&a, "XADD");
        args_adds(&a, q->k_jobs);
        args_adds(&a, "*");
    } else {
        if ((rc = queue_lane_key(q, &l, key, err)) != 0 ||
            (rc = queue_key(q, "lanes", NULL, set, err)) != 0 ||
            (rc = eval_begin(&a, lua_enqueue_lane, 2, keys, 3 + 2 * (int)fields->n, nk, err)) != 0)
            return rc;
        snprintf(most, sizeof(most), "%d", QUEUE_LANES_MAX);
        args_adds(&a, q->group);
        args_adds(&a, name);
        args_adds(&a, most);
    }
    args_fields(&a, fields);
    a.durable = 1;
    if ((rc = args_run(q, &a, &r, err)) != 0) {
        if (strstr(err->msg, "LANES_FULL"))
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                               "redis: enqueue to lane \"%s\": %s holds %d lanes, the most; a new "
                               "lane waits until workers prune empty ones (or use fewer tenants)",
                               name, set, QUEUE_LANES_MAX);
        return rc;
    }
    if (r->type == REDIS_REPLY_STRING) {
        char full[QUEUE_ENTRY_ID_MAX];
        if (queue__entry_id_make(full, name, r->str, r->len) == 0)
            snprintf(id, idsz, "%s", full);
    }
    freeReplyObject(r);
    return 0;
}

/* ---- results ---------------------------------------------------------------- */

/* Starts an EVAL of script over keys; the caller adds the arguments and
 * calls eval_run. */
static int eval_begin(struct args *a, const char *script, int nkeys, const char *const *keys,
                      int nargs, char nk[16], struct llmsb_err *err)
{
    int rc = args_init(a, 3 + nkeys + nargs, err);

    if (rc)
        return rc;
    snprintf(nk, 16, "%d", nkeys);
    args_adds(a, "EVAL");
    args_adds(a, script);
    args_adds(a, nk);
    for (int i = 0; i < nkeys; i++)
        args_adds(a, keys[i]);
    return 0;
}

static int eval_run(struct queue *q, struct args *a, long long *out, struct llmsb_err *err)
{
    redisReply *r;
    int rc = args_run(q, a, &r, err);

    if (rc != 0)
        return rc;
    *out = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    return 0;
}

/* The keys of a script: nfixed given, then per copy the kinds named. */
static const char **copy_keys(struct queue *q, const char *const *fixed, int nfixed,
                              const struct queue_copies *c, const char *const *kinds, int nkinds,
                              char **store, struct llmsb_err *err)
{
    size_t nc = c ? c->n : 0, nk = (size_t)nfixed + nc * (size_t)nkinds;
    const char **keys = calloc(nk ? nk : 1, sizeof(*keys));
    char *k = *store = calloc(nc * (size_t)nkinds + 1, QUEUE_KEY_MAX);

    if (!keys || !k) {
        free(keys), free(k), *store = NULL;
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < nfixed; i++)
        keys[i] = fixed[i];
    for (size_t i = 0; i < nc; i++)
        for (int m = 0; m < nkinds; m++, k += QUEUE_KEY_MAX) {
            if (queue_key(q, kinds[m], c->ids[i], k, err) != 0) {
                free(keys), free(*store), *store = NULL;
                return NULL;
            }
            keys[(size_t)nfixed + i * (size_t)nkinds + (size_t)m] = k;
        }
    return keys;
}

static const char *recheck_of(const struct queue_copies *c)
{
    return c && c->recheck ? c->recheck : "";
}

int queue_mark_running(struct queue *q, const char *job_id, const char *entry_id,
                       const struct fields *fields, const struct queue_copies *c, long long ttl_s,
                       struct llmsb_err *err)
{
    static const char *const kinds[] = {"result"};
    struct args a;
    char key[QUEUE_KEY_MAX], kc[QUEUE_KEY_MAX], ttl[24], nk[16], np[16], *store = NULL;
    const char *fixed[3] = {key, q->k_jobs, kc}, **keys = NULL;
    size_t nc = c ? c->n : 0;
    long long v = 0;
    int rc;

    if ((rc = queue_key(q, "result", job_id, key, err)) != 0 ||
        (rc = queue_key(q, "cancel", job_id, kc, err)) != 0)
        return rc;
    if (!(keys = copy_keys(q, fixed, 3, c, kinds, 1, &store, err)))
        return err->code;
    snprintf(ttl, sizeof(ttl), "%lld", ttl_s);
    snprintf(np, sizeof(np), "%zu", fields->n);
    if ((rc = eval_begin(&a, lua_running, 3 + (int)nc, keys, 6 + 2 * (int)fields->n + (int)nc, nk,
                         err)) == 0) {
        args_adds(&a, ttl);
        args_adds(&a, recheck_of(c));
        args_adds(&a, job_id);
        args_adds(&a, q->group);
        args_adds(&a, entry_id ? entry_id : "");
        args_adds(&a, np);
        args_fields(&a, fields);
        for (size_t i = 0; i < nc; i++)
            args_adds(&a, c->ids[i]);
        rc = eval_run(q, &a, &v, err);
    }
    free(keys);
    free(store);
    return rc ? rc : (int)v;
}

/* What every batch of one final write carries (queue_finish). */
struct finish_write {
    const char *entry_id, *job_id, *status;
    const struct fields *fields, *dead;
    const char *fixed[5]; /* the keys before the copies' */
    char ttl[24], budget[24];
};

/* One call of lua_finish over the copies w (a window of the write's): 0,
 * *written the run's result (1 written, 0 final already), *through the
 * copies it got through; ack: the last window, acknowledged when all of
 * it is through. */
static int finish_batch(struct queue *q, const struct finish_write *fw,
                        const struct queue_copies *w, int ack, int *written, size_t *through,
                        struct llmsb_err *err)
{
    static const char *const kinds[] = {"result", "done", "cancel"};
    struct args a;
    char np[16], nd[16], ncs[16], nk[16], *store = NULL;
    const char **keys = NULL;
    size_t ndead = fw->dead ? fw->dead->n : 0;
    redisReply *r = NULL;
    int rc;

    if (!(keys = copy_keys(q, fw->fixed, 5, w, kinds, 3, &store, err)))
        return err->code;
    snprintf(np, sizeof(np), "%zu", fw->fields->n);
    snprintf(nd, sizeof(nd), "%zu", ndead);
    snprintf(ncs, sizeof(ncs), "%zu", w->n);
    if ((rc = eval_begin(&a, lua_finish, 5 + 3 * (int)w->n, keys,
                         11 + 2 * (int)(fw->fields->n + ndead + w->n), nk, err)) == 0) {
        args_adds(&a, q->group);
        args_adds(&a, fw->entry_id ? fw->entry_id : "");
        args_adds(&a, fw->ttl);
        args_adds(&a, fw->status);
        args_adds(&a, fw->job_id);
        args_adds(&a, np);
        args_adds(&a, nd);
        args_adds(&a, recheck_of(w));
        args_adds(&a, ncs);
        args_adds(&a, ack ? "1" : "0");
        args_adds(&a, fw->budget);
        args_fields(&a, fw->fields);
        args_fields(&a, fw->dead);
        for (size_t i = 0; i < w->n; i++) {
            args_adds(&a, w->ids[i]);
            args_adds(&a, w->metas[i] ? w->metas[i] : "");
        }
        a.durable = 1;
        rc = args_run(q, &a, &r, err);
    }
    free(keys);
    free(store);
    if (rc != 0)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_INTEGER || r->element[1]->type != REDIS_REPLY_INTEGER ||
        r->element[1]->integer < 0 || (size_t)r->element[1]->integer > w->n)
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "redis: finish: unexpected reply");
    else {
        *written = (int)r->element[0]->integer;
        *through = (size_t)r->element[1]->integer;
    }
    freeReplyObject(r);
    return rc;
}

/* In batches: each script writes at most QUEUE_COPIES_BATCH copies and
 * stops once QUEUE_COPIES_BATCH_BYTES of copied results are written, so
 * none holds Redis for long; every batch carries the result (the first
 * writes it, the others find it final and copy what is stored) and only
 * the last acknowledges the entry, so a worker that dies between them
 * leaves it pending: its next delivery finds the result final and writes
 * the copies still without one. */
int queue_finish(struct queue *q, const char *entry_id, const char *job_id, const char *status,
                 const struct fields *fields, const struct fields *dead,
                 const struct queue_copies *c, long long ttl_s, struct llmsb_err *err)
{
    struct finish_write fw = {entry_id, job_id, status, fields, dead, {NULL}, "", ""};
    char k_res[QUEUE_KEY_MAX], k_done[QUEUE_KEY_MAX], k_jobs[QUEUE_KEY_MAX];
    char raw[QUEUE_ENTRY_ID_MAX];
    size_t nc = c ? c->n : 0, at = 0;
    int rc, written = -1;

    if ((rc = queue_key(q, "result", job_id, k_res, err)) != 0 ||
        (rc = queue_key(q, "done", job_id, k_done, err)) != 0 ||
        (entry_id && (rc = queue__entry_where(q, entry_id, k_jobs, raw, err)) != 0))
        return rc;
    if (entry_id)
        fw.entry_id = raw;
    fw.fixed[0] = k_res, fw.fixed[1] = k_done, fw.fixed[2] = q->k_results;
    fw.fixed[3] = entry_id ? k_jobs : q->k_jobs, fw.fixed[4] = q->k_dead;
    snprintf(fw.ttl, sizeof(fw.ttl), "%lld", ttl_s);
    snprintf(fw.budget, sizeof(fw.budget), "%zu", (size_t)QUEUE_COPIES_BATCH_BYTES);
    do {
        size_t n = nc - at < QUEUE_COPIES_BATCH ? nc - at : QUEUE_COPIES_BATCH, through = 0;
        struct queue_copies w = {c ? c->ids + at : NULL, c ? c->metas + at : NULL, n,
                                 c ? c->recheck : NULL};
        int one = 0;
        if ((rc = finish_batch(q, &fw, &w, at + n == nc, &one, &through, err)) != 0)
            return rc;
        if (written < 0)
            written = one;
        if (through == 0 && n > 0) /* the script writes at least one copy */
            return llmsb_err_set(err, LLMSB_ERR_PROTO, "redis: finish: no copy written");
        at += through;
    } while (at < nc);
    return written;
}

int queue_ack(struct queue *q, const char *entry_id, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX], raw[QUEUE_ENTRY_ID_MAX];

    if (queue__entry_where(q, entry_id, key, raw, err) != 0 ||
        queue__simple(q, err, 4, "XACK", key, q->group, raw) != 0)
        return err->code;
    return queue__simple(q, err, 3, "XDEL", key, raw);
}

/* ---- leases, reclaim, recovery ----------------------------------------------------- */

int queue_renew(struct queue *q, char *const *ids, size_t n, void (*lost)(void *, const char *),
                void *ud, struct llmsb_err *err)
{
    const char *argv[5 + 256];
    size_t lens[5 + 256];
    redisReply *r;
    int argc = 0, rc;

    if (n == 0)
        return 0;
    if (n > 250)
        n = 250;
    argv[argc++] = "EVAL";
    argv[argc++] = lua_renew;
    argv[argc++] = "1";
    argv[argc++] = q->k_jobs;
    argv[argc++] = q->group;
    argv[argc++] = q->consumer;
    for (size_t i = 0; i < n; i++)
        argv[argc++] = ids[i];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    if ((rc = queue__cmd(q, argc, argv, lens, &r, err)) != 0)
        return rc;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING && lost)
            lost(ud, r->element[i]->str);
    freeReplyObject(r);
    return 0;
}

/* Released entries wait on this consumer: out of the releasing worker's
 * own PEL (so its recovery does not take them back without a count bump),
 * and skipped by the dead-consumer fast path (so the back-off holds). */
static void retry_consumer(const struct queue *q, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s-retry", q->prefix);
}

int queue_is_retry_consumer(const struct queue *q, const char *owner)
{
    char parked[96];
    retry_consumer(q, parked, sizeof(parked));
    return strcmp(owner, parked) == 0;
}

/* XCLAIM of entry_id to consumer JUSTID with idle_ms and (count >= 0)
 * RETRYCOUNT count. */
static int claim_one(struct queue *q, const char *entry_id, const char *consumer, long long idle_ms,
                     long long count, struct llmsb_err *err)
{
    char idle[24], cnt[24], key[QUEUE_KEY_MAX], raw[QUEUE_ENTRY_ID_MAX];

    if (queue__entry_where(q, entry_id, key, raw, err) != 0)
        return err->code;
    snprintf(idle, sizeof(idle), "%lld", idle_ms);
    snprintf(cnt, sizeof(cnt), "%lld", count < 0 ? 0 : count);
    if (count < 0)
        return queue__simple(q, err, 9, "XCLAIM", key, q->group, consumer, "0", raw, "IDLE", idle,
                             "JUSTID");
    return queue__simple(q, err, 11, "XCLAIM", key, q->group, consumer, "0", raw, "IDLE", idle,
                         "RETRYCOUNT", cnt, "JUSTID");
}

int queue_release(struct queue *q, const char *entry_id, long long idle_ms, long long count,
                  struct llmsb_err *err)
{
    char parked[96];
    retry_consumer(q, parked, sizeof(parked));
    return claim_one(q, entry_id, parked, idle_ms, count, err);
}

/* XCLAIM ids of the stream key to consumer. set_idle (or NULL) sets their
 * idle time; justid claims without fields and without a delivery-count
 * bump. */
static int claim_to(struct queue *q, const char *key, const char *consumer, const char *min_idle,
                    char ids[][QUEUE_ENTRY_ID_MAX], size_t nids, const char *set_idle, int justid,
                    struct queue_entry **out, size_t *n, struct llmsb_err *err)
{
    const char *argv[10 + 128];
    size_t lens[10 + 128];
    redisReply *r;
    int argc = 0, rc;

    argv[argc++] = "XCLAIM";
    argv[argc++] = key;
    argv[argc++] = q->group;
    argv[argc++] = consumer;
    argv[argc++] = min_idle;
    for (size_t i = 0; i < nids && i < 128; i++)
        argv[argc++] = ids[i];
    if (set_idle) {
        argv[argc++] = "IDLE";
        argv[argc++] = set_idle;
    }
    if (justid)
        argv[argc++] = "JUSTID";
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    if ((rc = queue__cmd(q, argc, argv, lens, &r, err)) != 0)
        return rc;
    rc = justid ? 0 : queue__parse_entries(r, out, n);
    freeReplyObject(r);
    return rc ? llmsb_err_set(err, rc, "redis: out of memory") : 0;
}

/* XPENDING rows: [id, consumer, idle, count]. */
struct pend {
    char id[QUEUE_ENTRY_ID_MAX];
    char owner[QUEUE_CONSUMER_MAX];
    long long count;
};

static int pending(struct queue *q, const char *key, long long min_idle_ms, int count,
                   const char *consumer, struct pend *rows, size_t *n, struct llmsb_err *err)
{
    char idle[24], cnt[16];
    redisReply *r;
    int rc;

    *n = 0;
    snprintf(idle, sizeof(idle), "%lld", min_idle_ms);
    snprintf(cnt, sizeof(cnt), "%d", count);
    if (consumer)
        rc = cmds(q, &r, err, 9, "XPENDING", key, q->group, "IDLE", idle, "-", "+", cnt, consumer);
    else
        rc = cmds(q, &r, err, 8, "XPENDING", key, q->group, "IDLE", idle, "-", "+", cnt);
    if (rc != 0)
        return strstr(err->msg, "NOGROUP") ? (llmsb_err_clear(err), 0) : rc;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements && (int)*n < count; i++) {
        const redisReply *row = r->element[i];
        if (row->type != REDIS_REPLY_ARRAY || row->elements < 4)
            continue;
        snprintf(rows[*n].id, sizeof(rows[*n].id), "%s", row->element[0]->str);
        snprintf(rows[*n].owner, sizeof(rows[*n].owner), "%s", row->element[1]->str);
        rows[*n].count = row->element[3]->integer;
        (*n)++;
    }
    freeReplyObject(r);
    return 0;
}

/* The reclaim of one lane (claim_stale, recover_own): up to count of its
 * entries into *out, their ids with the lane. */
typedef int (*lane_take_fn)(struct queue *q, const struct queue__lane_keys *lk,
                            long long min_idle_ms, int count, void *arg, struct queue_entry **out,
                            size_t *n, struct llmsb_err *err);

/* take over every lane until count entries came, from a lane one on
 * from the last pass's start (*from_next, turned), so a lane late in the
 * list is not left waiting while the earlier ones have many. */
static int lanes_take(struct queue *q, size_t *from_next, long long min_idle_ms, int count,
                      lane_take_fn take, void *arg, struct queue_entry **out, size_t *n,
                      struct llmsb_err *err)
{
    struct queue__lane_keys *lk = NULL;
    size_t nl = 0;
    int rc;

    *out = NULL;
    *n = 0;
    if (count > QUEUE_BATCH_MAX)
        count = QUEUE_BATCH_MAX;
    if (count <= 0)
        return 0;
    if ((rc = queue__lane_keys(q, &lk, &nl, err)) != 0)
        return rc;
    size_t from = nl ? (*from_next)++ % nl : 0;
    for (size_t j = 0; j < nl && (int)*n < count && rc == 0; j++) {
        size_t i = (from + j) % nl;
        struct queue_entry *e = NULL;
        size_t got = 0;
        if ((rc = take(q, &lk[i], min_idle_ms, count - (int)*n, arg, &e, &got, err)) != 0)
            break;
        queue__entries_qualify(e, got, lk[i].name);
        if ((rc = queue__entries_append(out, n, e, got)) != 0)
            rc = llmsb_err_set(err, rc, "redis: out of memory");
    }
    free(lk);
    if (rc != 0 && *n == 0) {
        queue_entries_free(*out, 0);
        *out = NULL;
    }
    return *n ? 0 : rc; /* what came is handed on; the rest waits for the next pass */
}

static int stale_take(struct queue *q, const struct queue__lane_keys *lk, long long min_idle_ms,
                      int count, void *arg, struct queue_entry **out, size_t *n,
                      struct llmsb_err *err)
{
    struct pend rows[QUEUE_BATCH_MAX];
    char ids[QUEUE_BATCH_MAX][QUEUE_ENTRY_ID_MAX], idle[24];
    size_t nr;
    int rc;

    (void)arg;
    if ((rc = pending(q, lk->key, min_idle_ms, count, NULL, rows, &nr, err)) != 0 || nr == 0)
        return rc;
    for (size_t i = 0; i < nr; i++)
        memcpy(ids[i], rows[i].id, sizeof(ids[0]));
    snprintf(idle, sizeof(idle), "%lld", min_idle_ms);
    if ((rc = claim_to(q, lk->key, q->consumer, idle, ids, nr, NULL, 0, out, n, err)) != 0)
        return rc;
    for (size_t i = 0; i < *n; i++)
        for (size_t k = 0; k < nr; k++)
            if (strcmp((*out)[i].id, rows[k].id) == 0) {
                (*out)[i].deliveries = rows[k].count + 1;
                snprintf((*out)[i].owner, sizeof((*out)[i].owner), "%s", rows[k].owner);
            }
    return 0;
}

int queue_claim_stale(struct queue *q, long long min_idle_ms, int count, struct queue_entry **out,
                      size_t *n, struct llmsb_err *err)
{
    return lanes_take(q, &q->reclaim_from[1], min_idle_ms, count, stale_take, NULL, out, n, err);
}

/* What queue_recover_own asks whether an entry runs here. */
struct own_running {
    int (*running)(void *, const char *);
    void *ud;
};

/* The fields of ids[0..ni) of one lane's stream into out (a deleted one:
 * an entry with no fields), with their delivery counts from rows. */
static int own_fetch(struct queue *q, const struct queue__lane_keys *lk,
                     char ids[][QUEUE_ENTRY_ID_MAX], size_t ni, const struct pend *rows, size_t nr,
                     struct queue_entry *out, size_t *n, struct llmsb_err *err)
{
    int rc = 0;

    for (size_t i = 0; i < ni; i++) {
        redisReply *r;
        struct queue_entry *one = NULL;
        size_t got = 0;
        if ((rc = cmds(q, &r, err, 4, "XRANGE", lk->key, ids[i], ids[i])) != 0)
            break;
        rc = queue__parse_entries(r, &one, &got);
        freeReplyObject(r);
        if (rc != 0) {
            rc = llmsb_err_set(err, rc, "redis: out of memory");
            break;
        }
        if (got == 1) {
            out[*n] = one[0];
            free(one);
        } else {
            queue_entries_free(one, got);
            memset(&out[*n], 0, sizeof(*out));
            fields_init(&out[*n].f, QUEUE_MAX_FIELDS);
            memcpy(out[*n].id, ids[i], sizeof(out[*n].id)); /* both QUEUE_ENTRY_ID_MAX */
            out[*n].id[sizeof(out[*n].id) - 1] = '\0';
            out[*n].deleted = 1;
        }
        for (size_t k = 0; k < nr; k++)
            if (strcmp(rows[k].id, ids[i]) == 0)
                out[*n].deliveries = rows[k].count;
        (*n)++;
    }
    return rc;
}

static int own_take(struct queue *q, const struct queue__lane_keys *lk, long long min_idle_ms,
                    int count, void *arg, struct queue_entry **out, size_t *n,
                    struct llmsb_err *err)
{
    const struct own_running *own = arg;
    struct pend rows[QUEUE_BATCH_MAX];
    char ids[QUEUE_BATCH_MAX][QUEUE_ENTRY_ID_MAX], full[QUEUE_ENTRY_ID_MAX];
    size_t nr, ni = 0;
    int rc;

    if ((rc = pending(q, lk->key, min_idle_ms, count, q->consumer, rows, &nr, err)) != 0)
        return rc;
    for (size_t i = 0; i < nr; i++) {
        if (queue__entry_id_make(full, lk->name, rows[i].id, strlen(rows[i].id)) == 0 &&
            !own->running(own->ud, full))
            memcpy(ids[ni++], rows[i].id, sizeof(ids[0]));
    }
    if (ni == 0)
        return 0;
    /* JUSTID: back to us without a count bump, then fetch the fields */
    if ((rc = claim_to(q, lk->key, q->consumer, "0", ids, ni, NULL, 1, NULL, NULL, err)) != 0)
        return rc;
    if (!(*out = calloc(ni, sizeof(**out))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
    if ((rc = own_fetch(q, lk, ids, ni, rows, nr, *out, n, err)) != 0) {
        /* the claimed rest stays pending here; recovery comes back for it */
        queue_entries_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int queue_recover_own(struct queue *q, long long min_idle_ms, int count,
                      int (*running)(void *, const char *), void *ud, struct queue_entry **out,
                      size_t *n, struct llmsb_err *err)
{
    struct own_running own = {running, ud};
    return lanes_take(q, &q->reclaim_from[0], min_idle_ms, count, own_take, &own, out, n, err);
}

/* The consumers of one lane's group with entries pending, but for this
 * one, the retry consumer and those that read, claimed or renewed in the
 * last QUEUE_CONSUMER_BUSY_MS (alive, whatever their heartbeat says: a
 * worker's first heartbeat may not be there yet), into dead[0..*nd) (at
 * most 32).  So a sweep of W busy workers asks for no heartbeat at all,
 * not W of them once a second each. */
static int consumers_pending(struct queue *q, const char *key, char dead[][QUEUE_CONSUMER_MAX],
                             size_t *nd, struct llmsb_err *err)
{
    char parked[96];
    redisReply *r;
    int rc;

    *nd = 0;
    retry_consumer(q, parked, sizeof(parked));
    if ((rc = cmds(q, &r, err, 4, "XINFO", "CONSUMERS", key, q->group)) != 0) {
        if (!strstr(err->msg, "NOGROUP") && !strstr(err->msg, "no such key"))
            return rc;
        llmsb_err_clear(err);
        return 0;
    }
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements && *nd < 32; i++) {
        const redisReply *c = r->element[i];
        const char *name = NULL;
        long long pend = 0, idle = QUEUE_CONSUMER_BUSY_MS;
        for (size_t k = 0; c->type == REDIS_REPLY_ARRAY && k + 1 < c->elements; k += 2) {
            const redisReply *kk = c->element[k], *v = c->element[k + 1];
            if (kk->type != REDIS_REPLY_STRING)
                continue;
            if (strcmp(kk->str, "name") == 0 && v->type == REDIS_REPLY_STRING)
                name = v->str;
            else if (strcmp(kk->str, "pending") == 0 && v->type == REDIS_REPLY_INTEGER)
                pend = v->integer;
            else if (strcmp(kk->str, "idle") == 0 && v->type == REDIS_REPLY_INTEGER)
                idle = v->integer;
        }
        if (name && pend > 0 && idle >= QUEUE_CONSUMER_BUSY_MS && strcmp(name, q->consumer) != 0 &&
            strcmp(name, parked) != 0)
            snprintf(dead[(*nd)++], QUEUE_CONSUMER_MAX, "%s", name);
    }
    freeReplyObject(r);
    return 0;
}

/* queue_free_dead_consumers of one lane's stream. */
static int free_dead_lane(struct queue *q, const char *key, long long idle_ms,
                          struct llmsb_err *err)
{
    char dead[32][QUEUE_CONSUMER_MAX], parked[96], idle[24];
    size_t nd = 0;
    int rc, freed = 0;

    retry_consumer(q, parked, sizeof(parked));
    if ((rc = consumers_pending(q, key, dead, &nd, err)) != 0)
        return rc;
    for (size_t i = 0; i < nd; i++) {
        struct pend rows[QUEUE_BATCH_MAX];
        char ids[QUEUE_BATCH_MAX][QUEUE_ENTRY_ID_MAX];
        size_t nr;
        if (queue_worker_alive(q, dead[i], err) != 0)
            continue;
        if (pending(q, key, 0, QUEUE_BATCH_MAX, dead[i], rows, &nr, err) != 0)
            return err->code;
        for (size_t k = 0; k < nr; k++)
            memcpy(ids[k], rows[k].id, sizeof(ids[0]));
        if (nr == 0)
            continue;
        /* park them JUSTID with a large idle: the reclaim pass of any
         * worker takes them, counting this delivery (not our own recovery,
         * which would take them back without a count) */
        snprintf(idle, sizeof(idle), "%lld", idle_ms);
        if ((rc = claim_to(q, key, parked, "0", ids, nr, idle, 1, NULL, NULL, err)) != 0)
            return rc;
        freed += (int)nr;
        log_info("reclaimed %zu job(s) of dead worker %s", nr, dead[i]);
        queue__simple(q, err, 5, "XGROUP", "DELCONSUMER", key, q->group, dead[i]);
    }
    return freed;
}

int queue_free_dead_consumers(struct queue *q, long long idle_ms, struct llmsb_err *err)
{
    struct queue__lane_keys *lk = NULL;
    size_t nl = 0;
    int rc, freed = 0;

    if ((rc = queue__lane_keys(q, &lk, &nl, err)) != 0)
        return rc;
    for (size_t i = 0; i < nl; i++) {
        if ((rc = free_dead_lane(q, lk[i].key, idle_ms, err)) < 0)
            break;
        freed += rc;
    }
    free(lk);
    return rc < 0 ? rc : freed;
}

/* ---- cancel, heartbeats, control ---------------------------------------------- */

static int exists(struct queue *q, const char *key, struct llmsb_err *err)
{
    redisReply *r;
    int rc = cmds(q, &r, err, 2, "EXISTS", key);
    if (rc != 0)
        return rc;
    rc = r->type == REDIS_REPLY_INTEGER && r->integer > 0;
    freeReplyObject(r);
    return rc;
}

int queue_cancel(struct queue *q, const char *job_id, long long ttl_s, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX], ttl[24];

    snprintf(ttl, sizeof(ttl), "%lld", ttl_s);
    if (queue_key(q, "cancel", job_id, key, err) != 0)
        return err->code;
    return queue__simple(q, err, 5, "SET", key, "1", "EX", ttl);
}

int queue_cancel_requested(struct queue *q, const char *job_id, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    return queue_key(q, "cancel", job_id, key, err) ? err->code : exists(q, key, err);
}

int queue_pending_mark(struct queue *q, const char *job_id, long long ttl_s, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX], ttl[24];

    snprintf(ttl, sizeof(ttl), "%lld", ttl_s);
    if (queue_key(q, "pending", job_id, key, err) != 0)
        return err->code;
    return queue__simple(q, err, 5, "SET", key, "1", "EX", ttl);
}

int queue_pending(struct queue *q, const char *job_id, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    return queue_key(q, "pending", job_id, key, err) ? err->code : exists(q, key, err);
}

int queue_worker_alive(struct queue *q, const char *worker, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    return queue_key(q, "worker", worker, key, err) ? err->code : exists(q, key, err);
}

int queue_heartbeat(struct queue *q, const char *worker, const struct fields *fields,
                    long long ttl_ms, struct llmsb_err *err)
{
    struct args a;
    char key[QUEUE_KEY_MAX], ttl[24];
    int rc;

    if ((rc = queue_key(q, "worker", worker, key, err)) != 0)
        return rc;
    if ((rc = args_init(&a, 2 + 2 * (int)fields->n, err)) != 0)
        return rc;
    args_adds(&a, "HSET");
    args_adds(&a, key);
    args_fields(&a, fields);
    if ((rc = args_run(q, &a, NULL, err)) != 0)
        return rc;
    snprintf(ttl, sizeof(ttl), "%lld", ttl_ms);
    return queue__simple(q, err, 3, "PEXPIRE", key, ttl);
}

int queue_heartbeat_delete(struct queue *q, const char *worker, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    return queue_key(q, "worker", worker, key, err) ? err->code
                                                    : queue__simple(q, err, 2, "DEL", key);
}

int queue_consumer_retire(struct queue *q, struct llmsb_err *err)
{
    struct queue__lane_keys *lk = NULL;
    struct pend rows[1];
    size_t n = 0, nl = 0;
    int rc;

    if ((rc = queue__lane_keys(q, &lk, &nl, err)) != 0)
        return rc;
    for (size_t i = 0; i < nl && rc == 0 && n == 0; i++)
        rc = pending(q, lk[i].key, 0, 1, q->consumer, rows, &n, err);
    for (size_t i = 0; i < nl && rc == 0 && n == 0; i++)
        if ((rc = queue__simple(q, err, 5, "XGROUP", "DELCONSUMER", lk[i].key, q->group,
                                q->consumer)) != 0 &&
            strstr(err->msg, "NOGROUP")) {
            llmsb_err_clear(err);
            rc = 0;
        }
    free(lk);
    return rc;
}

long long queue_client_id(struct queue *q, struct llmsb_err *err)
{
    redisReply *r;
    long long id;
    if (cmds(q, &r, err, 2, "CLIENT", "ID") != 0)
        return -1;
    id = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    q->client_id = id;
    return id;
}

int queue_unblock(struct queue *q, long long client_id, struct llmsb_err *err)
{
    char id[24];
    snprintf(id, sizeof(id), "%lld", client_id);
    return queue__simple(q, err, 3, "CLIENT", "UNBLOCK", id);
}

/* ---- consumers of results ------------------------------------------------------- */

int queue_result_get(struct queue *q, const char *job_id, struct fields *out, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    redisReply *r;
    int rc;

    fields_init(out, QUEUE_MAX_FIELDS);
    if ((rc = queue_key(q, "result", job_id, key, err)) != 0 ||
        (rc = cmds(q, &r, err, 2, "HGETALL", key)) != 0)
        return rc;
    rc = fill_pairs(out, r);
    freeReplyObject(r);
    if (rc < 0)
        return llmsb_err_set(err, rc, "redis: out of memory");
    return out->n > 0;
}

int queue_result_status(struct queue *q, const char *job_id, char *status, size_t ssz,
                        struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    redisReply *r;
    int rc;

    status[0] = '\0';
    if ((rc = queue_key(q, "result", job_id, key, err)) != 0 ||
        (rc = cmds(q, &r, err, 3, "HGET", key, "status")) != 0)
        return rc;
    rc = r->type == REDIS_REPLY_STRING;
    if (rc)
        snprintf(status, ssz, "%.*s", (int)r->len, r->str);
    freeReplyObject(r);
    return rc;
}

int queue_result_delete(struct queue *q, const char *job_id, struct llmsb_err *err)
{
    char kr[QUEUE_KEY_MAX], kd[QUEUE_KEY_MAX], kc[QUEUE_KEY_MAX];
    int rc;

    if ((rc = queue_key(q, "result", job_id, kr, err)) != 0 ||
        (rc = queue_key(q, "done", job_id, kd, err)) != 0 ||
        (rc = queue_key(q, "cancel", job_id, kc, err)) != 0)
        return rc;
    return queue__simple(q, err, 4, "DEL", kr, kd, kc);
}

int queue_wait_done(struct queue *q, const char *job_id, double timeout_s, char *status, size_t ssz,
                    struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX], t[32];
    redisReply *r;
    int rc;

    snprintf(t, sizeof(t), "%.3f", timeout_s);
    if ((rc = queue_key(q, "done", job_id, key, err)) != 0 ||
        (rc = cmds(q, &r, err, 3, "BLPOP", key, t)) != 0)
        return rc;
    rc = 0;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        snprintf(status, ssz, "%s", r->element[1]->str);
        rc = 1;
        /* leave the notification for other waiters */
        queue__simple(q, err, 3, "LPUSH", key, status);
        llmsb_err_clear(err);
    }
    freeReplyObject(r);
    return rc;
}

int queue_results_read(struct queue *q, char *last_id, size_t lsz, int block_ms,
                       struct queue_entry **out, size_t *n, struct llmsb_err *err)
{
    char blk[16];
    redisReply *r;
    int rc;

    *out = NULL;
    *n = 0;
    snprintf(blk, sizeof(blk), "%d", block_ms);
    if ((rc = cmds(q, &r, err, 8, "XREAD", "COUNT", "1000", "BLOCK", blk, "STREAMS", q->k_results,
                   last_id)))
        return rc;
    return queue__xread_reply(r, last_id, lsz, out, n, err);
}

int queue__xread_reply(redisReply *r, char *last_id, size_t lsz, struct queue_entry **out,
                       size_t *n, struct llmsb_err *err)
{
    int rc = 0;

    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->elements == 2)
        rc = queue__parse_entries(r->element[0]->element[1], out, n);
    freeReplyObject(r);
    if (rc)
        return llmsb_err_set(err, rc, "redis: out of memory");
    if (*n)
        snprintf(last_id, lsz, "%s", (*out)[*n - 1].id);
    return 0;
}

/* XRANGE (XREVRANGE) of one stream from `from` (as Redis takes it). */
static int range_one(struct queue *q, const char *key, int dead, int newest_first, const char *from,
                     int count, struct queue_entry **out, size_t *n, struct llmsb_err *err)
{
    char cnt[16];
    redisReply *r;
    int rc;

    snprintf(cnt, sizeof(cnt), "%d", count);
    if ((rc = cmds(q, &r, err, 6, newest_first ? "XREVRANGE" : "XRANGE", key, from,
                   newest_first ? "-" : "+", "COUNT", cnt)) != 0)
        return rc;
    /* a dead letter is the job's fields and three of its own */
    rc = parse_entries_max(r, dead ? QUEUE_MAX_FIELDS + 3 : QUEUE_MAX_FIELDS, out, n);
    freeReplyObject(r);
    return rc ? llmsb_err_set(err, rc, "redis: out of memory") : 0;
}

/* `after` as an XRANGE bound: exclusive (Redis 6.2 and later) unless - or +. */
static void range_from(const char *after, char from[QUEUE_ENTRY_ID_MAX + 1])
{
    if (strcmp(after, "-") == 0 || strcmp(after, "+") == 0)
        snprintf(from, QUEUE_ENTRY_ID_MAX + 1, "%s", after);
    else
        snprintf(from, QUEUE_ENTRY_ID_MAX + 1, "(%.*s", QUEUE_ENTRY_ID_MAX - 1, after);
}

/* The jobs of every lane, lane after lane in queue_lanes_list's order
 * (newest_first: the other way), each lane's oldest (newest) first; a
 * page goes on from `after`'s lane. */
static int range_lanes(struct queue *q, int newest_first, const char *after, int count,
                       struct queue_entry **out, size_t *n, struct llmsb_err *err)
{
    struct queue__lane_keys *lk = NULL;
    char key[QUEUE_KEY_MAX] = "", raw[QUEUE_ENTRY_ID_MAX], from[QUEUE_ENTRY_ID_MAX + 1];
    size_t nl = 0, at = 0;
    int rc;

    if (strcmp(after, "-") != 0 && strcmp(after, "+") != 0 &&
        (rc = queue__entry_where(q, after, key, raw, err)) != 0)
        return rc;
    if ((rc = queue__lane_keys(q, &lk, &nl, err)) != 0)
        return rc;
    range_from(key[0] ? raw : newest_first ? "+" : "-", from);
    for (size_t i = 0; key[0] && i < nl; i++)
        if (strcmp(lk[newest_first ? nl - 1 - i : i].key, key) == 0)
            at = i;
    for (; at < nl && (int)*n < count && rc == 0; at++) {
        const struct queue__lane_keys *l = &lk[newest_first ? nl - 1 - at : at];
        struct queue_entry *e = NULL;
        size_t got = 0;
        if ((rc = range_one(q, l->key, 0, newest_first, from, count - (int)*n, &e, &got, err)) != 0)
            break;
        queue__entries_qualify(e, got, l->name);
        if ((rc = queue__entries_append(out, n, e, got)) != 0)
            rc = llmsb_err_set(err, rc, "redis: out of memory");
        range_from(newest_first ? "+" : "-", from);
    }
    free(lk);
    if (rc != 0) {
        queue_entries_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int queue_range(struct queue *q, int dead, int newest_first, const char *after, int count,
                struct queue_entry **out, size_t *n, struct llmsb_err *err)
{
    char from[QUEUE_ENTRY_ID_MAX + 1];

    *out = NULL;
    *n = 0;
    if (!dead)
        return range_lanes(q, newest_first, after, count, out, n, err);
    range_from(after, from);
    return range_one(q, q->k_dead, 1, newest_first, from, count, out, n, err);
}

int queue_results_last_id(struct queue *q, char *id, size_t idsz, struct llmsb_err *err)
{
    redisReply *r;
    int rc;

    snprintf(id, idsz, "0-0");
    if ((rc = cmds(q, &r, err, 6, "XREVRANGE", q->k_results, "+", "-", "COUNT", "1")) != 0)
        return rc;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->elements >= 1)
        snprintf(id, idsz, "%s", r->element[0]->element[0]->str);
    freeReplyObject(r);
    return 0;
}

static long long int_reply(struct queue *q, struct llmsb_err *err, int argc, const char *a0,
                           const char *a1)
{
    redisReply *r;
    long long v;
    if (cmds(q, &r, err, argc, a0, a1) != 0)
        return -1;
    v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    return v;
}

/* queue_depth of one lane's stream, added to st. */
static int depth_lane(struct queue *q, const char *key, struct queue_stats *st,
                      struct llmsb_err *err)
{
    redisReply *r;
    long long len = int_reply(q, err, 2, "XLEN", key);

    if (len < 0)
        return err->code;
    st->stream_len += len;
    if (cmds(q, &r, err, 3, "XPENDING", key, q->group) == 0) {
        if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
            r->element[0]->type == REDIS_REPLY_INTEGER)
            st->pending += r->element[0]->integer;
        freeReplyObject(r);
    }
    llmsb_err_clear(err);
    return 0;
}

int queue_depth(struct queue *q, struct queue_stats *st, struct llmsb_err *err)
{
    struct queue__lane_keys *lk = NULL;
    size_t nl = 0;
    int rc;

    memset(st, 0, sizeof(*st));
    st->dead = int_reply(q, err, 2, "XLEN", q->k_dead);
    if (st->dead < 0 || (rc = queue__lane_keys(q, &lk, &nl, err)) != 0)
        return err->code;
    for (size_t i = 0; i < nl && rc == 0; i++)
        rc = depth_lane(q, lk[i].key, st, err);
    free(lk);
    return rc;
}

int queue_workers_each(struct queue *q,
                       void (*worker_fn)(void *, const char *, const struct fields *), void *ud,
                       struct llmsb_err *err)
{
    char pattern[QUEUE_KEY_MAX], cursor[32] = "0";
    redisReply *r;
    int n = 0;

    if (queue_key(q, "worker", "*", pattern, err) != 0)
        return err->code;
    do {
        if (cmds(q, &r, err, 6, "SCAN", cursor, "MATCH", pattern, "COUNT", "1000") != 0)
            return err->code;
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        for (size_t i = 0; i < r->element[1]->elements; i++) {
            struct fields f;
            redisReply *h;
            const char *key = r->element[1]->element[i]->str;
            if (cmds(q, &h, err, 2, "HGETALL", key) != 0)
                continue;
            fields_init(&f, QUEUE_MAX_FIELDS);
            fill_pairs(&f, h);
            freeReplyObject(h);
            if (f.n == 0) { /* expired between the SCAN and the HGETALL */
                fields_release(&f);
                continue;
            }
            n++;
            if (worker_fn)
                worker_fn(ud, key + strlen(pattern) - 1, &f);
            fields_release(&f);
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    llmsb_err_clear(err);
    return n;
}

int queue_stats(struct queue *q, struct queue_stats *st,
                void (*worker_fn)(void *, const char *, const struct fields *), void *ud,
                struct llmsb_err *err)
{
    char from[32];
    redisReply *r;
    int n;

    if (queue_depth(q, st, err) != 0)
        return err->code;
    snprintf(from, sizeof(from), "%lld", (long long)(clock_wall_ms() - 60000));
    if (cmds(q, &r, err, 6, "XRANGE", q->k_results, from, "+", "COUNT", "1000000") == 0) {
        st->done_last_minute = r->type == REDIS_REPLY_ARRAY ? (long long)r->elements : 0;
        freeReplyObject(r);
    }
    if ((n = queue_workers_each(q, worker_fn, ud, err)) < 0)
        return n;
    st->workers = n;
    return 0;
}

/* ---- sessions ------------------------------------------------------------------ */

int queue_session_claim(struct queue *q, const char *id, const char *me, long long ttl_s,
                        char *text, size_t tsz, struct llmsb_err *err)
{
    struct args a;
    char key[QUEUE_KEY_MAX], hb[QUEUE_KEY_MAX], ttl[24], nk[16];
    const char *keys[2] = {key, hb};
    redisReply *r;
    int rc;

    text[0] = '\0';
    if ((rc = queue_key(q, "session", id, key, err)) != 0)
        return rc;
    snprintf(hb, sizeof(hb), "%s:worker:", q->key_prefix[0] ? q->key_prefix : q->prefix);
    snprintf(ttl, sizeof(ttl), "%lld", ttl_s);
    if ((rc = eval_begin(&a, lua_session_claim, 2, keys, 2, nk, err)) != 0)
        return rc;
    args_adds(&a, me);
    args_adds(&a, ttl);
    if ((rc = args_run(q, &a, &r, err)) != 0)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_INTEGER || r->element[1]->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "redis: session claim: unexpected reply");
    }
    rc = (int)r->element[0]->integer;
    snprintf(text, tsz, "%.*s", (int)r->element[1]->len, r->element[1]->str);
    freeReplyObject(r);
    return rc;
}

int queue_session_earlier(struct queue *q, const char *entry_id, const char *session,
                          struct llmsb_err *err)
{
    struct args a;
    char key[QUEUE_KEY_MAX], raw[QUEUE_ENTRY_ID_MAX], nk[16];
    const char *keys[1] = {key};
    long long v = 0;
    int rc;

    /* a session's calls before it in its own lane (docs/operations.md:
     * the calls of one session share their priority and tenant) */
    if ((rc = queue__entry_where(q, entry_id, key, raw, err)) != 0 ||
        (rc = eval_begin(&a, lua_session_earlier, 1, keys, 3, nk, err)) != 0)
        return rc;
    args_adds(&a, q->group);
    args_adds(&a, raw);
    args_adds(&a, session);
    rc = eval_run(q, &a, &v, err);
    return rc ? rc : (int)v;
}

int queue_session_drop(struct queue *q, const char *id, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    int rc = queue_key(q, "session", id, key, err);
    return rc ? rc : queue__simple(q, err, 2, "DEL", key);
}

int queue_session_lose(struct queue *q, const char *id, const char *why, long long ttl_s,
                       struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX], ttl[24];
    int rc = queue_key(q, "session", id, key, err);

    if (rc)
        return rc;
    snprintf(ttl, sizeof(ttl), "%lld", ttl_s);
    if ((rc = queue__simple(q, err, 6, "HSET", key, "state", "lost", "why", why)) != 0)
        return rc;
    return queue__simple(q, err, 3, "EXPIRE", key, ttl);
}

int queue_hand_over(struct queue *q, const char *entry_id, const char *consumer, long long idle_ms,
                    long long count, struct llmsb_err *err)
{
    return claim_one(q, entry_id, consumer, idle_ms, count < 0 ? 0 : count, err);
}
