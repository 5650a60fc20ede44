/* fuzz_path.c - job file path validation: an accepted path never escapes
 * the work dir (no "..", not absolute, no empty parts). */
#include "proto/proto.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *p = (const char *)data;
    struct llmsb_err err = {0};

    if (proto_path_check(p, size, &err) != 0)
        return 0;
    if (size == 0 || p[0] == '/' || memchr(p, '\0', size))
        __builtin_trap();
    for (size_t i = 0; i < size; i++) {
        size_t e = i;
        while (e < size && p[e] != '/')
            e++;
        if (e == i || (e - i == 2 && p[i] == '.' && p[i + 1] == '.') || (e - i == 1 && p[i] == '.'))
            __builtin_trap();
        i = e;
    }
    return 0;
}
