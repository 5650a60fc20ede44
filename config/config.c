/* config.c - defaults, the key table and the libyaml loader.  YAML is read
 * as a document and walked; each scalar leaf is looked up by its dotted
 * path ("limits.max.timeout").  libyaml's problem_mark becomes file:line. */
#include "config.h"

#include "proto/proto.h"
#include "common/lane.h"
#include "common/strlist.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "backends/registry/registry.h"
#include "config_int.h"
#include "security/security.h"

enum ctype { C_STR, C_INT, C_DOUBLE, C_SECONDS, C_ENUM, C_BOOL };

struct ckey {
    const char *key;
    enum ctype type;
    double min, max;
    size_t off;
    size_t size;         /* strings */
    const char *choices; /* enums: "a|b|c" */
    const char *help;
};

#define O(f) offsetof(struct config, f)
#define S(f) sizeof(((struct config *)0)->f)
/* clang-format off */
#define LIMIT_KEYS(sect, field)                                                                  \
    {"limits." sect ".timeout", C_SECONDS, 0.1, 3600, O(field.timeout_ms), 0, NULL, "wall-clock limit of the run step, seconds"}, \
    {"limits." sect ".compile_timeout", C_SECONDS, 1, 3600, O(field.compile_timeout_ms), 0, NULL, "limit of the compile step, seconds"}, \
    {"limits." sect ".memory", C_INT, 16, 1048576, O(field.memory_mb), 0, NULL, "memory in MB (swap is not allowed)"}, \
    {"limits." sect ".cpus", C_DOUBLE, 0.01, 256, O(field.cpus), 0, NULL, "CPUs (fractions allowed)"}, \
    {"limits." sect ".pids", C_INT, 8, 65536, O(field.pids), 0, NULL, "processes and threads"}, \
    {"limits." sect ".output", C_INT, 1024, (double)PROTO_MAX_OUTPUT, O(field.output_bytes), 0, NULL, "stdout+stderr bytes kept before output_limit"}, \
    {"limits." sect ".file_size", C_INT, 1, 1048576, O(field.file_size_mb), 0, NULL, "largest file a job may write, MB"}, \
    {"limits." sect ".nofile", C_INT, 16, 1048576, O(field.nofile), 0, NULL, "open files"}, \
    {"limits." sect ".nproc", C_INT, 16, 1048576, O(field.nproc), 0, NULL, "RLIMIT_NPROC of the sandbox uid"}, \
    {"limits." sect ".work_size", C_INT, 1, 1048576, O(field.work_mb), 0, NULL, "/work tmpfs, MB"}, \
    {"limits." sect ".tmp_size", C_INT, 1, 1048576, O(field.tmp_mb), 0, NULL, "/tmp and /var/tmp tmpfs, MB"}

static const struct ckey keys[] = {
    {"backend.name", C_STR, 0, 0, O(backend), S(backend), NULL, "container engine"},
    {"backend.host", C_STR, 0, 0, O(backend_host), S(backend_host), NULL, "engine address (unix:///path, tcp://host:port)"},
    {"backend.runtime", C_STR, 0, 0, O(runtime), S(runtime), NULL, "OCI runtime (runsc for gVisor)"},
    {"backend.tls_verify", C_ENUM, 0, 0, O(kube.tls_verify), S(kube.tls_verify), "true|false", "TLS to a tcp:// engine: true checks its certificate against ca.pem, false does not (default: $DOCKER_TLS_VERIFY, $DOCKER_TLS as the docker CLI)"},
    {"backend.cert_path", C_STR, 0, 0, O(kube.cert_path), S(kube.cert_path), NULL, "directory of ca.pem, cert.pem, key.pem (default: $DOCKER_CERT_PATH, ~/.docker)"},
    {"backend.seccomp", C_ENUM, 0, 0, O(seccomp), S(seccomp), "builtin|engine", "seccomp profile: the project's own, or the engine's default"},
    {"kubernetes.kubeconfig", C_STR, 0, 0, O(kube.client_config), S(kube.client_config), NULL, "kubeconfig file (default $KUBECONFIG, the pod's service account, ~/.kube/config)"},
    {"kubernetes.namespace", C_STR, 0, 0, O(kube.ns), S(kube.ns), NULL, "namespace of the sandbox pods (default: the kubeconfig context's, the pod's own, default)"},
    {"kubernetes.node", C_STR, 0, 0, O(kube.node), S(kube.node), NULL, "spec.nodeName of the sandbox pods (default: the scheduler picks)"},
    {"kubernetes.image_pull_policy", C_ENUM, 0, 0, O(kube.pull_policy), S(kube.pull_policy), "IfNotPresent|Never|Always", "imagePullPolicy of the sandbox pods"},
    {"kubernetes.pod_start_timeout", C_SECONDS, 1, 3600, O(kube.start_timeout_ms), 0, NULL, "pod created to running"},
    LIMIT_KEYS("defaults", defaults),
    LIMIT_KEYS("max", max),
    {"sandbox.uid", C_INT, 1, 65533, O(sandbox_uid), 0, NULL, "uid jobs run as"},
    {"sandbox.backstop_grace", C_SECONDS, 1, 600, O(backstop_grace_ms), 0, NULL, "extra wait before the worker destroys a silent container"},
    {"sandbox.start_timeout", C_SECONDS, 1, 600, O(start_timeout_ms), 0, NULL, "container start to agent ready"},
    {"redis.url", C_STR, 0, 0, O(redis_url), S(redis_url), NULL, "redis[s]://[user:pass@]host:port/db, redis-sentinel://, redis-cluster://, unix:///path"},
    {"redis.prefix", C_STR, 0, 0, O(redis_prefix), S(redis_prefix), NULL, "key prefix"},
    {"worker.slots", C_INT, 1, 256, O(slots), 0, NULL, "jobs run at once"},
    {"worker.lease", C_SECONDS, 2, 3600, O(lease_ms), 0, NULL, "a silent worker's jobs are reclaimed after this"},
    {"worker.heartbeat_ttl", C_SECONDS, 1, 600, O(heartbeat_ttl_ms), 0, NULL, "heartbeat key lifetime"},
    {"worker.drain", C_SECONDS, 0, 3600, O(drain_ms), 0, NULL, "time to finish in-flight jobs on SIGTERM"},
    {"worker.block", C_SECONDS, 0.1, 10, O(block_ms), 0, NULL, "XREADGROUP BLOCK"},
    {"worker.priority_weights", C_STR, 0, 0, O(priority_weights), S(priority_weights), NULL, "weights of the classes high,normal,low (e.g. 8,4,1), or strict"},
    {"worker.metrics_addr", C_STR, 0, 0, O(metrics_addr), S(metrics_addr), NULL, "Prometheus endpoint HOST:PORT or :PORT (\"\": off)"},
    {"pool.min_idle", C_INT, 0, 64, O(pool_min_idle), 0, NULL, "warm containers kept per key in use"},
    {"pool.max_size", C_INT, 1, 256, O(pool_max_size), 0, NULL, "containers at most"},
    {"pool.max_uses", C_INT, 1, 1000000, O(pool_max_uses), 0, NULL, "jobs per container"},
    {"pool.max_age", C_SECONDS, 1, 604800, O(pool_max_age_ms), 0, NULL, "container lifetime"},
    {"pool.idle_timeout", C_SECONDS, 1, 604800, O(pool_idle_timeout_ms), 0, NULL, "idle container lifetime"},
    {"pool.wait", C_SECONDS, 0, 3600, O(pool_wait_ms), 0, NULL, "wait for a container when full"},
    {"pool.on_exhausted", C_ENUM, 0, 0, O(pool_on_exhausted), S(pool_on_exhausted), "wait|fail_fast|temporary", "when every container is busy"},
    {"artifacts.max_count", C_INT, 1, 1000, O(artifact_max_count), 0, NULL, "files collected per job"},
    {"artifacts.max_file", C_INT, 1, (double)(PROTO_MAX_ARTIFACTS >> 20), O(artifact_max_file_mb), 0, NULL, "MB per collected file"},
    {"artifacts.max_total", C_INT, 1, (double)(PROTO_MAX_ARTIFACTS >> 20), O(artifact_max_total_mb), 0, NULL, "MB collected per job"},
    {"jobs.result_ttl", C_INT, 1, 2592000, O(result_ttl_s), 0, NULL, "seconds results are kept"},
    {"jobs.max_attempts", C_INT, 1, 20, O(max_attempts), 0, NULL, "tries after infrastructure failures"},
    {"jobs.allow_network", C_BOOL, 0, 1, O(allow_network), 0, NULL, "may a job set network: true"},
    {"jobs.fresh_interpreter", C_BOOL, 0, 1, O(fresh_interpreter), 0, NULL, "start a new interpreter per job instead of forking the image's zygote or taking a node started ahead (jobs may say otherwise)"},
    {"sessions.max", C_INT, 0, 256, O(sessions_max), 0, NULL, "sessions a worker holds at once (0: sessions off)"},
    {"sessions.idle_ttl", C_SECONDS, 1, 86400, O(session_idle_ms), 0, NULL, "a session without a call this long is ended"},
    {"sessions.max_lifetime", C_SECONDS, 1, 604800, O(session_life_ms), 0, NULL, "a session is ended this long after its first call"},
    {"jobs.image_prefix", C_STR, 0, 0, O(image_prefix), S(image_prefix), NULL, "images a job may name"},
    {"libraries.enabled", C_BOOL, 0, 1, O(libraries_enabled), 0, NULL, "may jobs list libraries to install"},
    {"libraries.network", C_STR, 0, 0, O(libraries_network), S(libraries_network), NULL, "install step network: egress (filtered internet), none, or an engine network name"},
    {"libraries.timeout", C_SECONDS, 1, 3600, O(libraries_timeout_ms), 0, NULL, "limit of the install step, seconds"},
    {"libraries.max", C_INT, 1, 64, O(libraries_max), 0, NULL, "library names per job"},
    {"images.debian_mirror", C_STR, 0, 0, O(debian_mirror), S(debian_mirror), NULL, "mirror for debootstrap and apt"},
    {"images.ca_certificates", C_STR, 0, 0, O(ca_dir), S(ca_dir), NULL, "directory of extra CA certificates (*.crt) trusted inside the images; \"\" for none"},
    {"images.base", C_STR, 0, 0, O(base_image), S(base_image), NULL, "registry base image tried first"},
    {"security.default_policy", C_STR, 0, 0, O(default_policy), S(default_policy), NULL, "policy of jobs that name none"},
    {"security.minimum", C_STR, 0, 0, O(minimum_policy), S(minimum_policy), NULL, "policy every job also gets"},
    {"log_level", C_ENUM, 0, 0, O(log_level), S(log_level), "debug|info|warn|error", "log level"},
};
/* clang-format on */

static void limits_defaults(struct limits *l, int max)
{
    l->timeout_ms = max ? 300000 : 10000;
    l->compile_timeout_ms = max ? 600000 : 60000;
    l->memory_mb = max ? 8192 : 512;
    l->cpus = max ? 2 : 1;
    l->pids = max ? 4096 : 256;
    l->output_bytes = max ? (64 << 20) : (1 << 20);
    l->file_size_mb = max ? 1024 : 64;
    l->nofile = max ? 65536 : 1024;
    l->nproc = max ? 65536 : 4096;
    l->work_mb = max ? 8192 : 256;
    l->tmp_mb = max ? 8192 : 256;
}

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->backend, sizeof(c->backend), "docker");
    limits_defaults(&c->defaults, 0);
    limits_defaults(&c->max, 1);
    c->sandbox_uid = 10001;
    c->result_ttl_s = 86400;
    c->artifact_max_count = 32;
    c->artifact_max_file_mb = 16;
    c->artifact_max_total_mb = 32;
    c->libraries_enabled = 1;
    snprintf(c->libraries_network, sizeof(c->libraries_network), "egress");
    c->libraries_timeout_ms = 180000;
    c->libraries_max = 16;
    snprintf(c->redis_url, sizeof(c->redis_url), "redis://127.0.0.1:6379");
    snprintf(c->redis_prefix, sizeof(c->redis_prefix), "llmsb");
    c->slots = 2;
    c->lease_ms = 30000;
    c->heartbeat_ttl_ms = 10000;
    c->drain_ms = 25000;
    c->block_ms = 2000;
    snprintf(c->priority_weights, sizeof(c->priority_weights), "%s", LANE_WEIGHTS_DEFAULT);
    c->pool_min_idle = 1;
    c->pool_max_size = 0; /* 0: slots + 1 */
    c->pool_max_uses = 200;
    c->pool_max_age_ms = 3600000;
    c->pool_idle_timeout_ms = 300000;
    c->pool_wait_ms = 60000;
    c->sessions_max = 8;
    c->session_idle_ms = 600000;
    c->session_life_ms = 3600000;
    snprintf(c->pool_on_exhausted, sizeof(c->pool_on_exhausted), "wait");
    snprintf(c->seccomp, sizeof(c->seccomp), "builtin");
    snprintf(c->kube.pull_policy, sizeof(c->kube.pull_policy), "IfNotPresent");
    c->kube.start_timeout_ms = 120000;
    c->max_attempts = 3;
    snprintf(c->image_prefix, sizeof(c->image_prefix), "llmsb/");
    snprintf(c->default_policy, sizeof(c->default_policy), "minimal");
    snprintf(c->minimum_policy, sizeof(c->minimum_policy), "minimal");
    c->backstop_grace_ms = 10000;
    c->start_timeout_ms = 60000;
    snprintf(c->debian_mirror, sizeof(c->debian_mirror), "http://deb.debian.org/debian");
    snprintf(c->base_image, sizeof(c->base_image), "debian:bookworm-slim");
    snprintf(c->ca_dir, sizeof(c->ca_dir), "/usr/local/share/ca-certificates");
    snprintf(c->log_level, sizeof(c->log_level), "info");
}

/* Keys of earlier releases, still read with a warning. */
static const struct {
    const char *old, *now;
} renamed[] = {
    {"backend", "backend.name"}, /* the scalar form: backend: docker */
    {"docker.host", "backend.host"},
    {"docker.runtime", "backend.runtime"},
};

/* Stores val in the table row k; errors name the key, the value and the
 * bounds. */
static int set_typed(struct config *c, const struct ckey *k, const char *val, const char *file,
                     size_t line, struct llmsb_err *err)
{
    char *base = (char *)c;
    long long ll;
    double d;
    int b;

    switch (k->type) {
    case C_ENUM:
        for (const char *p = k->choices; *p;) {
            size_t n = strcspn(p, "|");
            if (n == strlen(val) && strncmp(p, val, n) == 0) {
                snprintf(base + k->off, k->size, "%s", val);
                return 0;
            }
            p += n + (p[n] == '|');
        }
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: %s must be one of %s (got \"%s\")",
                             file, line, k->key, k->choices, val);
    case C_BOOL:
        if (parse_bool(val, &b) != 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: %s must be true or false (got \"%s\")", file, line,
                                 k->key, val);
        *(int *)(base + k->off) = b;
        return 0;
    case C_STR:
        if (strlen(val) >= k->size)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: %s is longer than %zu bytes",
                                 file, line, k->key, k->size - 1);
        snprintf(base + k->off, k->size, "%s", val);
        return 0;
    case C_INT:
        if (parse_ll(val, (long long)k->min, (long long)k->max, &ll) != 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: %s must be an integer between %.0f and %.0f (got \"%s\")",
                                 file, line, k->key, k->min, k->max, val);
        *(int64_t *)(base + k->off) = ll;
        return 0;
    case C_DOUBLE:
    case C_SECONDS:
        if (parse_double(val, k->min, k->max, &d) != 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: %s must be a number between %g and %g (got \"%s\")", file,
                                 line, k->key, k->min, k->max, val);
        if (k->type == C_DOUBLE)
            *(double *)(base + k->off) = d;
        else
            *(int64_t *)(base + k->off) = (int64_t)(d * 1000 + 0.5);
        return 0;
    }
    return LLMSB_ERR_INVALID;
}

/* Keys named after a language: libraries.<registry key> and
 * images.<language>. Returns 1 when key is not one of them. */
static int set_language_key(struct config *c, const char *key, const char *val, const char *file,
                            size_t line, struct llmsb_err *err)
{
    const struct language *l;

    if (strncmp(key, "libraries.", 10) == 0 && (l = language_by_registry_key(key + 10))) {
        if (strlen(val) >= sizeof(c->registry[0]))
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: %s is longer than %zu bytes",
                                 file, line, key, sizeof(c->registry[0]) - 1);
        snprintf(c->registry[language_index(l)], sizeof(c->registry[0]), "%s", val);
        return 0;
    }
    if (strncmp(key, "images.", 7) == 0 && (l = language_find(key + 7)) != NULL) {
        if (!*val || strlen(val) >= sizeof(c->images[0]))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: %s must be an image name of 1..255 bytes", file, line,
                                 key);
        snprintf(c->images[language_index(l)], sizeof(c->images[0]), "%s", val);
        return 0;
    }
    return 1;
}

static int set_key(struct config *c, const char *key, const char *val, const char *file,
                   size_t line, struct llmsb_err *err)
{
    int rc;

    for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
        if (strcmp(key, renamed[i].old) == 0) {
            if (strcmp(key, "backend") != 0)
                log_warn("%s:%zu: %s is deprecated; write %s", file, line, key, renamed[i].now);
            key = renamed[i].now;
        }
    if (strcmp(key, "backend.name") == 0 && !backend_known(val))
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: backend.name must be one of %s (got \"%s\")", file, line,
                             backend_names(), val);
    if ((rc = set_language_key(c, key, val, file, line, err)) <= 0)
        return rc;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(keys[i].key, key) == 0)
            return set_typed(c, &keys[i], val, file, line, err);
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: unknown key \"%s\"", file, line, key);
}

/* security.policies.<name>: a policy map, kept as JSON text and compiled
 * per language when a job uses it (security/). */
static int add_policy(struct config *c, struct yaml_walk *w, yaml_node_t *node, const char *name,
                      int depth)
{
    struct llmsb_err *err = w->err;
    const char *file = w->file;
    size_t line = node->start_mark.line + 1;
    cJSON *j;
    int i;

    if (!*name || strlen(name) >= sizeof(c->policy_names[0]) || node->type != YAML_MAPPING_NODE)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: security.policies.%s must be a map "
                             "(extends, threshold, patterns, "
                             "restricted_modules)",
                             file, line, name);
    for (i = 0; i < c->npolicies; i++)
        if (strcmp(c->policy_names[i], name) == 0)
            break;
    if (i == CONFIG_MAX_POLICIES)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: more than %d custom policies", file,
                             line, CONFIG_MAX_POLICIES);
    if (!(j = config_yaml_to_json(w, node, depth)))
        return err->code;
    free(c->policy_json[i]);
    c->policy_json[i] = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    snprintf(c->policy_names[i], sizeof(c->policy_names[0]), "%s", name);
    if (i == c->npolicies)
        c->npolicies++;
    return 0;
}

/* pool.preinstall.<lang>: a list of library names for that language's
 * image (checked like a job's libraries). */
static int add_preinstall(struct config *c, struct yaml_walk *w, yaml_node_t *node,
                          const char *lang)
{
    const struct language *l = language_find(lang);
    struct llmsb_err *err = w->err;
    const char *file = w->file;
    size_t line = node->start_mark.line + 1;
    size_t li;

    if (!l || node->type != YAML_SEQUENCE_NODE)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: pool.preinstall.%s must be a list "
                             "of library names under a language's name",
                             file, line, lang);
    if (!l->preinstall[0])
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "%s:%zu: pool.preinstall.%s: %s libraries "
                             "cannot be baked into an image",
                             file, line, lang, l->name);
    li = language_index(l);
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
         it++) {
        yaml_node_t *v = yaml_document_get_node(w->doc, *it);
        const char *name =
            v && v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : "";
        if (!language_library_ok(l, name))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s:%zu: pool.preinstall.%s: \"%.60s\" "
                                 "is not a package name",
                                 file, v ? v->start_mark.line + 1 : line, lang, name);
        if (strlist_add(&c->preinstall[li], &c->npreinstall[li], name, strlen(name)) != 0)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu: pool.preinstall.%s: too many",
                                 file, line, lang);
    }
    return 0;
}

int config_preinstalled(const struct config *c, const struct language *l, char *const *libs,
                        size_t n)
{
    size_t li = language_index(l);

    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < c->npreinstall[li] && strcmp(c->preinstall[li][k], libs[i]) != 0)
            k++;
        if (k == c->npreinstall[li])
            return 0;
    }
    return n > 0;
}

int config_registry_env(const struct config *c, const struct language *l, char out[][320])
{
    const char *url = c->registry[language_index(l)];
    int n = 0;

    if (!l->registry_env || !url[0])
        return 0;
    snprintf(out[n++], 320, "%s=%s", l->registry_env, url);
    if (l->registry_trust_env && strncmp(url, "http://", 7) == 0) {
        size_t hl = strcspn(url + 7, "/:");
        snprintf(out[n++], 320, "%s=%.*s", l->registry_trust_env, (int)hl, url + 7);
    }
    return n;
}

void config_release(struct config *c)
{
    for (int i = 0; i < c->npolicies; i++)
        free(c->policy_json[i]);
    c->npolicies = 0;
    memset(c->policy_json, 0, sizeof(c->policy_json));
    for (int i = 0; i < CONFIG_MAX_LANGS; i++) {
        for (size_t k = 0; k < c->npreinstall[i]; k++)
            free(c->preinstall[i][k]);
        free(c->preinstall[i]);
        c->preinstall[i] = NULL;
        c->npreinstall[i] = 0;
    }
}

int config_key_min(const char *key, double *min)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(keys[i].key, key) == 0) {
            *min = keys[i].min;
            return 0;
        }
    return LLMSB_ERR_NOTFOUND;
}

const char *config_policy(const struct config *c, const char *name)
{
    for (int i = 0; i < c->npolicies; i++)
        if (strcmp(c->policy_names[i], name) == 0)
            return c->policy_json[i];
    return NULL;
}

static int walk(struct config *c, struct yaml_walk *w, yaml_node_t *node, const char *prefix,
                int depth)
{
    size_t line = node ? node->start_mark.line + 1 : 0;
    int rc;

    if ((rc = yaml_walk_enter(w, node, depth)) != 0)
        return rc;
    if (node->type == YAML_SCALAR_NODE) {
        if (!*prefix)
            return llmsb_err_set(w->err, LLMSB_ERR_INVALID, "%s:%zu: the config must be a mapping",
                                 w->file, line);
        return set_key(c, prefix, (const char *)node->data.scalar.value, w->file, line, w->err);
    }
    if (strncmp(prefix, "security.policies.", 18) == 0 && !strchr(prefix + 18, '.'))
        return add_policy(c, w, node, prefix + 18, depth);
    if (strncmp(prefix, "pool.preinstall.", 16) == 0 && !strchr(prefix + 16, '.'))
        return add_preinstall(c, w, node, prefix + 16);
    if (node->type != YAML_MAPPING_NODE)
        return llmsb_err_set(w->err, LLMSB_ERR_INVALID, "%s:%zu: %s: lists are not allowed here",
                             w->file, line, *prefix ? prefix : "top level");
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        const char *key = yaml_walk_key(w, node, p);
        char path[256];

        if (!key)
            return w->err->code;
        if (snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", key) >=
            (int)sizeof(path))
            return llmsb_err_set(w->err, LLMSB_ERR_INVALID, "%s:%zu: unknown key \"%.60s...\"",
                                 w->file, line, path);
        if ((rc = walk(c, w, yaml_document_get_node(w->doc, p->value), path, depth + 1)) != 0)
            return rc;
    }
    return 0;
}

static int check_limits(const struct config *c, const char *file, struct llmsb_err *err)
{
    const struct limits *d = &c->defaults, *m = &c->max;
#define CHECK(f, name)                               \
    if ((double)d->f > (double)m->f)                 \
        return llmsb_err_set(err, LLMSB_ERR_INVALID, \
                             "%s: limits.defaults." name " is above limits.max." name, file);
    CHECK(timeout_ms, "timeout")
    CHECK(compile_timeout_ms, "compile_timeout")
    CHECK(memory_mb, "memory")
    CHECK(cpus, "cpus")
    CHECK(pids, "pids")
    CHECK(output_bytes, "output")
    CHECK(file_size_mb, "file_size")
    CHECK(nofile, "nofile")
    CHECK(nproc, "nproc")
    CHECK(work_mb, "work_size")
    CHECK(tmp_mb, "tmp_size")
#undef CHECK
    return 0;
}

int config_load_string(struct config *c, const char *yaml, size_t len, const char *name,
                       struct llmsb_err *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_node_t *root;
    struct yaml_walk w;
    int rc = 0, wt[LANE_CLASSES], strict;

    if (!yaml_parser_initialize(&parser))
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "%s: cannot start the YAML parser", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s:%zu:%zu: %s", name,
                           parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                           parser.problem ? parser.problem : "YAML syntax error");
        yaml_parser_delete(&parser);
        return rc;
    }
    root = yaml_document_get_root_node(&doc);
    yaml_walk_init(&w, &doc, name, len, CONFIG_MAX_DEPTH, err);
    if (root && !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0))
        rc = walk(c, &w, root, "", 0);
    if (rc == 0)
        rc = check_limits(c, name, err);
    if (rc == 0 && lane_weights_parse(c->priority_weights, wt, &strict, err) != 0) {
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", err->msg);
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: worker.priority_weights: %s", name, why);
    }

    if (rc == 0 && !sec_preset_exists(c->default_policy) && !config_policy(c, c->default_policy))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: security.default_policy \"%s\" is neither "
                           "a preset (%s) nor in security.policies",
                           name, c->default_policy, sec_preset_names());
    if (rc == 0 && strcmp(c->minimum_policy, "none") != 0 &&
        !sec_preset_exists(c->minimum_policy) && !config_policy(c, c->minimum_policy))
        rc = llmsb_err_set(err, LLMSB_ERR_INVALID,
                           "%s: security.minimum \"%s\" is neither "
                           "\"none\", a preset nor in security.policies",
                           name, c->minimum_policy);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

int config_load(struct config *c, const char *path, struct llmsb_err *err)
{
    struct buf b;
    char chunk[8192];
    size_t n;
    FILE *f = fopen(path, "re");
    int rc = 0;

    if (!f)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "config: cannot open \"%s\": %s", path,
                             strerror(errno));
    buf_init(&b, 4 << 20);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (buf_append(&b, chunk, n) != 0) {
            rc = llmsb_err_set(err, LLMSB_ERR_LIMIT, "config: \"%s\" is over 4 MiB", path);
            break;
        }
    fclose(f);
    if (rc == 0)
        rc = config_load_string(c, b.data ? b.data : "", b.len, path, err);
    if (rc == 0)
        snprintf(c->path, sizeof(c->path), "%s", path);
    buf_release(&b);
    return rc;
}

int config_load_auto(struct config *c, const char *explicit_path, struct llmsb_err *err)
{
    static const char *candidates[] = {"llm-sandbox.yaml", "/etc/llm-sandbox/config.yaml"};
    const char *env = getenv("LLMSB_CONFIG");

    if (explicit_path && *explicit_path)
        return config_load(c, explicit_path, err);
    if (env && *env)
        return config_load(c, env, err);
    for (size_t i = 0; i < 2; i++)
        if (access(candidates[i], R_OK) == 0)
            return config_load(c, candidates[i], err);
    return 0;
}

const char *config_image(const struct config *c, const struct language *l, char *out, size_t outsz)
{
    size_t i = language_index(l);
    if (i < CONFIG_MAX_LANGS && c->images[i][0])
        snprintf(out, outsz, "%s", c->images[i]);
    else
        snprintf(out, outsz, "%s:latest", l->image);
    return out;
}
