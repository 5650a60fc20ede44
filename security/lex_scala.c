/* lex_scala.c - Scala: line comments, block comments that nest, "..."
 * and """...""" strings, 'c' character literals ('sym is a symbol: code),
 * and interpolated literals (s"...", f"...", raw"...", any id"..."): code,
 * as their ${...} parts run.  `...` names are code, and a quote or a
 * comment's opening in one starts nothing. */
#include "lex_int.h"

#include <string.h>

/* A """ literal from i: it ends at the first """, and quotes right after
 * it belong to it (""""a"""" is "a" in quotes). */
static size_t triple_end(const char *s, size_t n, size_t i)
{
    size_t e = sec_lex_until(s, n, i + 3, "\"\"\"");
    while (e < n && s[e] == '"')
        e++;
    return e;
}

static size_t char_end(const char *s, size_t n, size_t i);

/* An interpolated single-line literal from its opening quote at i: \
 * escapes, $$ is a dollar, ${ ... } holds code with its own braces and
 * strings.  Returns the index after the closing quote. */
static size_t interpolated_end(const char *s, size_t n, size_t i)
{
    for (i++; i < n && s[i] != '\n'; i++) {
        if (s[i] == '\\' || (s[i] == '$' && i + 1 < n && s[i + 1] == '$')) {
            i++;
        } else if (s[i] == '$' && i + 1 < n && s[i + 1] == '{') {
            int depth = 0;
            for (i++; i < n; i++) {
                size_t e;
                if (s[i] == '{')
                    depth++;
                else if (s[i] == '}' && --depth == 0)
                    break;
                else if (s[i] == '"')
                    i = sec_lex_quoted(s, n, i, "\"", 1, 1, 1) - 1;
                else if (s[i] == '`')
                    i = sec_lex_quoted(s, n, i, "`", 1, 0, 1) - 1;
                else if (s[i] == '\'' && (e = char_end(s, n, i)) != 0)
                    i = e - 1; /* '}' and '"' close nothing */
                else if (s[i] == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*'))
                    return n; /* a comment in a hole: the rest is code */
            }
        } else if (s[i] == '"') {
            return i + 1;
        }
    }
    return i < n ? i : n; /* a \ as the last byte stepped past it */
}

/* A character literal at i ('a', '\n', '\u0041', 'é'): its end, or 0 when
 * the quote starts a symbol ('sym). */
static size_t char_end(const char *s, size_t n, size_t i)
{
    size_t k = i + 1;
    if (k < n && s[k] == '\\') {
        for (k += 2; k < n && k < i + 10 && s[k] != '\n'; k++)
            if (s[k] == '\'')
                return k + 1;
        return 0;
    }
    if (k < n && (unsigned char)s[k] >= 0xc0) /* a UTF-8 sequence */
        for (k++; k < n && ((unsigned char)s[k] & 0xc0) == 0x80; k++)
            ;
    else
        k++;
    return k < n && s[k] == '\'' && k > i + 1 ? k + 1 : 0;
}

/* Scala 2 (Debian's is 2.11) reads \uXXXX escapes before it lexes, as
 * Java does (sec_lex_unicode_structural). */
void sec_lex_scala(const char *s, size_t n, unsigned char *kind)
{
    if (sec_lex_unicode_structural(s, n)) {
        sec_lex_mark(kind, 0, n, K_CODE);
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t e;
        if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
        } else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
            e = sec_lex_nested(s, n, i, "/*", "*/");
            sec_lex_mark(kind, i, e, K_COMMENT);
        } else if (s[i] == '"') {
            /* an identifier right before the quote makes it interpolated */
            int interp = i > 0 && sec_lex_ident(s[i - 1]);
            int triple = i + 2 < n && s[i + 1] == '"' && s[i + 2] == '"';
            if (triple)
                e = triple_end(s, n, i);
            else
                e = interp ? interpolated_end(s, n, i) : sec_lex_quoted(s, n, i, "\"", 1, 1, 1);
            sec_lex_mark(kind, i, e, interp ? K_CODE : K_STR);
        } else if (s[i] == '\'' && (e = char_end(s, n, i)) != 0) {
            sec_lex_mark(kind, i, e, K_STR);
        } else if (s[i] == '`') {
            /* a backquoted name (`"`, `//`): code, and what is in it
             * starts no string or comment */
            e = sec_lex_quoted(s, n, i, "`", 1, 0, 1);
            sec_lex_mark(kind, i, e, K_CODE);
        } else {
            kind[i] = K_CODE;
            e = i + 1;
        }
        i = e > i ? e : i + 1;
    }
}
