/* queue.h - everything Redis (hiredis 0.14): the jobs stream and its
 * consumer group, results, notifications, dead letters, heartbeats and
 * cancellation (DESIGN §4).  One struct queue = one connection; use one per
 * thread.  Every reply is freed inside this module; callers get plain C
 * data.  Final writes are Lua scripts, so result + notification + XACK
 * happen atomically and the first final result wins. */
#ifndef LLMSB_QUEUE_H
#define LLMSB_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include "common/common.h"

#define QUEUE_GROUP_SUFFIX "-workers"
#define QUEUE_MAX_FIELDS 64
#define QUEUE_MAX_VALUE ((size_t)48 << 20)

struct queue {
    void *ctx;                 /* redisContext */
    char host[256];
    int port;
    char unix_path[256];
    char password[128];
    int db;
    int timeout_ms;            /* command timeout (SO_RCVTIMEO) */
    char prefix[64];
    char consumer[160];
    char group[96];
    char k_jobs[128], k_results[128], k_dead[128];
    long long client_id;
};

struct queue_field {
    char *name;
    char *value;
    size_t len;
};

struct queue_entry {
    char id[64];               /* stream entry id */
    struct queue_field *f;
    size_t n;
    int deleted;               /* the entry's fields are gone (trimmed/XDEL) */
    long long deliveries;      /* delivery count (1 for a fresh read) */
    char owner[160];           /* previous owner, for reclaimed entries */
};

/* One pair list for writes (results, enqueue, heartbeats). */
struct queue_pairs {
    const char *name[QUEUE_MAX_FIELDS];
    const char *value[QUEUE_MAX_FIELDS];
    size_t len[QUEUE_MAX_FIELDS];
    size_t n;
};

void queue_pairs_add(struct queue_pairs *p, const char *name, const char *value, size_t len);
void queue_pairs_adds(struct queue_pairs *p, const char *name, const char *value);

/* url: redis://[:password@]host[:port][/db] or unix:///path[?db=N].
 * consumer may be NULL for producers. Connects at once. */
int queue_open(struct queue *q, const char *url, const char *prefix, const char *consumer,
               int timeout_ms, struct llmsb_err *err);
void queue_close(struct queue *q);
/* Drops the connection and connects again (restoring the timeout, auth,
 * db, name). One try; callers back off. */
int queue_reconnect(struct queue *q, struct llmsb_err *err);
/* 1 when the last error means "connection or server unavailable, retry". */
int queue_err_retryable(const struct llmsb_err *err);

/* Key name helper: prefix:kind:id into out. */
const char *queue_key(const struct queue *q, const char *kind, const char *id, char *out,
                      size_t outsz);

int queue_group_ensure(struct queue *q, struct llmsb_err *err);

/* XREADGROUP ... COUNT count BLOCK block_ms STREAMS jobs >. *n = 0 on timeout. */
int queue_read(struct queue *q, int count, int block_ms, struct queue_entry **out, size_t *n,
               struct llmsb_err *err);
void queue_entries_free(struct queue_entry *e, size_t n);
const char *queue_entry_get(const struct queue_entry *e, const char *name, size_t *len);

/* XADD jobs * fields. Writes the entry id. */
int queue_enqueue(struct queue *q, const struct queue_pairs *fields, char *id, size_t idsz,
                  struct llmsb_err *err);

/* Marks job_id running unless it already has a final result.
 * Returns 1 marked, 0 already final, or a negative code. */
int queue_mark_running(struct queue *q, const char *job_id, const struct queue_pairs *fields,
                       long long ttl_s, struct llmsb_err *err);

/* The final write, atomic: result hash (fields), done list (status),
 * results stream entry, XACK + XDEL of entry_id; with dead != NULL also an
 * entry on the dead stream. Returns 1 written, 0 when a final result was
 * there already (the entry is acknowledged either way). */
int queue_finish(struct queue *q, const char *entry_id, const char *job_id, const char *status,
                 const struct queue_pairs *fields, const struct queue_pairs *dead, long long ttl_s,
                 struct llmsb_err *err);
/* Acknowledges and deletes an entry with no result (e.g. a deleted entry). */
int queue_ack(struct queue *q, const char *entry_id, struct llmsb_err *err);

/* Keeps entry ids owned by this consumer fresh (lease renewal) without
 * bumping delivery counts. Ids owned by someone else now are reported
 * through lost(ud, id). */
int queue_renew(struct queue *q, char *const *ids, size_t n, void (*lost)(void *, const char *),
                void *ud, struct llmsb_err *err);
/* Puts an entry back for any worker: parked on the "<prefix>-retry"
 * consumer with idle set to idle_ms (so it is reclaimable once idle passes
 * the lease), count unchanged. */
int queue_release(struct queue *q, const char *entry_id, long long idle_ms,
                  struct llmsb_err *err);
/* Claims up to count entries idle for at least min_idle_ms (any consumer),
 * with their fields and new delivery counts. */
int queue_claim_stale(struct queue *q, long long min_idle_ms, int count,
                      struct queue_entry **out, size_t *n, struct llmsb_err *err);
/* Entries pending for this consumer, idle >= min_idle_ms, that keep(ud, id)
 * says are not running here: claimed back without a count bump. */
int queue_recover_own(struct queue *q, long long min_idle_ms, int count,
                      int (*running)(void *, const char *), void *ud, struct queue_entry **out,
                      size_t *n, struct llmsb_err *err);
/* Makes the pending entries of consumers without a heartbeat key
 * immediately reclaimable (idle set to idle_ms). Returns how many. */
int queue_free_dead_consumers(struct queue *q, long long idle_ms, struct llmsb_err *err);

/* 1 if prefix:cancel:job_id exists. */
int queue_cancel_requested(struct queue *q, const char *job_id, struct llmsb_err *err);

int queue_heartbeat(struct queue *q, const char *worker, const struct queue_pairs *fields,
                    long long ttl_ms, struct llmsb_err *err);
int queue_heartbeat_delete(struct queue *q, const char *worker, struct llmsb_err *err);
/* 1 if prefix:worker:name exists. */
int queue_worker_alive(struct queue *q, const char *worker, struct llmsb_err *err);
/* Removes this consumer from the group if it has nothing pending. */
int queue_consumer_retire(struct queue *q, struct llmsb_err *err);

/* Reader connection id, and CLIENT UNBLOCK of it from another connection. */
long long queue_client_id(struct queue *q, struct llmsb_err *err);
int queue_unblock(struct queue *q, long long client_id, struct llmsb_err *err);

/* HGETALL prefix:result:id into *out (a malloc'd pair array, free with
 * queue_entries_free on a one-entry array). Returns 1 found, 0 absent. */
int queue_result_get(struct queue *q, const char *job_id, struct queue_entry *out,
                     struct llmsb_err *err);
/* BLPOP prefix:done:id timeout; 1 woke (status written), 0 timeout. */
int queue_wait_done(struct queue *q, const char *job_id, double timeout_s, char *status,
                    size_t ssz, struct llmsb_err *err);
/* XREAD of the results stream after *last_id (updated), block_ms. */
int queue_results_read(struct queue *q, char *last_id, size_t lsz, int block_ms,
                       struct queue_entry **out, size_t *n, struct llmsb_err *err);

/* The id of the newest results-stream entry, "0-0" when empty. */
int queue_results_last_id(struct queue *q, char *id, size_t idsz, struct llmsb_err *err);

struct queue_stats {
    long long stream_len;      /* entries in the jobs stream (not yet finished) */
    long long pending;         /* delivered, not acknowledged */
    long long dead;
    long long done_last_minute;
    int workers;
};
/* Calls worker_fn for each live worker heartbeat hash. */
int queue_stats(struct queue *q, struct queue_stats *st,
                void (*worker_fn)(void *, const struct queue_entry *), void *ud,
                struct llmsb_err *err);

#endif
