/* sandbox.h - one live sandbox container with its agent attached: the
 * worker's side of the agent protocol (proto/proto.h) over a backend
 * stream.  A sandbox runs many jobs in sequence; the agent cleans between
 * them.  This is what the pool hands out.  It knows the engine only through
 * the backend's ops table. */
#ifndef LLMSB_SANDBOX_H
#define LLMSB_SANDBOX_H

#include <stdatomic.h>
#include <stdint.h>
#include "proto/proto.h"
#include "backends/backend.h"

/* Values of a sandbox's cancel flag (0: carry on). */
enum sandbox_cancel {
    SANDBOX_GO = 0,
    SANDBOX_CANCEL = 1, /* the user cancelled the job */
    SANDBOX_ABORT = 2   /* drain, lease lost or Ctrl-C: give the job back */
};

struct sandbox {
    struct backend be;  /* one engine connection per sandbox */
    atomic_int *cancel; /* non-NULL and non-zero: stop waiting */
    char id[BACKEND_ID_MAX];
    char image[256];
    struct backend_stream *stream;
    struct buf in;    /* agent -> worker protocol bytes */
    int open;         /* the container exists */
    int need_ready;   /* a RESULT came; READY not read yet */
    int64_t ready_ms; /* when the last READY was read (0: none) */
    int healthy;      /* 0: destroy rather than reuse */
    int unremoved;    /* sandbox_close could not remove it: id names a container still */
    int jobs;
    int prestart; /* the agent takes PROTO_PRESTART (its HELLO said so), none sent yet */
    int live;     /* the agent sends OUTPUT frames for a live job (its HELLO said so) */
    /* its runtime's profile: the engine's (be.runtime), gVisor's where the
     * agent's HELLO says its kernel is gVisor's (one job, then retired; the
     * job's RLIMIT_NPROC at its pids limit) */
    struct runtime_profile runtime;
    /* non-NULL: where a live job's chunks go (the caller sets it around
     * sandbox_run, as cancel); NULL: the job runs as a non-live one */
    const struct proto_chunk_sink *sink;
    struct proto_job last; /* sandbox_start_view of its last job outside a session */
    int64_t born_ms;
    struct container_spec spec; /* what it was created with (labels not kept) */
};

/* Creates, attaches and starts a container from spec (labels included) and
 * waits for the agent's HELLO.  tmpl is a template: the sandbox opens its
 * own connection to the same engine, so sandboxes can move between
 * threads. */
int sandbox_open(struct sandbox *s, const struct backend *tmpl, const struct container_spec *spec,
                 int64_t start_timeout_ms, struct llmsb_err *err);
/* Runs one job; a live one (pj->live) with s->sink set hands its chunks
 * to the sink as they come, in order per stream and never past the job's
 * output limit in all (an agent without live output: none).  Returns 0 with res filled (any status the agent or the
 * container's fate decided), or a negative code when the infrastructure
 * failed (the caller's scheduler retries): an unreachable engine, a lost
 * stream, an agent that reported internal_error.  backstop_ms bounds the
 * wait for the RESULT; past it the container is destroyed and res gets
 * status timeout (or memory_limit when the engine says OOM). */
int sandbox_run(struct sandbox *s, const struct proto_job *pj, int64_t backstop_ms,
                struct proto_result *res, struct llmsb_err *err);
/* Before the sandbox's first job: asks an agent that takes it to start
 * the zygote pj would use (a PRESTART with pj's zygote, profile, run argv
 * and env) and waits for its READY, which comes once the zygote is ready
 * or given up (within the agent's 5 s).  Nothing when the agent does not
 * take it, the sandbox ran a job, or pj cannot have a zygote (none named,
 * a session's call, a compile or install step).  Returns 0, or a negative
 * code (the sandbox is unhealthy then). */
int sandbox_prestart(struct sandbox *s, const struct proto_job *pj, struct llmsb_err *err);
/* The same for a container made ahead of any job (the pool's warm ones,
 * off every job's path): a PRESTART with view, the start view of the last
 * job of its kind, whatever its language; the agent starts what it can
 * (a zygote for a job that could use one, nothing else it does not know).
 * Nothing when the agent does not take it, the sandbox ran a job, or view
 * is empty or a session's.  Returns 0, or a negative code (the sandbox is
 * unhealthy then). */
int sandbox_prestart_ahead(struct sandbox *s, const struct proto_job *view, struct llmsb_err *err);
/* Copies into view what a PRESTART carries of pj: how its tools start
 * (compile and run argv, the sandbox's and the language's env, zygote
 * script and profile, the process started ahead and its rlimits, the
 * compile server), nothing of its files, input, own env or time limits.
 * Returns 0, or a negative code (view empty);
 * the caller releases view (proto_job_release). */
int sandbox_start_view(const struct proto_job *pj, struct proto_job *view);
/* Kills and removes the container. Safe on a closed sandbox. */
void sandbox_close(struct sandbox *s);
/* Health check before hand-out: the previous job's cleanup finished and
 * the agent answers PING within timeout_ms. */
int sandbox_ping(struct sandbox *s, int64_t timeout_ms, struct llmsb_err *err);
/* The newest bytes of the agent's own stderr (for logs), escaped into out. */
void sandbox_agent_log(const struct sandbox *s, char *out, size_t outsz);

/* The pool key of a spec: containers are interchangeable only when image
 * and every container-level limit match. */
void sandbox_spec_key(const struct container_spec *spec, char *out, size_t outsz);

#endif
