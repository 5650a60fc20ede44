/* test_hardening.c - one hardening spec (backends/hardening.h), two
 * renderers: the same container_spec rendered as Docker's create body, as
 * Podman's (the same bytes but for the seccomp profile's file) and as the
 * Kubernetes pod; every item of the spec found in both or named in
 * hardening_gap's table, every gap really one (absent from the pod, or
 * there only in part), and no key in any object of either body that the
 * spec does not account for.  A mount, a capability, a security option or
 * a limit added to one renderer only fails here. */
#include "test.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "backends/docker/internal.h"
#include "backends/seccomp.h"
#include "backends/hardening.h"
#include "backends/kubernetes/internal.h"
#include "backends/registry/registry.h"

static struct container_spec spec_of(int variant)
{
    struct container_spec s = {0};

    s.image = "llmsb/python:latest";
    s.memory_bytes = 512LL << 20;
    s.cpus = variant ? 0.2 : 1.5;
    s.pids = 256;
    s.nofile = 1024;
    s.nproc = 512;
    s.work_tmpfs_bytes = 256LL << 20;
    s.tmp_tmpfs_bytes = 64LL << 20;
    s.shm_bytes = 32LL << 20;
    s.agent_uid = 10001;
    s.labels[0][0] = "llmsb.kind";
    s.labels[0][1] = "pool";
    s.nlabels = 1;
    if (variant) { /* every branch the other leaves out */
        s.network = 1;
        s.network_name = "llmsb-egress";
        s.runtime = "runsc";
        s.engine_seccomp = 1;
    }
    return s;
}

/* The create body of engine ("docker", "podman": its own flavour, from a
 * backend opened on a socket that is never called). */
static cJSON *engine_body(const char *engine, const struct container_spec *s)
{
    struct backend b;
    struct llmsb_err err = {0};
    char *text = NULL;
    cJSON *j;

    if (backend_open(&b, engine, "unix:///nonexistent/llmsb-test.sock", NULL, &err) != 0)
        return NULL;
    text = docker_create_body(((struct docker *)b.priv)->fl, s);
    backend_close(&b);
    j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

static cJSON *docker_body(const struct container_spec *s)
{
    return engine_body("docker", s);
}

static cJSON *pod_body(const struct container_spec *s)
{
    struct kubernetes k;
    char *text;
    cJSON *j;

    memset(&k, 0, sizeof(k));
    snprintf(k.ns, sizeof(k.ns), "llmsb");
    snprintf(k.pull, sizeof(k.pull), "Never");
    text = kubernetes_pod_body(&k, s);
    j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static int str_is(const cJSON *v, const char *want)
{
    return cJSON_IsString(v) && want && strcmp(v->valuestring, want) == 0;
}

static int num_is(const cJSON *v, double want)
{
    return cJSON_IsNumber(v) && fabs(v->valuedouble - want) < 0.5;
}

static int bool_is(const cJSON *v, int want)
{
    return cJSON_IsBool(v) && !!cJSON_IsTrue(v) == !!want;
}

/* 1 when arr holds exactly the n distinct strings of want, each once, in
 * any order, and nothing else. */
static int strings_are(const cJSON *arr, const char *const *want, int n)
{
    const cJSON *it;

    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n)
        return 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        cJSON_ArrayForEach(it, arr)
            seen += str_is(it, want[i]);
        if (seen != 1)
            return 0;
    }
    return 1;
}

/* 1 when SecurityOpt holds exactly the spec's entries: no-new-privileges
 * and, for seccomp_own, the project's profile inline; nothing else (no
 * "seccomp=unconfined", no "apparmor=..."). */
static int security_opt_is(const cJSON *hc, const struct hardening *h)
{
    char *profile = h->seccomp_own ? seccomp_profile_json() : NULL, *opt = NULL;
    const char *want[2];
    int n = 0, ok = 0;

    if (h->no_new_privileges)
        want[n++] = "no-new-privileges";
    if (h->seccomp_own && (!profile || asprintf(&opt, "seccomp=%s", profile) < 0))
        goto out;
    if (opt)
        want[n++] = opt;
    ok = strings_are(get(hc, "SecurityOpt"), want, n);
out:
    free(profile);
    free(opt);
    return ok;
}

/* How many strings of arr are want. */
static int array_count(const cJSON *arr, const char *want)
{
    const cJSON *it;
    int n = 0;

    cJSON_ArrayForEach(it, arr)
        n += str_is(it, want);
    return n;
}

/* 1 when Docker's tmpfs option string o says flags, mode and size of m:
 * read token by token, not compared with hardening_mount_options. */
static int tmpfs_options_are(const char *o, const struct hardening_mount *m)
{
    char want[64];
    int ok = 1;

    ok &= strstr(o, m->flags & HARDENING_NOEXEC ? "noexec" : ",exec") != NULL;
    ok &= strstr(o, m->flags & HARDENING_NOSUID ? "nosuid" : ",suid") != NULL;
    ok &= strstr(o, m->flags & HARDENING_NODEV ? "nodev" : ",dev") != NULL;
    snprintf(want, sizeof(want), "mode=%o", m->mode);
    ok &= strstr(o, want) != NULL;
    return ok;
}

/* The options of /dev/shm that the body gives: a Tmpfs entry of its own,
 * else the engine's own mount, which the daemon makes noexec, nosuid,
 * nodev, 1777 for a private or shareable IPC namespace (no IpcMode: the
 * daemon's default) when no Mounts or Binds replace it; NULL when the body
 * leaves /dev/shm to anything else (IpcMode host, none, container:...). */
#define DOCKER_ENGINE_SHM "rw,nosuid,nodev,noexec,mode=1777"

static const char *shm_options(const cJSON *hc, const char *path)
{
    const cJSON *v = get(get(hc, "Tmpfs"), path), *ipc = get(hc, "IpcMode");

    if (cJSON_IsString(v))
        return v->valuestring;
    if (get(hc, "Mounts") || get(hc, "Binds") ||
        (ipc && !str_is(ipc, "private") && !str_is(ipc, "shareable")))
        return NULL;
    return DOCKER_ENGINE_SHM;
}

/* Whether Docker's create body shows item of h: 1 yes, 0 no, -1 this test
 * has no check for the item (a new item must get one). */
static int docker_shows(enum hardening_item item, const struct hardening *h, const cJSON *b)
{
    const cJSON *hc = get(b, "HostConfig"), *v, *it;
    const char *o;
    char want[160];
    int n = 0;

    switch (item) {
    case HARDENING_ITEM_ENTRYPOINT:
        return strings_are(get(b, "Entrypoint"), &h->entrypoint, 1) &&
               cJSON_GetArraySize(get(b, "Cmd")) == 0;
    case HARDENING_ITEM_WORKDIR:
        return str_is(get(b, "WorkingDir"), h->workdir);
    case HARDENING_ITEM_ENV:
        for (int i = 0; i < h->nenv; i++) {
            snprintf(want, sizeof(want), "%s=%s", h->env[i].name, h->env[i].value);
            n += array_count(get(b, "Env"), want) == 1;
        }
        return n == h->nenv && cJSON_GetArraySize(get(b, "Env")) == h->nenv;
    case HARDENING_ITEM_USER:
        snprintf(want, sizeof(want), "%lld:%lld", (long long)h->uid, (long long)h->gid);
        return str_is(get(b, "User"), want);
    case HARDENING_ITEM_READ_ONLY_ROOT:
        return bool_is(get(hc, "ReadonlyRootfs"), h->read_only_root);
    case HARDENING_ITEM_CAPS:
        return strings_are(get(hc, "CapDrop"), &h->cap_drop, 1) &&
               strings_are(get(hc, "CapAdd"), h->cap_add, h->ncap_add);
    case HARDENING_ITEM_NO_NEW_PRIVILEGES:
        return security_opt_is(hc, h);
    case HARDENING_ITEM_NOT_PRIVILEGED:
        return bool_is(get(hc, "Privileged"), h->privileged);
    case HARDENING_ITEM_SECCOMP:
        return security_opt_is(hc, h);
    case HARDENING_ITEM_MOUNTS:
        for (int i = 0; i < h->nmounts; i++) {
            const struct hardening_mount *m = &h->mounts[i];
            snprintf(want, sizeof(want), "size=%lldk", (long long)(m->bytes / 1024));
            if (m->kind == HARDENING_SHM)
                n += strcmp(m->path, "/dev/shm") == 0 && num_is(get(hc, "ShmSize"), m->bytes);
            else
                n += (v = get(get(hc, "Tmpfs"), m->path)) && strstr(v->valuestring, want);
        }
        return n == h->nmounts && cJSON_GetArraySize(get(hc, "Tmpfs")) == h->nmounts - 1;
    case HARDENING_ITEM_MOUNT_FLAGS:
        for (int i = 0; i < h->nmounts; i++) {
            const struct hardening_mount *m = &h->mounts[i];
            if (m->kind == HARDENING_SHM)
                n += (o = shm_options(hc, m->path)) != NULL && tmpfs_options_are(o, m);
            else
                n += cJSON_IsString(v = get(get(hc, "Tmpfs"), m->path)) &&
                     tmpfs_options_are(v->valuestring, m);
        }
        return n == h->nmounts;
    case HARDENING_ITEM_MEMORY:
        return num_is(get(hc, "Memory"), (double)h->memory_bytes);
    case HARDENING_ITEM_NO_SWAP:
        return num_is(get(hc, "MemorySwap"), (double)(h->memory_bytes + h->swap_bytes));
    case HARDENING_ITEM_CPUS:
        return num_is(get(hc, "NanoCpus"), h->cpus * 1e9);
    case HARDENING_ITEM_PIDS:
        return num_is(get(hc, "PidsLimit"), (double)h->pids);
    case HARDENING_ITEM_ULIMITS:
        for (int i = 0; i < h->nulimits; i++)
            cJSON_ArrayForEach(it, get(hc, "Ulimits")) {
                n += str_is(get(it, "Name"), h->ulimits[i].name) &&
                     num_is(get(it, "Soft"), (double)h->ulimits[i].value) &&
                     num_is(get(it, "Hard"), (double)h->ulimits[i].value);
            }
        return n == h->nulimits && cJSON_GetArraySize(get(hc, "Ulimits")) == h->nulimits;
    case HARDENING_ITEM_OOM_SCORE:
        return num_is(get(hc, "OomScoreAdj"), h->oom_score_adj);
    case HARDENING_ITEM_NETWORK:
        if (!h->network)
            return str_is(get(hc, "NetworkMode"), "none") && bool_is(get(b, "NetworkDisabled"), 1);
        return str_is(get(hc, "NetworkMode"), h->network_name) &&
               bool_is(get(b, "NetworkDisabled"), 0);
    case HARDENING_ITEM_HOST_NAMESPACES:
        return !h->host_namespaces && !get(hc, "PidMode") && !get(hc, "IpcMode") &&
               !get(hc, "UTSMode") && !get(hc, "UsernsMode") &&
               !str_is(get(hc, "NetworkMode"), "host");
    case HARDENING_ITEM_ENGINE_LOG:
        return !h->engine_log && str_is(get(get(hc, "LogConfig"), "Type"), "none");
    case HARDENING_ITEM_ENGINE_CREDENTIALS:
        return !h->engine_credentials && !get(hc, "Binds") && !get(hc, "Mounts") &&
               !get(b, "Volumes");
    case HARDENING_ITEM_RUNTIME:
        return h->runtime ? str_is(get(hc, "Runtime"), h->runtime) : !get(hc, "Runtime");
    default:
        return -1;
    }
}

/* What the pod shows of an item: all of it; a part (every field the pod
 * has for it, rendered, but what the field means depends on the node);
 * nothing.  -1: no check for the item. */
enum { POD_NOTHING = 0, POD_ALL = 1, POD_PART = 2 };

/* The same for the pod. */
static int pod_shows(enum hardening_item item, const struct hardening *h, const cJSON *pod)
{
    const cJSON *spec = get(pod, "spec");
    const cJSON *c = cJSON_GetArrayItem(get(spec, "containers"), 0);
    const cJSON *sc = get(c, "securityContext"), *lim = get(get(c, "resources"), "limits"), *v;
    char want[64];
    int n = 0;

    switch (item) {
    case HARDENING_ITEM_ENTRYPOINT:
        return strings_are(get(c, "command"), &h->entrypoint, 1) && !get(c, "args");
    case HARDENING_ITEM_WORKDIR:
        return str_is(get(c, "workingDir"), h->workdir);
    case HARDENING_ITEM_ENV:
        for (int i = 0; i < h->nenv; i++)
            cJSON_ArrayForEach(v, get(c, "env")) {
                n += str_is(get(v, "name"), h->env[i].name) &&
                     str_is(get(v, "value"), h->env[i].value);
            }
        return n == h->nenv && cJSON_GetArraySize(get(c, "env")) == h->nenv;
    case HARDENING_ITEM_USER:
        return num_is(get(sc, "runAsUser"), (double)h->uid) &&
               num_is(get(sc, "runAsGroup"), (double)h->gid);
    case HARDENING_ITEM_READ_ONLY_ROOT:
        return bool_is(get(sc, "readOnlyRootFilesystem"), h->read_only_root);
    case HARDENING_ITEM_CAPS:
        return strings_are(get(get(sc, "capabilities"), "drop"), &h->cap_drop, 1) &&
               strings_are(get(get(sc, "capabilities"), "add"), h->cap_add, h->ncap_add);
    case HARDENING_ITEM_NO_NEW_PRIVILEGES:
        return bool_is(get(sc, "allowPrivilegeEscalation"), !h->no_new_privileges);
    case HARDENING_ITEM_NOT_PRIVILEGED:
        return bool_is(get(sc, "privileged"), h->privileged);
    case HARDENING_ITEM_SECCOMP:
        v = get(get(get(spec, "securityContext"), "seccompProfile"), "type");
        return h->seccomp_own ? str_is(v, "Localhost") : str_is(v, "RuntimeDefault");
    case HARDENING_ITEM_MOUNTS:
        for (int i = 0; i < h->nmounts; i++) {
            const struct hardening_mount *m = &h->mounts[i];
            const cJSON *vm, *vol, *ed;
            snprintf(want, sizeof(want), "%lld", (long long)m->bytes);
            cJSON_ArrayForEach(vm, get(c, "volumeMounts")) {
                if (!str_is(get(vm, "mountPath"), m->path))
                    continue;
                cJSON_ArrayForEach(vol, get(spec, "volumes")) {
                    ed = get(vol, "emptyDir");
                    n += str_is(get(vol, "name"), get(vm, "name")->valuestring) &&
                         str_is(get(ed, "medium"), "Memory") && str_is(get(ed, "sizeLimit"), want);
                }
            }
        }
        /* the paths and sizeLimits are there, but a sizeLimit is the
         * tmpfs's size only under the kubelet's SizeMemoryBackedVolumes */
        return n == h->nmounts && cJSON_GetArraySize(get(c, "volumeMounts")) == h->nmounts &&
                       cJSON_GetArraySize(get(spec, "volumes")) == h->nmounts
                   ? POD_PART
                   : POD_NOTHING;
    case HARDENING_ITEM_MOUNT_FLAGS:
        /* an emptyDir is mounted exec, suid, dev, 0777: it shows the spec
         * only where the spec asks for just that */
        for (int i = 0; i < h->nmounts; i++)
            n += h->mounts[i].flags == 0 && h->mounts[i].mode == 0777;
        return n == h->nmounts;
    case HARDENING_ITEM_MEMORY:
        snprintf(want, sizeof(want), "%lld", (long long)h->memory_bytes);
        return str_is(get(lim, "memory"), want);
    case HARDENING_ITEM_CPUS:
        snprintf(want, sizeof(want), "%lldm", (long long)(h->cpus * 1000 + 0.5));
        return str_is(get(lim, "cpu"), want);
    case HARDENING_ITEM_NO_SWAP:
    case HARDENING_ITEM_PIDS:
    case HARDENING_ITEM_OOM_SCORE:
    case HARDENING_ITEM_ENGINE_LOG:
        return 0; /* no field in a pod, nor one of the spec's values in it */
    case HARDENING_ITEM_ULIMITS:
        return h->nulimits == 0;
    case HARDENING_ITEM_NETWORK:
        return 0; /* a pod always has the pod network: a label asks a policy */
    case HARDENING_ITEM_HOST_NAMESPACES:
        return bool_is(get(spec, "hostNetwork"), h->host_namespaces) &&
               bool_is(get(spec, "hostPID"), h->host_namespaces) &&
               bool_is(get(spec, "hostIPC"), h->host_namespaces);
    case HARDENING_ITEM_ENGINE_CREDENTIALS:
        return bool_is(get(spec, "automountServiceAccountToken"), h->engine_credentials) &&
               bool_is(get(spec, "enableServiceLinks"), h->engine_credentials);
    case HARDENING_ITEM_RUNTIME:
        return h->runtime ? str_is(get(spec, "runtimeClassName"), h->runtime)
                          : !get(spec, "runtimeClassName");
    default:
        return -1;
    }
}

/* The gaps a pod has a field for, that means less there than the spec
 * asks: the field must still be rendered. */
static const int pod_in_part[HARDENING_NITEMS] = {[HARDENING_ITEM_MOUNTS] = 1};

/* Every item: Docker shows it; the pod shows it or hardening_gap names
 * it, and then the pod really does not, or only in part (a stale gap is a
 * difference that could have been removed).  A gap in part still needs
 * the part: the pod must render every field it has for the item. */
static void check_variant(int variant)
{
    struct container_spec s = spec_of(variant);
    struct hardening h;
    cJSON *d = docker_body(&s), *p = pod_body(&s);

    hardening_from_spec(&h, &s);
    ASSERT(d != NULL && p != NULL);
    for (int i = 0; i < HARDENING_NITEMS; i++) {
        const char *name = hardening_item_name((enum hardening_item)i);
        int ds = docker_shows((enum hardening_item)i, &h, d);
        int ps = pod_shows((enum hardening_item)i, &h, p);
        const char *gap = hardening_gap("kubernetes", (enum hardening_item)i, &h);
        ASSERT_MSG(name != NULL, "an item without a name");
        ASSERT_MSG(ds >= 0 && ps >= 0, name); /* a new item: give it a check here */
        ASSERT_MSG(ds == 1, name);
        ASSERT_MSG(!hardening_gap("docker", (enum hardening_item)i, &h), name);
        ASSERT_MSG(!hardening_gap("podman", (enum hardening_item)i, &h), name);
        if (gap)
            ASSERT_MSG(ps == (pod_in_part[i] ? POD_PART : POD_NOTHING), name);
        else
            ASSERT_MSG(ps == POD_ALL, name);
    }
    cJSON_Delete(d);
    cJSON_Delete(p);
}

TEST(every_item_in_both_or_a_listed_gap)
{
    check_variant(0);
}

TEST(every_item_in_both_or_a_listed_gap_with_network_runtime_engine_seccomp)
{
    check_variant(1);
}

/* The keys each object of a body may have, by its path ("[]": any element
 * of an array): what the spec decides, and plumbing (image, stdin, the
 * pod's name and labels).  "*": a map of names (labels, Tmpfs paths) whose
 * contents the item checks above count.  An object with no row, or a key
 * not in its row, is something a renderer added on its own. */
struct keys {
    const char *path, *keys;
};

static const struct keys docker_keys[] = {
    {"", "Image Tty OpenStdin StdinOnce AttachStdin AttachStdout AttachStderr Labels HostConfig "
         "Entrypoint Cmd Env User WorkingDir NetworkDisabled"},
    {"Labels", "*"},
    {"HostConfig",
     "AutoRemove Memory MemorySwap NanoCpus PidsLimit Ulimits ReadonlyRootfs Tmpfs ShmSize "
     "NetworkMode CapDrop CapAdd SecurityOpt Privileged OomScoreAdj LogConfig Runtime"},
    {"HostConfig.Ulimits[]", "Name Soft Hard"},
    {"HostConfig.Tmpfs", "*"},
    {"HostConfig.LogConfig", "Type"},
};

static const struct keys pod_keys[] = {
    {"", "apiVersion kind metadata spec"},
    {"metadata", "generateName namespace labels annotations"},
    {"metadata.labels", "*"},
    {"metadata.annotations", "*"},
    {"spec",
     "restartPolicy terminationGracePeriodSeconds nodeName containers automountServiceAccountToken "
     "enableServiceLinks hostNetwork hostPID hostIPC runtimeClassName securityContext volumes"},
    {"spec.securityContext", "seccompProfile"},
    {"spec.securityContext.seccompProfile", "type"},
    {"spec.volumes[]", "name emptyDir"},
    {"spec.volumes[].emptyDir", "medium sizeLimit"},
    {"spec.containers[]",
     "name image imagePullPolicy stdin stdinOnce tty command workingDir env securityContext "
     "resources volumeMounts"},
    {"spec.containers[].env[]", "name value"},
    {"spec.containers[].securityContext",
     "runAsUser runAsGroup allowPrivilegeEscalation privileged readOnlyRootFilesystem "
     "capabilities"},
    {"spec.containers[].securityContext.capabilities", "drop add"},
    {"spec.containers[].resources", "limits requests"},
    {"spec.containers[].resources.limits", "memory cpu"},
    {"spec.containers[].resources.requests", "memory cpu"},
    {"spec.containers[].volumeMounts[]", "name mountPath"},
};

static int word_in(const char *list, const char *w)
{
    size_t n = strlen(w);

    for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* 1 when every object under o (at path) has a row in t and only its keys;
 * else 0 with what is not in bad. */
static int keys_known(const cJSON *o, const char *path, const struct keys *t, size_t nt, char *bad,
                      size_t badsz)
{
    const struct keys *row = NULL;
    const cJSON *it;
    char sub[200];

    if (cJSON_IsArray(o)) {
        snprintf(sub, sizeof(sub), "%s[]", path);
        cJSON_ArrayForEach(it, o)
            if (!keys_known(it, sub, t, nt, bad, badsz))
                return 0;
        return 1;
    }
    if (!cJSON_IsObject(o))
        return 1;
    for (size_t i = 0; i < nt && !row; i++)
        if (strcmp(t[i].path, path) == 0)
            row = &t[i];
    if (!row) {
        snprintf(bad, badsz, "an object at %s", path);
        return 0;
    }
    cJSON_ArrayForEach(it, o) {
        snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", it->string);
        if (strcmp(row->keys, "*") == 0 ? cJSON_IsObject(it) || cJSON_IsArray(it)
                                        : !word_in(row->keys, it->string)) {
            snprintf(bad, badsz, "%s", sub);
            return 0;
        }
        if (!keys_known(it, sub, t, nt, bad, badsz))
            return 0;
    }
    return 1;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A key one renderer adds on its own, outside the spec, anywhere in its
 * body, fails here. */
TEST(no_field_outside_the_spec)
{
    for (int variant = 0; variant < 2; variant++) {
        struct container_spec s = spec_of(variant);
        cJSON *d = docker_body(&s), *p = pod_body(&s);
        char bad[200] = "";
        ASSERT(d != NULL && p != NULL);
        ASSERT_MSG(keys_known(d, "", docker_keys, N(docker_keys), bad, sizeof(bad)), bad);
        ASSERT_MSG(keys_known(p, "", pod_keys, N(pod_keys), bad, sizeof(bad)), bad);
        cJSON_Delete(d);
        cJSON_Delete(p);
    }
}

/* The first MiB of the file at path, as a string; caller frees. */
static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    char *out = f ? calloc(1, 1 << 20) : NULL;

    if (out && fread(out, 1, (1 << 20) - 1, f) == 0)
        out[0] = '\0';
    if (f)
        fclose(f);
    return out;
}

/* Podman renders with docker.c's docker_create_body under its own
 * flavour, which enters the body only through seccomp_opt: SecurityOpt
 * names a file holding the profile that Docker sends inline.  So its body
 * is Docker's byte for byte once that one entry is put back, and the
 * checks of Docker's body above hold for it. */
TEST(podman_body_is_the_docker_body)
{
    for (int variant = 0; variant < 2; variant++) {
        struct container_spec s = spec_of(variant);
        cJSON *d = docker_body(&s), *p = engine_body("podman", &s);
        cJSON *dopt = cJSON_GetArrayItem(get(get(d, "HostConfig"), "SecurityOpt"), 1);
        cJSON *popt = cJSON_GetArrayItem(get(get(p, "HostConfig"), "SecurityOpt"), 1);
        char *dt, *pt, *file = NULL, *profile = seccomp_profile_json();
        int same;
        ASSERT(d != NULL && p != NULL && profile != NULL);
        ASSERT_EQ(!variant, popt != NULL); /* the profile: only for seccomp_own */
        if (popt) {
            ASSERT(cJSON_IsString(popt) && strncmp(popt->valuestring, "seccomp=/", 9) == 0);
            file = read_all(popt->valuestring + 8);
            ASSERT_STR(file, profile);
            cJSON_ReplaceItemInArray(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "HostConfig"),
                                                 "SecurityOpt"),
                1, cJSON_Duplicate(dopt, 0));
        }
        dt = cJSON_PrintUnformatted(d);
        pt = cJSON_PrintUnformatted(p);
        same = dt && pt && strcmp(dt, pt) == 0;
        free(dt);
        free(pt);
        free(file);
        free(profile);
        cJSON_Delete(d);
        cJSON_Delete(p);
        ASSERT_MSG(same, variant ? "engine seccomp" : "own seccomp");
    }
}

/* The tmpfs option string, as the hardening audit of the Docker suites
 * expects it. */
TEST(tmpfs_options)
{
    struct container_spec s = spec_of(0);
    struct hardening h;
    char o[160];

    hardening_from_spec(&h, &s);
    hardening_mount_options(&h.mounts[0], o, sizeof(o));
    ASSERT_STR(o, "rw,nosuid,nodev,exec,size=262144k,mode=1777");
    hardening_mount_options(&h.mounts[1], o, sizeof(o));
    ASSERT_STR(o, "rw,nosuid,nodev,noexec,size=65536k,mode=1777");
}

int main(void)
{
    static const struct test_case cases[] = {
        T(every_item_in_both_or_a_listed_gap),
        T(every_item_in_both_or_a_listed_gap_with_network_runtime_engine_seccomp),
        T(no_field_outside_the_spec),
        T(podman_body_is_the_docker_body),
        T(tmpfs_options),
    };
    return test_main("hardening", cases, sizeof(cases) / sizeof(cases[0]));
}
