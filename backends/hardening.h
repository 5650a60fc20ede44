/* hardening.h - the one hardened layout of a sandbox, whatever the engine.
 * hardening_from_spec builds it from a container_spec; each backend renders
 * it into its own API's JSON (docker.c's create body, which Podman shares;
 * kubernetes.c's pod), so the engines cannot drift apart.  What an engine
 * cannot express, and what holds there instead, is named in one table
 * (hardening_gap), next to the spec; tests/unit/test_hardening.c renders
 * one spec with both renderers and checks every item against them. */
#ifndef LLMSB_HARDENING_H
#define LLMSB_HARDENING_H

#include <stdint.h>
#include "backend.h"

/* A mount's flags; each one clear means its opposite (exec, suid, dev). */
#define HARDENING_NOEXEC 0x1u
#define HARDENING_NOSUID 0x2u
#define HARDENING_NODEV 0x4u

enum hardening_mount_kind {
    HARDENING_TMPFS, /* a tmpfs of its own */
    HARDENING_SHM    /* the engine's /dev/shm: only its size is asked for */
};

struct hardening_mount {
    const char *path; /* where it is in the container */
    const char *name; /* a short name (a pod's volume name) */
    enum hardening_mount_kind kind;
    int64_t bytes;
    unsigned flags; /* HARDENING_NOEXEC | ... */
    unsigned mode;  /* of its root: 01777 */
};

struct hardening_env {
    const char *name;
    char value[64];
};

struct hardening_ulimit {
    const char *name; /* Docker's names: nofile, nproc, core */
    int64_t value;    /* soft = hard */
};

#define HARDENING_MAX_MOUNTS 4
#define HARDENING_MAX_CAPS 3
#define HARDENING_MAX_ENV 2
#define HARDENING_MAX_ULIMITS 3

struct hardening {
    /* the agent, the container's only process */
    const char *entrypoint;
    const char *workdir;
    struct hardening_env env[HARDENING_MAX_ENV];
    int nenv;
    int64_t uid, gid; /* the agent's (root); it runs jobs as the spec's agent_uid */
    /* privileges */
    int read_only_root;
    const char *cap_drop; /* "ALL" */
    const char *cap_add[HARDENING_MAX_CAPS];
    int ncap_add;
    int no_new_privileges;
    int privileged;
    int seccomp_own; /* 1: the project's profile (seccomp.h); 0: the engine's default */
    /* filesystems besides the read-only root */
    struct hardening_mount mounts[HARDENING_MAX_MOUNTS];
    int nmounts;
    /* resources */
    int64_t memory_bytes;
    int64_t swap_bytes; /* beyond memory_bytes: 0, none */
    double cpus;
    int64_t pids;
    struct hardening_ulimit ulimits[HARDENING_MAX_ULIMITS];
    int nulimits;
    int oom_score_adj; /* the agent's; jobs raise their own to 1000 */
    /* isolation */
    int network;              /* 0: none at all */
    const char *network_name; /* with a network: which one (NULL: the engine's default) */
    int host_namespaces;      /* 0: no namespace shared with the host */
    int engine_log;           /* 0: the engine keeps no log of the agent's output */
    int engine_credentials;   /* 0: nothing of the engine's (socket, token) in the sandbox */
    const char *runtime;      /* NULL: the engine's default */
};

/* Fills h from s; h points into s's strings (s must outlive h). */
void hardening_from_spec(struct hardening *h, const struct container_spec *s);

/* One tmpfs option string as Docker's Tmpfs map takes it:
 * "rw,nosuid,nodev,noexec,size=65536k,mode=1777". */
void hardening_mount_options(const struct hardening_mount *m, char *out, size_t outsz);

/* The items of the spec, one per thing a renderer must express. */
enum hardening_item {
    HARDENING_ITEM_ENTRYPOINT,
    HARDENING_ITEM_WORKDIR,
    HARDENING_ITEM_ENV,
    HARDENING_ITEM_USER,
    HARDENING_ITEM_READ_ONLY_ROOT,
    HARDENING_ITEM_CAPS,
    HARDENING_ITEM_NO_NEW_PRIVILEGES,
    HARDENING_ITEM_NOT_PRIVILEGED,
    HARDENING_ITEM_SECCOMP,
    HARDENING_ITEM_MOUNTS,      /* paths and sizes */
    HARDENING_ITEM_MOUNT_FLAGS, /* noexec, nosuid, nodev, mode */
    HARDENING_ITEM_MEMORY,
    HARDENING_ITEM_NO_SWAP,
    HARDENING_ITEM_CPUS,
    HARDENING_ITEM_PIDS,
    HARDENING_ITEM_ULIMITS,
    HARDENING_ITEM_OOM_SCORE,
    HARDENING_ITEM_NETWORK,
    HARDENING_ITEM_HOST_NAMESPACES,
    HARDENING_ITEM_ENGINE_LOG,
    HARDENING_ITEM_ENGINE_CREDENTIALS,
    HARDENING_ITEM_RUNTIME,
    HARDENING_NITEMS
};

/* "mount_flags", ... (NULL past the end). */
const char *hardening_item_name(enum hardening_item item);

/* How the backend named engine (ops->name) departs from item of h, and what
 * holds instead; NULL when it renders the item as the spec says. */
const char *hardening_gap(const char *engine, enum hardening_item item, const struct hardening *h);

#endif
