/* fuzz_java_scan.c - java.c's reading of a Java source on arbitrary bytes:
 * it never reads past the input, every name it finds is in the input, and
 * the package's length is the length of its text (the file and class
 * names a job runs with). */
#include "languages/languages.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct lang_java_types t;
    const char *code = (const char *)data;

    language_java_scan(code, size, &t);
    const struct lang_java_name names[] = {t.public_type, t.main_type, t.odd_main};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].len && (names[i].s < code || names[i].s + names[i].len > code + size))
            __builtin_trap();
    if (strlen(t.package) != (t.package_len < sizeof(t.package) ? t.package_len : 0))
        __builtin_trap();
    return 0;
}
