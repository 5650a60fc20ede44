/* live.h - a live step's output sent as it comes, in OUTPUT frames before
 * the RESULT (internal to agent/; docs/agent.md, TAG_LIVE). */
#ifndef LLMSB_AGENT_LIVE_H
#define LLMSB_AGENT_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include "common/common.h"

/* A live step's chunks: how much of each stream went out, when the last
 * chunk did, and the one frame written in part.  Chunks are optional (the
 * RESULT carries everything), so the step never waits on them: fd 1 is
 * non-blocking while the step runs, a frame the worker is slow to read
 * waits in `frame` (written as poll says fd 1 takes more), and new output
 * meanwhile coalesces behind sent[] into the next frame. */
struct agent_live {
    int on;                      /* the step is live: else every call is a no-op */
    const struct buf *out, *err; /* the step's streams (err == out: merged) */
    size_t sent[2];              /* of out, err: in a frame already */
    int64_t last_ms;
    int broken;       /* a write to the worker failed: no more chunks */
    int fl;           /* fd 1's flags before the step (-1: not changed) */
    struct buf frame; /* header + payload of the frame being written */
    size_t frame_off; /* how much of it went out */
};

/* Before the step: fd 1 non-blocking when on. */
void agent_live_init(struct agent_live *lv, int on, const struct buf *out, const struct buf *err);
/* Sends the step's new output when enough waits, enough time passed or
 * (force) the step ended, as far as fd 1 takes it without waiting.
 * Returns how long until the next send is due (ms; -1: nothing waits, or
 * a frame waits for fd 1: poll it, see agent_live_pollfd). */
int64_t agent_live_flush(struct agent_live *lv, int force);
/* fd 1 while a frame waits for it, else -1 (poll skips it). */
int agent_live_pollfd(const struct agent_live *lv);
/* The step ended: the rest goes out, fd 1 blocking again, so that the
 * RESULT after it is written whole and after the last OUTPUT frame. */
void agent_live_end(struct agent_live *lv);

#endif
