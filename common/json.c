/* json.c - UTF-8 cleaning for JSON output (see json.h). */
#include "json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of a valid UTF-8 sequence at p (max n bytes), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned cp;
    size_t len;

    if (p[0] < 0x80)
        return p[0] ? 1 : 0;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        len = 2, cp = p[0] & 0x1f;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        len = 3, cp = p[0] & 0x0f;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        len = 4, cp = p[0] & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

char *json_utf8_clean(const char *p, size_t n)
{
    const unsigned char *u = (const unsigned char *)p;
    char *out, *o;

    if (n > (SIZE_MAX - 1) / 3)
        return NULL;
    if (!(out = malloc(n * 3 + 1))) /* each bad byte becomes 3 bytes */
        return NULL;
    o = out;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_seq(u + i, n - i);
        if (l == 0) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else {
            memcpy(o, u + i, l);
            o += l;
            i += l;
        }
    }
    *o = '\0';
    return out;
}

int json_add_text(cJSON *obj, const char *name, const char *p, size_t n)
{
    char *clean = json_utf8_clean(p ? p : "", p ? n : 0);
    cJSON *s;

    if (!clean)
        return -1;
    s = cJSON_CreateString(clean);
    free(clean);
    if (!s)
        return -1;
    cJSON_AddItemToObject(obj, name, s);
    return 0;
}

int json_text_has_nul(const char *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] != '\\')
            continue;
        if (p[i + 1] == 'u' && i + 5 < n && memcmp(p + i + 2, "0000", 4) == 0)
            return 1;
        i++; /* the escaped character, a backslash included */
    }
    return 0;
}
