/* features.c - the feature table and comma-separated lists of its names
 * (see features.h). */
#include "features.h"

#include <stdio.h>
#include <string.h>

static const struct feature_info table[FEATURE_COUNT] = {
    [FEATURE_DEDUP] = {"dedup", "copies", "dedup (the copies field)"},
    [FEATURE_RECHECK] = {"recheck", "recheck", "recheck (the recheck field)"},
    [FEATURE_LIVE] = {"live", "live", "live output (the live field)"},
};

const struct feature_info *feature_info(enum llmsb_feature f)
{
    return (unsigned)f < FEATURE_COUNT ? &table[f] : NULL;
}

const char *features_all(void)
{
    return "dedup,recheck,live";
}

/* The names of a comma-separated list, in turn ("" is one empty name, a
 * trailing comma ends with one). */
struct names {
    const char *list;
    size_t len, at;
    int done;
};

static int names_next(struct names *it, const char **one, size_t *n)
{
    const char *comma;

    if (it->done)
        return 0;
    *one = it->list + it->at;
    comma = memchr(*one, ',', it->len - it->at);
    *n = comma ? (size_t)(comma - *one) : it->len - it->at;
    it->at += *n + 1;
    it->done = !comma;
    return 1;
}

int features_has(const char *list, size_t len, const char *name)
{
    struct names it = {list, len, 0, 0};
    size_t nl = strlen(name), n;
    const char *one;

    while (names_next(&it, &one, &n))
        if (n == nl && memcmp(one, name, nl) == 0)
            return 1;
    return 0;
}

/* 1 when one[0..n) is a name of the table. */
static int known(const char *one, size_t n)
{
    for (int f = 0; f < FEATURE_COUNT; f++)
        if (strlen(table[f].name) == n && memcmp(table[f].name, one, n) == 0)
            return 1;
    return 0;
}

/* 1 when one[0..n) is 1 to FEATURE_NAME_MAX bytes of a-z, 0-9 and _. */
static int well_formed(const char *one, size_t n)
{
    if (n < 1 || n > FEATURE_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((one[i] >= 'a' && one[i] <= 'z') || (one[i] >= '0' && one[i] <= '9') ||
              one[i] == '_'))
            return 0;
    return 1;
}

int features_check(const char *field, const char *list, size_t len, char *unknown, size_t usz,
                   struct llmsb_err *err)
{
    struct names it = {list, len, 0, 0};
    size_t count = 0, n, miss_len = 0;
    const char *one, *miss = NULL;
    char shown[80];

    llmsb_escape(shown, sizeof(shown), list, len);
    while (names_next(&it, &one, &n)) {
        if (!well_formed(one, n))
            return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                 "%s: \"%s\" is not a list of feature names (comma-separated, "
                                 "each 1 to %d bytes of a-z, 0-9 and _)",
                                 field, shown, FEATURE_NAME_MAX);
        if (++count > FEATURES_MAX)
            return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: \"%s\" names more than %d features",
                                 field, shown, FEATURES_MAX);
        if (!miss && !known(one, n))
            miss = one, miss_len = n;
    }
    if (!miss)
        return 0;
    snprintf(unknown, usz, "%.*s", (int)miss_len, miss);
    return 1;
}
