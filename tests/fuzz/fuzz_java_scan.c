/* fuzz_java_scan.c - java.c's reading of a Java source on arbitrary bytes:
 * it never reads past the input, and every name it finds is in the input
 * (the file and class names a job runs with). */
#include "languages/languages.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct lang_java_types t;
    const char *code = (const char *)data;
    const char *names[] = {t.public_type, t.main_type, t.odd_main};

    language_java_scan(code, size, &t);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) >= LANG_JAVA_NAME ||
            (names[i][0] && !memmem(code, size, names[i], strlen(names[i]))))
            __builtin_trap();
    return 0;
}
