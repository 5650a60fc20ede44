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
 * Off the job's path, threads of the pool's own (started at their first
 * work, joined by pool_release_all): the remover removes the containers
 * pool_put retired after their jobs ended (at most POOL_REMOVE_MAX wait;
 * past that pool_put removes one itself), and POOL_REFILLERS refillers make a key's next
 * containers as soon as the key has fewer ready (idle or being made) than
 * it wants: min_idle while used lately, and as many as its jobs use up
 * during one create (pool_rate_target), not on maintenance's tick.
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
    /* the front end's jobs at a time (0: no bound): a key's rate asks for
     * at most twice this many containers ready (pool_rate_target) */
    int slots;
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
#define POOL_REMOVE_MAX 16 /* retired containers waiting for the remover */
#define POOL_REFILLERS 2   /* containers made ahead at once */
/* a key that used up no container for this long wants none for its rate */
#define POOL_RATE_WINDOW_MS 10000
/* a create taken before the key's first is measured */
#define POOL_CREATE_GUESS_MS 500
/* a key whose container could not be made ahead waits this long to try again */
#define POOL_REFILL_BACKOFF_MS 10000

/* A key's demand: how fast its jobs use its containers up (retired after
 * their job: every job on gVisor, where a container runs one) and how long
 * one takes to make.  Pure; the pool keeps one per key. */
struct pool_rate {
    int64_t last_ms;   /* when the last container was used up (0: none yet) */
    int64_t gap_ms;    /* moving average of the time between two (0: fewer than two) */
    int64_t create_ms; /* moving average of a create until ready (0: none measured) */
};

/* A container of the key was used up at now_ms. */
void pool_rate_used(struct pool_rate *r, int64_t now_ms);
/* One was made in took_ms (create, start, HELLO, prestart). */
void pool_rate_created(struct pool_rate *r, int64_t took_ms);
/* The containers the key should have ready (idle or being made) for its
 * rate at now_ms: the jobs expected during one create, rounded up, at
 * least 1 while it uses containers up (two or more, the last within
 * POOL_RATE_WINDOW_MS; else 0), at most cap (> 0; 0: no bound). */
int pool_rate_target(const struct pool_rate *r, int64_t now_ms, int cap);

struct pool_idle {
    struct sandbox *sb;
    char key[POOL_KEY_MAX];
    int64_t idle_since_ms;
};

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* a container freed, made or removed */
    pthread_cond_t helper_cv;   /* work for the remover or the refiller */
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
        struct pool_rate rate;
        int making;       /* containers being made ahead for it (counted in total) */
        int waiting;      /* acquires waiting for one of those */
        int64_t retry_ms; /* a failed make ahead: none before this */
    } warm[POOL_MAX_KEYS];
    int nwarm;
    long long created, reused, destroyed;
    /* the helper threads: 0 not started yet, 1 the remover and refillers
     * running, 2 the remover alone (no refiller could start: maintenance
     * warms), -1 none (could not start, or released: pool_put removes) */
    int helpers;
    int stopping; /* pool_release_all: the helpers end (the remover once it is done) */
    pthread_t remover, refiller[POOL_REFILLERS];
    int nrefillers;                          /* started */
    struct sandbox *doomed[POOL_REMOVE_MAX]; /* retired, to be removed */
    size_t ndoomed;
    int removing;                 /* removes in flight */
    char (*live)[BACKEND_ID_MAX]; /* every container made and not yet destroyed */
    size_t nlive, alive;
    char grave[POOL_GRAVE_MAX][BACKEND_ID_MAX]; /* removes that failed */
    size_t ngrave;
};

struct pool_lease {
    struct sandbox *sb;
    int temporary;
    int warm;          /* 1: an idle container of the key (else made for this lease) */
    int64_t create_ms; /* made for this lease: how long that took */
    char key[POOL_KEY_MAX];
};

/* Readies p for containers of tmpl (a template: each sandbox clones it)
 * under cfg; nothing is made yet.  Returns 0, or LLMSB_ERR_SYS when its
 * condition variables could not be made. */
int pool_init(struct pool *p, const struct backend *tmpl, const struct pool_config *cfg);
/* Ends the helpers (the remover once every retired container is removed)
 * and destroys every idle container; handed-out ones are the caller's, and
 * pool_put removes them itself from now on. */
void pool_release_all(struct pool *p);
/* A healthy container for spec (labels included): an idle one of its key,
 * one being made ahead for the key (waited for), a new one under
 * max_size, else as pool.on_exhausted says. */
int pool_acquire(struct pool *p, const struct container_spec *spec, struct pool_lease *lease,
                 struct llmsb_err *err);
/* How pool_put takes a container back. */
enum pool_put_how {
    POOL_PUT_CUT = 0,    /* its job did not end (cancelled, cut short, its agent silent): it may
                            still run a program, so it is removed now */
    POOL_PUT_REUSE = 1,  /* its job ended: kept if within its limits, else retired */
    POOL_PUT_RETIRE = 2, /* its job ended, but the container serves no other (it installed a
                            job's libraries): retired */
};
/* Gives a container back (how: enum pool_put_how): kept, or retired:
 * handed to the remover (removed here when it is full or not running),
 * or removed here, before the caller writes its job's result; the
 * refiller is told either way. */
void pool_put(struct pool *p, struct pool_lease *lease, int how);
/* Failed removes retried, idle timeouts, ages, min_idle top-up. Call
 * periodically from one thread. */
void pool_maintain(struct pool *p);
/* 1 when container id is one of the pool's (idle, handed out, or waiting
 * to be removed again). */
int pool_knows(struct pool *p, const char *id);
/* Waits up to timeout_ms until the helpers have nothing in hand or due (no
 * remove waiting or in flight, no container being made ahead or wanted
 * with room for it).  Returns 0, or LLMSB_ERR_TIMEOUT. */
int pool_settle(struct pool *p, int64_t timeout_ms);
int pool_size(struct pool *p, int *idle);

#endif
