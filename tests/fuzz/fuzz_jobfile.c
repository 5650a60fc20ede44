/* fuzz_jobfile.c - YAML and JSON Lines job files on arbitrary text. */
#include "config/jobfile.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct jobfile jf;
    struct llmsb_err err = {0};
    const char *name = size && data[0] & 1 ? "f.jsonl" : "f.yaml";

    if (jobfile_load_string(&jf, (const char *)data, size, name, &err) == 0) {
        for (size_t i = 0; i < jf.n; i++) {
            const char *names[64], *values[64];
            size_t lens[64];
            char **owned;
            size_t n = jobfile_fields(jf.jobs[i], names, values, lens, 64, &owned);
            jobfile_fields_free(owned, n);
        }
        jobfile_release(&jf);
    }
    return 0;
}
