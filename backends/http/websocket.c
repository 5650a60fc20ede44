/* websocket.c - RFC 6455 framing, for a client on a connection of http.c
 * (Debian's libcurl 7.88 has no WebSocket): the frames a server sends,
 * parsed and decoded incrementally, their payloads streamed through with
 * bounded memory; the masked frames a client sends; the handshake's
 * accept key.  Its messages name the fault only: the caller says which
 * connection (kubernetes/stream.c: "k8s attach: ..."). */
#include "websocket.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11" /* RFC 6455 1.3 */

/* ---- frames ---------------------------------------------------------------- */

int ws_frame_parse(const char *p, size_t n, struct ws_frame *f, size_t *used, struct llmsb_err *err)
{
    const unsigned char *u = (const unsigned char *)p;
    size_t need = 2;
    uint64_t len;
    int op;

    if (n < 2)
        return 0;
    op = u[0] & 0x0f;
    if (u[0] & 0x70)
        return llmsb_err_set(err, LLMSB_ERR_PROTO,
                             "a frame with reserved bits set (first byte 0x%02x)", u[0]);
    if ((op > WS_OP_BINARY && op < WS_OP_CLOSE) || op > WS_OP_PONG)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "a frame with reserved opcode %d", op);
    if (u[1] & 0x80)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "a masked frame from the server");
    len = u[1] & 0x7f;
    need = len == 126 ? 4 : len == 127 ? 10 : 2;
    if (n < need)
        return 0;
    if (len == 126) {
        len = (uint64_t)u[2] << 8 | u[3];
    } else if (len == 127) {
        len = 0;
        for (size_t i = 2; i < 10; i++)
            len = len << 8 | u[i];
    }
    if (op >= WS_OP_CLOSE && (!(u[0] & 0x80) || len > WS_MAX_CONTROL))
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "a control frame (opcode %d) %s", op,
                             len > WS_MAX_CONTROL ? "over 125 bytes" : "that is fragmented");
    if (len > WS_MAX_PAYLOAD)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "a frame of %llu bytes (the cap is %llu)",
                             (unsigned long long)len, (unsigned long long)WS_MAX_PAYLOAD);
    f->fin = (u[0] & 0x80) != 0;
    f->opcode = op;
    f->len = len;
    *used = need;
    return 1;
}

size_t ws_client_header(unsigned char *h, int opcode, uint64_t len, const unsigned char key[4])
{
    size_t hl;

    h[0] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        h[1] = (unsigned char)(0x80 | len);
        hl = 2;
    } else if (len <= 0xffff) {
        h[1] = 0x80 | 126;
        h[2] = (unsigned char)(len >> 8);
        h[3] = (unsigned char)len;
        hl = 4;
    } else {
        h[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++)
            h[2 + i] = (unsigned char)(len >> (56 - 8 * i));
        hl = 10;
    }
    memcpy(h + hl, key, 4);
    return hl + 4;
}

void ws_mask_copy(unsigned char *dst, const char *src, size_t n, const unsigned char key[4],
                  size_t off)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (unsigned char)src[i] ^ key[(off + i) & 3];
}

/* ---- incremental decoding ------------------------------------------------ */

void ws_dec_init(struct ws_dec *d, int channels)
{
    memset(d, 0, sizeof(*d));
    d->channels = channels;
    d->channel = -1;
}

static int dec_fail(struct ws_dec *d, struct llmsb_err *err, const char *what)
{
    d->broken = 1;
    return llmsb_err_set(err, LLMSB_ERR_PROTO, "%s", what);
}

/* Takes a frame header from *p (joining a cut one).  Returns 1 when a frame
 * begins (d->f set), 0 when all of *p went into a partial header, or <0. */
static int dec_header(struct ws_dec *d, const char **p, size_t *n, struct llmsb_err *err)
{
    size_t used = 0, old = d->hdr_len, take;
    int rc;

    if (old == 0) {
        rc = ws_frame_parse(*p, *n, &d->f, &used, err);
        if (rc == 0) { /* *n < 10 here */
            memcpy(d->hdr, *p, *n);
            d->hdr_len = *n;
            *n = 0;
        }
    } else {
        take = sizeof(d->hdr) - old < *n ? sizeof(d->hdr) - old : *n;
        memcpy(d->hdr + old, *p, take);
        rc = ws_frame_parse((const char *)d->hdr, old + take, &d->f, &used, err);
        if (rc == 0) {
            d->hdr_len = old + take;
            *n = 0;
        } else if (rc == 1) {
            used -= old; /* the part that came from *p */
        }
    }
    if (rc < 0) {
        d->broken = 1;
        return rc;
    }
    if (rc == 1) {
        *p += used;
        *n -= used;
        d->hdr_len = 0;
    }
    return rc;
}

/* Checks where the new frame d->f falls among messages and starts it. */
static int dec_begin(struct ws_dec *d, struct llmsb_err *err)
{
    if (d->f.opcode == WS_OP_CONT) {
        if (!d->in_message)
            return dec_fail(d, err, "a continuation frame outside a fragmented message");
    } else if (d->f.opcode < WS_OP_CLOSE) {
        if (d->in_message)
            return dec_fail(d, err, "a new message inside a fragmented one");
        d->in_message = 1;
        d->channel = -1;
    }
    d->ctl_len = 0;
    d->left = d->f.len;
    d->in_frame = 1;
    return 0;
}

static int dec_end(struct ws_dec *d, ws_event_cb cb, void *ud, struct llmsb_err *err)
{
    static const enum ws_event ctl_ev[] = {WS_EV_CLOSE, WS_EV_PING, WS_EV_PONG};
    int ch = d->channel;

    d->in_frame = 0;
    if (d->f.opcode >= WS_OP_CLOSE)
        return cb(ud, ctl_ev[d->f.opcode - WS_OP_CLOSE], -1, d->ctl, d->ctl_len, err);
    if (!d->f.fin)
        return 0;
    d->in_message = 0;
    d->channel = -1;
    return cb(ud, WS_EV_END, ch, NULL, 0, err);
}

/* Passes up to *n payload bytes of the current frame on. */
static int dec_payload(struct ws_dec *d, const char **p, size_t *n, ws_event_cb cb, void *ud,
                       struct llmsb_err *err)
{
    size_t take = d->left < *n ? (size_t)d->left : *n;
    const char *q = *p;
    int rc = 0;

    *p += take;
    *n -= take;
    d->left -= take;
    if (d->f.opcode >= WS_OP_CLOSE) {
        memcpy(d->ctl + d->ctl_len, q, take); /* len <= 125 was checked */
        d->ctl_len += take;
        return 0;
    }
    if (take && d->channels && d->channel < 0) {
        d->channel = (unsigned char)*q++;
        take--;
    }
    if (take)
        rc = cb(ud, WS_EV_DATA, d->channel, q, take, err);
    return rc;
}

int ws_dec_feed(struct ws_dec *d, const char *p, size_t n, ws_event_cb cb, void *ud,
                struct llmsb_err *err)
{
    int rc;

    if (d->broken)
        return llmsb_err_set(err, LLMSB_ERR_PROTO, "the stream is unusable after a protocol error");
    while (n > 0 || (d->in_frame && d->left == 0)) {
        if (!d->in_frame) {
            if ((rc = dec_header(d, &p, &n, err)) <= 0)
                return rc;
            if ((rc = dec_begin(d, err)) != 0)
                return rc;
        }
        if ((rc = dec_payload(d, &p, &n, cb, ud, err)) != 0)
            return rc;
        if (d->left == 0 && (rc = dec_end(d, cb, ud, err)) != 0)
            return rc;
    }
    return 0;
}

const char *ws_dec_cut(const struct ws_dec *d)
{
    if (d->hdr_len)
        return "a frame header";
    if (d->in_frame)
        return "a frame";
    if (d->in_message)
        return "a fragmented message";
    return NULL;
}

void ws_accept_key(const char *key, char out[29])
{
    unsigned char md[SHA_DIGEST_LENGTH];
    char in[128];
    char *b64;

    snprintf(in, sizeof(in), "%s%s", key, WS_GUID);
    SHA1((const unsigned char *)in, strlen(in), md);
    b64 = base64_encode(md, sizeof(md), NULL);
    snprintf(out, 29, "%s", b64 ? b64 : "");
    free(b64);
}
