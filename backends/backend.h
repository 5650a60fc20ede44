/* backend.h - the container engine behind one ops table.  A backend is
 * chosen once (config `backend:`) and every caller goes through ops; only
 * backends/ knows which engine it talks to.  Files travel over the agent's
 * stream, not the engine's archive API (which cannot reach a tmpfs under a
 * read-only root on Docker). */
#ifndef LLMSB_BACKEND_H
#define LLMSB_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "backends/http.h"
#include "common/common.h"

#define BACKEND_MAX_LABELS 8

struct container_spec {
    const char *image;
    const char *runtime;           /* NULL: the engine's default (runc) */
    int64_t memory_bytes;
    double cpus;
    int64_t pids;
    int64_t nofile;
    int64_t nproc;
    int64_t work_tmpfs_bytes;      /* /work */
    int64_t tmp_tmpfs_bytes;       /* /tmp and /var/tmp */
    int64_t shm_bytes;             /* /dev/shm */
    int network;                   /* 0: no network at all */
    const char *network_name;      /* with network: the filtered egress network */
    int64_t agent_uid;             /* the uid jobs run as */
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

struct backend;

/* What list() tells about a container (its llmsb.* labels). */
struct container_info {
    const char *id;
    const char *worker;
    const char *kind;
    const char *pid;
    const char *host;
};

/* Progress lines from image builds and imports. */
typedef void (*backend_progress_cb)(void *ud, const char *line);

struct backend_ops {
    const char *name;
    int (*ping)(struct backend *b, char *version, size_t vsz, struct llmsb_err *err);
    /* 1 = present, 0 = absent */
    int (*image_exists)(struct backend *b, const char *image, struct llmsb_err *err);
    int (*create)(struct backend *b, const struct container_spec *spec, char *id, size_t idsz,
                  struct llmsb_err *err);
    /* Opens the container's stdin/stdout/stderr as one raw stream. */
    int (*attach)(struct backend *b, const char *id, struct http_conn *conn,
                  struct llmsb_err *err);
    int (*start)(struct backend *b, const char *id, struct llmsb_err *err);
    int (*inspect)(struct backend *b, const char *id, struct container_state *st,
                   struct llmsb_err *err);
    int (*stop)(struct backend *b, const char *id, struct llmsb_err *err);
    int (*remove)(struct backend *b, const char *id, struct llmsb_err *err);
    /* Calls fn for each container carrying label "k=v" (running or not). */
    int (*list)(struct backend *b, const char *label,
                void (*fn)(void *ud, const struct container_info *ci), void *ud,
                struct llmsb_err *err);
    /* Imports a root filesystem tarball pulled from rd as repo:tag. */
    int (*image_import)(struct backend *b, const char *repo, const char *tag, http_read_cb rd,
                        void *ud, backend_progress_cb progress, void *pud,
                        struct llmsb_err *err);
    /* Builds from a context tarball; tags are "repo:tag" strings. */
    int (*image_build)(struct backend *b, const char *const *tags, size_t ntags,
                       http_read_cb rd, void *ud, backend_progress_cb progress, void *pud,
                       struct llmsb_err *err);
    /* Tags an existing image as repo:tag. */
    int (*image_tag)(struct backend *b, const char *image, const char *repo, const char *tag,
                     struct llmsb_err *err);
    /* Makes sure a bridge network exists (bridge_name: its host interface). */
    int (*network_ensure)(struct backend *b, const char *name, const char *bridge_name,
                          struct llmsb_err *err);
    /* Takes a running container off a network (the library install's). */
    int (*network_disconnect)(struct backend *b, const char *name, const char *id,
                              struct llmsb_err *err);
    /* Pulls repo:tag from a registry; fails fast when none answers. */
    int (*image_pull)(struct backend *b, const char *repo, const char *tag,
                      backend_progress_cb progress, void *pud, struct llmsb_err *err);
};

struct backend {
    const struct backend_ops *ops;
    struct http_client http;
    char host[256];
};

extern const struct backend_ops docker_ops;

#define EGRESS_NETWORK "llmsb-egress"
#define EGRESS_BRIDGE "llmsb-egress0"

/* The network jobs get when they may use one: a bridge whose traffic to
 * the host, private ranges, shared and link-local addresses (metadata
 * 169.254.169.254 included) is rejected by host firewall rules, set up
 * here once per process (needs root and iptables). */
int backend_egress_ensure(struct backend *b, struct llmsb_err *err);

/* Opens the named backend ("docker") at host (NULL: $DOCKER_HOST or the
 * engine's default socket). */
int backend_open(struct backend *b, const char *name, const char *host, struct llmsb_err *err);
void backend_close(struct backend *b);

#endif
