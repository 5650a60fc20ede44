/* test.h - tiny test registry and ASSERT macros (libuv style).  Each test
 * file defines TESTS as a list of TEST(name) functions; main runs them and
 * prints "N passed, N failed". */
#ifndef LLMSB_TEST_H
#define LLMSB_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failed_flag;

#define ASSERT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "  %s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
            test_failed_flag = 1;                                                          \
            return;                                                                        \
        }                                                                                  \
    } while (0)
/* ASSERT that also prints what it was about (a table's row) */
#define ASSERT_MSG(cond, what)                                                                \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "  %s:%d: assertion failed for \"%s\": %s\n", __FILE__, __LINE__, \
                    (what), #cond);                                                           \
            test_failed_flag = 1;                                                             \
            return;                                                                           \
        }                                                                                     \
    } while (0)
#define ASSERT_EQ(a, b) ASSERT((a) == (b))
#define ASSERT_STR(a, b)                                                                           \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
            fprintf(stderr, "  %s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, a_ ? a_ : "(null)", \
                    b_ ? b_ : "(null)");                                                           \
            test_failed_flag = 1;                                                                  \
            return;                                                                                \
        }                                                                                          \
    } while (0)
#define ASSERT_CONTAINS(hay, needle)                                                         \
    do {                                                                                     \
        const char *h_ = (hay);                                                              \
        if (!h_ || !strstr(h_, (needle))) {                                                  \
            fprintf(stderr, "  %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
                    h_ ? h_ : "(null)", (needle));                                           \
            test_failed_flag = 1;                                                            \
            return;                                                                          \
        }                                                                                    \
    } while (0)

struct test_case {
    const char *name;
    void (*fn)(void);
};

#define TEST(name) static void test_##name(void)
#define T(name)            \
    {                      \
#name, test_##name \
    }

static inline int test_main(const char *suite, const struct test_case *cases, size_t n)
{
    int passed = 0, failed = 0;
    const char *only = getenv("TEST_ONLY");

    for (size_t i = 0; i < n; i++) {
        if (only && !strstr(cases[i].name, only))
            continue;
        test_failed_flag = 0;
        cases[i].fn();
        if (test_failed_flag) {
            failed++;
            printf("FAIL %s.%s\n", suite, cases[i].name);
        } else {
            passed++;
            printf("ok   %s.%s\n", suite, cases[i].name);
        }
        fflush(stdout);
    }
    printf("%s: %d passed, %d failed\n", suite, passed, failed);
    return failed ? 1 : 0;
}

#define TEST_MAIN(suite, ...)                                             \
    int main(void)                                                        \
    {                                                                     \
        static const struct test_case cases[] = {__VA_ARGS__};            \
        return test_main(suite, cases, sizeof(cases) / sizeof(cases[0])); \
    }

#endif
