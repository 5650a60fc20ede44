/* http_check.c - the MCP HTTP transport's header checks (mcp/http_check.h):
 * bearer tokens compared as SHA-256 hashes in constant time, loopback
 * hosts and origins, media types; new session ids from the kernel's RNG. */
#include "mcp/http_check.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/random.h"

void mcp_token_hash(const char *token, size_t len, unsigned char hash[MCP_TOKEN_HASH])
{
    SHA256((const unsigned char *)token, len, hash);
}

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

int mcp_bearer_ok(const char *header, const unsigned char want[MCP_TOKEN_HASH])
{
    unsigned char got[MCP_TOKEN_HASH];
    const char *tok;
    size_t len;

    if (!header)
        return 0;
    header = skip_blanks(header);
    if (strncasecmp(header, "bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
        return 0;
    tok = skip_blanks(header + 6);
    len = strlen(tok);
    while (len && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
        len--;
    if (len == 0)
        return 0;
    /* hashes of equal length: the time says nothing of the token's */
    mcp_token_hash(tok, len, got);
    return CRYPTO_memcmp(got, want, MCP_TOKEN_HASH) == 0;
}

/* 1 when s (n bytes) is a port: 1 to 5 digits. */
static int is_port(const char *s, size_t n)
{
    if (n == 0 || n > 5)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

int mcp_host_loopback(const char *host)
{
    char name[64];
    const char *colon;
    size_t n;
    struct in_addr a4;

    if (!host)
        return 0;
    if (host[0] == '[') { /* [::1] or [::1]:port */
        const char *end = strchr(host, ']');
        if (!end || (size_t)(end - host - 1) != 3 || strncmp(host + 1, "::1", 3) != 0)
            return 0;
        return end[1] == '\0' || (end[1] == ':' && is_port(end + 2, strlen(end + 2)));
    }
    if (strcmp(host, "::1") == 0)
        return 1;
    n = strlen(host);
    if ((colon = strchr(host, ':')) != NULL) {
        if (!is_port(colon + 1, strlen(colon + 1)))
            return 0;
        n = (size_t)(colon - host);
    }
    if (n == 0 || n >= sizeof(name))
        return 0;
    memcpy(name, host, n);
    name[n] = '\0';
    if (strcasecmp(name, "localhost") == 0)
        return 1;
    return inet_pton(AF_INET, name, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/* 1 when origin is one of allowed's comma-separated entries, exactly. */
static int origin_listed(const char *origin, const char *allowed)
{
    size_t n = strlen(origin);

    while (allowed && *allowed) {
        const char *end = strchr(allowed, ',');
        size_t len = end ? (size_t)(end - allowed) : strlen(allowed);
        if (len == n && len > 0 && strncmp(allowed, origin, n) == 0)
            return 1;
        allowed = end ? end + 1 : NULL;
    }
    return 0;
}

int mcp_origin_ok(const char *origin, const char *allowed)
{
    const char *rest;

    if (!origin)
        return 1;
    if (origin_listed(origin, allowed))
        return 1;
    if (strncmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncmp(origin, "https://", 8) == 0)
        rest = origin + 8;
    else
        return 0; /* "null", another scheme */
    return strchr(rest, '/') == NULL && mcp_host_loopback(rest);
}

/* 1 when the parameters of a media range (from its first ';') set q to 0. */
static int q_zero(const char *p, size_t n)
{
    for (size_t i = 0; i + 2 <= n; i++) {
        size_t k = i;
        if (p[i] != ';')
            continue;
        k++;
        while (k < n && (p[k] == ' ' || p[k] == '\t'))
            k++;
        if (k + 2 <= n && (p[k] == 'q' || p[k] == 'Q') && p[k + 1] == '=') {
            k += 2;
            if (k < n && p[k] == '0') {
                k++;
                if (k < n && p[k] == '.')
                    k++;
                while (k < n && p[k] == '0')
                    k++;
                return k == n || p[k] == ';' || p[k] == ' ' || p[k] == '\t';
            }
        }
    }
    return 0;
}

int mcp_accepts(const char *accept, const char *type)
{
    const char *slash = strchr(type, '/');
    size_t major = slash ? (size_t)(slash - type) : strlen(type);

    while (accept && *accept) {
        const char *end = strchr(accept, ',');
        size_t len = end ? (size_t)(end - accept) : strlen(accept), r;
        const char *range = skip_blanks(accept);
        len -= (size_t)(range - accept);
        for (r = 0; r < len && range[r] != ';' && range[r] != ' ' && range[r] != '\t'; r++)
            ;
        if (!q_zero(range + r, len - r) &&
            ((r == strlen(type) && strncasecmp(range, type, r) == 0) ||
             (r == 3 && strncmp(range, "*/*", 3) == 0) ||
             (r == major + 2 && strncasecmp(range, type, major) == 0 &&
              strncmp(range + major, "/*", 2) == 0)))
            return 1;
        accept = end ? end + 1 : NULL;
    }
    return 0;
}

int mcp_content_json(const char *ctype)
{
    if (!ctype)
        return 0;
    ctype = skip_blanks(ctype);
    if (strncasecmp(ctype, "application/json", 16) != 0)
        return 0;
    ctype = skip_blanks(ctype + 16);
    return *ctype == '\0' || *ctype == ';';
}

int mcp_session_id_ok(const char *id)
{
    size_t n = 0;

    if (!id)
        return 0;
    for (; id[n]; n++)
        if (n >= MCP_SESSION_ID_LEN ||
            !((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
            return 0;
    return n == MCP_SESSION_ID_LEN;
}

int mcp_session_id_equal(const char *a, const char *b)
{
    return CRYPTO_memcmp(a, b, MCP_SESSION_ID_LEN) == 0;
}

int mcp_session_id_new(char id[MCP_SESSION_ID_LEN + 1], struct llmsb_err *err)
{
    return random_hex(id, MCP_SESSION_ID_LEN + 1, MCP_SESSION_ID_LEN / 2,
                      "mcp: the MCP session's id", err);
}
