/* stream.h - demultiplexer for Docker's attach/logs framing: an 8-byte
 * header [stream, 0, 0, 0, size_be32] before each chunk.  Fed any split of
 * the byte stream; hands each payload piece to a callback. */
#ifndef LLMSB_STREAM_H
#define LLMSB_STREAM_H

#include <stddef.h>
#include <stdint.h>

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

#endif
