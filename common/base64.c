/* base64.c - RFC 4648 base64 (standard alphabet). */
#include "base64.h"

#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *p, size_t n, size_t *outlen)
{
    const unsigned char *u = p;
    size_t olen, o = 0;
    char *out;

    if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    olen = (n + 2) / 3 * 4;
    if (!(out = malloc(olen + 1)))
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)u[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)u[i + 1] << 8;
        if (i + 2 < n)
            v |= u[i + 2];
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    if (outlen)
        *outlen = o;
    return out;
}

static int value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

char *base64_decode(const char *s, size_t n, size_t *outlen)
{
    char *out = malloc(n / 4 * 3 + 4);
    uint32_t acc = 0;
    size_t o = 0;
    int bits = 0, pad = 0;

    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int v;
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad || (v = value(c)) < 0) { /* data after padding, or a bad byte */
            free(out);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits & 0xff);
        }
    }
    if (pad > 2 || bits >= 6) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    if (outlen)
        *outlen = o;
    return out;
}
