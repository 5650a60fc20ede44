/* fuzz_demux.c - Docker stream demultiplexing: fed in two pieces split at
 * the first byte's value, the result must equal feeding it whole. */
#include "backends/docker/internal.h"
#include "common/common.h"

#include <string.h>

static int collect(void *ud, int stream, const char *d, size_t n)
{
    struct buf *b = ud;
    return buf_append(&b[stream], d, n) ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct buf a[3], b[3];
    struct demux d1, d2;
    size_t cut = size ? data[0] % (size + 1) : 0;
    int r1, r2;

    for (int i = 0; i < 3; i++)
        buf_init(&a[i], 1 << 20), buf_init(&b[i], 1 << 20);
    demux_init(&d1);
    demux_init(&d2);
    r1 = demux_feed(&d1, (const char *)data, size, collect, a);
    r2 = demux_feed(&d2, (const char *)data, cut, collect, b);
    if (r2 == 0)
        r2 = demux_feed(&d2, (const char *)data + cut, size - cut, collect, b);
    if ((r1 == 0) != (r2 == 0))
        __builtin_trap();
    for (int i = 0; r1 == 0 && i < 3; i++)
        if (a[i].len != b[i].len || (a[i].len && memcmp(a[i].data, b[i].data, a[i].len)))
            __builtin_trap();
    for (int i = 0; i < 3; i++)
        buf_release(&a[i]), buf_release(&b[i]);
    return 0;
}
