/* backend.h - the container engine behind one ops table.  A backend is
 * chosen once by name (config `backend.name`) and every caller goes through
 * its ops; what an engine is (its default address, API version, stream
 * framing, how a job's network is filtered) is known only to that
 * backend's own files.  The agent's bytes travel over an opaque stream
 * that each backend delivers its own way (a Docker or Podman attach, a
 * Kubernetes WebSocket); a job's files travel over that stream too, never
 * over an engine's archive API (only a custom image's audit reads a
 * container's files through the engine: container_export). */
#ifndef LLMSB_BACKEND_H
#define LLMSB_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "backends/opts.h"
#include "common/common.h"

#define BACKEND_MAX_LABELS 8
#define BACKEND_ID_MAX 80 /* container ids, with their NUL */

/* The network of jobs that may use one: filtered to the public internet
 * by each backend in its own way (egress_ensure). */
#define BACKEND_EGRESS_NETWORK "llmsb-egress"

struct container_spec {
    const char *image;
    const char *runtime; /* NULL: the engine's default (runc) */
    int engine_seccomp;  /* 1: the engine's default seccomp profile, not ours (seccomp.h) */
    int64_t memory_bytes;
    double cpus;
    int64_t pids;
    int64_t nofile;
    int64_t nproc;
    int64_t work_tmpfs_bytes; /* /work */
    int64_t tmp_tmpfs_bytes;  /* /tmp and /var/tmp */
    int64_t shm_bytes;        /* /dev/shm */
    int network;              /* 0: no network at all */
    const char *network_name; /* with network: which one */
    int64_t agent_uid;        /* the uid jobs run as */
    const char *labels[BACKEND_MAX_LABELS][2];
    int nlabels;
};

struct container_state {
    int running;
    int oom_killed;
    int exit_code;
    char status[32];
    char error[200];
};

/* What list() tells about a container (its llmsb.* labels; "" if absent). */
struct container_info {
    const char *id;
    const char *worker;
    const char *kind;
    const char *pid;
    const char *host;
    const char *queue;
    long long created_s; /* unix seconds, 0 when the engine did not say */
};

/* ---- the agent stream ------------------------------------------------------ */

struct backend_stream;

struct backend_stream_ops {
    /* Reads bytes the agent wrote to its stdout, waiting at most timeout_ms
     * (-1: forever). Returns the count (>0), 0 at EOF, LLMSB_ERR_TIMEOUT, or
     * another negative code with err set. */
    ssize_t (*read)(struct backend_stream *s, char *p, size_t n, int timeout_ms,
                    struct llmsb_err *err);
    /* Writes all n bytes to the agent's stdin. */
    int (*write)(struct backend_stream *s, const char *p, size_t n, struct llmsb_err *err);
    /* Closes the stream and frees s. */
    void (*close)(struct backend_stream *s);
};

/* Every backend's stream starts with this; log keeps the newest bytes the
 * agent wrote to its stderr (bounded), for the worker's log. */
struct backend_stream {
    const struct backend_stream_ops *ops;
    struct buf log;
};

#define BACKEND_STREAM_LOG_CAP ((size_t)64 << 10)

/* Keeps the newest bytes of an agent's stderr in s->log. */
void backend_stream_log(struct backend_stream *s, const char *p, size_t n);

/* One tag of an image, as image_list reports it. */
struct image_info {
    const char *tag;    /* "repo:tag" */
    const char *lang;   /* its llmsb.lang label, or "" */
    const char *custom; /* its llmsb.custom label (images build --dockerfile), or "" */
    long long created_s;
    long long size_bytes;
};

/* ---- the engine ------------------------------------------------------------- */

struct backend;

/* What a sandbox's runtime is, for what jobs may share (backend_runtime_resolve). */
enum backend_runtime_kind {
    BACKEND_RUNTIME_KERNEL = 0, /* the host's kernel (runc, crun; a VM's own, as Kata's) */
    BACKEND_RUNTIME_GVISOR,     /* gVisor (runsc): a user-space kernel of its own */
    BACKEND_RUNTIME_UNKNOWN,    /* named, but the engine would not say what it runs */
    BACKEND_RUNTIME_COUNT
};

/* Everything the layers above do differently on a runtime, one row of
 * backends/runtime.c's table a kind: chosen once when the engine is opened
 * (backend_runtime_resolve, into b->runtime; clones inherit it) and read by
 * the runner, exec/ and sandbox/, so that no layer asks which runtime it
 * is.  All zero is the host kernel's (runc), the row of a backend never
 * resolved. */
struct runtime_profile {
    enum backend_runtime_kind kind;
    /* a container is retired after its job (pool.max_uses 1): the runtime
     * keeps what the agent cannot clean (gVisor's POSIX message queues),
     * or nobody said what it keeps */
    int one_job_per_container;
    /* the pids cgroup does not bound a job's processes: its RLIMIT_NPROC
     * does, at its pids limit (runtime_profile_nproc) */
    int nproc_from_pids;
    /* > 0: the container's pids cgroup is a backstop of pids * this +
     * memory_mb * host_pids_per_mb (runtime_profile_host_pids); 0: pids */
    int64_t host_pids_per_pid;
    int64_t host_pids_per_mb;
    /* the engine's seccomp profile is not loaded on the container's
     * processes (the runtime's own kernel is the filter): a process the
     * engine execs there shows "Seccomp: 0" (the agent's namespace filter
     * still holds every job) */
    int no_engine_seccomp;
};

/* Progress lines from image builds and imports. */
typedef void (*backend_progress_cb)(void *ud, const char *line);
/* Pulls up to max bytes of an upload (a tar stream); 0 at its end, <0 to fail. */
typedef ssize_t (*backend_read_cb)(void *ud, char *dst, size_t max);

struct backend_ops {
    const char *name;
    /* Connects to the engine at host (NULL: the backend's own default,
     * e.g. an environment variable, then a well-known socket). */
    int (*open)(struct backend *b, const char *host, struct llmsb_err *err);
    void (*close)(struct backend *b);
    int (*ping)(struct backend *b, char *version, size_t vsz, struct llmsb_err *err);
    /* 1 = present, 0 = absent */
    int (*image_exists)(struct backend *b, const char *image, struct llmsb_err *err);
    /* What identifies image on this engine (its id, and its repo digest
     * when it has one), for a report; NULL: the engine cannot say. */
    int (*image_digest)(struct backend *b, const char *image, char *out, size_t outsz,
                        struct llmsb_err *err);
    /* The image's configuration (its Config object as JSON text: Labels,
     * Env, Volumes, User, Entrypoint...) into out; 1 = present, 0 = absent.
     * NULL: the engine cannot say (Kubernetes: images are the nodes'). */
    int (*image_config)(struct backend *b, const char *image, struct buf *out,
                        struct llmsb_err *err);
    int (*create)(struct backend *b, const struct container_spec *spec, char *id, size_t idsz,
                  struct llmsb_err *err);
    /* Opens the container's stdin/stdout/stderr as the agent stream. */
    int (*attach)(struct backend *b, const char *id, struct backend_stream **out,
                  struct llmsb_err *err);
    int (*start)(struct backend *b, const char *id, struct llmsb_err *err);
    int (*inspect)(struct backend *b, const char *id, struct container_state *st,
                   struct llmsb_err *err);
    int (*stop)(struct backend *b, const char *id, struct llmsb_err *err);
    /* Removes the container; one that is gone already is success. */
    int (*remove)(struct backend *b, const char *id, struct llmsb_err *err);
    /* Calls fn for each container carrying label "k=v" (running or not). */
    int (*list)(struct backend *b, const char *label,
                void (*fn)(void *ud, const struct container_info *ci), void *ud,
                struct llmsb_err *err);
    /* Runs argv as user in a running container through the engine's own
     * exec (not the agent): stdout into out, *exit_code set. For benchmarks
     * and diagnostics. */
    int (*exec)(struct backend *b, const char *id, const char *const *argv, const char *user,
                struct buf *out, int *exit_code, struct llmsb_err *err);
    /* Streams the file system of container id (created; it need not have
     * started) to sink as the engine's tar of it, as it arrives; a sink
     * that returns non-zero stops it.  Read by the engine, as root: every
     * file with its mode, owner and file capabilities, whatever the modes
     * of its directories.  NULL: the engine cannot (Kubernetes). */
    int (*container_export)(struct backend *b, const char *id,
                            int (*sink)(void *ud, const char *p, size_t n), void *ud,
                            struct llmsb_err *err);
    /* Imports a root filesystem tarball pulled from rd as repo:tag. */
    int (*image_import)(struct backend *b, const char *repo, const char *tag, backend_read_cb rd,
                        void *ud, backend_progress_cb progress, void *pud, struct llmsb_err *err);
    /* Builds from a context tarball; tags are "repo:tag" strings. */
    int (*image_build)(struct backend *b, const char *const *tags, size_t ntags, backend_read_cb rd,
                       void *ud, backend_progress_cb progress, void *pud, struct llmsb_err *err);
    /* Tags an existing image as repo:tag. */
    int (*image_tag)(struct backend *b, const char *image, const char *repo, const char *tag,
                     struct llmsb_err *err);
    /* Calls fn for each tag of the images carrying label (a key, or
     * "k=v"); NULL: the engine cannot list images (Kubernetes). */
    int (*image_list)(struct backend *b, const char *label,
                      void (*fn)(void *ud, const struct image_info *ii), void *ud,
                      struct llmsb_err *err);
    /* Removes the tag image (the image too when it was its last tag). */
    int (*image_remove)(struct backend *b, const char *image, struct llmsb_err *err);
    /* Pulls repo:tag from a registry; fails fast when none answers. */
    int (*image_pull)(struct backend *b, const char *repo, const char *tag,
                      backend_progress_cb progress, void *pud, struct llmsb_err *err);
    /* Makes BACKEND_EGRESS_NETWORK ready: reaches the public internet only
     * (not the host, private, shared or link-local ranges). Idempotent. */
    int (*egress_ensure)(struct backend *b, struct llmsb_err *err);
    /* Takes a running container off a network (after a library install). */
    int (*network_disconnect)(struct backend *b, const char *name, const char *id,
                              struct llmsb_err *err);
    /* What runtime (NULL or "": the engine's default) runs, from the
     * engine's own description of it (Docker's /info, a RuntimeClass):
     * an enum backend_runtime_kind, or a negative code with err set.
     * NULL: always BACKEND_RUNTIME_KERNEL. */
    int (*runtime_kind)(struct backend *b, const char *runtime, struct llmsb_err *err);
    /* 1: the stream can only be opened on a running container, so what the
     * agent wrote before it (its HELLO) is lost: the sandbox asks again. */
    int attach_after_start;
    /* 1: containers are the cluster's, not one host's (pods): a worker
     * reaps what any dead worker of its queue left, whatever its host. */
    int cluster_wide;
};

struct backend {
    const struct backend_ops *ops;
    void *priv;     /* the engine's own state */
    char host[256]; /* the address in use, as resolved by open */
    struct backend_opts opts;
    struct runtime_profile runtime; /* backend_runtime_resolve's answer; the host kernel's before */
};

/* Opens b with the engine of ops at host (NULL or "": the engine's
 * default), with opts (NULL: defaults).  By name: backend_open
 * (backends/registry/registry.h). */
int backend_open_ops(struct backend *b, const struct backend_ops *ops, const char *host,
                     const struct backend_opts *opts, struct llmsb_err *err);
/* Asks the engine once what runtime (config backend.runtime; "" = the
 * engine's default) is, and keeps its profile in b->runtime (clones
 * inherit it); on an error b->runtime is kept as it was. */
int backend_runtime_resolve(struct backend *b, const char *runtime, struct llmsb_err *err);
/* The profile of a kind (a row of a static table; an unknown value is
 * BACKEND_RUNTIME_UNKNOWN's). */
const struct runtime_profile *runtime_profile_of(enum backend_runtime_kind kind);
/* The RLIMIT_NPROC a job with pids and nproc limits gets under rp: nproc,
 * or where rp->nproc_from_pids pids - 1 (at least 1) when that is smaller
 * (gVisor does not count a job's first process, forked by root, then
 * given the job's uid, against that uid).  pids 0: nproc. */
uint64_t runtime_profile_nproc(const struct runtime_profile *rp, uint64_t pids, uint64_t nproc);
/* The pids cgroup limit of a container whose job may run pids processes
 * (its helpers' threads included) with memory_mb of memory under rp. */
int64_t runtime_profile_host_pids(const struct runtime_profile *rp, int64_t pids,
                                  int64_t memory_mb);
/* 1 when path (a runtime's binary, or a runtime's or handler's name) is
 * gVisor's: its last component contains "runsc", or is "gvisor". */
int backend_runtime_is_runsc(const char *path);
/* Opens another connection to the same engine (for another thread). */
int backend_clone(struct backend *dst, const struct backend *src, struct llmsb_err *err);
void backend_close(struct backend *b);

#endif
