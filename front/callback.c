/* callback.c - a started job's result sent to the URL its caller gave
 * (Judge0's callback_url): only to what the operator allowed
 * (--callback-allow: host names, addresses, CIDRs), never to any other
 * address a name resolves to, the connection pinned to the address that
 * was checked (a name that resolves elsewhere the second time reaches
 * nothing), no redirect followed, no proxy, a few tries, each short. */
#include "front/front_int.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"

#define CB_TRIES 3
#define CB_TIMEOUT_MS 5000L
#define CB_ENTRY_MAX 256

/* 1 when address a (of family fam, 4 or 16 bytes) is within entry e
 * ("ADDR" or "ADDR/BITS"). */
static int in_cidr(const char *e, int fam, const unsigned char *a)
{
    char text[CB_ENTRY_MAX];
    unsigned char net[16];
    const char *slash = strchr(e, '/');
    size_t n = slash ? (size_t)(slash - e) : strlen(e), bytes = fam == AF_INET ? 4 : 16;
    long bits = (long)bytes * 8;

    if (n >= sizeof(text))
        return 0;
    memcpy(text, e, n);
    text[n] = '\0';
    if (inet_pton(fam, text, net) != 1)
        return 0;
    if (slash) {
        char *end;
        bits = strtol(slash + 1, &end, 10);
        if (*end || end == slash + 1 || bits < 0 || bits > (long)bytes * 8)
            return 0;
    }
    for (long i = 0; i < bits; i++) {
        unsigned m = 0x80u >> (i % 8);
        if ((net[i / 8] & m) != (a[i / 8] & m))
            return 0;
    }
    return 1;
}

/* Calls fn(entry) for each entry of allow until it returns 1. */
static int each_entry(const char *allow, int (*fn)(const char *e, const void *arg), const void *arg)
{
    const char *p = allow;

    while (p && *p) {
        char e[CB_ENTRY_MAX];
        size_t n = strcspn(p, ",");
        size_t a = 0, b = n;
        while (a < b && (p[a] == ' ' || p[a] == '\t'))
            a++;
        while (b > a && (p[b - 1] == ' ' || p[b - 1] == '\t'))
            b--;
        if (b - a > 0 && b - a < sizeof(e)) {
            memcpy(e, p + a, b - a);
            e[b - a] = '\0';
            if (fn(e, arg))
                return 1;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

static int names_host(const char *e, const void *arg)
{
    return strcasecmp(e, arg) == 0;
}

struct addr_arg {
    int fam;
    const unsigned char *a;
};

static int holds_addr(const char *e, const void *arg)
{
    const struct addr_arg *x = arg;
    return in_cidr(e, x->fam, x->a);
}

/* url's scheme, host and port checked against allow; pin gets
 * "host:port:address" of its first address (for CURLOPT_RESOLVE).
 * Returns 1, or 0 with why. */
static int check(const char *url, const char *allow, char *why, size_t wsz, char *pin, size_t pinsz)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    char bare[256];
    int ok = 0, named, n = 0;

    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        snprintf(why, wsz, "is not a URL");
        goto out;
    }
    if (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0) {
        snprintf(why, wsz, "only http and https URLs are called back");
        goto out;
    }
    /* an IPv6 literal comes in brackets */
    snprintf(bare, sizeof(bare), "%.*s", (int)strcspn(host[0] == '[' ? host + 1 : host, "]"),
             host[0] == '[' ? host + 1 : host);
    if (!allow || !*allow) {
        snprintf(why, wsz, "no callback is allowed by this server (--callback-allow)");
        goto out;
    }
    named = each_entry(allow, names_host, bare);
    if (getaddrinfo(bare, port, &hints, &ai) != 0 || !ai) {
        snprintf(why, wsz, "its host \"%s\" does not resolve", bare);
        goto out;
    }
    ok = 1;
    for (struct addrinfo *p = ai; p && ok; p = p->ai_next, n++) {
        struct addr_arg x = {p->ai_family, NULL};
        char text[INET6_ADDRSTRLEN];
        if (p->ai_family == AF_INET)
            x.a = (const unsigned char *)&((struct sockaddr_in *)p->ai_addr)->sin_addr;
        else if (p->ai_family == AF_INET6)
            x.a = (const unsigned char *)&((struct sockaddr_in6 *)p->ai_addr)->sin6_addr;
        else
            continue;
        inet_ntop(p->ai_family, x.a, text, sizeof(text));
        /* ::ffff:a.b.c.d reaches a.b.c.d: checked as that IPv4 address, so
         * an IPv6 range (::/0) never lets 127.0.0.1 or 169.254.169.254 in */
        if (p->ai_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)x.a)) {
            x.fam = AF_INET;
            x.a += 12;
        }
        if (!named && !each_entry(allow, holds_addr, &x)) {
            snprintf(why, wsz, "its host \"%s\" (%s) is not one --callback-allow names", bare,
                     text);
            ok = 0;
        } else if (n == 0 && pin) {
            snprintf(pin, pinsz, "%s:%s:%s%s%s", bare, port, p->ai_family == AF_INET6 ? "[" : "",
                     text, p->ai_family == AF_INET6 ? "]" : "");
        }
    }
out:
    if (ai)
        freeaddrinfo(ai);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return ok;
}

int front_callback_allowed(const char *url, const char *allow, char *why, size_t wsz)
{
    return check(url, allow, why, wsz, NULL, 0);
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

int front_callback_put(const char *url, const char *allow, const char *body)
{
    char why[300], pin[400];
    long code = 0;

    for (int i = 0; i < CB_TRIES; i++) {
        CURL *c;
        struct curl_slist *hdr = NULL, *resolve = NULL;
        CURLcode rc;
        if (i)
            clock_sleep_ms(1000L << (i - 1));
        if (!check(url, allow, why, sizeof(why), pin, sizeof(pin))) {
            log_warn("http: callback to \"%.200s\" not sent: %s", url, why);
            return -1;
        }
        if (!(c = curl_easy_init()))
            continue;
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
        resolve = curl_slist_append(resolve, pin);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_RESOLVE, resolve);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, CB_TIMEOUT_MS);
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
        /* no proxy from the environment (http_proxy, ALL_PROXY): it would
         * resolve the host itself, past the address checked and pinned */
        curl_easy_setopt(c, CURLOPT_PROXY, "");
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        rc = curl_easy_perform(c);
        if (rc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdr);
        curl_slist_free_all(resolve);
        if (rc == CURLE_OK && code >= 200 && code < 300)
            return 0;
        log_warn("http: callback to \"%.200s\", try %d of %d: %s", url, i + 1, CB_TRIES,
                 rc == CURLE_OK ? "not answered 2xx" : curl_easy_strerror(rc));
    }
    return -1;
}
