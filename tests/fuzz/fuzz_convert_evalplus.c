/* fuzz_convert_evalplus.c - what convert reads for EvalPlus on arbitrary
 * bytes: the first part (up to a NUL) unpacked when it is gzip (a 1 MiB
 * cap) and read as a dataset (NaN/Infinity marked, the EvalPlus rows'
 * checks), the second as --expected (the ground truth's results, checked)
 * and the third as samples, then the jobs, to a memory stream. */
#include <stdlib.h>
#include <string.h>

#include "eval/convert.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct llmsb_err err = {0};
    struct convert_opts opts = {.expected_name = "gt.jsonl"};
    struct convert_set *s = NULL;
    const unsigned char *nul = memchr(data, '\0', size);
    size_t first = nul ? (size_t)(nul - data) : size;
    char *rest = malloc(size - first + 2), *samples, *out = NULL;
    struct buf b;
    size_t len = 0;

    if (!rest)
        return 0;
    memcpy(rest, nul ? nul + 1 : data + size, nul ? size - first - 1 : 0);
    rest[nul ? size - first - 1 : 0] = '\0';
    samples = strchr(rest, '\x02'); /* expected, then samples after a 0x02 */
    if (samples)
        *samples++ = '\0';
    opts.expected_text = rest;
    buf_init(&b, (size_t)1 << 20);
    if (buf_append(&b, data, first) == 0 && convert_text_unpack(&b, "d.gz", 1 << 20, &err) == 0 &&
        (s = convert_set_read_opts("d.jsonl", b.data ? b.data : "", &opts, &err))) {
        struct convert_out o = {.out = open_memstream(&out, &len), .name = "mem"};
        if (o.out) {
            convert_write_references(s, &o, &err);
            convert_write_samples(s, "s.jsonl", samples ? samples : "", &o, &err);
            fclose(o.out);
        }
        free(out);
    }
    convert_set_free(s);
    buf_release(&b);
    free(rest);
    return 0;
}
