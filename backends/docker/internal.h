/* internal.h - shared inside the Docker backend (docker.c, podman.c, stream.c, egress.c): the engine
 * state, the attach stream's framing and the egress firewall. */
#ifndef LLMSB_DOCKER_INT_H
#define LLMSB_DOCKER_INT_H

#include <stddef.h>
#include <stdint.h>
#include "backends/backend.h"
#include "backends/http/http.h"

#define DOCKER_API_PREFIX "/v1.41"
#define DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"
#define DOCKER_HOST_ENV "DOCKER_HOST"
#define DOCKER_EGRESS_BRIDGE "llmsb-egress0"

/* What sets one engine speaking this API apart (Docker, or Podman's
 * Docker-compatible service: podman.c). */
struct docker_flavor {
    const char *name;         /* "docker", "podman": in every message */
    const char *default_host; /* when neither backend.host nor host_env is set */
    const char *host_env;     /* DOCKER_HOST, CONTAINER_HOST */
    int tls_env;              /* reads DOCKER_TLS_VERIFY, DOCKER_TLS, DOCKER_CERT_PATH (tls.c) */
    const char *daemon_hint;  /* said when the engine does not answer */
    /* The value after "seccomp=" in SecurityOpt (malloc'd): NULL = the
     * profile itself (Docker); Podman wants a file's path. */
    int (*seccomp_opt)(char **out);
    int import_tag_in_repo;           /* images/create ignores tag=: send repo=name:tag */
    const char *egress_bridge;        /* host interface of BACKEND_EGRESS_NETWORK */
    const char *egress_forward_chain; /* where the blocks go: "CHAIN" or "table:CHAIN" */
    const char *egress_block_target;  /* NULL: REJECT (the raw table can only DROP) */
    int egress_dns_on_gateway;        /* the engine's DNS answers on the bridge */
};

struct docker {
    struct http_client http;
    const struct docker_flavor *fl;
    char tls_note[400]; /* how TLS is set up, for messages; "" without TLS */
};

/* ---- TLS (tls.c): the docker CLI's environment and the config keys ---- */

/* The inputs of the decision: the config keys ("" = unset) and the
 * environment's values (NULL = unset). */
struct docker_tls_env {
    const char *tls_verify_cfg; /* backend.tls_verify: "", "true", "false" */
    const char *cert_path_cfg;  /* backend.cert_path */
    const char *tls_verify, *tls, *cert_path, *docker_config, *home;
};

struct docker_tls {
    int on;             /* speak TLS to a tcp:// host */
    int verify;         /* check the daemon's certificate against ca.pem */
    char why[64];       /* what turned TLS on, for messages */
    char dir[512];      /* where ca.pem, cert.pem and key.pem are */
    char dir_from[600]; /* "DOCKER_CERT_PATH=/x" or how dir was found */
};

void docker_tls_decide(const struct docker_tls_env *e, struct docker_tls *t);
/* docker_tls_decide on o's keys and this process's environment (read_env
 * 0: the flavor reads no DOCKER_* variables; HOME still gives ~/.docker). */
void docker_tls_from_env(const struct backend_opts *o, int read_env, struct docker_tls *t);
/* The address for the HTTP client: tcp://h gets the CLI's default port
 * (2376 with TLS, 2375 without) and, with TLS, the https scheme; other
 * hosts are copied. */
int docker_tls_url(const char *host, int tls, char *out, size_t outsz, struct llmsb_err *err);
/* Reads t's PEM files into c and describes the setup in note.  A missing
 * or unreadable file is an error naming the variable, the file and why. */
int docker_tls_apply(const struct docker_tls *t, struct http_client *c, char *note, size_t notesz,
                     struct llmsb_err *err);

/* The create body of a sandbox: the hardening spec of s (hardening.h) in
 * the Engine API's words.  Returns a new string, caller frees; NULL out of
 * memory or without the seccomp profile fl asks for. */
char *docker_create_body(const struct docker_flavor *fl, const struct container_spec *s);

int docker_open_flavor(struct backend *b, const char *host, const struct docker_flavor *fl,
                       struct llmsb_err *err);

/* The hooks of docker_ops that every flavor takes as they are, for a
 * flavor's ops table, which names beside them only what it does its own
 * way (podman.c: name, open, stop, remove, runtime_kind).  A hook a flavor
 * may do differently is not in the list: docker_ops and each flavor name
 * theirs. */
#define DOCKER_OPS_SHARED                                                                          \
    .close = docker_close, .exec = docker_exec, .egress_ensure = docker_egress_ensure,             \
    .ping = docker_ping, .image_exists = docker_image_exists, .image_digest = docker_image_digest, \
    .image_config = docker_image_config, .create = docker_create, .attach = docker_attach,         \
    .start = docker_start, .inspect = docker_inspect, .list = docker_list,                         \
    .container_export = docker_container_export, .image_import = docker_image_import,              \
    .image_build = docker_image_build, .image_pull = docker_image_pull,                            \
    .image_tag = docker_image_tag, .image_list = docker_image_list,                                \
    .image_remove = docker_image_remove, .network_disconnect = docker_network_disconnect

/* The ops of docker_ops, for flavors that share them. */
void docker_close(struct backend *b);
int docker_runtime_kind(struct backend *b, const char *runtime, struct llmsb_err *err);

/* What runtime (NULL or "": the DefaultRuntime) is, by the engine's GET
 * /info answer (n bytes of info): gVisor when its name, or the path the
 * engine's Runtimes give for it, is runsc's (backend_runtime_is_runsc);
 * the host's kernel for another registered runtime or a path; unknown
 * otherwise.  An enum backend_runtime_kind, or -1 when info is not a JSON
 * object. */
int docker_info_runtime_kind(const char *info, size_t n, const char *runtime);
int docker_ping(struct backend *b, char *version, size_t vsz, struct llmsb_err *err);
int docker_image_exists(struct backend *b, const char *image, struct llmsb_err *err);
int docker_image_list(struct backend *b, const char *label,
                      void (*fn)(void *, const struct image_info *), void *ud,
                      struct llmsb_err *err);
int docker_image_remove(struct backend *b, const char *image, struct llmsb_err *err);
int docker_image_config(struct backend *b, const char *image, struct buf *out,
                        struct llmsb_err *err);
int docker_image_digest(struct backend *b, const char *image, char *out, size_t outsz,
                        struct llmsb_err *err);
int docker_create(struct backend *b, const struct container_spec *spec, char *id, size_t idsz,
                  struct llmsb_err *err);
int docker_attach(struct backend *b, const char *id, struct backend_stream **out,
                  struct llmsb_err *err);
int docker_start(struct backend *b, const char *id, struct llmsb_err *err);
int docker_stop(struct backend *b, const char *id, struct llmsb_err *err);
int docker_remove(struct backend *b, const char *id, struct llmsb_err *err);
int docker_inspect(struct backend *b, const char *id, struct container_state *st,
                   struct llmsb_err *err);
int docker_list(struct backend *b, const char *label,
                void (*fn)(void *, const struct container_info *), void *ud, struct llmsb_err *err);
int docker_exec(struct backend *b, const char *id, const char *const *argv, const char *user,
                struct buf *out, int *exit_code, struct llmsb_err *err);
int docker_container_export(struct backend *b, const char *id,
                            int (*sink)(void *ud, const char *p, size_t n), void *ud,
                            struct llmsb_err *err);
int docker_image_import(struct backend *b, const char *repo, const char *tag, backend_read_cb rd,
                        void *ud, backend_progress_cb cb, void *pud, struct llmsb_err *err);
int docker_image_build(struct backend *b, const char *const *tags, size_t ntags, backend_read_cb rd,
                       void *ud, backend_progress_cb cb, void *pud, struct llmsb_err *err);
int docker_image_pull(struct backend *b, const char *repo, const char *tag, backend_progress_cb cb,
                      void *pud, struct llmsb_err *err);
int docker_image_tag(struct backend *b, const char *image, const char *repo, const char *tag,
                     struct llmsb_err *err);
int docker_network_disconnect(struct backend *b, const char *name, const char *id,
                              struct llmsb_err *err);

/* ---- attach framing: an 8-byte header [stream, 0, 0, 0, size_be32]
 * before each chunk; fed any split of the byte stream. */

#define DEMUX_MAX_FRAME ((uint32_t)64 << 20)

typedef int (*demux_cb)(void *ud, int stream, const char *data, size_t len);

struct demux {
    unsigned char hdr[8];
    size_t hdr_len;
    uint32_t remaining;
    int stream;
    int broken;
};

void demux_init(struct demux *d);
/* Returns 0, -1 on a malformed header (stream id not 0..2, non-zero pad,
 * size over the cap), or the callback's non-zero return. */
int demux_feed(struct demux *d, const char *data, size_t len, demux_cb cb, void *ud);

/* Wraps a hijacked attach connection as the agent stream (consumes conn). */
int docker_stream_new(struct http_conn *conn, struct backend_stream **out, struct llmsb_err *err);

/* The llmsb-egress bridge and its host firewall rules (iptables), for the
 * flavor of b. */
int docker_egress_ensure(struct backend *b, struct llmsb_err *err);
/* Makes sure a bridge network exists (bridge: its host interface name). */
int docker_network_ensure(struct backend *b, const char *name, const char *bridge,
                          struct llmsb_err *err);

#endif
