/* rate.c - the HTTP front's per-client rate limit: a token bucket per
 * client address (IPv4 address, IPv4-mapped IPv6 as its IPv4 address, or
 * an IPv6 address's /64, so one host cannot dodge it by changing its
 * interface id), rate tokens a second up
 * to burst.  A table of FRONT_CLIENTS_KEPT addresses, each looked for in
 * PROBE places: a new one takes the place least recently seen of them,
 * whose bucket starts full again (forgetting favours the client, never
 * refuses one wrongly). */
#include "front/front_int.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PROBE 8

struct bucket {
    unsigned char key[17]; /* family, then 4 or 8 bytes */
    int used;
    double tokens;
    int64_t seen_ms;
};

struct front_rate {
    pthread_mutex_t mu;
    double rate, burst;
    struct bucket b[FRONT_CLIENTS_KEPT];
};

struct front_rate *front_rate_new(double rate, double burst, int *nomem)
{
    struct front_rate *r;

    *nomem = 0;
    if (rate <= 0)
        return NULL;
    if (!(r = calloc(1, sizeof(*r)))) {
        *nomem = 1;
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    r->rate = rate;
    r->burst = burst >= 1 ? burst : 1;
    return r;
}

void front_rate_free(struct front_rate *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* FNV-1a over the key. */
static size_t hash(const unsigned char *k)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < 17; i++)
        h = (h ^ k[i]) * 16777619u;
    return h % FRONT_CLIENTS_KEPT;
}

int front_rate_take(struct front_rate *r, const struct sockaddr *addr, int64_t now_ms)
{
    unsigned char k[17] = {0};
    struct bucket *b = NULL, *oldest = NULL;
    int wait = 0;
    size_t h;

    if (!r || !addr)
        return 0;
    k[0] = (unsigned char)addr->sa_family;
    if (addr->sa_family == AF_INET) {
        memcpy(k + 1, &((const struct sockaddr_in *)addr)->sin_addr, 4);
    } else if (addr->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)addr)->sin6_addr;
        /* an IPv4 client on a dual-stack socket (::ffff:a.b.c.d): its
         * IPv4 address, not the /64 every IPv4 client shares */
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            k[0] = AF_INET;
            memcpy(k + 1, a6->s6_addr + 12, 4);
        } else {
            memcpy(k + 1, a6->s6_addr, 8);
        }
    }
    h = hash(k);
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < PROBE && !b; i++) {
        struct bucket *c = &r->b[(h + i) % FRONT_CLIENTS_KEPT];
        if (c->used && memcmp(c->key, k, sizeof(k)) == 0)
            b = c;
        else if (!oldest || !c->used || (oldest->used && c->seen_ms < oldest->seen_ms))
            oldest = c;
    }
    if (!b) {
        b = oldest;
        memcpy(b->key, k, sizeof(k));
        b->used = 1;
        b->tokens = r->burst;
        b->seen_ms = now_ms;
    }
    b->tokens += (double)(now_ms - b->seen_ms) / 1000 * r->rate;
    if (b->tokens > r->burst)
        b->tokens = r->burst;
    b->seen_ms = now_ms;
    if (b->tokens >= 1) {
        b->tokens -= 1;
    } else {
        wait = (int)((1 - b->tokens) / r->rate + 0.999);
        if (wait < 1)
            wait = 1;
    }
    pthread_mutex_unlock(&r->mu);
    return wait;
}
