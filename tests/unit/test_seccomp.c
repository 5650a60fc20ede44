/* test_seccomp.c - the project's seccomp profile: what it denies, that
 * the conditional rules are there, and that the allowlist never names a
 * denied call.  (tests/hostile/hostile.yaml runs the same calls from a C++
 * job against the real engine.) */
#include "test.h"

#include <cjson/cJSON.h>
#include <string.h>
#include "backends/seccomp.h"

static const cJSON *rule_for(const cJSON *syscalls, const char *name, int nth)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, syscalls) {
        const cJSON *n;
        cJSON_ArrayForEach(n, cJSON_GetObjectItem(r, "names")) {
            if (strcmp(n->valuestring, name) == 0 && nth-- == 0)
                return r;
        }
    }
    return NULL;
}

TEST(denies_the_kernel_surface)
{
    static const char *no[] = {
        "io_uring_setup", "io_uring_enter",  "keyctl",     "add_key",     "bpf",
        "userfaultfd",    "perf_event_open", "mount",      "fsopen",      "unshare",
        "setns",          "ptrace",          "kexec_load", "init_module", "no_such_call"};
    static const char *yes[] = {"read", "execve", "fork", "futex", "mmap", "socket", "wait4"};
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        ASSERT(seccomp_denies(no[i]));
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        ASSERT(!seccomp_denies(yes[i]));
}

TEST(profile_is_an_allowlist_with_conditional_rules)
{
    char *text = seccomp_profile_json();
    cJSON *p;
    const cJSON *sys, *r, *arg;

    ASSERT(text != NULL);
    p = cJSON_Parse(text);
    ASSERT(p != NULL);
    ASSERT_STR(cJSON_GetObjectItem(p, "defaultAction")->valuestring, "SCMP_ACT_ERRNO");
    ASSERT_EQ(cJSON_GetObjectItem(p, "defaultErrnoRet")->valueint, 1);
    sys = cJSON_GetObjectItem(p, "syscalls");
    /* the unconditional allowlist names nothing denied */
    r = cJSON_GetArrayItem(sys, 0);
    ASSERT_STR(cJSON_GetObjectItem(r, "action")->valuestring, "SCMP_ACT_ALLOW");
    cJSON_ArrayForEach(arg, cJSON_GetObjectItem(r, "names")) {
        ASSERT(!seccomp_denies(arg->valuestring));
    }
    ASSERT(rule_for(sys, "io_uring_setup", 0) == NULL);
    /* clone only without namespace flags */
    r = rule_for(sys, "clone", 0);
    ASSERT(r != NULL);
    arg = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "args"), 0);
    ASSERT_STR(cJSON_GetObjectItem(arg, "op")->valuestring, "SCMP_CMP_MASKED_EQ");
    ASSERT_EQ((long long)cJSON_GetObjectItem(arg, "value")->valuedouble, 0x7E020000LL);
    ASSERT_EQ((long long)cJSON_GetObjectItem(arg, "valueTwo")->valuedouble, 0);
    ASSERT(rule_for(sys, "clone", 1) == NULL);
    /* clone3 answers ENOSYS so libc falls back to clone */
    r = rule_for(sys, "clone3", 0);
    ASSERT_STR(cJSON_GetObjectItem(r, "action")->valuestring, "SCMP_ACT_ERRNO");
    ASSERT_EQ(cJSON_GetObjectItem(r, "errnoRet")->valueint, 38);
    /* personality: five allowed values, each its own rule */
    ASSERT(rule_for(sys, "personality", 4) != NULL);
    ASSERT(rule_for(sys, "personality", 5) == NULL);
    cJSON_Delete(p);
    free(text);
}

TEST_MAIN("seccomp", T(denies_the_kernel_surface),
          T(profile_is_an_allowlist_with_conditional_rules))
