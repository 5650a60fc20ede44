/* fake_test.h - the fixture of the unit tests that run on the fake engine
 * (tests/doubles/fake_engine.h): FAKE_TEST(name) { ... } is a test whose
 * body gets a fresh engine as fe, freed after the body however it ended,
 * so a failed ASSERT leaves no agent process and no temp dir behind. */
#ifndef LLMSB_FAKE_TEST_H
#define LLMSB_FAKE_TEST_H

#include "tests/doubles/fake_engine.h"
#include "test.h"

static inline struct fake_engine *fake_test_engine(void)
{
    struct llmsb_err err = {0};
    struct fake_engine *fe = fake_engine_new(NULL, &err);

    if (!fe)
        fprintf(stderr, "  %s\n", err.msg);
    return fe;
}

#define FAKE_TEST(name)                                   \
    static void fake_body_##name(struct fake_engine *fe); \
    TEST(name)                                            \
    {                                                     \
        struct fake_engine *fe_ = fake_test_engine();     \
        ASSERT(fe_);                                      \
        fake_body_##name(fe_);                            \
        fake_engine_free(fe_);                            \
    }                                                     \
    static void fake_body_##name(struct fake_engine *fe)

#endif
