/* fuzz_job_fields.c - job fields from a stream entry: the input is split
 * into NUL-separated name/value pairs and parsed as a job (copies,
 * recheck and needs included); an accepted job must also turn into an
 * agent JOB frame, and any list of fields into a dedup form.  Each value
 * also goes through the feature-list reader as the worker reads needs
 * (before the job is parsed) and a heartbeat's features. */
#include "common/features.h"
#include "job/dedup.h"
#include "job/job.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static struct config cfg;
    static int ready;
    struct fields f;
    struct llmsb_err err = {0};
    const char *p = (const char *)data, *end = p + size;
    struct job j;
    size_t n = 0;

    if (!ready) {
        config_defaults(&cfg);
        ready = 1;
    }
    fields_init(&f, 16);
    while (p < end && n < 16) {
        const char *name = p, *nul = memchr(p, '\0', (size_t)(end - p));
        if (!nul)
            break;
        const char *v = nul + 1, *vend = memchr(v, '\0', (size_t)(end - v));
        if (!vend)
            vend = end;
        fields_add_copy(&f, name, (size_t)(nul - name), v, (size_t)(vend - v));
        n++;
        p = vend + 1;
    }
    for (size_t i = 0; i < f.n; i++) {
        char unknown[FEATURE_NAME_MAX + 1];
        features_check("needs", f.v[i].value, f.v[i].len, unknown, sizeof(unknown), &err);
        features_has(f.v[i].value, f.v[i].len, "live");
    }
    {
        struct buf form;
        buf_init(&form, (size_t)64 << 20);
        job_dedup_form(&f, &form);
        buf_release(&form);
    }
    job_init(&j, &cfg);
    if (job_from_fields(&j, &cfg, &f, "1-0", &err) == 0) {
        struct proto_job pj;
        if (job_to_proto(&j, &pj, &err) == 0)
            proto_job_release(&pj);
    }
    job_release(&j);
    fields_release(&f);
    return 0;
}
