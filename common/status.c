/* status.c - the status table (see status.h). */
#include "status.h"

#include <string.h>

#include "common.h"

/* clang-format off */
static const struct status_info table[STATUS_COUNT] = {
    [STATUS_NONE] = {"", 3, 0, 0, 0, 0, FAULT_INFRA, "no status was decided"},
    [STATUS_RUNNING] = {"running", 3, 0, 0, 0, 0, FAULT_NONE, "running now"},
    [STATUS_OK] = {"ok", STATUS_EXIT_PROGRAM, 1, 1, 1, 1, FAULT_NONE, "ran and exited 0"},
    [STATUS_RUNTIME_ERROR] = {"runtime_error", STATUS_EXIT_PROGRAM, 1, 1, 1, 1, FAULT_USER,
                              "non-zero exit or killed by a signal"},
    [STATUS_COMPILE_ERROR] = {"compile_error", 118, 1, 0, 0, 1, FAULT_USER, "the compile step failed"},
    [STATUS_INSTALL_ERROR] = {"install_error", 119, 1, 0, 0, 1, FAULT_USER,
                              "a requested library could not be installed"},
    [STATUS_TIMEOUT] = {"timeout", 124, 1, 0, 1, 1, FAULT_USER, "wall-clock limit hit; killed"},
    [STATUS_MEMORY_LIMIT] = {"memory_limit", 122, 1, 0, 1, 1, FAULT_USER,
                             "killed by the memory limit"},
    [STATUS_OUTPUT_LIMIT] = {"output_limit", 121, 1, 0, 1, 1, FAULT_USER,
                             "stdout+stderr passed the cap; killed"},
    [STATUS_BLOCKED] = {"blocked", 120, 1, 0, 0, 0, FAULT_USER, "refused by the security policy"},
    [STATUS_INVALID] = {"invalid", 2, 1, 0, 0, 1, FAULT_USER, "the job itself is malformed"},
    [STATUS_CANCELLED] = {"cancelled", 123, 1, 0, 0, 0, FAULT_NONE, "cancelled on request"},
    [STATUS_INTERNAL_ERROR] = {"internal_error", 3, 1, 0, 0, 1, FAULT_INFRA,
                               "the infrastructure failed max_attempts times"},
    [STATUS_SESSION_LOST] = {"session_lost", 125, 1, 0, 0, 1, FAULT_NONE,
                             "the session's state is gone (ended, expired or its worker died)"},
};

/* clang-format on */

const struct status_info *status_info(enum job_status s)
{
    return (unsigned)s < STATUS_COUNT ? &table[s] : &table[STATUS_NONE];
}

const char *status_name(enum job_status s)
{
    return status_info(s)->name;
}

int status_parse(const char *s, size_t n, enum job_status *out)
{
    for (int i = STATUS_NONE + 1; i < STATUS_COUNT; i++)
        if (strlen(table[i].name) == n && memcmp(table[i].name, s, n) == 0) {
            *out = (enum job_status)i;
            return 0;
        }
    return LLMSB_ERR_INVALID;
}

int status_final(enum job_status s)
{
    return status_info(s)->final;
}
