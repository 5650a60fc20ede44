/* hardening.c - the one hardened layout of a sandbox (hardening.h), and
 * the one list of what an engine cannot express of it.  The layout: the
 * agent as root with SETUID, SETGID and KILL only, no new privileges, a
 * read-only root, the project's seccomp profile, size-limited tmpfs mounts
 * (/work exec, /tmp and /var/tmp noexec, none suid or dev), memory without
 * swap, CPU, pids and ulimits, no network unless asked for, nothing shared
 * with the host or the engine. */
#include "hardening.h"

#include <stdio.h>
#include <string.h>

#define AGENT_PATH "/usr/local/bin/llmsb-agent"

static void add_mount(struct hardening *h, const char *path, const char *name,
                      enum hardening_mount_kind kind, int64_t bytes, unsigned flags)
{
    h->mounts[h->nmounts++] = (struct hardening_mount){path, name, kind, bytes, flags, 01777};
}

void hardening_from_spec(struct hardening *h, const struct container_spec *s)
{
    static const char *const caps[] = {"SETUID", "SETGID", "KILL"};

    memset(h, 0, sizeof(*h));
    h->entrypoint = AGENT_PATH;
    h->workdir = "/work";
    h->env[0].name = "LLMSB_AGENT_UID";
    snprintf(h->env[0].value, sizeof(h->env[0].value), "%lld", (long long)s->agent_uid);
    h->env[1].name = "PATH";
    snprintf(h->env[1].value, sizeof(h->env[1].value), "/usr/local/bin:/usr/bin:/bin");
    h->nenv = 2;

    h->read_only_root = 1;
    h->cap_drop = "ALL";
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
        h->cap_add[h->ncap_add++] = caps[i];
    h->no_new_privileges = 1;
    h->seccomp_own = !s->engine_seccomp;

    /* Docker's own /dev/shm is noexec, nosuid, nodev and 1777: the spec
     * says so, so that an engine that mounts it otherwise shows up */
    add_mount(h, "/work", "work", HARDENING_TMPFS, s->work_tmpfs_bytes,
              HARDENING_NOSUID | HARDENING_NODEV);
    add_mount(h, "/tmp", "tmp", HARDENING_TMPFS, s->tmp_tmpfs_bytes,
              HARDENING_NOEXEC | HARDENING_NOSUID | HARDENING_NODEV);
    add_mount(h, "/var/tmp", "var-tmp", HARDENING_TMPFS, s->tmp_tmpfs_bytes,
              HARDENING_NOEXEC | HARDENING_NOSUID | HARDENING_NODEV);
    add_mount(h, "/dev/shm", "shm", HARDENING_SHM, s->shm_bytes,
              HARDENING_NOEXEC | HARDENING_NOSUID | HARDENING_NODEV);

    h->memory_bytes = s->memory_bytes;
    h->cpus = s->cpus;
    h->pids = s->pids;
    h->ulimits[h->nulimits++] = (struct hardening_ulimit){"nofile", s->nofile};
    h->ulimits[h->nulimits++] = (struct hardening_ulimit){"nproc", s->nproc};
    h->ulimits[h->nulimits++] = (struct hardening_ulimit){"core", 0};
    h->oom_score_adj = 500;

    h->network = s->network;
    h->network_name = s->network_name;
    h->runtime = s->runtime && *s->runtime ? s->runtime : NULL;
}

void hardening_mount_options(const struct hardening_mount *m, char *out, size_t outsz)
{
    snprintf(out, outsz, "rw,%s,%s,%s,size=%lldk,mode=%o",
             m->flags & HARDENING_NOSUID ? "nosuid" : "suid",
             m->flags & HARDENING_NODEV ? "nodev" : "dev",
             m->flags & HARDENING_NOEXEC ? "noexec" : "exec", (long long)(m->bytes / 1024),
             m->mode);
}

static const char *const item_names[HARDENING_NITEMS] = {
    [HARDENING_ITEM_ENTRYPOINT] = "entrypoint",
    [HARDENING_ITEM_WORKDIR] = "workdir",
    [HARDENING_ITEM_ENV] = "env",
    [HARDENING_ITEM_USER] = "user",
    [HARDENING_ITEM_READ_ONLY_ROOT] = "read_only_root",
    [HARDENING_ITEM_CAPS] = "caps",
    [HARDENING_ITEM_NO_NEW_PRIVILEGES] = "no_new_privileges",
    [HARDENING_ITEM_NOT_PRIVILEGED] = "not_privileged",
    [HARDENING_ITEM_SECCOMP] = "seccomp",
    [HARDENING_ITEM_MOUNTS] = "mounts",
    [HARDENING_ITEM_MOUNT_FLAGS] = "mount_flags",
    [HARDENING_ITEM_MEMORY] = "memory",
    [HARDENING_ITEM_NO_SWAP] = "no_swap",
    [HARDENING_ITEM_CPUS] = "cpus",
    [HARDENING_ITEM_PIDS] = "pids",
    [HARDENING_ITEM_ULIMITS] = "ulimits",
    [HARDENING_ITEM_OOM_SCORE] = "oom_score",
    [HARDENING_ITEM_NETWORK] = "network",
    [HARDENING_ITEM_HOST_NAMESPACES] = "host_namespaces",
    [HARDENING_ITEM_ENGINE_LOG] = "engine_log",
    [HARDENING_ITEM_ENGINE_CREDENTIALS] = "engine_credentials",
    [HARDENING_ITEM_RUNTIME] = "runtime",
};

const char *hardening_item_name(enum hardening_item item)
{
    return (unsigned)item < HARDENING_NITEMS ? item_names[item] : NULL;
}

/* What an engine cannot express, and what holds instead: the one list
 * (docs/kubernetes.md and docs/security.md say the same in prose).  Docker
 * and Podman express every item.  Each row is one the pod API has no field
 * for, or one whose field means less than the spec asks (mounts: a
 * sizeLimit); nothing here could be moved into the pod spec (a row that
 * could fails test_hardening, which checks that the pod really lacks it, or
 * has only that part). */
struct gap {
    const char *engine;
    enum hardening_item item;
    int if_seccomp_own; /* 1: only when the spec asks for the project's profile */
    const char *instead;
};

static const struct gap gaps[] = {
    {"kubernetes", HARDENING_ITEM_MOUNTS, 0,
     "a memory-backed emptyDir's sizeLimit is its tmpfs's size only where the kubelet's "
     "SizeMemoryBackedVolumes feature is on (on by default since 1.22; alpha and off in 1.20, "
     "which scripts/k8s-up.sh turns on); elsewhere the tmpfs is half the node's RAM, the "
     "kubelet evicts the pod once the volume holds more than its sizeLimit, and the pod's "
     "memory limit, which tmpfs pages count against, bounds it"},
    {"kubernetes", HARDENING_ITEM_SECCOMP, 1,
     "the runtime's default profile (seccompProfile RuntimeDefault) and the agent's own "
     "namespace filter (agent/confine.c): the project's own profile would be a Localhost "
     "profile file installed on every node"},
    {"kubernetes", HARDENING_ITEM_MOUNT_FLAGS, 0,
     "an emptyDir (medium Memory, sizeLimit) takes no mount options: /tmp, /var/tmp and "
     "/dev/shm allow exec; for nosuid, no new privileges makes setuid bits grant nothing; for "
     "nodev, no capability can make a device node (MKNOD is dropped); the kubelet makes the "
     "root 0777, without the sticky bit (every job is one uid)"},
    {"kubernetes", HARDENING_ITEM_NO_SWAP, 0,
     "no pod field: nodes run without swap unless the kubelet's NodeSwap feature is on"},
    {"kubernetes", HARDENING_ITEM_PIDS, 0,
     "no pod field: the kubelet's podPidsLimit bounds every pod of the node, and the agent's "
     "per-job RLIMIT_NPROC each job"},
    {"kubernetes", HARDENING_ITEM_ULIMITS, 0,
     "no pod field: the agent sets RLIMIT_NOFILE, RLIMIT_NPROC and RLIMIT_CORE 0 on every job "
     "(agent/job_limits.h); the agent itself has the runtime's defaults"},
    {"kubernetes", HARDENING_ITEM_OOM_SCORE, 0,
     "the kubelet sets it from the QoS class (Burstable: from the memory request); jobs still "
     "raise theirs to 1000"},
    {"kubernetes", HARDENING_ITEM_NETWORK, 0,
     "a pod always has the pod network: the NetworkPolicy of deploy/kubernetes isolates pods by "
     "their llmsb.network label, where the CNI enforces NetworkPolicy"},
    {"kubernetes", HARDENING_ITEM_ENGINE_LOG, 0,
     "the kubelet always keeps a container's output in the node's log files (rotated at its "
     "containerLogMaxSize)"},
};

const char *hardening_gap(const char *engine, enum hardening_item item, const struct hardening *h)
{
    for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
        if (gaps[i].item == item && strcmp(gaps[i].engine, engine) == 0 &&
            (!gaps[i].if_seccomp_own || h->seccomp_own))
            return gaps[i].instead;
    return NULL;
}
