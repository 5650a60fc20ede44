/* lex_ocaml.c - OCaml: nested (* *) comments, in which OCaml lexes
 * string and character literals too (a "*)" inside a string in a
 * comment does not close it), "..." strings with escapes, {|...|} and
 * {id|...|id} quoted strings, and 'c' character literals told apart from
 * type variables ('a, 'a.) and primes in names (x'), which stay code. */
#include "lex_int.h"

#include <string.h>

/* A quoted string {id|...|id} at i (id: [a-z_]*): returns the index
 * after its end (n when it has none), or 0 when there is none at i. */
static size_t quoted_end(const char *s, size_t n, size_t i)
{
    size_t j = i + 1, idlen;
    char close[40];

    while (j < n && j - i <= 32 && ((s[j] >= 'a' && s[j] <= 'z') || s[j] == '_'))
        j++;
    if (j >= n || s[j] != '|')
        return 0;
    idlen = j - i - 1;
    close[0] = '|';
    memcpy(close + 1, s + i + 1, idlen);
    close[idlen + 1] = '}';
    close[idlen + 2] = '\0';
    return sec_lex_until(s, n, j + 1, close);
}

/* A character literal at i ('a', '\n', '\'', '\065', '\x41', '\o101'):
 * the index after it, or 0 when the quote starts none (a type variable). */
static size_t char_end(const char *s, size_t n, size_t i)
{
    size_t j = i + 1;
    if (j >= n || s[j] == '\n')
        return 0;
    if (s[j] == '\\') {
        size_t k = j + 2; /* the escaped byte may be ' or \ */
        while (k < n && k - j < 6 && sec_lex_ident(s[k]))
            k++;
        return k < n && s[k] == '\'' ? k + 1 : 0;
    }
    return j + 1 < n && s[j + 1] == '\'' && s[j] != '\'' ? j + 2 : 0;
}

/* The literal (string, quoted string or character) at i, if any: the
 * index after it, or 0. */
static size_t literal_end(const char *s, size_t n, size_t i)
{
    size_t e;
    if (s[i] == '"') {
        e = sec_lex_quoted(s, n, i, "\"", 1, 1, 0);
        return e > i ? e : i + 1;
    }
    if (s[i] == '{')
        return quoted_end(s, n, i);
    if (s[i] == '\'' && (i == 0 || (!sec_lex_ident(s[i - 1]) && s[i - 1] != '\'')))
        return char_end(s, n, i);
    return 0;
}

/* A comment from i (at its "(*"): the index after the "*)" that closes
 * it, nested comments and the literals in it skipped. */
static size_t comment_end(const char *s, size_t n, size_t i)
{
    int depth = 0;
    while (i < n) {
        size_t e;
        if (i + 1 < n && s[i] == '(' && s[i + 1] == '*') {
            depth++;
            i += 2;
        } else if (i + 1 < n && s[i] == '*' && s[i + 1] == ')') {
            i += 2;
            if (--depth == 0)
                return i;
        } else if ((e = literal_end(s, n, i)) != 0) {
            i = e;
        } else {
            i++;
        }
    }
    return n;
}

void sec_lex_ocaml(const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;) {
        size_t e;
        if (i + 1 < n && s[i] == '(' && s[i + 1] == '*') {
            e = comment_end(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if ((e = literal_end(s, n, i)) != 0) {
            sec_lex_mark(kind, i, e, K_STR);
            i = e;
        } else if (sec_lex_ident(s[i])) {
            /* a name with its primes (x', f'') stays code */
            while (i < n && (sec_lex_ident(s[i]) || s[i] == '\''))
                kind[i++] = K_CODE;
        } else {
            kind[i++] = K_CODE;
        }
    }
}
