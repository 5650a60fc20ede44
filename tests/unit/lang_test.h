/* lang_test.h - what the tests of the later languages share
 * (tests/unit/test_lang_NAME.c): a language's lexer marks and the
 * scanner's verdict on a source, as the tests ask them. */
#ifndef LLMSB_TEST_LANG_TEST_H
#define LLMSB_TEST_LANG_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "security/security.h"

/* The scan of code in lang under policy: 1 blocked, 0 not, -1 when it
 * could not run (the error printed).  rules (rulesz bytes, or NULL): every
 * violation's rule, "; "-separated.  want (or NULL): a blocked scan is 1
 * only when a violation's rule holds want. */
static inline int lang_scan(const char *lang, const char *policy, const char *code,
                            const char *want, char *rules, size_t rulesz)
{
    struct llmsb_err err = {0};
    const struct language *l = language_find(lang);
    const struct sec_policy *p = l ? sec_preset(policy, l, &err) : NULL;
    struct sec_result *r = calloc(1, sizeof(*r));
    int blocked = -1, found = 0;

    if (!p || !r || sec_scan(p, l, code, strlen(code), r, &err) != 0) {
        fprintf(stderr, "  %s: %s\n", lang, err.msg);
        free(r);
        return -1;
    }
    if (rules && rulesz)
        rules[0] = '\0';
    for (size_t i = 0, o = 0; i < r->n; i++) {
        found |= want && strstr(r->v[i].rule, want) != NULL;
        if (rules && o < rulesz) {
            int w = snprintf(rules + o, rulesz - o, "%s; ", r->v[i].rule);
            o += w > 0 ? (size_t)w : 0;
        }
    }
    blocked = r->blocked && (!want || found);
    free(r);
    return blocked;
}

/* The kinds of src's bytes (0 code, 1 string, 2 comment) in a buffer of
 * exactly its size; NULL when out of memory.  Free it. */
static inline unsigned char *lang_kinds(const char *lang, const char *src)
{
    size_t n = strlen(src);
    unsigned char *k = malloc(n + 1);
    if (k)
        sec_lex(language_find(lang), src, n, k);
    return k;
}

/* The kind of the byte offset bytes into the first what in src; -1 when
 * src holds no what. */
static inline int lang_kind_at(const char *lang, const char *src, const char *what, size_t offset)
{
    const char *at = strstr(src, what);
    int inside = at && (size_t)(at - src) + offset < strlen(src);
    unsigned char *k = inside ? lang_kinds(lang, src) : NULL;
    int kind = k ? k[(size_t)(at - src) + offset] : -1;
    free(k);
    return kind;
}

/* 1 when every byte of the first needle in src has kind kind. */
static inline int lang_span_is(const char *lang, const char *src, const char *needle, int kind)
{
    const char *at = strstr(src, needle);
    unsigned char *k = at ? lang_kinds(lang, src) : NULL;
    int ok = k != NULL;
    for (size_t i = 0; ok && i < strlen(needle); i++)
        ok = k[(size_t)(at - src) + i] == kind;
    free(k);
    return ok;
}

/* src's kinds as letters into out (strlen(src) + 1 bytes): letters[kind]
 * a byte ("csm": c code, s string, m comment).  Returns out. */
static inline char *lang_marks(const char *lang, const char *src, const char *letters, char *out)
{
    size_t n = strlen(src);
    unsigned char *k = lang_kinds(lang, src);
    for (size_t i = 0; k && i < n; i++)
        out[i] = letters[k[i]];
    out[k ? n : 0] = '\0';
    free(k);
    return out;
}

/* 1 when src's kinds as "csm" letters are want; else 0, both printed. */
static inline int lang_marks_are(const char *lang, const char *src, const char *want)
{
    char got[4096];
    if (strlen(src) >= sizeof(got) || strcmp(lang_marks(lang, src, "csm", got), want) != 0) {
        fprintf(stderr, "  %s:\n  got  %s\n  want %s\n", src, got, want);
        return 0;
    }
    return 1;
}

#endif
