/* stream.c - the agent stream over a Docker (or Podman) attach: a
 * hijacked HTTP connection whose output is multiplexed with 8-byte frame
 * headers.  Stream 1 (the agent's stdout) carries protocol bytes to the
 * reader; stream 2 (its stderr) goes to the stream's log. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void demux_init(struct demux *d)
{
    memset(d, 0, sizeof(*d));
}

int demux_feed(struct demux *d, const char *data, size_t len, demux_cb cb, void *ud)
{
    if (d->broken)
        return -1;
    while (len > 0) {
        if (d->remaining == 0) {
            size_t take = 8 - d->hdr_len;
            if (take > len)
                take = len;
            memcpy(d->hdr + d->hdr_len, data, take);
            d->hdr_len += take;
            data += take;
            len -= take;
            if (d->hdr_len < 8)
                return 0;
            d->hdr_len = 0;
            if (d->hdr[0] > 2 || d->hdr[1] || d->hdr[2] || d->hdr[3]) {
                d->broken = 1;
                return -1;
            }
            d->stream = d->hdr[0];
            d->remaining = (uint32_t)d->hdr[4] << 24 | (uint32_t)d->hdr[5] << 16 |
                           (uint32_t)d->hdr[6] << 8 | d->hdr[7];
            if (d->remaining > DEMUX_MAX_FRAME) {
                d->broken = 1;
                return -1;
            }
            continue;
        }
        size_t take = d->remaining < len ? d->remaining : len;
        int rc = cb(ud, d->stream, data, take);
        if (rc)
            return rc;
        d->remaining -= (uint32_t)take;
        data += take;
        len -= take;
    }
    return 0;
}

#define CHUNK 65536
#define OUT_CAP ((size_t)4 << 20) /* demultiplexed bytes not yet read */

struct docker_stream {
    struct backend_stream base;
    struct http_conn conn;
    struct demux demux;
    struct buf out; /* agent stdout bytes not yet handed to read */
};

static int on_frame(void *ud, int stream, const char *data, size_t len)
{
    struct docker_stream *s = ud;

    if (stream == 1)
        return buf_append(&s->out, data, len) ? -1 : 0;
    backend_stream_log(&s->base, data, len);
    return 0;
}

static ssize_t ds_read(struct backend_stream *bs, char *p, size_t n, int timeout_ms,
                       struct llmsb_err *err)
{
    struct docker_stream *s = (struct docker_stream *)bs;
    char chunk[CHUNK];

    while (s->out.len == 0) {
        /* only read what fits: the demultiplexed buffer stays bounded */
        ssize_t got = http_conn_recv(&s->conn, chunk, sizeof(chunk), timeout_ms, err);
        if (got <= 0)
            return got;
        if (demux_feed(&s->demux, chunk, (size_t)got, on_frame, s) != 0)
            return llmsb_err_set(err, LLMSB_ERR_PROTO,
                                 "attach: malformed stream framing from the engine");
    }
    size_t k = s->out.len < n ? s->out.len : n;
    memcpy(p, s->out.data, k);
    buf_consume(&s->out, k);
    return (ssize_t)k;
}

static int ds_write(struct backend_stream *bs, const char *p, size_t n, struct llmsb_err *err)
{
    struct docker_stream *s = (struct docker_stream *)bs;
    return http_conn_send(&s->conn, p, n, err);
}

static void ds_close(struct backend_stream *bs)
{
    struct docker_stream *s = (struct docker_stream *)bs;

    if (!s)
        return;
    http_conn_close(&s->conn);
    buf_release(&s->out);
    buf_release(&s->base.log);
    free(s);
}

static const struct backend_stream_ops docker_stream_ops = {ds_read, ds_write, ds_close};

int docker_stream_new(struct http_conn *conn, struct backend_stream **out, struct llmsb_err *err)
{
    struct docker_stream *s = calloc(1, sizeof(*s));

    if (!s) {
        http_conn_close(conn);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "attach: out of memory");
    }
    s->base.ops = &docker_stream_ops;
    buf_init(&s->base.log, BACKEND_STREAM_LOG_CAP);
    buf_init(&s->out, OUT_CAP + CHUNK);
    demux_init(&s->demux);
    s->conn = *conn;
    memset(conn, 0, sizeof(*conn));
    conn->fd = -1;
    *out = &s->base;
    return 0;
}
