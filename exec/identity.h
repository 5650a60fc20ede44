/* identity.h - who this process is, for the labels on its containers and
 * the worker name on its results: the host, a worker name, the kind of
 * process ("run", "local" or "worker"), its pid and, for a Redis worker,
 * the queue it serves.  A value the runner owns and passes; no globals. */
#ifndef LLMSB_EXEC_IDENTITY_H
#define LLMSB_EXEC_IDENTITY_H

#include "sandbox/pool.h"

struct identity {
    char host[256];
    char worker[160]; /* the given name, or <host>-<pid> */
    char kind[16];
    char pid[24];
    char queue[24]; /* the llmsb.queue label, "" for none */
};

/* Fills id for this process: worker_name NULL or "" means <host>-<pid>;
 * kind NULL means "run"; queue is the label value that scopes a worker's
 * containers to its Redis and prefix (identity_queue_label), NULL for none. */
void identity_init(struct identity *id, const char *worker_name, const char *kind,
                   const char *queue);

/* The value of the llmsb.queue label for a Redis URL and prefix: a short
 * hash, the same on every host, different for every deployment. */
void identity_queue_label(const char *redis_url, const char *prefix, char out[24]);

/* Sets the pool's labels from id (replacing any set before):
 * llmsb.managed, host, worker, kind, pid and, for a worker, queue.  The
 * reaper finds a dead process's containers by them. */
void identity_pool_labels(const struct identity *id, struct pool_config *pc);

#endif
