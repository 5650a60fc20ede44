/* stream.h - the agent stream over a Kubernetes attach/exec WebSocket
 * (channel protocols v5/v4.channel.k8s.io), spoken by hand (RFC 6455) on a
 * raw connection from http.c: Debian's libcurl has no WebSocket.  Channel 0
 * is the agent's stdin, 1 its stdout (read), 2 its stderr (the stream log),
 * 3 the Status that says the remote process ended. */
#ifndef LLMSB_K8S_STREAM_H
#define LLMSB_K8S_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "backends/backend.h"
#include "backends/http/http.h"

/* ---- the stream --------------------------------------------------------- */

/* Opens the WebSocket at path (e.g. "/api/v1/namespaces/NS/pods/P/attach?
 * container=agent&stdin=true&stdout=true&stderr=true") on client c,
 * offering subprotocols v5.channel.k8s.io and v4.channel.k8s.io, checks the
 * 101, Sec-WebSocket-Accept and the chosen protocol, and wraps it as the
 * agent stream (*out; its close op frees it).  The stream has its own
 * connection: c may be used for other requests or released while it lives.
 * A stream is used by one thread at a time (read answers pings by writing). */
int k8s_stream_open(struct http_client *c, const char *path, struct backend_stream **out,
                    struct llmsb_err *err);

/* The protocol the server chose: 5 or 4 (0 for a stream not made by
 * k8s_stream_open). */
int k8s_stream_protocol(const struct backend_stream *s);

/* The message of the Status the server sent on channel 3 when the remote
 * process ended (its status, "Success" or "Failure", when it had no
 * message); "" before any.  Untrusted text: escape it before logging.  Valid
 * until the stream is closed. */
const char *k8s_stream_status(const struct backend_stream *s);

/* The remote process's exit code from that Status: 0 for Success, the
 * ExitCode cause of a NonZeroExitCode failure, -1 when there is no Status
 * yet or it carries no exit code. */
int k8s_stream_exit_code(const struct backend_stream *s);

/* Ends the agent's stdin but keeps reading its output: sends the v5 close
 * of channel 0 ([0xFF, 0x00]).  v4 cannot do that (LLMSB_ERR_INVALID): only
 * closing the whole stream ends stdin there. */
int k8s_stream_close_stdin(struct backend_stream *s, struct llmsb_err *err);

/* ---- WebSocket framing (pure; exposed for the tests and the fuzzer) ----- */

#define WS_MAX_HEADER 14                       /* 2 + 8 (64-bit length) + 4 (mask) */
#define WS_MAX_PAYLOAD ((uint64_t)64 << 20)    /* a server frame over this is refused */
#define WS_MAX_CONTROL 125                     /* RFC 6455 5.5 */
#define WS_CLIENT_FRAME_MAX ((size_t)64 << 10) /* payload of each frame we send */

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
    int broken; /* after a protocol error, every feed fails */
};

void ws_dec_init(struct ws_dec *d);
/* Feeds p[0..n).  Returns 0, LLMSB_ERR_PROTO with err set (and the decoder
 * broken for good), or the callback's non-zero return. */
int ws_dec_feed(struct ws_dec *d, const char *p, size_t n, ws_event_cb cb, void *ud,
                struct llmsb_err *err);
/* Where the decoder stands when the byte stream ends: NULL between
 * messages (a clean end), else what was cut ("a frame header", ...). */
const char *ws_dec_cut(const struct ws_dec *d);

/* Sec-WebSocket-Accept for key: base64(SHA-1(key + RFC 6455 GUID)), into
 * out (29 bytes with the NUL). */
void ws_accept_key(const char *key, char out[29]);

#endif
