/* lex_haskell.c - Haskell: -- comments (a run of two or more dashes that
 * starts a lexeme and is not part of an operator such as --> or |--),
 * nested {- -} comments ({-# pragmas #-} are code: LANGUAGE and FFI
 * switches change what the program may do), "..." strings with escapes
 * and \ gaps \, and 'c' character literals told apart from primes in
 * names (x', foldl') and Template Haskell's 'name and ''Type quotes,
 * which stay code. */
#include "lex_int.h"

#include <string.h>

/* Haskell's symbol characters: a run of them is one operator. */
static int symbol(char c)
{
    return c && strchr("!#$%&*+./<=>?@\\^|-~:", c) != NULL;
}

/* A line comment at i: two or more dashes starting a lexeme, followed by
 * a non-symbol. */
static int line_comment_at(const char *s, size_t n, size_t i)
{
    size_t j = i;
    if (i + 1 >= n || s[i] != '-' || s[i + 1] != '-' || (i > 0 && symbol(s[i - 1])))
        return 0;
    while (j < n && s[j] == '-')
        j++;
    return j == n || !symbol(s[j]);
}

/* A string from i (at the opening quote): returns the index after the
 * closing quote (n when there is none).  A backslash escapes the next
 * byte; a backslash before white space opens a gap that the next
 * backslash closes. */
static size_t string_end(const char *s, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (s[i] == '"')
            return i + 1;
        if (s[i] == '\n')
            return i; /* a string never spans lines but by a gap */
        if (s[i] != '\\' || i + 1 >= n)
            continue;
        if (strchr(" \t\r\n", s[i + 1])) {
            for (i += 1; i < n && strchr(" \t\r\n", s[i]); i++)
                ;
            if (i >= n || s[i] != '\\')
                return i; /* not a gap after all: end here, the rest is code */
        } else {
            i++;
        }
    }
    return n;
}

/* A character literal at i ('a', '\n', '\'', '\x41', '\SOH', a UTF-8
 * character): returns the index after it, or 0 when the quote starts
 * none (a TH name quote, a promoted constructor). */
static size_t char_end(const char *s, size_t n, size_t i)
{
    size_t j = i + 1;
    if (j >= n || s[j] == '\'' || s[j] == '\n')
        return 0;
    if (s[j] == '\\') {
        size_t k = j + 2; /* the escaped byte may be ' or \ */
        while (k < n && k - j < 12 && (sec_lex_ident(s[k]) || s[k] == '^'))
            k++;
        return k < n && s[k] == '\'' ? k + 1 : 0;
    }
    /* one character: an ASCII byte or a UTF-8 sequence */
    if ((unsigned char)s[j] >= 0xC0)
        for (j++; j < n && ((unsigned char)s[j] & 0xC0) == 0x80; j++)
            ;
    else
        j++;
    return j < n && s[j] == '\'' ? j + 1 : 0;
}

void sec_lex_haskell(const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;) {
        size_t e;
        if (line_comment_at(s, n, i)) {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (i + 1 < n && s[i] == '{' && s[i + 1] == '-' && (i + 2 >= n || s[i + 2] != '#')) {
            e = sec_lex_nested(s, n, i, "{-", "-}");
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (s[i] == '"') {
            e = string_end(s, n, i);
            sec_lex_mark(kind, i, e, K_STR);
            i = e > i ? e : i + 1;
        } else if (s[i] == '\'' && (i == 0 || (!sec_lex_ident(s[i - 1]) && s[i - 1] != '\'')) &&
                   (e = char_end(s, n, i)) != 0) {
            sec_lex_mark(kind, i, e, K_STR);
            i = e;
        } else if (sec_lex_ident(s[i]) || (unsigned char)s[i] >= 0x80) {
            /* a name with its primes (foldl', x'') stays code */
            while (i < n && (sec_lex_ident(s[i]) || s[i] == '\'' || (unsigned char)s[i] >= 0x80))
                kind[i++] = K_CODE;
        } else {
            kind[i++] = K_CODE;
        }
    }
}
