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
};

/* The create body of a sandbox: the hardening spec of s (hardening.h) in
 * the Engine API's words.  Returns a new string, caller frees; NULL out of
 * memory or without the seccomp profile fl asks for. */
char *docker_create_body(const struct docker_flavor *fl, const struct container_spec *s);

int docker_open_flavor(struct backend *b, const char *host, const struct docker_flavor *fl,
                       struct llmsb_err *err);

/* The ops of docker_ops, for flavors that share them. */
void docker_close(struct backend *b);
int docker_ping(struct backend *b, char *version, size_t vsz, struct llmsb_err *err);
int docker_image_exists(struct backend *b, const char *image, struct llmsb_err *err);
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
