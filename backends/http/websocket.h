/* websocket.h - RFC 6455 framing for a client (websocket.c): parsing and
 * incrementally decoding a server's frames, encoding our masked ones, the
 * handshake's accept key.  Pure functions over bytes: the connection is
 * the caller's (kubernetes/stream.c's attach stream); the tests and the
 * fuzzer drive them directly. */
#ifndef LLMSB_WEBSOCKET_H
#define LLMSB_WEBSOCKET_H

#include <stddef.h>
#include <stdint.h>
#include "common/common.h"

#define WS_MAX_HEADER 14                    /* 2 + 8 (64-bit length) + 4 (mask) */
#define WS_MAX_PAYLOAD ((uint64_t)64 << 20) /* a server frame over this is refused */
#define WS_MAX_CONTROL 125                  /* RFC 6455 5.5 */

enum ws_opcode {
    WS_OP_CONT = 0x0,
    WS_OP_TEXT = 0x1,
    WS_OP_BINARY = 0x2,
    WS_OP_CLOSE = 0x8,
    WS_OP_PING = 0x9,
    WS_OP_PONG = 0xA
};

struct ws_frame {
    int fin;
    int opcode;   /* enum ws_opcode */
    uint64_t len; /* payload bytes after the header */
};

/* Parses the header of a frame a server sent, at p[0..n).  Returns 1 with
 * *f set and *used = the header's size (the payload follows it), 0 when the
 * header is not complete yet (nothing set), or LLMSB_ERR_PROTO with err set
 * for reserved bits, a reserved opcode, a masked frame, a control frame that
 * is fragmented or over 125 bytes, or a payload over WS_MAX_PAYLOAD. */
int ws_frame_parse(const char *p, size_t n, struct ws_frame *f, size_t *used,
                   struct llmsb_err *err);

/* What the decoder reports, in the order of the bytes. */
enum ws_event {
    WS_EV_DATA, /* a piece of a data message's payload (channel byte removed) */
    WS_EV_END,  /* a data message ended (channel -1: it was empty) */
    WS_EV_PING, /* a complete control frame and its payload */
    WS_EV_PONG,
    WS_EV_CLOSE
};

/* Returns 0 to go on, >0 to stop the feed there (it returns that value),
 * <0 an error with err set (likewise). */
typedef int (*ws_event_cb)(void *ud, enum ws_event ev, int channel, const char *p, size_t n,
                           struct llmsb_err *err);

/* An incremental decoder of the server's frames, fed any split of the byte
 * stream: data messages (fragmented or not; their first payload byte is the
 * channel) are streamed through as they arrive, never buffered whole. */
struct ws_dec {
    unsigned char hdr[WS_MAX_HEADER]; /* a frame header cut by a read */
    size_t hdr_len;
    struct ws_frame f; /* the frame whose payload is being read */
    uint64_t left;     /* its payload bytes still to come */
    int in_frame;
    int in_message; /* a data message's last frame (FIN) not seen yet */
    int channel;    /* the message's channel, -1 before its first byte */
    char ctl[WS_MAX_CONTROL];
    size_t ctl_len;
    int channels; /* ws_dec_init's */
    int broken;   /* after a protocol error, every feed fails */
};

/* channels 1: the first payload byte of each data message is its channel
 * (the channel.k8s.io subprotocols), taken off and reported with each
 * event; 0: channel is -1 and the payload whole. */
void ws_dec_init(struct ws_dec *d, int channels);
/* Feeds p[0..n).  Returns 0, LLMSB_ERR_PROTO with err set (and the decoder
 * broken for good), or the callback's non-zero return. */
int ws_dec_feed(struct ws_dec *d, const char *p, size_t n, ws_event_cb cb, void *ud,
                struct llmsb_err *err);
/* Where the decoder stands when the byte stream ends: NULL between
 * messages (a clean end), else what was cut ("a frame header", ...). */
const char *ws_dec_cut(const struct ws_dec *d);

/* The header of a frame a client sends (FIN set, masked with key) for a
 * payload of len bytes, into h (WS_MAX_HEADER bytes); returns its size. */
size_t ws_client_header(unsigned char *h, int opcode, uint64_t len, const unsigned char key[4]);
/* Copies n payload bytes to dst masked with key, from payload offset off. */
void ws_mask_copy(unsigned char *dst, const char *src, size_t n, const unsigned char key[4],
                  size_t off);

/* Sec-WebSocket-Accept for key: base64(SHA-1(key + RFC 6455 GUID)), into
 * out (29 bytes with the NUL). */
void ws_accept_key(const char *key, char out[29]);

#endif
