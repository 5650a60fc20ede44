/* lex_rust.c - Rust: line comments (//), block comments that nest, "..." and
 * b"..." strings (escapes, any number of lines), raw strings r"...",
 * r#"..."# and br##"..."## (no escapes; closed by the quote and as many
 * #), and char literals ('a', '\n', '\u{1F600}', b'x') told from
 * lifetimes and labels ('a, 'static, 'outer:), which are code.  Format
 * strings interpolate only names ({x}), never calls: strings. */
#include "lex_int.h"

#include <string.h>

/* The length of the UTF-8 character at s[i] (1 for a stray byte). */
static size_t utf8_len(const char *s, size_t n, size_t i)
{
    unsigned char c = (unsigned char)s[i];
    size_t k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return i + k <= n ? k : 1;
}

/* A char literal at the quote i: returns the index after its closing
 * quote, or 0 when the quote starts a lifetime or a label. */
static size_t char_literal(const char *s, size_t n, size_t i)
{
    size_t k = i + 1;

    if (k >= n || s[k] == '\n' || s[k] == '\'')
        return 0;
    if (s[k] == '\\') { /* '\n', '\'', '\x41', '\u{..}': up to the quote, one line */
        for (k += 2; k < n && k < i + 16 && s[k] != '\n'; k++)
            if (s[k] == '\'')
                return k + 1;
        return 0;
    }
    k += utf8_len(s, n, k);
    return k < n && s[k] == '\'' ? k + 1 : 0;
}

/* A raw string at i (r or br, then #s and a quote): returns the index
 * after its end, or 0 when there is none at i (r#ident is code). */
static size_t raw_string(const char *s, size_t n, size_t i)
{
    size_t k = i + (s[i] == 'b' ? 2 : 1), hashes = 0;

    while (k < n && s[k] == '#')
        hashes++, k++;
    if (k >= n || s[k] != '"')
        return 0;
    for (k++; k < n; k++) {
        size_t h = 0;
        if (s[k] != '"')
            continue;
        while (h < hashes && k + 1 + h < n && s[k + 1 + h] == '#')
            h++;
        if (h == hashes)
            return k + 1 + h;
    }
    return n;
}

void sec_lex_rust(const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;) {
        size_t e = 0;
        int word_start = i == 0 || !sec_lex_ident(s[i - 1]);
        if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
        } else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
            e = sec_lex_nested(s, n, i, "/*", "*/");
            sec_lex_mark(kind, i, e, K_COMMENT);
        } else if (word_start && (s[i] == 'r' || (s[i] == 'b' && i + 1 < n && s[i + 1] == 'r')) &&
                   (e = raw_string(s, n, i)) != 0) {
            sec_lex_mark(kind, i, e, K_STR);
        } else if (s[i] == '"' || (word_start && s[i] == 'b' && i + 1 < n && s[i + 1] == '"')) {
            size_t q = s[i] == 'b' ? i + 1 : i;
            e = sec_lex_quoted(s, n, q, "\"", 1, 1, 0);
            sec_lex_mark(kind, i, e, K_STR);
        } else if (s[i] == '\'' || (word_start && s[i] == 'b' && i + 1 < n && s[i + 1] == '\'')) {
            size_t q = s[i] == 'b' ? i + 1 : i;
            if ((e = char_literal(s, n, q)) != 0)
                sec_lex_mark(kind, i, e, K_STR);
        }
        if (e > i) {
            i = e;
        } else if (word_start && sec_lex_ident(s[i])) { /* a whole word: no prefix inside it */
            while (i < n && sec_lex_ident(s[i]))
                kind[i++] = K_CODE;
        } else {
            kind[i++] = K_CODE;
        }
    }
}
