/* fuzz_proto_frames.c - frame parsing, RESULT decoding (artifacts,
 * test-case results and the phases too) and the result's JSON, and OUTPUT
 * decoding (a live job's chunks), as the worker does on the bytes a
 * (possibly hostile) container sends. */
#include "proto/proto.h"
#include "job/job.h"
#include "job/result.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *p = (const char *)data;
    struct llmsb_err err = {0};
    static struct proto_case two[2];
    static struct job cases_job = {.cases = two, .ncases = 2};

    while (size > 0) {
        struct proto_frame f;
        size_t used = 0;
        if (proto_frame_parse(p, size, &f, &used, &err) != 1)
            break;
        struct job_result jr;
        struct proto_chunk c;
        if (proto_chunk_decode(f.payload, f.len, &c, &err) == 0 &&
            (c.fd < 1 || c.fd > 2 || c.offset + c.len > PROTO_MAX_OUTPUT ||
             (c.len && (c.data < f.payload || c.data + c.len > f.payload + f.len))))
            __builtin_trap(); /* the decoder's promises: fd, cap, data inside the payload */
        job_result_init(&jr, NULL);
        if (proto_result_decode(f.payload, f.len, &jr.r, &err) == 0) {
            job_result_artifacts(&jr);          /* names from the agent are untrusted */
            job_result_check(&jr, &cases_job);  /* so are its case results */
            cJSON_Delete(job_result_json(&jr)); /* and its phases */
        }
        job_result_release(&jr);
        p += used;
        size -= used;
    }
    return 0;
}
