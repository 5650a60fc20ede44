/* queue.h - everything Redis (hiredis 0.14): the jobs stream and its
 * consumer group, results, notifications, dead letters, heartbeats and
 * cancellation.  One struct queue = one connection; use one per
 * thread.  Every reply is freed inside this module; callers get plain C
 * data.  Final writes are Lua scripts, so result + notification + XACK
 * happen atomically and the first final result wins. */
#ifndef LLMSB_QUEUE_H
#define LLMSB_QUEUE_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "common/common.h"
#include "common/fields.h"
#include "common/lane.h"

#define QUEUE_GROUP_SUFFIX "-workers"
#define QUEUE_MAX_FIELDS 64 /* fields of an entry kept; more are counted */
#define QUEUE_MAX_VALUE \
    ((size_t)96 << 20) /* bytes of a value: a result's largest stdout
                                             or base64 artifacts fit */
/* an entry id: "<lane>/<stream id>" ("normal:<32-byte tenant>/" and
 * "18446744073709551615-18446744073709551615") for a lane's, else the
 * stream id (docs/operations.md, priorities and tenants) */
#define QUEUE_ENTRY_ID_MAX 96
#define QUEUE_KEY_MAX 512
#define QUEUE_CONSUMER_MAX 160
#define QUEUE_BATCH_MAX 64            /* entries one reclaim call handles */
#define QUEUE_RESULTS_MAXLEN "100000" /* results and dead streams, MAXLEN ~ */
/* One script of a final write with copies (queue_finish) writes at most
 * this many copies, and stops after the copy that brings the bytes of
 * results it copied to this budget (8 copies of a 1 MiB result). */
#define QUEUE_COPIES_BATCH 100
#define QUEUE_COPIES_BATCH_BYTES ((size_t)8 << 20)

/* Where Redis is (queue/url.c parses the URL forms of docs/operations.md,
 * "Redis deployments"). */
#define QUEUE_NODES_MAX 16
enum queue_mode {
    QUEUE_MODE_DIRECT = 0, /* redis://, rediss://, unix:// */
    QUEUE_MODE_SENTINEL,   /* redis-sentinel:// */
    QUEUE_MODE_CLUSTER     /* redis-cluster:// */
};
struct queue_node {
    char host[256];
    int port;
};
struct queue_tls {
    int on;       /* rediss:// or ?tls=1 */
    int insecure; /* ?insecure=1: no verification (warned) */
    char ca[256], cert[256], key[256], sni[256];
};

struct queue {
    void *ctx; /* the connection (queue/conn.c); NULL: not connected */
    char host[256];
    int port;
    char unix_path[256];
    char password[128];
    int db;
    int timeout_ms; /* command timeout (SO_RCVTIMEO) */
    char prefix[64];
    char consumer[QUEUE_CONSUMER_MAX];
    char group[96];
    char k_jobs[QUEUE_KEY_MAX], k_results[QUEUE_KEY_MAX], k_dead[QUEUE_KEY_MAX];
    long long client_id;
    /* the connection layer's (queue/conn.c) */
    int mode;       /* enum queue_mode */
    char user[128]; /* ACL user ("": AUTH with the password alone) */
    struct queue_tls tls;
    struct queue_node nodes[QUEUE_NODES_MAX]; /* the sentinels or the cluster's seeds */
    int nnodes;
    char master[128]; /* sentinel: the master's name */
    char sentinel_user[128], sentinel_password[128];
    int wait_replicas; /* WAIT for this many replicas after an enqueue and a final write (0: none) */
    int wait_ms;
    char key_prefix[72];       /* what queue_key puts first: prefix, or {prefix} in a cluster */
    void *priv;                /* what outlives a connection: script SHAs, the last failure */
    struct queue_lanes *lanes; /* the lanes in use, cached (queue/lanes.c) */
    size_t reclaim_from[2];    /* turn the lane recovery [0] and reclaim [1] start from */
};

struct queue_entry {
    char id[QUEUE_ENTRY_ID_MAX];    /* stream entry id */
    struct fields f;                /* "id" first, then up to QUEUE_MAX_FIELDS in all;
                                       f.dropped counts the rest, f.oversized the values
                                       over QUEUE_MAX_VALUE left out */
    int deleted;                    /* the entry's fields are gone (trimmed/XDEL) */
    long long deliveries;           /* delivery count (1 for a fresh read) */
    char owner[QUEUE_CONSUMER_MAX]; /* previous owner, for reclaimed entries */
};

/* url: redis://[[user]:password@]host[:port][/db], rediss://... (TLS),
 * redis-sentinel://[[user]:password@]h1:p1,h2:p2[/master[/db]],
 * redis-cluster://[[user]:password@]h1:p1,h2:p2 or unix:///path[?db=N],
 * with the query parameters of docs/operations.md ("Redis deployments").
 * consumer may be NULL for producers. Connects at once. */
int queue_open(struct queue *q, const char *url, const char *prefix, const char *consumer,
               int timeout_ms, struct llmsb_err *err);
void queue_close(struct queue *q);
/* Drops the connection and connects again (restoring the timeout, auth,
 * db, name): through the sentinels or the cluster's slot map again, so
 * it finds a new primary after a failover.  Nothing is re-sent: a call
 * that failed is the caller's to retry.  One try; callers back off. */
int queue_reconnect(struct queue *q, struct llmsb_err *err);
/* queue_open (fresh) or queue_reconnect, then queue_group_ensure, retried
 * with back-off (up to QUEUE_RECONNECT_MAX_MS between tries) until it
 * works, *stop becomes non-zero (stop may be NULL) or giveup_ms passes
 * (0: never). Returns 0 or the last error. */
#define QUEUE_RECONNECT_MAX_MS 2000
int queue_connect_retry(struct queue *q, const char *url, const char *prefix, const char *consumer,
                        int timeout_ms, int fresh, const atomic_int *stop, int64_t giveup_ms,
                        struct llmsb_err *err);
/* 1 when the last error means "connection or server unavailable, retry"
 * (I/O errors, timeouts, LOADING, BUSY, MASTERDOWN, READONLY, UNBLOCKED,
 * TRYAGAIN, CLUSTERDOWN, NOREPLICAS, a primary that is not one). */
int queue_err_retryable(const struct llmsb_err *err);
/* url with its passwords (the user's and sentinel_password's) as "***",
 * for logs and status output. */
void queue_url_redact(const char *url, char *out, size_t outsz);
/* 1 when url names sentinels or a cluster (a failover is a pause there). */
int queue_url_failover(const char *url);
/* 1 when the last failed call had sent its command and no reply came: it
 * may have been applied (retrying it may apply it twice: an XADD is then
 * two entries).  0 after a refusal or a failure before sending. */
int queue_last_unanswered(const struct queue *q);
/* After a call failed with err: when the error is the connection's or the
 * server's (queue_err_retryable), connects again with back-off (100 ms
 * doubling to QUEUE_RECONNECT_MAX_MS) until it works (0: try the call
 * again), *stop becomes non-zero or giveup_ms passes; else err's code,
 * err saying what failed and for how long it was retried.  For a client
 * waiting on a job (result --follow and --wait, MCP --queue): a Redis
 * restart or failover is a pause, not the end of the wait. */
int queue_reconnect_wait(struct queue *q, int64_t giveup_ms, const volatile sig_atomic_t *stop,
                         struct llmsb_err *err);

/* prefix:kind[:id] into out. Returns 0, or LLMSB_ERR_INVALID (err set)
 * when it does not fit: keys are never cut short, so two ids never share
 * one. */
int queue_key(const struct queue *q, const char *kind, const char *id, char out[QUEUE_KEY_MAX],
              struct llmsb_err *err);

int queue_group_ensure(struct queue *q, struct llmsb_err *err);

/* Lanes (docs/operations.md, priorities and tenants): one stream per
 * lane, prefix:jobs for the default lane (normal, no tenant),
 * prefix:jobs:<lane name> for the others ("high", "low:acme", ...), each
 * with the group; the set prefix:lanes names the others in use.  An
 * entry id of a lane's stream carries its lane ("high/1700000000000-0");
 * every function here that takes an entry id acts on its lane's stream,
 * and the ones that go over the queue (reclaim, recovery, depth, range)
 * go over every lane. */
#define QUEUE_LANES_MAX \
    1024 /* lanes prefix:lanes may list: the enqueue of a new one past it is
                              * refused; a reader leaves out (and logs) any more */
#define QUEUE_LANES_REFRESH_MS 1000 /* how long queue_lanes_list keeps what it read */
/* The lanes in use: the default lane and those of prefix:lanes, sorted by
 * class then tenant (the default lane is normal's first), read at most
 * once per QUEUE_LANES_REFRESH_MS; a lane seen for the first time gets
 * its group (XGROUP CREATE ... MKSTREAM).  *lanes is q's, valid until the
 * next call on q. */
int queue_lanes_list(struct queue *q, const struct lane **lanes, size_t *n, struct llmsb_err *err);
/* Removes the lanes of prefix:lanes with nothing in them (no entry, none
 * pending) from the set, their streams and groups with them, in one
 * script; an enqueue to one lists it again.  Returns how many went, or a
 * negative error.  The workers' janitors call it about once a minute. */
int queue_lanes_prune(struct queue *q, struct llmsb_err *err);
/* The stream of lane l. */
int queue_lane_key(const struct queue *q, const struct lane *l, char out[QUEUE_KEY_MAX],
                   struct llmsb_err *err);
/* One new entry from the first of lanes[order[0..n)] that has one (one
 * round trip: a script of non-blocking XREADGROUP COUNT 1 in that order),
 * *pos its place in order; when none has one, a blocking XREADGROUP of
 * COUNT 1 over all of them (up to block_ms; may bring one per lane, *pos =
 * n).  With the default lane alone, queue_read.  Ids carry their lane. */
int queue_read_lanes(struct queue *q, const struct lane *lanes, const size_t *order, size_t n,
                     int block_ms, struct queue_entry **out, size_t *nout, size_t *pos,
                     struct llmsb_err *err);

/* XREADGROUP ... COUNT count BLOCK block_ms STREAMS jobs >. *n = 0 on timeout. */
int queue_read(struct queue *q, int count, int block_ms, struct queue_entry **out, size_t *n,
               struct llmsb_err *err);
void queue_entries_free(struct queue_entry *e, size_t n);

/* XADD of fields to their lane's stream (lane_of_fields: priority,
 * tenant; the default lane: a plain XADD to prefix:jobs; another: one
 * script that makes its group, adds it to prefix:lanes and XADDs).
 * Writes the entry id (with its lane).  A priority or tenant that names
 * no lane is LLMSB_ERR_INVALID, err naming it. */
int queue_enqueue(struct queue *q, const struct fields *fields, char *id, size_t idsz,
                  struct llmsb_err *err);

/* What a job's final write carries besides its own result (NULL: none):
 * the ids (with metas: JSON text or NULL) of the jobs that share its run
 * (submit's dedup; each gets the result under its own id and meta, with
 * copy_of), and recheck: NULL, or the status of the final result this
 * run rechecks, which it replaces (once) instead of losing to it. */
struct queue_copies {
    const char *const *ids;
    const char *const *metas;
    size_t n;
    const char *recheck;
};

/* Marks job_id (and c's copies without a final result) running unless it
 * already has a final result (a recheck's leaves it in place), for the
 * delivery entry_id (NULL: none), unless another entry of job_id holds
 * the mark and is delivered and not acknowledged yet: one run of an id at
 * a time (two runs would write one live stream).  Returns 1 marked, 3
 * marked and a cancel request waits for it (queue_cancel: the one round
 * trip tells both), 0 already final, 2 another entry runs it, or a
 * negative code. */
int queue_mark_running(struct queue *q, const char *job_id, const char *entry_id,
                       const struct fields *fields, const struct queue_copies *c, long long ttl_s,
                       struct llmsb_err *err);

/* The final write: result hash (fields), done list (status), results
 * stream entry, XACK + XDEL of entry_id; with dead != NULL also an entry
 * on the dead stream; the same for each of c's copies (one with a cancel
 * request ends cancelled), each first-wins on its own.  One script
 * without copies; with them, scripts of at most QUEUE_COPIES_BATCH copies
 * and QUEUE_COPIES_BATCH_BYTES of copied results each (the first writes
 * the result, the last acknowledges), so a long list never holds Redis
 * for long, and a write cut short leaves the entry pending: called again
 * (its next delivery), it writes the copies still without a result, from
 * the stored one.  Returns 1 written, 0 when a final result was there
 * already (the entry is acknowledged either way). */
int queue_finish(struct queue *q, const char *entry_id, const char *job_id, const char *status,
                 const struct fields *fields, const struct fields *dead,
                 const struct queue_copies *c, long long ttl_s, struct llmsb_err *err);
/* Acknowledges and deletes an entry with no result (e.g. a deleted entry). */
int queue_ack(struct queue *q, const char *entry_id, struct llmsb_err *err);

/* Keeps entry ids owned by this consumer fresh (lease renewal) without
 * bumping delivery counts. Ids owned by someone else now are reported
 * through lost(ud, id). */
int queue_renew(struct queue *q, char *const *ids, size_t n, void (*lost)(void *, const char *),
                void *ud, struct llmsb_err *err);
/* Puts an entry back for any worker: parked on the "<prefix>-retry"
 * consumer with idle set to idle_ms (so it is reclaimable once idle passes
 * the lease). count >= 0 sets its delivery count (the next claim adds
 * one); count < 0 leaves it. */
int queue_release(struct queue *q, const char *entry_id, long long idle_ms, long long count,
                  struct llmsb_err *err);
/* 1 when owner is the consumer released entries wait on. */
int queue_is_retry_consumer(const struct queue *q, const char *owner);
/* Claims up to count entries idle for at least min_idle_ms (any consumer),
 * with their fields and new delivery counts. */
int queue_claim_stale(struct queue *q, long long min_idle_ms, int count, struct queue_entry **out,
                      size_t *n, struct llmsb_err *err);
/* Entries pending for this consumer, idle >= min_idle_ms, that keep(ud, id)
 * says are not running here: claimed back without a count bump. */
int queue_recover_own(struct queue *q, long long min_idle_ms, int count,
                      int (*running)(void *, const char *), void *ud, struct queue_entry **out,
                      size_t *n, struct llmsb_err *err);
/* Makes the pending entries of consumers without a heartbeat key
 * reclaimable by any worker: parked on the retry consumer with idle set to
 * idle_ms, so the next queue_claim_stale takes them with their delivery
 * count bumped (the dead worker's try counts). Returns how many. */
int queue_free_dead_consumers(struct queue *q, long long idle_ms, struct llmsb_err *err);
/* A consumer that read, claimed or renewed this recently is alive: the
 * sweep above does not look for its heartbeat. */
#define QUEUE_CONSUMER_BUSY_MS 2000

/* Asks for job_id to be cancelled (SET prefix:cancel:job_id, TTL ttl_s). */
int queue_cancel(struct queue *q, const char *job_id, long long ttl_s, struct llmsb_err *err);
/* 1 if prefix:cancel:job_id exists. */
int queue_cancel_requested(struct queue *q, const char *job_id, struct llmsb_err *err);
/* The HTTP front's note that it sent job_id (SET pending:<id> EX ttl_s),
 * so a lookup before a worker takes it says queued, not unknown; and
 * whether it is there (1, 0, or a negative code). */
int queue_pending_mark(struct queue *q, const char *job_id, long long ttl_s, struct llmsb_err *err);
int queue_pending(struct queue *q, const char *job_id, struct llmsb_err *err);

int queue_heartbeat(struct queue *q, const char *worker, const struct fields *fields,
                    long long ttl_ms, struct llmsb_err *err);
int queue_heartbeat_delete(struct queue *q, const char *worker, struct llmsb_err *err);
/* 1 if prefix:worker:name exists. */
int queue_worker_alive(struct queue *q, const char *worker, struct llmsb_err *err);
/* Removes this consumer from the group if it has nothing pending. */
int queue_consumer_retire(struct queue *q, struct llmsb_err *err);

/* Reader connection id, and CLIENT UNBLOCK of it from another connection. */
long long queue_client_id(struct queue *q, struct llmsb_err *err);
int queue_unblock(struct queue *q, long long client_id, struct llmsb_err *err);

/* HGETALL prefix:result:id into out (owned copies; out is initialised here,
 * release it with fields_release). Returns 1 found, 0 absent. */
int queue_result_get(struct queue *q, const char *job_id, struct fields *out,
                     struct llmsb_err *err);
/* HGET prefix:result:id status, the status alone (a result may hold tens
 * of MB of output and artifacts). Returns 1 found, 0 absent. */
int queue_result_status(struct queue *q, const char *job_id, char *status, size_t ssz,
                        struct llmsb_err *err);
/* Deletes a job's result, its done notifications and any cancel request,
 * so the id can run again (submit --rerun). */
int queue_result_delete(struct queue *q, const char *job_id, struct llmsb_err *err);
/* BLPOP prefix:done:id timeout; 1 woke (status written), 0 timeout. */
int queue_wait_done(struct queue *q, const char *job_id, double timeout_s, char *status, size_t ssz,
                    struct llmsb_err *err);
/* XREAD of the results stream after *last_id (updated), block_ms. */
int queue_results_read(struct queue *q, char *last_id, size_t lsz, int block_ms,
                       struct queue_entry **out, size_t *n, struct llmsb_err *err);

/* Live output (queue/live.c; docs/jobs.md, live): prefix:out:ID is a
 * stream of a live job's chunks: each attempt opens with {fd: restart,
 * attempt: N} (what came before it is void), then entries {fd:
 * stdout|stderr, offset: where the chunk starts in its stream, data},
 * then {fd: end, status} once its final result stands; at most about
 * QUEUE_LIVE_MAXLEN entries (XADD MAXLEN ~: a follower that falls behind
 * finds the rest in the result).  Kept while the job may run (the
 * worker's restart and chunks set its expiry: the longer of the result's
 * TTL and the job's backstop plus a margin), QUEUE_LIVE_END_TTL_S after
 * its end entry (the result holds it all then). */
#define QUEUE_LIVE_MAXLEN "1000"
#define QUEUE_LIVE_END_TTL_S 300
/* An attempt starts: job_id's stream is replaced by its restart entry
 * (attempt: the delivery it is), expiring in ttl_s. */
int queue_live_restart(struct queue *q, const char *job_id, long long attempt, long long ttl_s,
                       struct llmsb_err *err);
/* Adds a chunk of fd ("stdout" or "stderr") starting at offset; ttl_s >
 * 0 sets the stream's expiry again (in the same round trip), so a stream
 * whose key expired and was made again by this XADD still expires. */
int queue_live_add(struct queue *q, const char *job_id, const char *fd, unsigned long long offset,
                   const char *data, size_t len, long long ttl_s, struct llmsb_err *err);
/* Adds the end entry with the final status; the stream expires
 * QUEUE_LIVE_END_TTL_S later (ttl_s when shorter). */
int queue_live_end(struct queue *q, const char *job_id, const char *status, long long ttl_s,
                   struct llmsb_err *err);
/* XREAD of job_id's stream after *last_id ("0-0": its start; updated),
 * up to count entries, blocking up to block_ms (0: not at all).  *n = 0
 * when none came. */
int queue_live_read(struct queue *q, const char *job_id, char *last_id, size_t lsz, int count,
                    int block_ms, struct queue_entry **out, size_t *n, struct llmsb_err *err);
/* 1 when job_id has a stream (a live job that started, not expired). */
int queue_live_exists(struct queue *q, const char *job_id, struct llmsb_err *err);

/* A follower of a job's live output: what it handed on of each stream,
 * so that the rest comes from the final result (queue_follow_rest) and a
 * consumer that follows gets the bytes of one that only waits. */
struct queue_follow {
    char last_id[QUEUE_ENTRY_ID_MAX]; /* "0-0": from the start */
    unsigned long long next[2];       /* bytes of stdout, stderr handed on (this attempt) */
    uint64_t sum[2];                  /* their FNV-1a hash: checked against the result */
    long long attempt;                /* the last restart entry's attempt (0: none seen) */
    int ended;                        /* the end entry came */
};
/* Called with each new piece of fd (1 stdout, 2 stderr) in order; with fd
 * 0 (data NULL, len the attempt) when an attempt starts again after one
 * this follower saw: what it handed on before is void, offsets restart. */
typedef void (*queue_follow_fn)(void *arg, int fd, const char *data, size_t len);
void queue_follow_init(struct queue_follow *f);
/* Reads the entries that came since (blocking up to block_ms for one)
 * and hands on the bytes of each stream that follow what was handed on
 * (entries trimmed away leave a gap: that stream waits for the result).
 * Returns how many entries came, or a negative code. */
int queue_follow_step(struct queue *q, const char *job_id, struct queue_follow *f, int block_ms,
                      queue_follow_fn fn, void *arg, struct llmsb_err *err);
/* Hands on what a final result (result_fields form: stdout, stderr) holds
 * past what the follower handed on.  Returns 0, or 1 (handing on nothing)
 * when what it handed on of the final attempt is not a prefix of the
 * result's. */
int queue_follow_rest(struct queue_follow *f, const struct fields *result, queue_follow_fn fn,
                      void *arg);

/* Up to count entries of the jobs stream (dead = 0: every job not yet
 * finished, queued or running) or of the dead-letter stream (dead = 1),
 * oldest first from after the entry id `after` ("-": the start), or newest
 * first (newest_first) from before `after` ("+": the end).  Page by passing
 * the last entry's id back as `after`. */
int queue_range(struct queue *q, int dead, int newest_first, const char *after, int count,
                struct queue_entry **out, size_t *n, struct llmsb_err *err);

/* The id of the newest results-stream entry, "0-0" when empty. */
int queue_results_last_id(struct queue *q, char *id, size_t idsz, struct llmsb_err *err);

struct queue_stats {
    long long stream_len; /* entries in the jobs stream (not yet finished) */
    long long pending;    /* delivered, not acknowledged */
    long long dead;
    long long done_last_minute;
    int workers;
};
/* The cheap part alone (XLEN of the jobs and dead streams, the XPENDING
 * summary: three O(1) commands): stream_len, pending and dead; the rest 0.
 * A Prometheus scrape reads these (worker/metrics.c). */
int queue_depth(struct queue *q, struct queue_stats *st, struct llmsb_err *err);
/* Calls worker_fn(ud, name, fields) for each live worker heartbeat hash
 * (worker_fn may be NULL).  Returns how many, or a negative code. */
int queue_workers_each(struct queue *q,
                       void (*worker_fn)(void *, const char *, const struct fields *), void *ud,
                       struct llmsb_err *err);
/* What the live workers understand (queue/workers.c): a front end about
 * to use a feature asks first, and falls back or refuses when one lacks
 * it (docs/operations.md, rolling upgrades); a worker handed a job that
 * needs a feature it lacks looks here for one that has it. */
struct queue_workers_check {
    int alive;                     /* live workers (heartbeats) */
    int lacking;                   /* of them, those without every feature asked for */
    char lacking_names[512];       /* theirs with their protocol levels: "w1 (protocol 0)";
                                      ", ..." ends a list cut short */
    char best[QUEUE_CONSUMER_MAX]; /* one with all of them, the most free slots; "" none */
};
/* Reads the heartbeats for features (a comma-separated list of names,
 * common/features.h); a heartbeat without a features field (a worker of
 * protocol 0) has none.  Returns 0 or a negative code. */
int queue_workers_check(struct queue *q, const char *features, struct queue_workers_check *out,
                        struct llmsb_err *err);
/* Calls worker_fn(ud, name, fields) for each live worker heartbeat hash. */
int queue_stats(struct queue *q, struct queue_stats *st,
                void (*worker_fn)(void *, const char *, const struct fields *), void *ud,
                struct llmsb_err *err);

/* Sessions (exec/session.c): prefix:session:ID is a hash {state: open
 * or lost, worker, why}.  claim: 0 it was free and is me's now, 3 it was
 * me's already, 1 another live worker holds it (text: its name), 2 it is
 * lost (text: why; a holder without a heartbeat makes it so).
 * drop deletes the record (the id is free), lose marks it lost with why. */
int queue_session_claim(struct queue *q, const char *id, const char *me, long long ttl_s,
                        char *text, size_t tsz, struct llmsb_err *err);
int queue_session_drop(struct queue *q, const char *id, struct llmsb_err *err);
/* 1 when a call of session that comes before entry_id in the stream is
 * delivered and not acknowledged yet (it must run first), 0 when none. */
int queue_session_earlier(struct queue *q, const char *entry_id, const char *session,
                          struct llmsb_err *err);
int queue_session_lose(struct queue *q, const char *id, const char *why, long long ttl_s,
                       struct llmsb_err *err);
/* Moves a delivered entry to consumer (the worker holding its session),
 * with its idle time set to idle_ms (that worker's recovery of its own
 * deliveries picks it up) and its delivery count to count. */
int queue_hand_over(struct queue *q, const char *entry_id, const char *consumer, long long idle_ms,
                    long long count, struct llmsb_err *err);

/* ---- delayed jobs (queue/delayed.c; docs/operations.md, delayed jobs) ----
 * P:delayed is a sorted set of job ids scored by when they are due (epoch
 * ms), P:delayed:<id> a hash of each one's job fields. */
/* Defers the entry entry_id (read from the jobs stream) of job job_id
 * until due_ms, in one script: fields (job_due_fields's) stored, the id
 * added to the set, the entry acknowledged and deleted. */
int queue_defer(struct queue *q, const char *entry_id, const char *job_id, int64_t due_ms,
                const struct fields *fields, struct llmsb_err *err);
/* Moves up to max jobs due at now_ms back onto the jobs stream (one
 * script; one ZRANGEBYSCORE when none is due).  Returns how many, or a
 * negative code. */
#define QUEUE_DELAYED_MOVE_MAX 32
int queue_delayed_move(struct queue *q, int64_t now_ms, int max, struct llmsb_err *err);
/* 1 (and *due_ms) when job_id waits in the delayed set, 0 when not. */
int queue_delayed_due(struct queue *q, const char *job_id, int64_t *due_ms, struct llmsb_err *err);
/* How many jobs wait in the delayed set, or a negative code. */
long long queue_delayed_count(struct queue *q, struct llmsb_err *err);

/* ---- dead letters (queue/dead.c; docs/operations.md, dead letters) ----
 * The dead stream's entries are a job's fields then reason, attempts and
 * last_worker (scheduler_dead_fields). */
#define QUEUE_DEAD_OWN_FIELDS 3
/* The dead letter of id: the dead entry of that entry id, else the newest
 * whose job id is id.  1 found (*out: one entry, queue_entries_free(*out,
 * 1)), 0 none, or a negative code. */
int queue_dead_find(struct queue *q, const char *id, struct queue_entry **out,
                    struct llmsb_err *err);
/* The job a dead letter d holds, to run again: its fields without the
 * dead letter's own, and history (a JSON array) with this dead letter's
 * {attempts, reason, last_worker, dead_at_ms, dead_entry} added to what
 * it had.  out is initialised here (fields_release it); 0, or
 * LLMSB_ERR_NOMEM, or LLMSB_ERR_INVALID (err says: no job id). */
int queue_dead_job_fields(const struct queue_entry *d, struct fields *out, struct llmsb_err *err);
/* Requeues dead letter d: in one script, unless d is gone from the dead
 * stream meanwhile, the job (queue_dead_job_fields) goes on the jobs
 * stream under its id, d is deleted and the job's result, done
 * notifications and cancel request too, so the run writes its own.
 * Returns 1 (entry: the new entry id), 0 d was gone, or a negative code. */
int queue_dead_requeue(struct queue *q, const struct queue_entry *d, char *entry, size_t esz,
                       struct llmsb_err *err);
/* Deletes the dead entry entry_id: 1, 0 not there, or a negative code. */
int queue_dead_drop(struct queue *q, const char *entry_id, struct llmsb_err *err);

#endif
