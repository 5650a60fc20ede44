/* fuzz_ws_frames.c - the Kubernetes WebSocket frame decoder on arbitrary
 * server bytes: fed whole, in two pieces split at the first byte's value,
 * and byte by byte, it must report the same events (data per channel in
 * order, message ends, control frames) and fail alike. */
#include "backends/http/websocket.h"
#include "common/common.h"

#include <string.h>

/* The events as one record string; data pieces of one channel in a row are
 * joined, so any split of the input gives the same record. */
struct rec {
    struct buf b;
    int data_ch; /* channel of the data record being extended, -2: none */
};

static int record(void *ud, enum ws_event ev, int channel, const char *p, size_t n,
                  struct llmsb_err *err)
{
    struct rec *r = ud;
    unsigned char h[3] = {(unsigned char)ev, (unsigned char)channel, (unsigned char)n};

    (void)err;
    if (ev == WS_EV_DATA && channel == r->data_ch)
        return buf_append(&r->b, p, n) ? 1 : 0;
    r->data_ch = ev == WS_EV_DATA ? channel : -2;
    if (ev == WS_EV_DATA)
        h[2] = 0;
    if (buf_append(&r->b, h, sizeof(h)) || buf_append(&r->b, p, n))
        return 1;
    return 0;
}

static int feed(struct rec *r, const unsigned char *data, size_t size, size_t piece)
{
    struct ws_dec d;
    struct llmsb_err err = {0};
    int rc = 0;

    buf_init(&r->b, 1 << 20);
    r->data_ch = -2;
    ws_dec_init(&d, 1);
    for (size_t at = 0; rc == 0 && at < size; at += piece) {
        size_t k = size - at < piece ? size - at : piece;
        rc = ws_dec_feed(&d, (const char *)data + at, k, record, r, &err);
    }
    if (rc < 0 && (err.code != rc || !err.msg[0]))
        __builtin_trap(); /* an error always says what */
    if (rc == 0)
        (void)ws_dec_cut(&d);
    return rc;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct rec whole, two, bytes;
    struct ws_dec d;
    struct ws_frame f;
    struct llmsb_err err = {0};
    size_t cut = size ? data[0] % (size + 1) : 0, used = 0;
    int r1, r2, r3;

    if (ws_frame_parse((const char *)data, size, &f, &used, &err) == 1 &&
        (used > size || used > WS_MAX_HEADER || f.len > WS_MAX_PAYLOAD))
        __builtin_trap();
    r1 = feed(&whole, data, size, size ? size : 1);
    r3 = feed(&bytes, data, size, 1);
    /* two pieces: the first `cut` bytes, then the rest */
    buf_init(&two.b, 1 << 20);
    two.data_ch = -2;
    ws_dec_init(&d, 1);
    r2 = ws_dec_feed(&d, (const char *)data, cut, record, &two, &err);
    if (r2 == 0)
        r2 = ws_dec_feed(&d, (const char *)data + cut, size - cut, record, &two, &err);
    if ((r1 == 0) != (r2 == 0) || (r1 == 0) != (r3 == 0))
        __builtin_trap();
    if (r1 == 0 && (whole.b.len != two.b.len || whole.b.len != bytes.b.len ||
                    (whole.b.len && (memcmp(whole.b.data, two.b.data, whole.b.len) ||
                                     memcmp(whole.b.data, bytes.b.data, whole.b.len)))))
        __builtin_trap();
    buf_release(&whole.b);
    buf_release(&two.b);
    buf_release(&bytes.b);
    return 0;
}
