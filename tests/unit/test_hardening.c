/* test_hardening.c - one hardening spec (backends/hardening.h), two
 * renderers: the same container_spec rendered as Docker's create body
 * (Podman sends the same) and as the Kubernetes pod, every item of the spec
 * found in both or named in hardening_gap's table, every gap really one,
 * and no field in either body that no item accounts for.  A mount, a
 * capability or a limit added to one renderer only fails here. */
#include "test.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "backends/docker/internal.h"
#include "backends/hardening.h"
#include "backends/kubernetes/internal.h"

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

static cJSON *docker_body(const struct container_spec *s)
{
    struct docker_flavor fl = {.name = "docker"}; /* the profile inline, as Docker */
    char *text = docker_create_body(&fl, s);
    cJSON *j = text ? cJSON_Parse(text) : NULL;

    free(text);
    return j;
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

/* 1 when arr holds exactly the n strings of want, in any order. */
static int strings_are(const cJSON *arr, const char *const *want, int n)
{
    const cJSON *it;
    int found = 0;

    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n)
        return 0;
    cJSON_ArrayForEach(it, arr) {
        for (int i = 0; i < n; i++)
            if (str_is(it, want[i])) {
                found++;
                break;
            }
    }
    return found == n;
}

static int array_has(const cJSON *arr, const char *prefix)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, arr) {
        if (cJSON_IsString(it) && strncmp(it->valuestring, prefix, strlen(prefix)) == 0)
            return 1;
    }
    return 0;
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

/* Whether Docker's create body shows item of h: 1 yes, 0 no, -1 this test
 * has no check for the item (a new item must get one). */
static int docker_shows(enum hardening_item item, const struct hardening *h, const cJSON *b)
{
    const cJSON *hc = get(b, "HostConfig"), *v, *it;
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
            n += array_has(get(b, "Env"), want);
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
        return array_has(get(hc, "SecurityOpt"), "no-new-privileges") == h->no_new_privileges;
    case HARDENING_ITEM_NOT_PRIVILEGED:
        return bool_is(get(hc, "Privileged"), h->privileged);
    case HARDENING_ITEM_SECCOMP:
        return array_has(get(hc, "SecurityOpt"), "seccomp={") == h->seccomp_own;
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
            if (m->kind == HARDENING_SHM) /* the engine's own: noexec,nosuid,nodev,1777 */
                n += m->flags == (HARDENING_NOEXEC | HARDENING_NOSUID | HARDENING_NODEV) &&
                     m->mode == 01777;
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
        return n == h->nmounts && cJSON_GetArraySize(get(c, "volumeMounts")) == h->nmounts &&
               cJSON_GetArraySize(get(spec, "volumes")) == h->nmounts;
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

/* Every item: Docker shows it; the pod shows it or hardening_gap names
 * it, and then the pod really does not (a stale gap is a difference that
 * could have been removed). */
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
            ASSERT_MSG(ps == 0, name);
        else
            ASSERT_MSG(ps == 1, name);
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

/* The fields of each body that the spec does not decide (plumbing). */
static const char *const docker_plumbing[] = {
    "Image",        "Tty",          "OpenStdin", "StdinOnce",  "AttachStdin",
    "AttachStdout", "AttachStderr", "Labels",    "AutoRemove", "HostConfig"};
static const char *const docker_spec_fields[] = {
    "Entrypoint", "Cmd",         "Env",         "User",      "WorkingDir", "NetworkDisabled",
    "Memory",     "MemorySwap",  "NanoCpus",    "PidsLimit", "Ulimits",    "ReadonlyRootfs",
    "Tmpfs",      "ShmSize",     "NetworkMode", "CapDrop",   "CapAdd",     "SecurityOpt",
    "Privileged", "OomScoreAdj", "LogConfig",   "Runtime"};
static const char *const pod_plumbing[] = {"restartPolicy",
                                           "terminationGracePeriodSeconds",
                                           "nodeName",
                                           "containers",
                                           "name",
                                           "image",
                                           "imagePullPolicy",
                                           "stdin",
                                           "stdinOnce",
                                           "tty"};
static const char *const pod_spec_fields[] = {"automountServiceAccountToken",
                                              "enableServiceLinks",
                                              "hostNetwork",
                                              "hostPID",
                                              "hostIPC",
                                              "runtimeClassName",
                                              "securityContext",
                                              "volumes",
                                              "command",
                                              "workingDir",
                                              "env",
                                              "resources",
                                              "volumeMounts",
                                              "runAsUser",
                                              "runAsGroup",
                                              "allowPrivilegeEscalation",
                                              "privileged",
                                              "readOnlyRootFilesystem",
                                              "capabilities"};

static int listed(const char *key, const char *const *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, a[i]) == 0)
            return 1;
    return 0;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int docker_key_known(const char *k)
{
    return listed(k, docker_plumbing, N(docker_plumbing)) ||
           listed(k, docker_spec_fields, N(docker_spec_fields));
}

static int pod_key_known(const char *k)
{
    return listed(k, pod_plumbing, N(pod_plumbing)) ||
           listed(k, pod_spec_fields, N(pod_spec_fields));
}

/* A field one renderer adds on its own, outside the spec, fails here. */
TEST(no_field_outside_the_spec)
{
    for (int variant = 0; variant < 2; variant++) {
        struct container_spec s = spec_of(variant);
        cJSON *d = docker_body(&s), *p = pod_body(&s);
        const cJSON *spec = get(p, "spec"), *c, *it;
        ASSERT(d != NULL && p != NULL);
        c = cJSON_GetArrayItem(get(spec, "containers"), 0);
        cJSON_ArrayForEach(it, d)
            ASSERT_MSG(docker_key_known(it->string), it->string);
        cJSON_ArrayForEach(it, get(d, "HostConfig"))
            ASSERT_MSG(docker_key_known(it->string), it->string);
        cJSON_ArrayForEach(it, spec)
            ASSERT_MSG(pod_key_known(it->string), it->string);
        cJSON_ArrayForEach(it, c)
            ASSERT_MSG(pod_key_known(it->string), it->string);
        cJSON_ArrayForEach(it, get(c, "securityContext"))
            ASSERT_MSG(pod_key_known(it->string), it->string);
        cJSON_Delete(d);
        cJSON_Delete(p);
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
        T(tmpfs_options),
    };
    return test_main("hardening", cases, sizeof(cases) / sizeof(cases[0]));
}
