/* dead.c - the dead-letter stream's tool (docs/operations.md, dead
 * letters): find a dead letter by its entry id or its job's id, requeue
 * it under its job id with the history of its dead letters so far, drop
 * it.  A dead letter is written by the worker's final write (queue_finish,
 * scheduler_dead_fields): the job's fields, then reason, attempts and
 * last_worker. */
#include "queue.h"
#include "lanes_int.h"
#include "script_int.h"

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#define DEAD_PAGE 200
#define DEAD_HISTORY_MAX 20 /* dead letters a job's history keeps, the newest */

/* KEYS: dead stream, the stream of the job's lane, the job's result hash,
 * done list and cancel key, the lanes set.  ARGV: the dead entry id, the
 * group, the lane's name ("": the default lane), then the job's pairs.
 * The new entry's id in its stream, or nil when the dead letter is gone
 * (requeued or dropped by someone else meanwhile).  Another lane than the
 * default gets its group and its name in the set, as queue_enqueue does. */
static const char lua_requeue[] =
    "if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then\n"
    "  return false\n"
    "end\n"
    "if ARGV[3] ~= '' then\n"
    "  redis.pcall('XGROUP', 'CREATE', KEYS[2], ARGV[2], '0', 'MKSTREAM')\n"
    "  redis.call('SADD', KEYS[6], ARGV[3])\n"
    "end\n"
    "local id = redis.call('XADD', KEYS[2], '*', unpack(ARGV, 4))\n"
    "redis.call('XDEL', KEYS[1], ARGV[1])\n"
    "redis.call('DEL', KEYS[3], KEYS[4], KEYS[5])\n"
    "return id\n";

/* d's field name, or "" */
static const char *field_or_empty(const struct queue_entry *d, const char *name)
{
    const char *v = fields_get(&d->f, name, NULL);
    return v ? v : "";
}

static const char *const own_fields[] = {"reason", "attempts", "last_worker", "history"};

/* 1 when s is a stream entry id "MS-SEQ" (*ms, *seq set). */
static int entry_id_parse(const char *s, unsigned long long *ms, unsigned long long *seq)
{
    char *end;

    if (*s < '0' || *s > '9')
        return 0;
    *ms = strtoull(s, &end, 10);
    if (*end != '-' || end[1] < '0' || end[1] > '9')
        return 0;
    *seq = strtoull(end + 1, &end, 10);
    return *end == '\0';
}

/* Moves e[i] into a new one-entry array *out. */
static int take(struct queue_entry *e, size_t i, struct queue_entry **out, struct llmsb_err *err)
{
    if (!(*out = malloc(sizeof(**out))))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "redis: out of memory");
    **out = e[i];
    fields_init(&e[i].f, 0);
    return 1;
}

/* The dead entry whose entry id is id: XREVRANGE from just after it. */
static int find_entry(struct queue *q, const char *id, struct queue_entry **out,
                      struct llmsb_err *err)
{
    unsigned long long ms, seq;
    char after[QUEUE_ENTRY_ID_MAX];
    struct queue_entry *e = NULL;
    size_t n = 0;
    int rc;

    if (!entry_id_parse(id, &ms, &seq) || seq == ~0ULL)
        return 0;
    snprintf(after, sizeof(after), "%llu-%llu", ms, seq + 1);
    if ((rc = queue_range(q, 1, 1, after, 1, &e, &n, err)) != 0)
        return rc;
    rc = n == 1 && strcmp(e[0].id, id) == 0 ? take(e, 0, out, err) : 0;
    queue_entries_free(e, n);
    return rc;
}

int queue_dead_find(struct queue *q, const char *id, struct queue_entry **out,
                    struct llmsb_err *err)
{
    char after[QUEUE_ENTRY_ID_MAX] = "+";
    int rc;

    *out = NULL;
    if ((rc = find_entry(q, id, out, err)) != 0)
        return rc;
    for (;;) {
        struct queue_entry *e = NULL;
        size_t n = 0;
        if ((rc = queue_range(q, 1, 1, after, DEAD_PAGE, &e, &n, err)) != 0)
            return rc;
        for (size_t i = 0; i < n && !*out; i++) {
            const char *jid = fields_get(&e[i].f, "id", NULL);
            if (jid && strcmp(jid, id) == 0 && (rc = take(e, i, out, err)) < 0)
                break;
        }
        if (n)
            snprintf(after, sizeof(after), "%s", e[n - 1].id);
        queue_entries_free(e, n);
        if (rc < 0 || *out || n < DEAD_PAGE)
            return rc < 0 ? rc : *out != NULL;
    }
}

static int own_field(const char *name)
{
    for (size_t k = 0; k < sizeof(own_fields) / sizeof(own_fields[0]); k++)
        if (strcmp(name, own_fields[k]) == 0)
            return 1;
    return 0;
}

/* d's history with d itself added: JSON text (caller frees), or NULL. */
static char *history_with(const struct queue_entry *d)
{
    const char *old = fields_get(&d->f, "history", NULL);
    const char *att = fields_get(&d->f, "attempts", NULL);
    cJSON *h = old ? cJSON_Parse(old) : NULL, *one = cJSON_CreateObject();
    char *text = NULL;

    if (!cJSON_IsArray(h)) {
        cJSON_Delete(h);
        h = cJSON_CreateArray();
    }
    if (!h || !one)
        goto out;
    while (cJSON_GetArraySize(h) >= DEAD_HISTORY_MAX)
        cJSON_DeleteItemFromArray(h, 0);
    cJSON_AddNumberToObject(one, "attempts", att ? strtod(att, NULL) : 0);
    cJSON_AddStringToObject(one, "reason", field_or_empty(d, "reason"));
    cJSON_AddStringToObject(one, "last_worker", field_or_empty(d, "last_worker"));
    cJSON_AddNumberToObject(one, "dead_at_ms", strtod(d->id, NULL));
    cJSON_AddStringToObject(one, "dead_entry", d->id);
    cJSON_AddItemToArray(h, one);
    one = NULL;
    text = cJSON_PrintUnformatted(h);
out:
    cJSON_Delete(one);
    cJSON_Delete(h);
    return text;
}

int queue_dead_job_fields(const struct queue_entry *d, struct fields *out, struct llmsb_err *err)
{
    char *history = NULL;
    int rc = 0;

    fields_init(out, d->f.n + 1);
    if (!fields_get(&d->f, "id", NULL))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "dead letter %s: names no job id (written before dead letters "
                             "carried one); nothing to requeue it under",
                             d->id);
    if (!(history = history_with(d)))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "dead letter %s: out of memory", d->id);
    for (size_t i = 0; i < d->f.n && rc == 0; i++)
        if (!own_field(d->f.v[i].name))
            rc = fields_add_copy(out, d->f.v[i].name, d->f.v[i].name_len, d->f.v[i].value,
                                 d->f.v[i].len);
    if (rc == 0)
        rc = fields_add_copy(out, "history", 7, history, strlen(history));
    free(history);
    if (rc != 0) {
        fields_release(out);
        fields_init(out, 0);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "dead letter %s: out of memory", d->id);
    }
    return 0;
}

int queue_dead_requeue(struct queue *q, const struct queue_entry *d, char *entry, size_t esz,
                       struct llmsb_err *err)
{
    char kr[QUEUE_KEY_MAX], kd[QUEUE_KEY_MAX], kc[QUEUE_KEY_MAX], ks[QUEUE_KEY_MAX];
    char kl[QUEUE_KEY_MAX], name[LANE_NAME_MAX], full[QUEUE_ENTRY_ID_MAX];
    const char *keys[6] = {q->k_dead, ks, kr, kd, kc, kl}, *args[3] = {d->id, q->group, name};
    const char *job_id = fields_get(&d->f, "id", NULL);
    struct fields f;
    struct lane l;
    redisReply *r = NULL;
    int rc;

    entry[0] = '\0';
    if ((rc = queue_dead_job_fields(d, &f, err)) != 0)
        return rc;
    if ((rc = lane_of_fields(&f, &l, err)) == 0 && (rc = queue_lane_key(q, &l, ks, err)) == 0 &&
        (rc = queue_key(q, "lanes", NULL, kl, err)) == 0 &&
        (rc = queue_key(q, "result", job_id, kr, err)) == 0 &&
        (rc = queue_key(q, "done", job_id, kd, err)) == 0 &&
        (rc = queue_key(q, "cancel", job_id, kc, err)) == 0) {
        lane_name(&l, name);
        rc = queue__eval_fields(q, lua_requeue, 6, keys, 3, args, &f, &r, err);
    }
    fields_release(&f);
    if (rc != 0)
        return rc;
    rc = r->type == REDIS_REPLY_STRING;
    if (rc && queue__entry_id_make(full, name, r->str, r->len) == 0)
        snprintf(entry, esz, "%s", full);
    else if (rc)
        snprintf(entry, esz, "%.*s", (int)r->len, r->str);
    freeReplyObject(r);
    return rc;
}

int queue_dead_drop(struct queue *q, const char *entry_id, struct llmsb_err *err)
{
    const char *argv[3] = {"XDEL", q->k_dead, entry_id};
    size_t lens[3] = {4, strlen(q->k_dead), strlen(entry_id)};
    redisReply *r = NULL;
    int rc;

    if ((rc = queue__cmd(q, 3, argv, lens, &r, err)) != 0)
        return rc;
    rc = r->type == REDIS_REPLY_INTEGER && r->integer > 0;
    freeReplyObject(r);
    return rc;
}
