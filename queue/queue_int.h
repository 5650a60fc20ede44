/* queue_int.h - what the files of queue/ share: the connection layer
 * (conn.c: one command with its reply, two pipelined, a durable write),
 * the address parsers (url.c, pure and fuzzed) and a stream reply's
 * entries (queue.c). */
#ifndef LLMSB_QUEUE_INT_H
#define LLMSB_QUEUE_INT_H

#include <hiredis/hiredis.h>
#include "queue.h"

/* Runs one command. On success *out holds a non-error reply the caller
 * frees with freeReplyObject. IO errors and the server errors
 * queue_err_retryable names are LLMSB_ERR_BACKEND (a timeout
 * LLMSB_ERR_TIMEOUT); other server errors LLMSB_ERR_INVALID.  An EVAL is
 * sent as EVALSHA (EVAL again on NOSCRIPT); in a cluster MOVED and ASK
 * are followed (QUEUE__REDIRECTS_MAX in all). */
#define QUEUE__REDIRECTS_MAX 5
int queue__cmd(struct queue *q, int argc, const char **argv, const size_t *lens, redisReply **out,
               struct llmsb_err *err);
/* The most arguments a command of plain strings (queue__simple and
 * queue.c's own) takes; more is refused, never read past. */
#define QUEUE__ARGS_MAX 32
/* Runs one command of argc plain-string arguments (argc of them after
 * argc), its reply dropped: 0, or queue__cmd's error; argc outside 1 to
 * QUEUE__ARGS_MAX is LLMSB_ERR_INVALID (err names the verb and the count)
 * and sends nothing. */
int queue__simple(struct queue *q, struct llmsb_err *err, int argc, ...);
/* Runs two commands in one round trip (pipelined), dropping their
 * replies: 0, or the first one's error as queue__cmd says it. */
int queue__cmd2(struct queue *q, int argc1, const char **argv1, const size_t *lens1, int argc2,
                const char **argv2, const size_t *lens2, struct llmsb_err *err);
/* queue__cmd for a write a failover must not lose (enqueue, finish,
 * release): with q->wait_replicas > 0 it is followed by WAIT N wait_ms
 * (pipelined; after a NOSCRIPT or an ASK, the write and its WAIT are sent
 * again together, the WAIT after the write on the node that applied it).
 * A write applied but confirmed by fewer than N replicas (or whose WAIT
 * reply did not come) is done, with a rate-limited warning that a
 * failover could still lose it; a write whose own reply did not come is
 * the retryable error of queue__cmd (queue_last_unanswered 1): nothing is
 * kept or re-sent, the caller retries, so the write must be idempotent or
 * its caller must know it may have been applied.  The same answer as
 * queue__cmd. */
int queue__cmd_durable(struct queue *q, int argc, const char **argv, const size_t *lens,
                       redisReply **out, struct llmsb_err *err);

/* ---- url.c: pure parsers of addresses and of the replies naming them ---- */

/* Fills q's address fields (mode, host, port, unix_path, user, password,
 * db, tls, nodes, master, sentinel_*, wait_*) from url (NULL or "": the
 * default redis://127.0.0.1:6379); the rest of q is left alone.  Bad input
 * is LLMSB_ERR_INVALID, err naming the part, its value and why (passwords
 * never shown). */
int queue__url_parse(struct queue *q, const char *url, struct llmsb_err *err);
/* The cluster hash slot of key (CRC16 of its {tag} when it has one). */
unsigned queue__key_slot(const char *key, size_t len);
/* "MOVED 3999 10.0.0.1:6381" or "ASK ...": 1 when s is one (*ask says
 * which; host "" when the reply leaves it out: the node asked), else 0. */
int queue__redirect_parse(const char *s, size_t len, int *ask, struct queue_node *to);
/* SENTINEL get-master-addr-by-name's reply: 1 found, 0 nil (the sentinel
 * does not know the master), -1 a reply of another shape. */
int queue__sentinel_addr_parse(const redisReply *r, struct queue_node *out);
/* ROLE's reply: 1 master, 0 another role (role names it), -1 bad shape. */
int queue__role_parse(const redisReply *r, char *role, size_t rsz);
/* CLUSTER SLOTS's reply: 1 with the primary serving slot in *out (host ""
 * when the reply leaves it out: the node asked), 0 none, -1 bad shape. */
int queue__cluster_slots_find(const redisReply *r, unsigned slot, struct queue_node *out);

/* Parses [[id, [k, v, ...]], ...] into a new entry array (free it with
 * queue_entries_free). Returns 0 or LLMSB_ERR_NOMEM. */
int queue__parse_entries(const redisReply *arr, struct queue_entry **out, size_t *n);
/* The entries of an XREAD of one stream (r consumed), *last_id moved to
 * the last one's id. */
int queue__xread_reply(redisReply *r, char *last_id, size_t lsz, struct queue_entry **out,
                       size_t *n, struct llmsb_err *err);

#endif
