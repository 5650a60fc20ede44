/* fuzz_config.c - the YAML config loader on arbitrary text. */
#include "config/config.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct config c;
    struct llmsb_err err = {0};

    config_defaults(&c);
    config_load_string(&c, (const char *)data, size, "fuzz.yaml", &err);
    config_release(&c); /* custom policies and preinstall lists are allocated */
    return 0;
}
