/* lex_d.c - D: line comments (//), block comments (slash-star) and
 * slash-plus comments that nest; "..." strings (escapes, any number of
 * lines, a c/w/d suffix), WYSIWYG r"..." and backquoted strings (no
 * escapes), hex strings x"...", delimited strings q"(...)", q"[...]",
 * q"{...}", q"<...>" (nesting), q"/.../" (any other character) and
 * q"ID ... ID" (a heredoc), and char literals 'a', '\n'.  Token strings
 * q{...} hold D code (what mixin() compiles) and interpolated strings
 * i"..." run code: both are code to the scanner. */
#include "lex_int.h"

#include <string.h>

/* A q"..." delimited string at i (q, then the quote): returns the index
 * after it. */
static size_t delimited(const char *s, size_t n, size_t i)
{
    static const char open[] = "([{<", close[] = ")]}>";
    size_t k = i + 2;
    const char *o;

    if (k >= n)
        return n;
    if ((o = strchr(open, s[k])) != NULL && *o) {
        char op[2] = {*o, 0}, cl[2] = {close[o - open], 0};
        k = sec_lex_nested(s, n, k, op, cl);
        return k < n && s[k] == '"' ? k + 1 : k;
    }
    if (sec_lex_ident(s[k]) && !(s[k] >= '0' && s[k] <= '9')) { /* q"ID\n...\nID" */
        size_t w = k, wn, line;
        while (k < n && sec_lex_ident(s[k]))
            k++;
        wn = k - w;
        for (line = sec_lex_to_eol(s, n, k) + 1; line < n; line = sec_lex_to_eol(s, n, line) + 1)
            if (line + wn < n && memcmp(s + line, s + w, wn) == 0 && s[line + wn] == '"')
                return line + wn + 1;
        return n;
    }
    { /* q"/.../": the same character closes, then the quote */
        char d = s[k];
        for (k++; k + 1 < n; k++)
            if (s[k] == d && s[k + 1] == '"')
                return k + 2;
        return n;
    }
}

void sec_lex_d(const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;) {
        size_t e = 0;
        int word_start = i == 0 || !sec_lex_ident(s[i - 1]);
        char c = s[i], c1 = i + 1 < n ? s[i + 1] : '\0';
        unsigned char k = K_STR;

        if (c == '/' && c1 == '/') {
            e = sec_lex_to_eol(s, n, i);
            k = K_COMMENT;
        } else if (c == '/' && c1 == '*') {
            e = sec_lex_until(s, n, i + 2, "*/");
            k = K_COMMENT;
        } else if (c == '/' && c1 == '+') {
            e = sec_lex_nested(s, n, i, "/+", "+/");
            k = K_COMMENT;
        } else if (word_start && c == 'q' && c1 == '"') {
            e = delimited(s, n, i);
        } else if (word_start && (c == 'r' || c == 'x') && c1 == '"') {
            e = sec_lex_quoted(s, n, i + 1, "\"", 1, 0, 0);
        } else if (c == '`') {
            e = sec_lex_quoted(s, n, i, "`", 1, 0, 0);
        } else if (c == '"') {
            e = sec_lex_quoted(s, n, i, "\"", 1, 1, 0);
        } else if (c == '\'') {
            e = sec_lex_quoted(s, n, i, "'", 1, 1, 1);
        }
        if (e > i) {
            sec_lex_mark(kind, i, e, k);
            i = e;
        } else if (word_start && sec_lex_ident(c)) {
            /* a whole word, so no prefix is read inside one (seq"...");
             * i"..." and iq{...} stay code, as q{...} does */
            while (i < n && sec_lex_ident(s[i]))
                kind[i++] = K_CODE;
            if (i < n && (s[i] == '"' || s[i] == '`') && i >= 1 && s[i - 1] == 'i' &&
                (i == 1 || !sec_lex_ident(s[i - 2]))) {
                char q[1] = {s[i]};
                e = sec_lex_quoted(s, n, i, q, 1, s[i] == '"', 0);
                sec_lex_mark(kind, i, e, K_CODE);
                i = e;
            }
        } else {
            kind[i++] = K_CODE;
        }
    }
}
