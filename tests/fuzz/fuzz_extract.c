/* fuzz_extract.c - convert --extract's scanner (eval/extract.c) on
 * arbitrary answers: the mode from the first byte, the job's language from
 * the second, the answer the rest.  Never a read past the answer; the code
 * taken fits 3 * the answer's bytes (a line gains at most its "\n", a block
 * one separator); with nothing found it is the answer byte for byte; the
 * lines named are within the answer and in order. */
#include "eval/extract.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static const char *const langs[] = {"python", "javascript", "cpp", NULL};
    struct extract_result r;
    struct llmsb_err err = {0};
    const char *answer;
    size_t len, lines = 1;
    struct buf b;

    if (size < 2)
        return 0;
    answer = (const char *)data + 2;
    len = size - 2;
    buf_init(&b, 3 * len + 16);
    if (extract_code((enum extract_mode)(data[0] % 5), langs[data[1] % 4], answer, len, &b, &r,
                     &err) != 0)
        __builtin_trap();
    for (size_t i = 0; i < len; i++)
        lines += answer[i] == '\n';
    if (r.found == EXTRACT_FOUND_NONE && (b.len != len || (len && memcmp(b.data, answer, len))))
        __builtin_trap();
    if (r.first_line > r.last_line || r.last_line > lines || r.raw_len != len)
        __builtin_trap();
    if (r.fences == 0 && r.found != EXTRACT_FOUND_NONE && r.found != EXTRACT_FOUND_HEURISTIC)
        __builtin_trap();
    buf_release(&b);
    return 0;
}
