/* lanes.c - priority and tenant lanes on Redis (queue.h, lanes): the
 * lanes in use (prefix:lanes, cached per connection), an entry id's lane,
 * and the read over several lanes in one round trip.  With the default
 * lane alone, a read is the one XREADGROUP it always was. */
#include "queue.h"
#include "queue_int.h"
#include "lanes_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

struct queue_lanes {
    int64_t at_ms; /* when read (0: never) */
    size_t n;
    struct lane v[1 + QUEUE_LANES_MAX];
};

/* KEYS: the lanes' streams in the order to try.  ARGV: group, consumer,
 * the default lane's stream.  {i, entries} for the first stream with a
 * new entry, {0} when none has one.  A lane whose group is missing gets
 * it, from the stream's start; a lane whose stream is gone (pruned since
 * this worker read prefix:lanes) is not made again, and a lane that
 * answers another error (not a stream, denied) is passed over: one bad
 * lane does not stop the others. */
static const char lua_read_first[] =
    "for i = 1, #KEYS do\n"
    "  local function rd()\n"
    "    return redis.pcall('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', '1',\n"
    "      'STREAMS', KEYS[i], '>')\n"
    "  end\n"
    "  local r = rd()\n"
    "  if type(r) == 'table' and r.err then\n"
    "    local mk = string.find(r.err, 'NOGROUP', 1, true) and\n"
    "      (KEYS[i] == ARGV[3] or redis.call('EXISTS', KEYS[i]) == 1)\n"
    "    r = nil\n"
    "    if mk then\n"
    "      redis.pcall('XGROUP', 'CREATE', KEYS[i], ARGV[1], '0', 'MKSTREAM')\n"
    "      r = rd()\n"
    "      if type(r) == 'table' and r.err then r = nil end\n"
    "    end\n"
    "  end\n"
    "  if r and r[1] and #r[1][2] > 0 then return {i, r[1][2]} end\n"
    "end\n"
    "return {0}\n";

void queue__lanes_free(struct queue *q)
{
    free(q->lanes);
    q->lanes = NULL;
}

int queue_lane_key(const struct queue *q, const struct lane *l, char out[QUEUE_KEY_MAX],
                   struct llmsb_err *err)
{
    char name[LANE_NAME_MAX];

    lane_name(l, name);
    return queue_key(q, "jobs", name[0] ? name : NULL, out, err);
}

int queue__entry_where(const struct queue *q, const char *entry_id, char key[QUEUE_KEY_MAX],
                       char raw[QUEUE_ENTRY_ID_MAX], struct llmsb_err *err)
{
    const char *slash = strchr(entry_id, '/');
    struct lane l;
    char shown[QUEUE_ENTRY_ID_MAX + 16];

    if (!slash) {
        snprintf(key, QUEUE_KEY_MAX, "%s", q->k_jobs);
        if ((size_t)snprintf(raw, QUEUE_ENTRY_ID_MAX, "%s", entry_id) < QUEUE_ENTRY_ID_MAX)
            return 0;
    } else if (lane_parse(entry_id, (size_t)(slash - entry_id), &l) == 0 &&
               strlen(slash + 1) < QUEUE_ENTRY_ID_MAX) {
        snprintf(raw, QUEUE_ENTRY_ID_MAX, "%s", slash + 1);
        return queue_lane_key(q, &l, key, err);
    }
    llmsb_escape(shown, sizeof(shown), entry_id, strlen(entry_id));
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "redis: entry id \"%s\" is not <lane>/<stream id> nor a stream id (lanes: "
                         "high, low, <class>:<tenant>)",
                         shown);
}

int queue__entry_id_make(char out[QUEUE_ENTRY_ID_MAX], const char *lane, const char *raw,
                         size_t rawlen)
{
    size_t ll = strlen(lane), at = 0;

    if (ll + 1 + rawlen >= QUEUE_ENTRY_ID_MAX)
        return -1;
    memcpy(out, lane, ll);
    at = ll;
    if (ll)
        out[at++] = '/';
    memmove(out + at, raw, rawlen);
    out[at + rawlen] = '\0';
    return 0;
}

void queue__entries_qualify(struct queue_entry *e, size_t n, const char *lane)
{
    char id[QUEUE_ENTRY_ID_MAX];

    if (!lane[0])
        return;
    for (size_t i = 0; i < n; i++) {
        memcpy(id, e[i].id, sizeof(id));
        /* a stream id (41 bytes at most) with a lane name fits; were it
         * not to, the id stays as it is and names no entry of a lane */
        queue__entry_id_make(e[i].id, lane, id, strlen(id));
    }
}

static int lane_cmp(const void *a, const void *b)
{
    const struct lane *x = a, *y = b;
    if (x->cls != y->cls)
        return (int)x->cls - (int)y->cls;
    return strcmp(x->tenant, y->tenant);
}

static int lane_known(const struct queue_lanes *c, const struct lane *l)
{
    for (size_t i = 0; i < c->n; i++)
        if (lane_cmp(&c->v[i], l) == 0)
            return 1;
    return 0;
}

/* Makes the group of each lane of fresh that old did not list.  A lane
 * whose group cannot be made (its key is not a stream, an ACL denies it)
 * is logged and left out of fresh, so it stops no read of the others;
 * a lost connection is the caller's error. */
static int groups_make(struct queue *q, const struct queue_lanes *old, struct queue_lanes *fresh,
                       struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX], name[LANE_NAME_MAX];
    size_t kept = 0;

    for (size_t i = 0; i < fresh->n; i++) {
        int keep = 1;
        if (!lane_is_default(&fresh->v[i]) && !(old && lane_known(old, &fresh->v[i]))) {
            if (queue_lane_key(q, &fresh->v[i], key, err) != 0)
                return err->code;
            if (queue__simple(q, err, 6, "XGROUP", "CREATE", key, q->group, "0", "MKSTREAM") != 0 &&
                !strstr(err->msg, "BUSYGROUP")) {
                if (queue_err_retryable(err))
                    return err->code;
                lane_name(&fresh->v[i], name);
                log_error("redis: lane \"%s\" left out: cannot make its group on %s: %s", name, key,
                          err->msg);
                keep = 0;
            }
            llmsb_err_clear(err);
        }
        if (keep)
            fresh->v[kept++] = fresh->v[i];
    }
    fresh->n = kept;
    return 0;
}

/* SMEMBERS prefix:lanes into c (the default lane first, then sorted). */
static int lanes_read(struct queue *q, struct queue_lanes *c, struct llmsb_err *err)
{
    char key[QUEUE_KEY_MAX];
    redisReply *r = NULL;
    const char *argv[2] = {"SMEMBERS", key};
    size_t lens[2], skipped = 0;
    int rc;

    c->n = 1;
    memset(&c->v[0], 0, sizeof(c->v[0]));
    c->v[0].cls = LANE_NORMAL;
    if ((rc = queue_key(q, "lanes", NULL, key, err)) != 0)
        return rc;
    lens[0] = 8, lens[1] = strlen(key);
    if ((rc = queue__cmd(q, 2, argv, lens, &r, err)) != 0)
        return rc;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const redisReply *m = r->element[i];
        if (m->type != REDIS_REPLY_STRING || c->n > QUEUE_LANES_MAX ||
            lane_parse(m->str, m->len, &c->v[c->n]) != 0)
            skipped++;
        else
            c->n++;
    }
    freeReplyObject(r);
    if (skipped)
        log_error("redis: %s: %zu member(s) left out (not a lane name, or past %d lanes: their "
                  "jobs are not read)",
                  key, skipped, QUEUE_LANES_MAX);
    qsort(c->v, c->n, sizeof(c->v[0]), lane_cmp);
    return 0;
}

int queue_lanes_list(struct queue *q, const struct lane **lanes, size_t *n, struct llmsb_err *err)
{
    struct queue_lanes *fresh = NULL;
    int64_t now = clock_mono_ms();
    int rc = 0;

    if (!q->lanes || !q->lanes->at_ms || now - q->lanes->at_ms >= QUEUE_LANES_REFRESH_MS) {
        if (!(fresh = malloc(sizeof(*fresh))))
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
        if ((rc = lanes_read(q, fresh, err)) != 0 ||
            (rc = groups_make(q, q->lanes && q->lanes->at_ms ? q->lanes : NULL, fresh, err)) != 0) {
            free(fresh);
            return rc;
        }
        fresh->at_ms = now ? now : 1;
        free(q->lanes);
        q->lanes = fresh;
    }
    *lanes = q->lanes->v;
    *n = q->lanes->n;
    return 0;
}

int queue__lane_keys(struct queue *q, struct queue__lane_keys **out, size_t *n,
                     struct llmsb_err *err)
{
    const struct lane *l;
    size_t nl;
    int rc;

    *out = NULL;
    *n = 0;
    if ((rc = queue_lanes_list(q, &l, &nl, err)) != 0)
        return rc;
    if (!(*out = calloc(nl, sizeof(**out))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
    /* in queue_lanes_list's order: callers that stop early serve the
     * higher classes first */
    for (size_t i = 0; i < nl; i++) {
        lane_name(&l[i], (*out)[i].name);
        if ((rc = queue_lane_key(q, &l[i], (*out)[i].key, err)) != 0) {
            free(*out);
            *out = NULL;
            return rc;
        }
    }
    *n = nl;
    return 0;
}

/* Runs the command of argc strings argv (queue__cmd's answer). */
static int cmd_strings(struct queue *q, const char **argv, int argc, redisReply **r,
                       struct llmsb_err *err)
{
    size_t *lens = calloc((size_t)argc, sizeof(*lens));
    int rc;

    *r = NULL;
    if (!lens)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    rc = queue__cmd(q, argc, argv, lens, r, err);
    free(lens);
    return rc;
}

/* The script over lanes[order[0..n)]: 0 and *pos (n: none had one). */
static int read_first(struct queue *q, char (*keys)[QUEUE_KEY_MAX], size_t n,
                      struct queue_entry **out, size_t *nout, size_t *pos, struct llmsb_err *err)
{
    const char **argv = calloc(n + 6, sizeof(*argv));
    char nk[24];
    redisReply *r = NULL;
    int rc, argc = 0;

    *pos = n;
    if (!argv)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
    snprintf(nk, sizeof(nk), "%zu", n);
    argv[argc++] = "EVAL", argv[argc++] = lua_read_first, argv[argc++] = nk;
    for (size_t i = 0; i < n; i++)
        argv[argc++] = keys[i];
    argv[argc++] = q->group, argv[argc++] = q->consumer, argv[argc++] = q->k_jobs;
    if ((rc = cmd_strings(q, argv, argc, &r, err)) != 0)
        goto out;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        r->element[0]->type != REDIS_REPLY_INTEGER || r->element[0]->integer < 0 ||
        (size_t)r->element[0]->integer > n || (r->element[0]->integer > 0 && r->elements != 2)) {
        rc = llmsb_err_set(err, LLMSB_ERR_PROTO, "redis: read over lanes: unexpected reply");
        goto out;
    }
    if (r->element[0]->integer > 0) {
        *pos = (size_t)r->element[0]->integer - 1;
        if ((rc = queue__parse_entries(r->element[1], out, nout)) != 0)
            rc = llmsb_err_set(err, rc, "redis: out of memory");
    }
out:
    freeReplyObject(r);
    free(argv);
    return rc;
}

int queue__entries_append(struct queue_entry **dst, size_t *nd, struct queue_entry *src, size_t ns)
{
    struct queue_entry *all;

    if (ns == 0) {
        free(src);
        return 0;
    }
    if (!(all = realloc(*dst, (*nd + ns) * sizeof(*all)))) {
        queue_entries_free(src, ns);
        return LLMSB_ERR_NOMEM;
    }
    memcpy(all + *nd, src, ns * sizeof(*src));
    free(src);
    *dst = all;
    *nd += ns;
    return 0;
}

/* Appends the entries of one [key, entries] of an XREADGROUP reply,
 * qualified with lane, to *out. */
static int read_append(const redisReply *kv, const char *lane, struct queue_entry **out,
                       size_t *nout)
{
    struct queue_entry *one = NULL;
    size_t got = 0;
    int rc;

    if (kv->type != REDIS_REPLY_ARRAY || kv->elements != 2)
        return 0;
    if ((rc = queue__parse_entries(kv->element[1], &one, &got)) != 0)
        return rc;
    queue__entries_qualify(one, got, lane);
    return queue__entries_append(out, nout, one, got);
}

/* XREADGROUP COUNT 1 BLOCK block_ms over every lane of order; *pos: the
 * place in order of the first entry's lane (the one kept: Redis answers
 * the streams in the order asked), so the pick is recorded. */
static int read_block(struct queue *q, char (*keys)[QUEUE_KEY_MAX], char (*names)[LANE_NAME_MAX],
                      size_t n, int block_ms, struct queue_entry **out, size_t *nout, size_t *pos,
                      struct llmsb_err *err)
{
    const char **argv = calloc(2 * n + 9, sizeof(*argv));
    char blk[16];
    redisReply *r = NULL;
    int rc, argc = 0;

    if (!argv)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
    snprintf(blk, sizeof(blk), "%d", block_ms);
    argv[argc++] = "XREADGROUP", argv[argc++] = "GROUP", argv[argc++] = q->group;
    argv[argc++] = q->consumer, argv[argc++] = "COUNT", argv[argc++] = "1";
    argv[argc++] = "BLOCK", argv[argc++] = blk, argv[argc++] = "STREAMS";
    for (size_t i = 0; i < n; i++)
        argv[argc++] = keys[i];
    for (size_t i = 0; i < n; i++)
        argv[argc++] = ">";
    if ((rc = cmd_strings(q, argv, argc, &r, err)) != 0) {
        if (strstr(err->msg, "NOGROUP") && q->lanes) {
            /* a lane pruned (or its group gone) since the list was read:
             * no entry this time; the list is read again, every group made */
            q->lanes->at_ms = 0, q->lanes->n = 0;
            llmsb_err_clear(err);
            rc = 0;
        }
        goto out;
    }
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements && rc == 0; i++) {
        const redisReply *kv = r->element[i];
        const char *lane = NULL;
        size_t at = n, before = *nout;
        for (size_t k = 0; k < n && !lane && kv->type == REDIS_REPLY_ARRAY && kv->elements == 2;
             k++)
            if (kv->element[0]->type == REDIS_REPLY_STRING &&
                strcmp(kv->element[0]->str, keys[k]) == 0)
                lane = names[k], at = k;
        if (lane && (rc = read_append(kv, lane, out, nout)) != 0)
            rc = llmsb_err_set(err, rc, "redis: out of memory");
        if (rc == 0 && before == 0 && *nout > 0)
            *pos = at;
    }
out:
    freeReplyObject(r);
    free(argv);
    return rc;
}

int queue_read_lanes(struct queue *q, const struct lane *lanes, const size_t *order, size_t n,
                     int block_ms, struct queue_entry **out, size_t *nout, size_t *pos,
                     struct llmsb_err *err)
{
    char(*keys)[QUEUE_KEY_MAX] = NULL;
    char(*names)[LANE_NAME_MAX] = NULL;
    int rc = 0;

    *out = NULL;
    *nout = 0;
    *pos = n;
    if (n == 1 && lane_is_default(&lanes[order[0]])) {
        if ((rc = queue_read(q, 1, block_ms, out, nout, err)) == 0 && *nout)
            *pos = 0;
        return rc;
    }
    keys = calloc(n ? n : 1, sizeof(*keys));
    names = calloc(n ? n : 1, sizeof(*names));
    if (!keys || !names) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        lane_name(&lanes[order[i]], names[i]);
        rc = queue_lane_key(q, &lanes[order[i]], keys[i], err);
    }
    if (rc == 0 && (rc = read_first(q, keys, n, out, nout, pos, err)) == 0) {
        if (*nout)
            queue__entries_qualify(*out, *nout, names[*pos]);
        else
            rc = read_block(q, keys, names, n, block_ms, out, nout, pos, err);
    }
out:
    free(keys);
    free(names);
    return rc;
}

/* KEYS: prefix:lanes, then the lanes' streams.  ARGV: group, then the
 * lanes' names (ARGV[i] names KEYS[i]).  Each lane still listed whose
 * stream has no entry and its group none pending leaves the set and its
 * stream (and group) goes; one whose key is gone leaves the set.  Atomic
 * with the enqueue script, which lists the lane again before its XADD. */
static const char lua_prune[] =
    "local n = 0\n"
    "for i = 2, #KEYS do\n"
    "  if redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1 then\n"
    "    local t = redis.call('TYPE', KEYS[i])['ok']\n"
    "    local empty = t == 'none'\n"
    "    if t == 'stream' and redis.call('XLEN', KEYS[i]) == 0 then\n"
    "      local p = redis.pcall('XPENDING', KEYS[i], ARGV[1])\n"
    "      empty = (type(p) == 'table' and p.err and string.find(p.err, 'NOGROUP', 1, true)) or\n"
    "        (type(p) == 'table' and not p.err and tonumber(p[1]) == 0)\n"
    "    end\n"
    "    if empty then\n"
    "      redis.call('SREM', KEYS[1], ARGV[i])\n"
    "      redis.call('DEL', KEYS[i])\n"
    "      n = n + 1\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return n\n";

int queue_lanes_prune(struct queue *q, struct llmsb_err *err)
{
    struct queue__lane_keys *lk = NULL;
    const char **argv = NULL;
    char set[QUEUE_KEY_MAX], nk[24];
    redisReply *r = NULL;
    size_t nl = 0;
    int rc, argc = 0;

    if ((rc = queue__lane_keys(q, &lk, &nl, err)) != 0 ||
        (rc = queue_key(q, "lanes", NULL, set, err)) != 0)
        goto out;
    if (nl <= 1) /* the default lane alone: never pruned, nothing listed */
        goto out;
    if (!(argv = calloc(2 * nl + 4, sizeof(*argv)))) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
        goto out;
    }
    argv[argc++] = "EVAL", argv[argc++] = lua_prune, argv[argc++] = nk, argv[argc++] = set;
    for (size_t i = 0; i < nl; i++)
        if (lk[i].name[0])
            argv[argc++] = lk[i].key;
    snprintf(nk, sizeof(nk), "%d", argc - 3);
    argv[argc++] = q->group;
    for (size_t i = 0; i < nl; i++)
        if (lk[i].name[0])
            argv[argc++] = lk[i].name;
    if ((rc = cmd_strings(q, argv, argc, &r, err)) != 0)
        goto out;
    rc = r->type == REDIS_REPLY_INTEGER && r->integer > 0 ? (int)r->integer : 0;
    if (rc > 0 && q->lanes)
        q->lanes->at_ms = 0; /* read the set again */
out:
    freeReplyObject(r);
    free(argv);
    free(lk);
    return rc;
}
