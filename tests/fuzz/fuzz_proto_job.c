/* fuzz_proto_job.c - the agent's JOB decoder on arbitrary payloads; a
 * decoded job must re-encode and decode to the same shape. */
#include "proto/proto.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct proto_job j, k;
    struct llmsb_err err = {0};
    struct buf b;

    if (proto_job_decode((const char *)data, size, &j, &err) != 0)
        return 0;
    buf_init(&b, 0);
    if (proto_job_encode(&j, &b) == 0 && proto_job_decode(b.data, b.len, &k, &err) == 0) {
        if (k.nfiles != j.nfiles || k.nrun != j.nrun || k.nenv != j.nenv)
            __builtin_trap();
        proto_job_release(&k);
    }
    buf_release(&b);
    proto_job_release(&j);
    return 0;
}
