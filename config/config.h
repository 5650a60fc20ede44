/* config.h - the one configuration struct and its YAML loader.  Every key
 * is a row of one table {key, type, min, max, default}; unknown keys and
 * out-of-range values are errors that carry file:line and the bounds. */
#ifndef LLMSB_CONFIG_H
#define LLMSB_CONFIG_H

#include <stdint.h>
#include "backends/opts.h"
#include "common/common.h"
#include "languages/languages.h"

#define CONFIG_MAX_LANGS LANG_MAX
#define CONFIG_MAX_POLICIES 16
#define CONFIG_MAX_DEPTH 12 /* YAML nesting (policies hold lists of maps) */

struct limits {
    int64_t timeout_ms;
    int64_t compile_timeout_ms;
    int64_t memory_mb;
    double cpus;
    int64_t pids;
    int64_t output_bytes; /* stdout + stderr cap */
    int64_t file_size_mb; /* RLIMIT_FSIZE */
    int64_t nofile;
    int64_t nproc;
    int64_t work_mb; /* /work tmpfs */
    int64_t tmp_mb;  /* /tmp and /var/tmp tmpfs */
};

struct config {
    char path[512];                     /* the file loaded, "" for none */
    char backend[32];                   /* backend.name: the container engine */
    char backend_host[256];             /* "" = the backend's default address */
    char runtime[64];                   /* "" = engine default (runc); "runsc" = gVisor */
    char seccomp[16];                   /* "builtin" (backends/seccomp.h) or "engine" */
    struct backend_opts kube;           /* kubernetes.*, backend.tls_verify, backend.cert_path */
    char images[CONFIG_MAX_LANGS][256]; /* per languages[] index; "" = default */
    struct limits defaults;
    struct limits max;
    int64_t sandbox_uid;
    int64_t backstop_grace_ms; /* worker waits timeout + this before killing */
    int64_t start_timeout_ms;  /* container start to agent hello */
    char redis_url[256];
    char redis_prefix[64];
    int64_t slots;
    int64_t lease_ms; /* a job's stream entry is reclaimable after this idle */
    int64_t heartbeat_ttl_ms;
    int64_t drain_ms;
    int64_t block_ms;
    char priority_weights[32]; /* worker.priority_weights: "8,4,1" or "strict" */
    char metrics_addr[128];    /* worker.metrics_addr: "" = no Prometheus endpoint */
    int64_t pool_min_idle;
    int64_t pool_max_size;
    int64_t pool_max_uses;
    int64_t pool_max_age_ms;
    int64_t pool_idle_timeout_ms;
    int64_t pool_wait_ms;
    int64_t sessions_max;    /* sessions held at once; 0: off */
    int64_t session_idle_ms; /* ended after this long without a call */
    int64_t session_life_ms; /* ended this long after the first call */
    char pool_on_exhausted[16];
    int64_t artifact_max_count;
    int64_t artifact_max_file_mb;
    int64_t artifact_max_total_mb;
    int64_t result_ttl_s;
    int64_t max_attempts;
    int allow_network;       /* may a job ask for network */
    int fresh_interpreter;   /* default of the job field: no zygote */
    char image_prefix[64];   /* jobs may name images that start with this */
    char default_policy[40]; /* preset or custom policy for jobs that name none */
    char minimum_policy[40]; /* applied to every job as well; "none" = off */
    int npolicies;
    char policy_names[CONFIG_MAX_POLICIES][40];
    char *policy_json[CONFIG_MAX_POLICIES]; /* custom policies as JSON text */
    /* pool.preinstall.<lang>: libraries baked into that language's image
     * (per languages[] index; NULL-terminated, owned) */
    char **preinstall[CONFIG_MAX_LANGS];
    size_t npreinstall[CONFIG_MAX_LANGS];
    int libraries_enabled;      /* may jobs list libraries */
    char libraries_network[64]; /* install step: "egress", "none" or a network name */
    int64_t libraries_timeout_ms;
    int64_t libraries_max; /* names per job */
    /* libraries.<registry_key of a language>: its installer's registry,
     * per languages[] index; "" = the installer's default */
    char registry[CONFIG_MAX_LANGS][256];
    char debian_mirror[256];
    char base_image[128]; /* registry base tried first */
    char ca_dir[256];     /* extra CA certificates (*.crt) baked into images */
    char log_level[16];
};

void config_defaults(struct config *c);
/* Frees what loading allocated (custom policies); c is then defaults-ready. */
void config_release(struct config *c);
/* Loads path over the defaults. Errors look like "file:line: message". */
int config_load(struct config *c, const char *path, struct llmsb_err *err);
/* Loads from a YAML string (for tests); name is used in messages. */
int config_load_string(struct config *c, const char *yaml, size_t len, const char *name,
                       struct llmsb_err *err);
/* Resolves the config file: explicit path, $LLMSB_CONFIG, ./llm-sandbox.yaml,
 * /etc/llm-sandbox/config.yaml; none found is fine (defaults). */
int config_load_auto(struct config *c, const char *explicit_path, struct llmsb_err *err);
/* 1 when every library of the list is in the language's pool.preinstall
 * set (so its image has them and the job needs no install step). */
int config_preinstalled(const struct config *c, const struct language *l, char *const *libs,
                        size_t n);
/* The language's registry setting (libraries.pip_index_url, ...) as
 * "NAME=value" environment entries, none when unset: for a job's install
 * step and for the preinstall layer of an image. Returns the count. */
#define CONFIG_MAX_REGISTRY_ENV 2
int config_registry_env(const struct config *c, const struct language *l, char out[][320]);
/* The lower bound of a numeric key of the table ("limits.max.memory"):
 * the least a job may ask for too. Returns 0, or LLMSB_ERR_NOTFOUND. */
int config_key_min(const char *key, double *min);
/* The JSON text of a custom policy, or NULL. */
const char *config_policy(const struct config *c, const char *name);

/* Image for a language: the configured one or "<default>:latest". */
const char *config_image(const struct config *c, const struct language *l, char *out, size_t outsz);

#endif
