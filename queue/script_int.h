/* script_int.h - what delayed.c and dead.c share: one EVAL of a script
 * over keys, plain-string arguments, then a list of fields as pairs. */
#ifndef LLMSB_QUEUE_SCRIPT_INT_H
#define LLMSB_QUEUE_SCRIPT_INT_H

#include "queue_int.h"

/* EVAL script with nkeys keys, nargs arguments, then f's pairs (f may be
 * NULL).  On success *out holds the reply (freeReplyObject it); errors
 * as queue__cmd says them. */
int queue__eval_fields(struct queue *q, const char *script, int nkeys, const char *const *keys,
                       int nargs, const char *const *args, const struct fields *f, redisReply **out,
                       struct llmsb_err *err);

#endif
