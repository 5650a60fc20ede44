/* fuzz_judge0_zip.c - Judge0's additional_files reader (judge0_zip_files)
 * over any bytes taken for a zip archive: files or a reason, never a
 * crash, and never more than the 10240 KB it allows unpacked. */
#include "front/judge0_int.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    cJSON *files = NULL, *f;
    char why[256];
    size_t total = 0;

    if (judge0_zip_files((const char *)data, size, "main.py", &files, why, sizeof(why)) != 0) {
        if (files || !why[0])
            __builtin_trap(); /* a refusal says why and gives nothing */
        return 0;
    }
    cJSON_ArrayForEach(f, files) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(f, "base64");
        if (!cJSON_IsString(b) || strcmp(f->string, "main.py") == 0)
            __builtin_trap();
        total += strlen(b->valuestring) / 4 * 3;
    }
    if (total > (size_t)JUDGE0_EXTRACT_MAX_KB * 1024 + 3 * (size_t)JUDGE0_ZIP_ENTRIES_MAX)
        __builtin_trap();
    cJSON_Delete(files);
    return 0;
}
