/* fuzz_convert_stdio.c - the stdin/stdout benchmarks' rows on arbitrary
 * text: a dataset and a samples file (split at the first NUL; without one,
 * the references); what convert_set_read reads as a file of one of them
 * (fuzz_convert.c takes the rest) is written with convert_write to a
 * memory stream; never a crash or leak, and every job written is one JSON
 * object per line. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/convert.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = malloc(size + 1), *samples, *out = NULL;
    struct convert_out o = {.name = "mem"};
    struct convert_set *s = NULL;
    struct convert_set_info info = {0};
    struct llmsb_err err = {0};
    size_t len = 0;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    samples = memchr(text, 0, size) ? text + strlen(text) + 1 : NULL;
    o.out = open_memstream(&out, &len);
    if (o.out && (s = convert_set_read("d.jsonl", text, &err)))
        convert_set_info(s, &info);
    if (info.benchmark) {
        convert_write(s, "s.json", samples, &o, &err);
        fclose(o.out);
        for (char *p = out, *nl; p && *p; p = nl + 1) {
            cJSON *job;
            if (!(nl = strchr(p, '\n')))
                __builtin_trap();
            job = cJSON_ParseWithLength(p, (size_t)(nl - p));
            if (!cJSON_IsObject(job))
                __builtin_trap();
            cJSON_Delete(job);
        }
    } else if (o.out) {
        fclose(o.out);
    }
    convert_set_free(s);
    free(out);
    free(text);
    return 0;
}
