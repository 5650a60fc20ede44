/* fields.c - bounded name/value lists (see fields.h). */
#include "fields.h"

#include <stdlib.h>
#include <string.h>

#include "common.h"

void fields_init(struct fields *f, size_t max)
{
    memset(f, 0, sizeof(*f));
    f->max = max;
}

void fields_release(struct fields *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->owned[i])
            free((char *)f->v[i].name); /* one block: name, NUL, value, NUL */
    free(f->v);
    free(f->owned);
    fields_init(f, f->max);
}

static int reserve(struct fields *f)
{
    if (f->n >= f->max) {
        f->dropped++;
        return LLMSB_ERR_LIMIT;
    }
    if (f->n == f->alloc) {
        size_t na = f->alloc ? f->alloc * 2 : 16;
        struct field *nv;
        unsigned char *no;
        if (na > f->max)
            na = f->max;
        if (!(nv = realloc(f->v, na * sizeof(*nv))))
            return LLMSB_ERR_NOMEM;
        f->v = nv;
        if (!(no = realloc(f->owned, na)))
            return LLMSB_ERR_NOMEM;
        f->owned = no;
        f->alloc = na;
    }
    return 0;
}

int fields_add(struct fields *f, const char *name, const char *value, size_t len)
{
    int rc = reserve(f);

    if (rc)
        return rc;
    f->v[f->n] = (struct field){name, strlen(name), value ? value : "", value ? len : 0};
    f->owned[f->n++] = 0;
    return 0;
}

int fields_adds(struct fields *f, const char *name, const char *value)
{
    return fields_add(f, name, value, value ? strlen(value) : 0);
}

int fields_add_copy(struct fields *f, const char *name, size_t nlen, const char *value, size_t len)
{
    char *block;
    int rc = reserve(f);

    if (rc)
        return rc;
    if (nlen > ((size_t)1 << 30) || len > ((size_t)1 << 30) || !(block = malloc(nlen + len + 2)))
        return LLMSB_ERR_NOMEM;
    memcpy(block, name, nlen);
    block[nlen] = '\0';
    if (len)
        memcpy(block + nlen + 1, value, len);
    block[nlen + 1 + len] = '\0';
    f->v[f->n] = (struct field){block, nlen, block + nlen + 1, len};
    f->owned[f->n++] = 1;
    return 0;
}

const char *fields_get(const struct fields *f, const char *name, size_t *len)
{
    size_t nl = strlen(name);

    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].name_len == nl && memcmp(f->v[i].name, name, nl) == 0) {
            if (len)
                *len = f->v[i].len;
            return f->v[i].value;
        }
    return NULL;
}

int fields_move(struct fields *dst, struct fields *src)
{
    for (size_t i = 0; i < src->n; i++) {
        int rc = reserve(dst);
        if (rc)
            return rc;
        dst->v[dst->n] = src->v[i];
        dst->owned[dst->n++] = src->owned[i];
        src->owned[i] = 0;
    }
    dst->dropped += src->dropped;
    dst->oversized += src->oversized;
    fields_release(src);
    return 0;
}
