/* fuzz_http_head.c - the front door's end-of-headers scan
 * (common/http_gate.c's http_head_end) on any bytes a client may send
 * first.  It must return without a fault, and what it says must hold: an
 * end within the input, just after a line feed, the line before it empty
 * (bare, or a lone CR), and a request line (something not CR or LF) before
 * it; and no earlier end in the input. */
#include "common/http_gate.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *p = (const char *)data;
    size_t end = http_head_end(p, size), i = 0;

    if (end == 0)
        return 0;
    if (end > size || p[end - 1] != '\n' || end < 3)
        __builtin_trap();
    if (p[end - 2] != '\n' && !(p[end - 2] == '\r' && p[end - 3] == '\n'))
        __builtin_trap();
    while (i < end && (p[i] == '\r' || p[i] == '\n'))
        i++;
    if (i >= end - 2)
        __builtin_trap(); /* no request line before the end */
    if (end > 1 && http_head_end(p, end - 1) != 0)
        __builtin_trap(); /* the first end, not a later one */
    return 0;
}
