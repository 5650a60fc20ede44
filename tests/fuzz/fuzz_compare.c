/* fuzz_compare.c - the output comparisons on arbitrary output and
 * expectation (split at the first NUL; the mode from the first byte):
 * never a read past either, and every mode says a text equals itself but
 * line_token_sets (APPS fails "a\rb" against itself: its output's lines
 * break at CR, its expected text's only at LF); the output read as a
 * comparison (float:TOL, tokens_icase_abs:TOL) too. */
#include "common/compare.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct compare c = {COMPARE_FLOAT, COMPARE_DEFAULT_TOL}, parsed;
    const char *got, *nul, *want, *why = NULL;
    size_t gn, wn;

    if (size < 1)
        return 0;
    c.mode = (enum compare_mode)(data[0] % COMPARE_MODES);
    if (c.mode == COMPARE_TOKENS_ICASE_ABS)
        c.tol = COMPARE_ICASE_ABS_TOL;
    got = (const char *)data + 1;
    nul = memchr(got, '\0', size - 1);
    gn = nul ? (size_t)(nul - got) : size - 1;
    want = nul ? nul + 1 : got + gn;
    wn = size - 1 - gn - (nul ? 1 : 0);
    compare_output(&c, got, gn, want, wn);
    if (compare_parse(got, gn, &parsed, &why) == 0 &&
        (parsed.mode == COMPARE_FLOAT || parsed.mode == COMPARE_TOKENS_ICASE_ABS) &&
        !(parsed.tol >= 0 && parsed.tol <= 1))
        __builtin_trap();
    if (c.mode != COMPARE_LINE_TOKEN_SETS &&
        (!compare_output(&c, got, gn, got, gn) || !compare_output(&c, want, wn, want, wn)))
        __builtin_trap();
    return 0;
}
