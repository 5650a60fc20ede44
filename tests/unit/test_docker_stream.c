/* test_docker_stream.c - Docker stream demultiplexing under every split. */
#include "test.h"

#include "backends/docker/internal.h"
#include "common/common.h"

struct sink {
    struct buf s[3];
};

static int collect(void *ud, int stream, const char *data, size_t len)
{
    struct sink *k = ud;
    return buf_append(&k->s[stream], data, len);
}

static size_t frame(unsigned char *out, int stream, const char *payload, uint32_t n)
{
    out[0] = (unsigned char)stream;
    out[1] = out[2] = out[3] = 0;
    out[4] = (unsigned char)(n >> 24);
    out[5] = (unsigned char)(n >> 16);
    out[6] = (unsigned char)(n >> 8);
    out[7] = (unsigned char)n;
    memcpy(out + 8, payload, n);
    return 8 + n;
}

TEST(every_split_point)
{
    unsigned char wire[256];
    size_t n = 0;

    n += frame(wire + n, 1, "out\n", 4);
    n += frame(wire + n, 2, "err\n", 4);
    n += frame(wire + n, 1, "", 0);
    n += frame(wire + n, 1, "more", 4);
    for (size_t a = 0; a <= n; a++) {
        for (size_t b = a; b <= n; b++) {
            struct demux d;
            struct sink k;
            for (int i = 0; i < 3; i++)
                buf_init(&k.s[i], 0);
            demux_init(&d);
            ASSERT_EQ(demux_feed(&d, (char *)wire, a, collect, &k), 0);
            ASSERT_EQ(demux_feed(&d, (char *)wire + a, b - a, collect, &k), 0);
            ASSERT_EQ(demux_feed(&d, (char *)wire + b, n - b, collect, &k), 0);
            ASSERT_STR(k.s[1].data, "out\nmore");
            ASSERT_STR(k.s[2].data, "err\n");
            for (int i = 0; i < 3; i++)
                buf_release(&k.s[i]);
        }
    }
}

TEST(rejects_bad_headers)
{
    struct demux d;
    struct sink k;
    unsigned char bad_stream[8] = {7, 0, 0, 0, 0, 0, 0, 1};
    unsigned char bad_pad[8] = {1, 1, 0, 0, 0, 0, 0, 1};
    unsigned char huge[8] = {1, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff};

    for (int i = 0; i < 3; i++)
        buf_init(&k.s[i], 0);
    demux_init(&d);
    ASSERT(demux_feed(&d, (char *)bad_stream, 8, collect, &k) < 0);
    ASSERT(demux_feed(&d, "x", 1, collect, &k) < 0); /* stays broken */
    demux_init(&d);
    ASSERT(demux_feed(&d, (char *)bad_pad, 8, collect, &k) < 0);
    demux_init(&d);
    ASSERT(demux_feed(&d, (char *)huge, 8, collect, &k) < 0);
    for (int i = 0; i < 3; i++)
        buf_release(&k.s[i]);
}

static int refuse(void *ud, int stream, const char *data, size_t len)
{
    (void)ud, (void)stream, (void)data, (void)len;
    return 5;
}

TEST(callback_error_propagates)
{
    unsigned char wire[32];
    struct demux d;
    size_t n = frame(wire, 1, "abc", 3);

    demux_init(&d);
    ASSERT_EQ(demux_feed(&d, (char *)wire, n, refuse, NULL), 5);
}

TEST_MAIN("docker_stream", T(every_split_point), T(rejects_bad_headers),
          T(callback_error_propagates))
