/* exec.h - one live sandbox container with its agent attached, and the
 * execution of jobs through it.  A sandbox runs many jobs in sequence; the
 * agent cleans between them.  This is what the pool will hand out. */
#ifndef LLMSB_EXEC_H
#define LLMSB_EXEC_H

#include <signal.h>
#include <stdint.h>
#include "backends/backend.h"
#include "backends/stream.h"
#include "config/config.h"
#include "worker/job.h"

struct sandbox {
    struct backend *be;       /* == &own: one engine connection per sandbox */
    struct backend own;
    volatile int *cancel;     /* non-NULL and non-zero: stop waiting */
    char id[80];
    char image[256];
    struct http_conn conn;
    struct demux demux;
    struct buf in;            /* agent -> worker protocol bytes */
    struct buf agent_log;     /* the agent's stderr, capped */
    int open;                 /* the container exists */
    int need_ready;           /* a RESULT came; READY not read yet */
    int healthy;              /* 0: destroy rather than reuse */
    int jobs;
    int64_t born_ms;
    int64_t memory_bytes;     /* the container's limit */
    struct container_spec spec;   /* what it was created with (labels not kept) */
};

/* Set by the caller's signal handler; long waits return
 * LLMSB_ERR_INTERRUPTED when it becomes non-zero. */
extern volatile sig_atomic_t exec_interrupted;

/* Fills a container spec for a job from the config and the job's limits.
 * labels: extra "key","value" pairs (llmsb.worker, llmsb.host, ...). */
void exec_spec_for_job(struct container_spec *spec, const struct config *cfg,
                       const struct job *j, const char *image);

/* Creates, attaches and starts a container and waits for the agent's HELLO.
 * be is a template: the sandbox opens its own connection to the same
 * engine, so sandboxes can move between threads. */
int sandbox_open(struct sandbox *s, struct backend *be, const struct container_spec *spec,
                 int64_t start_timeout_ms, struct llmsb_err *err);
/* Runs one job. Returns 0 with res filled (any status), or a negative code
 * when the infrastructure failed (the caller retries or reports
 * internal_error). backstop_ms bounds the wait for the RESULT; past it the
 * container is destroyed and res gets status timeout. */
int sandbox_run(struct sandbox *s, const struct proto_job *pj, int64_t backstop_ms,
                struct proto_result *res, struct llmsb_err *err);
/* Kills and removes the container. Safe on a closed sandbox. */
void sandbox_close(struct sandbox *s);
/* Health check before hand-out: the previous job's cleanup finished and
 * the agent answers PING within timeout_ms. */
int sandbox_ping(struct sandbox *s, int64_t timeout_ms, struct llmsb_err *err);

/* The pool key of a spec: containers are interchangeable only when image
 * and every container-level limit match. */
void exec_spec_key(const struct container_spec *spec, char *out, size_t outsz);
/* Who this process is, for labels: kind is "run", "local" or "worker". */
void exec_identity(const char *worker_name, const char *kind);
const char *exec_worker_name(void);

/* The backstop for a job: its limits plus the grace. */
int64_t exec_backstop_ms(const struct config *cfg, const struct job *j);

/* Labels every container of this process carries (DESIGN §6). */
void exec_labels(struct container_spec *spec);

#endif
