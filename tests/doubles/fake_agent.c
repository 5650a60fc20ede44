/* fake_agent.c - TEST DOUBLE of llmsb-agent, for a fault the real agent
 * cannot be made to produce on demand: it answers every JOB with a RESULT of
 * status internal_error (as the real agent does when the kernel refuses it
 * a fork or a pipe), then READY.  tests/queue/test_queue.sh builds it into
 * an image and checks that the worker treats that as an infrastructure
 * failure: retried, then dead-lettered, never a plain final result. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"

static int send_frame(int type, const struct buf *payload)
{
    return proto_frame_write(STDOUT_FILENO, type, payload ? payload->data : NULL,
                             payload ? payload->len : 0);
}

static int send_ready(int type)
{
    struct buf p;
    int rc;

    buf_init(&p, 256);
    proto_put_str(&p, TAG_AGENT_VERSION, "fake");
    proto_put_u64(&p, TAG_CLEAN, 1);
    rc = send_frame(type, &p);
    buf_release(&p);
    return rc;
}

static int answer_job(void)
{
    struct proto_result r;
    struct buf p;
    int rc;

    proto_result_init(&r, 1024);
    r.status = STATUS_INTERNAL_ERROR;
    snprintf(r.error, sizeof(r.error), "test double: the agent could not fork");
    buf_init(&p, 1 << 20);
    rc = proto_result_encode(&r, &p) || send_frame(PROTO_RESULT, &p) || send_ready(PROTO_READY);
    buf_release(&p);
    proto_result_release(&r);
    return rc;
}

int main(void)
{
    struct buf in;
    struct llmsb_err err = {0};
    char chunk[65536];

    buf_init(&in, PROTO_MAX_PAYLOAD + PROTO_HEADER_LEN);
    if (send_ready(PROTO_HELLO) != 0)
        return 3;
    for (;;) {
        struct proto_frame f;
        size_t used;
        int rc = proto_frame_parse(in.data ? in.data : "", in.len, &f, &used, &err);
        if (rc < 0)
            return 3;
        if (rc == 0) {
            ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));
            if (n <= 0)
                return 0;
            if (buf_append(&in, chunk, (size_t)n) != 0)
                return 3;
            continue;
        }
        if (f.type == PROTO_JOB)
            rc = answer_job();
        else if (f.type == PROTO_PING)
            rc = send_frame(PROTO_PONG, NULL);
        buf_consume(&in, used);
        if (rc != 0)
            return 3;
    }
}
