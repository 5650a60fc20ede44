/* fuzz_convert.c - convert's dataset reader (JSON Lines, a JSON array,
 * pretty-printed objects one after another) and every format's checks on
 * arbitrary text, then the jobs of what was read, to a memory stream. */
#include <stdlib.h>
#include <string.h>

#include "eval/convert.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct llmsb_err err = {0};
    struct convert_set *s;
    char *text = malloc(size + 1), *out = NULL;
    size_t len = 0;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if ((s = convert_set_read("f.json", text, &err))) {
        struct convert_out o = {.out = open_memstream(&out, &len), .name = "mem"};
        if (o.out) {
            convert_write_references(s, &o, &err);
            convert_write_samples(s, "s.json", text, &o, &err);
            fclose(o.out);
        }
        free(out);
        convert_set_free(s);
    }
    free(text);
    return 0;
}
