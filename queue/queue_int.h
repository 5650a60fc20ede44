/* queue_int.h - what the files of queue/ share (queue.c's plumbing, used
 * by live.c): one command with its reply, two pipelined, and a stream reply's entries. */
#ifndef LLMSB_QUEUE_INT_H
#define LLMSB_QUEUE_INT_H

#include <hiredis/hiredis.h>
#include "queue.h"

/* Runs one command. On success *out holds a non-error reply the caller
 * frees with freeReplyObject. IO errors and LOADING/BUSY/MASTERDOWN are
 * LLMSB_ERR_BACKEND (retryable); other server errors LLMSB_ERR_INVALID. */
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
/* Parses [[id, [k, v, ...]], ...] into a new entry array (free it with
 * queue_entries_free). Returns 0 or LLMSB_ERR_NOMEM. */
int queue__parse_entries(const redisReply *arr, struct queue_entry **out, size_t *n);
/* The entries of an XREAD of one stream (r consumed), *last_id moved to
 * the last one's id. */
int queue__xread_reply(redisReply *r, char *last_id, size_t lsz, struct queue_entry **out,
                       size_t *n, struct llmsb_err *err);

#endif
