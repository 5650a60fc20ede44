/* fuzz_lcb_decoded.c - what a LiveCodeBench decoding job prints (untrusted:
 * the sandbox ran a pickle) on arbitrary text: a row with encoded
 * private_test_cases read with a decoder that prints the input; the
 * schema check and the cases never crash or leak, and a set that reads
 * has its one task. */
#include <stdlib.h>
#include <string.h>

#include "eval/convert.h"

static const char row[] =
    "{\"question_id\": \"q1\", \"metadata\": \"{}\", \"public_test_cases\": \"\", "
    "\"private_test_cases\": \"eJxLTEoGAAJNASc=\"}\n";

static int print_input(void *ud, size_t n, const char *const *blobs, char **out, char **why,
                       struct llmsb_err *err)
{
    (void)blobs, (void)err;
    for (size_t i = 0; i < n; i++) {
        out[i] = strdup(ud);
        why[i] = NULL;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = malloc(size + 1);
    struct convert_opts opts = {.decode = print_input};
    struct convert_set_info info;
    struct convert_set *s;
    struct llmsb_err err = {0};

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    opts.decode_ud = text;
    if ((s = convert_set_read_opts("l.jsonl", row, &opts, &err))) {
        convert_set_info(s, &info);
        if (info.tasks != 1)
            __builtin_trap();
        convert_set_free(s);
    }
    free(text);
    return 0;
}
