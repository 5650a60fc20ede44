/* live.c - a live step's output in OUTPUT frames as it comes.
 *
 * A job with TAG_LIVE gets its run step's output in chunks before the
 * RESULT that carries all of it: coalesced (at most every
 * PROTO_LIVE_FLUSH_MS or PROTO_LIVE_FLUSH_BYTES waiting, a frame's chunk at
 * most LIVE_FRAME_MAX), never waited for (fd 1 is non-blocking while the
 * step runs), the rest at the step's end, blocking, before the RESULT. */
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"

#define LIVE_FRAME_MAX ((size_t)256 << 10) /* bytes of one OUTPUT frame's chunk */

void agent_live_init(struct agent_live *lv, int on, const struct buf *out, const struct buf *err)
{
    memset(lv, 0, sizeof(*lv));
    lv->on = on;
    lv->out = out;
    lv->err = err;
    lv->fl = -1;
    buf_init(&lv->frame, LIVE_FRAME_MAX + 128);
    if (on && (lv->fl = fcntl(STDOUT_FILENO, F_GETFL)) >= 0 &&
        fcntl(STDOUT_FILENO, F_SETFL, lv->fl | O_NONBLOCK) != 0)
        lv->fl = -1;
}

/* Writes what it can of the pending frame.  Returns 1 when none is
 * pending any more, 0 when fd 1 takes no more now. */
static int live_write(struct agent_live *lv)
{
    while (!lv->broken && lv->frame_off < lv->frame.len) {
        ssize_t w =
            write(STDOUT_FILENO, lv->frame.data + lv->frame_off, lv->frame.len - lv->frame_off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return 0;
        if (w <= 0)
            lv->broken = 1;
        else
            lv->frame_off += (size_t)w;
    }
    buf_reset(&lv->frame);
    lv->frame_off = 0;
    return 1;
}

/* Puts the next chunk of stream k (0 stdout, 1 stderr) in the frame.
 * Returns 1 when it did. */
static int live_next(struct agent_live *lv, int k, const struct buf *b)
{
    struct buf payload;
    size_t n = b->len - lv->sent[k];
    struct proto_chunk c = {k + 1, lv->sent[k], b->data + lv->sent[k],
                            n < LIVE_FRAME_MAX ? n : LIVE_FRAME_MAX};

    if (lv->broken || !n)
        return 0;
    buf_init(&payload, LIVE_FRAME_MAX + 64);
    if (proto_chunk_encode(&c, &payload) != 0 ||
        proto_frame_append(&lv->frame, PROTO_OUTPUT, payload.data, payload.len) != 0)
        lv->broken = 1;
    buf_release(&payload);
    lv->sent[k] += c.len;
    return !lv->broken;
}

/* Puts the next chunk of either stream in the frame; 1 when it did. */
static int live_next_any(struct agent_live *lv)
{
    return live_next(lv, 0, lv->out) || (lv->err != lv->out && live_next(lv, 1, lv->err));
}

/* Bytes of the step's output not sent yet. */
static size_t live_waiting(const struct agent_live *lv)
{
    return lv->out->len - lv->sent[0] + (lv->err != lv->out ? lv->err->len - lv->sent[1] : 0);
}

int64_t agent_live_flush(struct agent_live *lv, int force)
{
    int64_t now;
    size_t waiting;

    if (!lv->on || lv->broken || !live_write(lv))
        return -1;
    if (!(waiting = live_waiting(lv)))
        return -1;
    now = clock_mono_ms();
    if (!force && waiting < PROTO_LIVE_FLUSH_BYTES && now - lv->last_ms < PROTO_LIVE_FLUSH_MS)
        return PROTO_LIVE_FLUSH_MS - (now - lv->last_ms);
    lv->last_ms = now;
    while (live_next_any(lv))
        if (!live_write(lv))
            break;
    return -1;
}

int agent_live_pollfd(const struct agent_live *lv)
{
    return !lv->broken && lv->frame.len > lv->frame_off ? STDOUT_FILENO : -1;
}

void agent_live_end(struct agent_live *lv)
{
    if (lv->fl >= 0)
        fcntl(STDOUT_FILENO, F_SETFL, lv->fl);
    if (lv->on) {
        live_write(lv);
        while (live_next_any(lv))
            live_write(lv);
    }
    buf_release(&lv->frame);
}
