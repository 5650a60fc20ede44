/* docker_int.h - shared inside the Docker backend (docker*.c): the engine
 * state, the attach stream's framing and the egress firewall. */
#ifndef LLMSB_DOCKER_INT_H
#define LLMSB_DOCKER_INT_H

#include <stddef.h>
#include <stdint.h>
#include "backends/backend.h"
#include "backends/http.h"

#define DOCKER_API_PREFIX "/v1.41"
#define DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"
#define DOCKER_HOST_ENV "DOCKER_HOST"
#define DOCKER_EGRESS_BRIDGE "llmsb-egress0"

struct docker {
    struct http_client http;
};

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

/* The llmsb-egress bridge and its host firewall rules (iptables). */
int docker_egress_ensure(struct backend *b, struct llmsb_err *err);
/* Makes sure a bridge network exists (bridge: its host interface name). */
int docker_network_ensure(struct backend *b, const char *name, const char *bridge,
                          struct llmsb_err *err);

#endif
