/* pool.h - warm sandbox containers, shared by a worker's slots.
 *
 * Containers are keyed by image and container-level limits
 * (sandbox_spec_key).  Acquire hands out an idle container of the key after a
 * health check, or creates one while the pool is under max_size; when it
 * is full it evicts an idle container of another key, and otherwise waits,
 * fails fast, or makes a temporary container, as configured.  Release
 * keeps a container only while it is healthy, under max_uses and max_age;
 * maintenance drops idle ones past idle_timeout and keeps min_idle warm for
 * every key it has seen (prestarted as the key's last job would want).
 *
 * A container whose remove failed (the engine was down or restarting) is
 * not forgotten: its id waits in the pool's graveyard and maintenance
 * removes it once the engine answers.  pool_knows tells the worker's
 * reaper which of its own containers are the pool's (every other one it
 * made is a leftover: a create whose answer was lost, say). */
#ifndef LLMSB_POOL_H
#define LLMSB_POOL_H

#include <pthread.h>
#include <stdint.h>
#include "sandbox/sandbox.h"

enum pool_exhausted { POOL_WAIT = 0, POOL_FAIL_FAST, POOL_TEMPORARY };

struct pool_config {
    int min_idle;
    int max_size;
    int max_uses;
    int64_t max_age_ms;
    int64_t idle_timeout_ms;
    int64_t wait_ms; /* POOL_WAIT: longest wait for a container */
    enum pool_exhausted on_exhausted;
    int64_t start_timeout_ms;
    /* 1: a container's first job has the zygote it will use started
     * before it, off its clock (sandbox_prestart, called by exec/exec.c);
     * a container made ahead of any job (min_idle) has what the last job
     * of its key used started when it is made, off every job's path */
    int prestart;
    /* labels every container of the pool carries (llmsb.*: docs/cli.md) */
    char labels[BACKEND_MAX_LABELS][2][160];
    int nlabels;
};

/* Adds a label to every container of pools made from pc. Returns 0 or
 * LLMSB_ERR_LIMIT (too many, or a key or value over 159 bytes). */
int pool_config_label(struct pool_config *pc, const char *key, const char *value);

#define POOL_MAX_KEYS 32
#define POOL_KEY_MAX 512
#define POOL_HEALTH_TIMEOUT_MS 5000
#define POOL_WAIT_SLICE_MS 200
#define POOL_GRAVE_MAX 256 /* container ids whose remove is to be retried */

struct pool_idle {
    struct sandbox *sb;
    char key[POOL_KEY_MAX];
    int64_t idle_since_ms;
};

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const struct backend *tmpl; /* engine to open sandboxes on */
    struct pool_config cfg;
    struct pool_idle *idle;
    size_t nidle, aidle;
    int total; /* counted containers: idle + handed out */
    int creating;
    struct {
        char key[POOL_KEY_MAX];
        struct container_spec spec;
        char image[256];
        int64_t last_used_ms;
        struct proto_job start; /* sandbox_start_view of the key's last job */
    } warm[POOL_MAX_KEYS];
    int nwarm;
    long long created, reused, destroyed;
    char (*live)[BACKEND_ID_MAX]; /* every container made and not yet destroyed */
    size_t nlive, alive;
    char grave[POOL_GRAVE_MAX][BACKEND_ID_MAX]; /* removes that failed */
    size_t ngrave;
};

struct pool_lease {
    struct sandbox *sb;
    int temporary;
    int warm; /* 1: an idle container of the key (else made for this lease) */
    char key[POOL_KEY_MAX];
};

int pool_init(struct pool *p, const struct backend *tmpl, const struct pool_config *cfg);
/* Destroys every idle container; handed-out ones are the caller's. */
void pool_release_all(struct pool *p);
/* A healthy container for spec (labels included): an idle one of its key,
 * a new one under max_size, else as pool.on_exhausted says. */
int pool_acquire(struct pool *p, const struct container_spec *spec, struct pool_lease *lease,
                 struct llmsb_err *err);
/* Gives a container back: kept if reusable and within its limits, else
 * destroyed. */
void pool_put(struct pool *p, struct pool_lease *lease, int reusable);
/* Failed removes retried, idle timeouts, ages, min_idle top-up. Call
 * periodically from one thread. */
void pool_maintain(struct pool *p);
/* 1 when container id is one of the pool's (idle, handed out, or waiting
 * to be removed again). */
int pool_knows(struct pool *p, const char *id);
int pool_size(struct pool *p, int *idle);

#endif
