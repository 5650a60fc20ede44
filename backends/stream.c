/* stream.c - Docker stream demultiplexing (see stream.h). */
#include "stream.h"

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
