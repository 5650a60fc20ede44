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
            struct fields f;
            fields_init(&f, 64);
            jobfile_fields(jf.jobs[i], &f);
            fields_release(&f);
        }
        jobfile_release(&jf);
    }
    return 0;
}
