/* fuzz_scanner.c - the lexer and the strict preset on arbitrary source,
 * for a language picked by the first byte. Findings must point inside the
 * input. */
#include "security/security.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct llmsb_err err = {0};
    struct sec_result *r;
    const struct language *l;
    const struct sec_policy *p;

    if (size < 1)
        return 0;
    l = languages[data[0] % languages_count];
    p = sec_preset("strict", l, &err);
    if (!p || !(r = calloc(1, sizeof(*r))))
        return 0;
    sec_scan(p, l, (const char *)data + 1, size - 1, r, &err);
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].line == 0 || r->v[i].line > size + 1 || r->v[i].column > size + 1)
            __builtin_trap();
    free(r);
    return 0;
}
