/* podman.c - Podman through its Docker-compatible API service (`podman
 * system service`: rootful /run/podman/podman.sock, rootless
 * $XDG_RUNTIME_DIR/podman/podman.sock).  The calls, bodies and stream
 * framing are docker.c's; what Podman 4.3 does differently is here:
 *   - SecurityOpt "seccomp=" names a file, not the profile: the profile is
 *     written once per content to a private directory and named by path;
 *   - killing a container that is not running answers 500 "container state
 *     improper" (Docker: 409): stop looks at the container before failing;
 *   - an import ignores its tag parameter: the tag goes in repo=name:tag;
 *   - no DOCKER-USER chain, and netavark re-inserts its FORWARD jump at the
 *     top: the egress blocks are DROPs in raw PREROUTING, on a bridge of its
 *     own (llmsb-egress1, so Docker and Podman can share a host), and
 *     netavark's DNS answers on the bridge's gateway;
 *   - rm -f of a container that is exiting fails: remove tries again;
 *   - OOMKilled is not set under cgroup v1 with runc: the agent's own
 *     cgroup OOM counter (agent/run.c) is what reports memory_limit. */
#include "internal.h"
#include "backends/docker/docker.h"
#include "backends/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PODMAN_HOST_ENV "CONTAINER_HOST"
#define PODMAN_ROOT_SOCKET "unix:///run/podman/podman.sock"

/* A private directory for the profile file: /run/llmsb for root (never an
 * inherited $XDG_RUNTIME_DIR: sudo -E keeps a user's), else
 * $XDG_RUNTIME_DIR/llmsb, else ~/.cache/llmsb.  It must be ours and closed
 * to everyone else, or a local user could plant a profile that allows
 * everything. */
static int profile_dir(char *out, size_t outsz)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
    struct stat st;
    int n;

    if (geteuid() == 0)
        n = snprintf(out, outsz, "/run/llmsb");
    else if (xdg && *xdg)
        n = snprintf(out, outsz, "%s/llmsb", xdg);
    else if (home && *home)
        n = snprintf(out, outsz, "%s/.cache/llmsb", home);
    else
        return -1;
    if (n < 0 || (size_t)n >= outsz)
        return -1;
    if (mkdir(out, 0700) != 0 && errno != EEXIST)
        return -1;
    if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077))
        return -1;
    return 0;
}

/* 1 when path is our own regular 0600 file holding exactly the profile. */
static int profile_is(const char *path, const char *profile, size_t n)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    char *got = NULL;
    int same = 0;

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        !(st.st_mode & 077) && (size_t)st.st_size == n && (got = malloc(n + 1)) != NULL)
        same = read(fd, got, n + 1) == (ssize_t)n && memcmp(got, profile, n) == 0;
    free(got);
    close(fd);
    return same;
}

static pthread_mutex_t profile_mu = PTHREAD_MUTEX_INITIALIZER;

/* Writes the profile to <dir>/seccomp-<hash>.json (a new file under a
 * temporary name, then renamed, so a reader never sees half of it) unless
 * our own copy is there; *out is the path, malloc'd.  Checked on every
 * call: a runtime directory may be emptied under us (logout). */
static int seccomp_file(char **out)
{
    char *profile = seccomp_profile_json();
    char dir[400], tmp[560], path[512];
    int rc = -1;

    if (!profile)
        return -1;
    pthread_mutex_lock(&profile_mu);
    if (profile_dir(dir, sizeof(dir)) == 0) {
        size_t n = strlen(profile);
        unsigned long long h = (unsigned long long)hash_fnv1a(0, profile, n);
        int fd;

        snprintf(path, sizeof(path), "%s/seccomp-%016llx.json", dir, h);
        snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
        if (profile_is(path, profile, n)) {
            rc = 0;
        } else if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >=
                   0) {
            int ok = write(fd, profile, n) == (ssize_t)n;
            ok = close(fd) == 0 && ok;
            if (ok && rename(tmp, path) == 0)
                rc = 0;
            else
                unlink(tmp);
        }
    }
    if (rc == 0 && !(*out = strdup(path)))
        rc = -1;
    pthread_mutex_unlock(&profile_mu);
    free(profile);
    return rc;
}

static const struct docker_flavor podman_flavor = {
    .name = "podman",
    .default_host = PODMAN_ROOT_SOCKET,
    .host_env = PODMAN_HOST_ENV,
    .daemon_hint = "is `podman system service` running? see docs/podman.md",
    .seccomp_opt = seccomp_file,
    .import_tag_in_repo = 1,
    .egress_bridge = "llmsb-egress1",
    .egress_forward_chain = "raw:PREROUTING", /* above netavark's FORWARD ACCEPTs */
    .egress_block_target = "DROP",
    .egress_dns_on_gateway = 1,
};

/* Podman's Docker-compatible create ignores HostConfig.Runtime (4.3.1 here:
 * with "runsc", or /usr/bin/runsc, a job's kernel is still the host's), so
 * a container runs on the engine's default runtime, which GET /info names:
 * backend.runtime is refused rather than believed (docs/security.md). */
static int podman_runtime_kind(struct backend *b, const char *runtime, struct llmsb_err *err)
{
    if (runtime && *runtime)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "podman: backend.runtime \"%.100s\": Podman's Docker-compatible API "
                             "runs every container on its default runtime, whatever the request "
                             "names: set engine.runtime in containers.conf and leave "
                             "backend.runtime empty",
                             runtime);
    return docker_runtime_kind(b, NULL, err);
}

static int podman_open(struct backend *b, const char *host, struct llmsb_err *err)
{
    char sock[400];
    const char *xdg = getenv("XDG_RUNTIME_DIR");

    if (!host)
        host = getenv(PODMAN_HOST_ENV);
    if ((!host || !*host) && geteuid() != 0 && xdg && *xdg &&
        snprintf(sock, sizeof(sock), "unix://%s/podman/podman.sock", xdg) < (int)sizeof(sock))
        host = sock; /* rootless: the user's own service */
    return docker_open_flavor(b, host, &podman_flavor, err);
}

/* Kill answers 500 for a container that is not running (Docker: 409);
 * that is what stop wanted. */
static int podman_stop(struct backend *b, const char *id, struct llmsb_err *err)
{
    struct container_state st;
    struct llmsb_err e2 = {0};

    if (docker_stop(b, id, err) == 0)
        return 0;
    if (docker_inspect(b, id, &st, &e2) == 0 && !st.running) {
        memset(err, 0, sizeof(*err));
        return 0;
    }
    return err->code;
}

/* rm -f of a container whose process is exiting answers 500 "could not be
 * stopped: sending SIGKILL ... container state improper"; once it has
 * exited the same call succeeds.  A few tries, 50 ms apart. */
static int podman_remove(struct backend *b, const char *id, struct llmsb_err *err)
{
    int rc = docker_remove(b, id, err);

    for (int i = 0; rc != 0 && err->code != LLMSB_ERR_NOTFOUND && i < 5; i++) {
        usleep(50 * 1000);
        memset(err, 0, sizeof(*err));
        rc = docker_remove(b, id, err);
    }
    return rc;
}

/* docker_ops but for the hooks the list at the top of this file calls for. */
const struct backend_ops podman_ops = {
    .name = "podman",
    .open = podman_open,
    .stop = podman_stop,
    .remove = podman_remove,
    .runtime_kind = podman_runtime_kind,
    DOCKER_OPS_SHARED,
};
