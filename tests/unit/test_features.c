/* test_features.c - the protocol's feature names (common/features.h):
 * every row is in the list a worker publishes and known to the check, a
 * list names a feature only whole, and needs is refused by form (naming
 * the field and the value) before it is looked up, so a name from a newer
 * build is told apart from a malformed list. */
#include "tests/unit/test.h"

#include "common/features.h"

TEST(every_feature_is_published_and_known)
{
    const char *all = features_all();
    char unknown[FEATURE_NAME_MAX + 1] = "";
    struct llmsb_err err = {0};

    ASSERT(LLMSB_PROTOCOL >= 1);
    for (int f = 0; f < FEATURE_COUNT; f++) {
        const struct feature_info *fi = feature_info((enum llmsb_feature)f);
        ASSERT(fi && fi->name && fi->field && fi->what);
        ASSERT_MSG(features_has(all, strlen(all), fi->name), fi->name);
        ASSERT_MSG(features_check("needs", fi->name, strlen(fi->name), unknown, sizeof(unknown),
                                  &err) == 0,
                   fi->name);
    }
    ASSERT(feature_info(FEATURE_COUNT) == NULL);
    {
        size_t names = 1;
        for (const char *c = all; *c; c++)
            names += *c == ',';
        ASSERT_EQ(names, FEATURE_COUNT); /* the table's names, no more */
    }
    ASSERT_EQ(features_check("needs", all, strlen(all), unknown, sizeof(unknown), &err), 0);
}

TEST(a_list_names_a_feature_only_whole)
{
    ASSERT(features_has("dedup,live", 10, "live"));
    ASSERT(features_has("dedup,live", 10, "dedup"));
    ASSERT(!features_has("dedup,live", 10, "liv"));
    ASSERT(!features_has("dedup,live", 10, "dedup,live"));
    ASSERT(!features_has("dedup,lively", 12, "live"));
    ASSERT(!features_has("dedup,live", 8, "live")); /* only len bytes count */
    ASSERT(!features_has("", 0, "live"));
}

TEST(an_unknown_name_is_told_apart_from_a_bad_list)
{
    static const char *const bad[] = {"",
                                      ",",
                                      "live,",
                                      ",live",
                                      "live,,dedup",
                                      "Live",
                                      "live dedup",
                                      "live;x",
                                      "li\xc3\xa9",
                                      "a\nb",
                                      "x234567890123456789012345678901234"};
    char unknown[FEATURE_NAME_MAX + 1] = "";
    struct llmsb_err err = {0};
    char many[200] = "";

    ASSERT_EQ(features_check("needs", "live,teleport,warp", 18, unknown, sizeof(unknown), &err), 1);
    ASSERT_STR(unknown, "teleport");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&err, 0, sizeof(err));
        ASSERT_MSG(features_check("needs", bad[i], strlen(bad[i]), unknown, sizeof(unknown),
                                  &err) == LLMSB_ERR_INVALID,
                   bad[i]);
        ASSERT_CONTAINS(err.msg, "needs: \"");
        ASSERT_CONTAINS(err.msg, "is not a list of feature names");
    }
    for (int i = 0; i <= FEATURES_MAX; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%slive", i ? "," : "");
    ASSERT_EQ(features_check("needs", many, strlen(many), unknown, sizeof(unknown), &err),
              LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "names more than 16 features");
    /* not NUL-terminated: only len bytes are read */
    ASSERT_EQ(features_check("needs", "liveXYZ", 4, unknown, sizeof(unknown), &err), 0);
}

TEST_MAIN("features", T(every_feature_is_published_and_known), T(a_list_names_a_feature_only_whole),
          T(an_unknown_name_is_told_apart_from_a_bad_list))
