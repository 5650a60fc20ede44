/* fuzz_dockerfile.c - the check that our layer can follow a user's
 * Dockerfile (images_custom_dockerfile_check): any bytes, a BOM, CRs,
 * Unicode spaces, directives; it answers 0 or LLMSB_ERR_INVALID with a
 * message naming the line. */
#include "images/images.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct llmsb_err err = {0};
    int rc = images_custom_dockerfile_check((const char *)data, size, "D", &err);

    if (rc != 0 && (rc != LLMSB_ERR_INVALID || !strstr(err.msg, "--dockerfile \"D\":")))
        __builtin_trap();
    return 0;
}
