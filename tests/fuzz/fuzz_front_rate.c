/* fuzz_front_rate.c - the HTTP front's per-client checks over any bytes:
 * the rate limit (front_rate_take: any addresses of any family, times that
 * mostly go forward and sometimes back a little, as two threads' clocks
 * read before the lock may) and the callback allowlist
 * (front_callback_allowed: any URL against any --callback-allow list).
 * The first byte's top bit picks which.  Checked: a wait is never
 * negative, and while the clock only goes forward it is at most what one
 * token takes at the rate (the bucket never goes below empty); a URL is
 * allowed only by a non-empty list, and the reason always fits its buffer.
 * No name is looked up on the network: this file's getaddrinfo (a test
 * double in front of libc's) resolves numeric hosts only, and a few test
 * names to fixed addresses, so the fuzzer can reach the name branches. */
#include "front/front_int.h"

#include <dlfcn.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- a resolver that never leaves the process (test double) ---- */

static const struct {
    const char *name;
    const char *addr[2]; /* what the name resolves to: one or two addresses */
} names[] = {
    {"callback.test", {"10.1.2.3", NULL}},
    {"two.test", {"10.1.2.3", "192.168.7.7"}},
    {"six.test", {"fd00::1", "10.9.9.9"}},
    {"localhost", {"127.0.0.1", "::1"}},
};

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res);
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    static int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    struct addrinfo h = hints ? *hints : (struct addrinfo){0}, *tail;
    int rc;

    if (!real && !(real = (int (*)(const char *, const char *, const struct addrinfo *,
                                   struct addrinfo **))dlsym(RTLD_NEXT, "getaddrinfo")))
        return EAI_FAIL;
    h.ai_flags |= AI_NUMERICHOST | AI_NUMERICSERV;
    for (size_t i = 0; node && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(node, names[i].name) != 0)
            continue;
        if ((rc = real(names[i].addr[0], service, &h, res)) != 0 || !names[i].addr[1])
            return rc;
        for (tail = *res; tail->ai_next; tail = tail->ai_next)
            ;
        if (real(names[i].addr[1], service, &h, &tail->ai_next) != 0)
            tail->ai_next = NULL;
        return 0;
    }
    return real(node, service, &h, res);
}

/* ---- the rate limit ---- */

/* A sockaddr of the family byte f picks, allocated to its exact size (so
 * a read past it is seen), its address from p[0..4) spread over it. */
static struct sockaddr *addr_new(unsigned char f, const unsigned char *p)
{
    struct sockaddr *sa = NULL;

    if ((f & 3) == 0 || (f & 3) == 3) {
        struct sockaddr_in *in = calloc(1, sizeof(*in));
        if (!in)
            return NULL;
        in->sin_family = AF_INET;
        memcpy(&in->sin_addr, p, 4);
        sa = (struct sockaddr *)in;
    } else if ((f & 3) == 1) {
        struct sockaddr_in6 *in6 = calloc(1, sizeof(*in6));
        if (!in6)
            return NULL;
        in6->sin6_family = AF_INET6;
        memcpy(&in6->sin6_addr.s6_addr[f >> 5 & 4], p, 4);   /* in the /64 */
        in6->sin6_addr.s6_addr[8 + (f >> 2 & 7)] = p[0] ^ f; /* the interface id */
        sa = (struct sockaddr *)in6;
    } else {
        if (!(sa = calloc(1, sizeof(*sa))))
            return NULL;
        sa->sa_family = f & 4 ? AF_UNIX : AF_UNSPEC;
    }
    return sa;
}

/* Records of 7 bytes: family and spread, a signed step of the clock
 * (scaled by the top bits), an address, and how many neighbours of it
 * (+1 each) come at the same time, to fill the table. */
static void fuzz_rate(const unsigned char *data, size_t size)
{
    static const double rates[] = {0.001, 0.5, 1, 3, 100, 1e6};
    static const double bursts[] = {0, 1, 2, 7.5, 1000, 1e6};
    static const int64_t scales[] = {1, 37, 1000, 86400000};
    struct front_rate *r;
    int nomem, forward = 1;
    int64_t now = 1000000;
    double rate;

    if (size < 2)
        return;
    rate = rates[data[0] % 6];
    if (!(r = front_rate_new(rate, bursts[data[1] % 6], &nomem)))
        return;
    for (size_t i = 2; i + 7 <= size; i += 7) {
        const unsigned char *p = data + i;
        int32_t step = (int16_t)(p[1] | p[2] << 8);
        unsigned char addr[4];
        if (step < 0 && (step < -1000 || (p[0] & 0x80))) /* back: a little, sometimes */
            step = -step;
        now += (int64_t)step * (step > 0 ? scales[p[0] >> 5 & 3] : 1);
        forward &= step >= 0;
        memcpy(addr, p + 3, 4);
        for (unsigned k = 0; k <= (p[0] >> 5 & 3) * 20u; k++) {
            struct sockaddr *sa = addr_new(p[0], addr);
            int wait = front_rate_take(r, sa, now);
            free(sa);
            if (wait < 0 || (forward && wait > 1 / rate + 1))
                __builtin_trap();
            addr[3]++;
        }
    }
    if (front_rate_take(r, NULL, now) != 0)
        __builtin_trap();
    front_rate_free(r);
}

/* ---- the callback allowlist ---- */

/* Byte 1: the reason's buffer size; then URL '\n' allowlist. */
static void fuzz_callback(const unsigned char *data, size_t size)
{
    char *text, *nl, *why;
    size_t wsz;
    int ok;

    if (size < 2)
        return;
    wsz = 1 + data[1] % 300;
    if (!(text = malloc(size - 1)) || !(why = malloc(wsz))) {
        free(text);
        return;
    }
    memcpy(text, data + 2, size - 2);
    text[size - 2] = '\0';
    nl = strchr(text, '\n');
    if (nl)
        *nl = '\0';
    why[0] = '\0';
    ok = front_callback_allowed(text, nl ? nl + 1 : NULL, why, wsz);
    if (ok != 0 && ok != 1)
        __builtin_trap();
    if (ok && (!nl || !nl[1]))
        __builtin_trap(); /* allowed by no list */
    if (!ok && !memchr(why, '\0', wsz))
        __builtin_trap();
    free(why);
    free(text);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 0x80)
        fuzz_callback(data, size);
    else
        fuzz_rate(data, size);
    return 0;
}
