/* fuzz_convert_crux.c - convert's CRUXEval and CRUXEval-X readers on
 * arbitrary text: the first byte picks the mode and the dataset's name
 * (its language), the rest is a dataset, then after a NUL a samples file
 * (CRUXEval's object of lists, CRUXEval-X's array of rows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/convert.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static const char *const names[] = {"d.jsonl",   "py.jsonl", "js.jsonl", "java.jsonl",
                                        "cpp.jsonl", "go.jsonl", "rb.jsonl", "r.jsonl"};
    static FILE *sink;
    struct convert_opts opts = {0};
    struct llmsb_err err = {0};
    struct convert_out o = {.name = "null"};
    struct convert_set *s;
    char *text, *samples;

    if (size < 1 || !(sink || (sink = fopen("/dev/null", "w"))))
        return 0;
    opts.mode = data[0] & 1 ? "output" : (data[0] & 2 ? "input" : NULL);
    if (!(text = malloc(size + 1)))
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    samples = text + strlen(text) + 1 <= text + size - 1 ? text + strlen(text) + 1 : NULL;
    o.out = sink;
    if ((s = convert_set_read_opts(names[(data[0] >> 2) & 7], text, &opts, &err))) {
        if (samples)
            convert_write_samples(s, "s.json", samples, &o, &err);
        else
            convert_write_references(s, &o, &err);
        convert_set_free(s);
    }
    free(text);
    return 0;
}
