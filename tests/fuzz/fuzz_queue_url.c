/* fuzz_queue_url.c - the queue's address parsers (queue/url.c): the input's
 * first byte picks one; the rest is a URL (parsed, and redacted into
 * buffers of several sizes, which must never hold the parsed password), a
 * MOVED/ASK error line, or RESP bytes fed through hiredis's reader whose
 * reply goes to the SENTINEL, ROLE and CLUSTER SLOTS parsers. */
#include "queue/queue_int.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void url_case(const char *s)
{
    static struct queue q;
    struct llmsb_err err = {0};
    char out[512], small[17];

    memset(&q, 0, sizeof(q));
    queue_url_redact(s, out, sizeof(out));
    queue_url_redact(s, small, sizeof(small));
    if (queue__url_parse(&q, s, &err) == 0) {
        if (q.nnodes < 0 || q.nnodes > QUEUE_NODES_MAX || q.port < 0 || q.port > 65535)
            abort();
        if (strlen(q.password) >= 3 && strlen(s) < sizeof(out) - 16 && strstr(out, q.password) &&
            !strstr(out, "***"))
            abort();
    } else if (!err.msg[0])
        abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct queue_node n;
    char *s, role[32];
    int ask;

    if (size < 1 || size > 4096)
        return 0;
    if (!(s = malloc(size)))
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    switch (data[0] % 3) {
    case 0:
        url_case(s);
        break;
    case 1:
        if (queue__redirect_parse(s, size - 1, &ask, &n) == 1 && (n.port < 1 || n.port > 65535))
            abort();
        (void)queue__key_slot(s, size - 1);
        break;
    default: {
        redisReader *rd = redisReaderCreate();
        void *r = NULL;
        if (rd && redisReaderFeed(rd, (const char *)data + 1, size - 1) == REDIS_OK &&
            redisReaderGetReply(rd, &r) == REDIS_OK && r) {
            queue__sentinel_addr_parse(r, &n);
            queue__role_parse(r, role, sizeof(role));
            queue__cluster_slots_find(r, data[0], &n);
            freeReplyObject(r);
        }
        if (rd)
            redisReaderFree(rd);
    }
    }
    free(s);
    return 0;
}
