/* fuzz_image_tree.c - the judge of a custom image's files
 * (images_custom_tree_judge) over any bytes taken for an engine's export:
 * a finding or an error, never a crash, and findings stay bounded. */
#include "images/images.h"

#include <archive.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct images_custom_tags t = {.lang = "python", .nonce = "5eed", .agent_bytes = 3};
    struct archive *a = archive_read_new();
    struct llmsb_err err = {0};
    struct buf f;

    buf_init(&f, (size_t)64 << 10);
    archive_read_support_format_tar(a);
    if (archive_read_open_memory(a, data, size) == ARCHIVE_OK)
        images_custom_tree_judge(a, &t, &f, &err);
    archive_read_free(a);
    if (f.len >= f.cap) /* the findings of one kind are capped: this never fills */
        __builtin_trap();
    buf_release(&f);
    return 0;
}
