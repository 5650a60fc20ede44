/* fuzz_queue_url.c - the queue's address parsers (queue/url.c): the input's
 * first byte picks one; the rest is a URL (parsed, and redacted into
 * buffers of several sizes; neither the redaction nor a parse error may
 * show a password the parser took), a
 * MOVED/ASK error line, or RESP bytes fed through hiredis's reader whose
 * reply goes to the SENTINEL, ROLE and CLUSTER SLOTS parsers. */
#include "queue/queue_int.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* 1 when secret (a password the parser took) shows in text though it
 * occurs once in the URL s (its own place): a leak.  Short ones, and ones
 * with '*' (the mask), could match by chance. */
static int leaks(const char *s, const char *text, const char *secret)
{
    const char *first = strstr(s, secret);

    return strlen(secret) >= 4 && !strchr(secret, '*') && first && !strstr(first + 1, secret) &&
           strstr(text, secret);
}

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
    } else if (!err.msg[0] || leaks(s, err.msg, q.password) ||
               leaks(s, err.msg, q.sentinel_password))
        abort();
    if (strlen(s) < sizeof(out) - 16 &&
        (leaks(s, out, q.password) || leaks(s, out, q.sentinel_password)))
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
