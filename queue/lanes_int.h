/* lanes_int.h - what queue.c asks of lanes.c: an entry id's stream, and
 * the lanes' streams for the functions that go over every lane. */
#ifndef LLMSB_QUEUE_LANES_INT_H
#define LLMSB_QUEUE_LANES_INT_H

#include "queue.h"

/* entry_id's lane's stream into key and its id in that stream into raw
 * (an id without a lane: the default lane, q->k_jobs).  LLMSB_ERR_INVALID
 * when the lane part names no lane or a part does not fit. */
int queue__entry_where(const struct queue *q, const char *entry_id, char key[QUEUE_KEY_MAX],
                       char raw[QUEUE_ENTRY_ID_MAX], struct llmsb_err *err);
/* lane + "/" + raw[0..rawlen) into out (raw alone for the default lane
 * ""): 0, or -1 when it does not fit (out untouched). */
int queue__entry_id_make(char out[QUEUE_ENTRY_ID_MAX], const char *lane, const char *raw,
                         size_t rawlen);
/* Puts lane name lane ("": the default lane, nothing put) before each of
 * e[0..n)'s ids: "high/1700000000000-0". */
void queue__entries_qualify(struct queue_entry *e, size_t n, const char *lane);
/* The streams of the lanes in use, in queue_lanes_list's order, into a new array of n keys with their lane names (free both
 * with free()).  Returns 0 or an error. */
struct queue__lane_keys {
    char key[QUEUE_KEY_MAX];
    char name[LANE_NAME_MAX];
};
int queue__lane_keys(struct queue *q, struct queue__lane_keys **out, size_t *n,
                     struct llmsb_err *err);
void queue__lanes_free(struct queue *q);
/* Moves src[0..ns) (consumed) to the end of *dst: 0 or LLMSB_ERR_NOMEM
 * (src freed either way). */
int queue__entries_append(struct queue_entry **dst, size_t *nd, struct queue_entry *src, size_t ns);

#endif
