/* lex_lisp.c - Racket and Clojure: ; comments, "..." strings, character
 * literals (Racket #\x, Clojure \x: #\" and \; neither start a string nor
 * a comment), and a datum comment (Racket #;, Clojure #_) that hides the
 * next datum, marked a comment as far as it can be read (a list to its
 * balancing close; else code).  Racket also has nested #| |# comments,
 * |...| symbols (code, but a ; or " in them starts nothing) and #<<WORD
 * here strings; Clojure #"..." regexes. */
#include "lex_int.h"

#include <string.h>

struct lisp {
    int racket; /* else Clojure */
};

static int delimiter(const struct lisp *L, char c)
{
    return strchr(" \t\r\n\f\v()[]{}\";", c) != NULL || (!L->racket && c == ',') ||
           (L->racket && c == '\'');
}

/* A character literal's end from its first byte after the backslash:
 * that byte, whatever it is, then the letters and digits of a named or
 * numbered one (#\space, \newline, \u0041). */
static size_t char_end(const char *s, size_t n, size_t i)
{
    if (i >= n)
        return n;
    i++;
    while (i < n && sec_lex_ident(s[i]))
        i++;
    return i;
}

/* A Racket here string #<<WORD: the body runs to a line that is exactly
 * WORD.  Returns the index after that line, n when it never comes; 0 when
 * there is no terminator word. */
static size_t here_string(const char *s, size_t n, size_t i)
{
    size_t w = i + 3, eol = sec_lex_to_eol(s, n, w), line;

    if (eol == w)
        return 0;
    for (line = eol + 1; line < n;) {
        size_t end = sec_lex_to_eol(s, n, line);
        if (end - line == eol - w && memcmp(s + line, s + w, eol - w) == 0)
            return end;
        line = end + 1;
    }
    return n;
}

/* Datum comments nest (#;#;a b, #;(#;x)): this deep at most, past it a
 * datum comment's mark is code (the reader recurses; hostile input must
 * not exhaust the stack). */
#define DATUM_DEPTH 32

static size_t token(const struct lisp *L, const char *s, size_t n, size_t i, unsigned char *kind,
                    int depth);

/* The datum from i (white space, comments and quote-like prefixes before
 * it skipped): its end, its bytes marked in kind as the token reader marks
 * them.  A list is read to its balancing close; a close with no datum
 * before it ends at i. */
static size_t datum(const struct lisp *L, const char *s, size_t n, size_t i, unsigned char *kind,
                    int depth)
{
    size_t lists = 0; /* lists open in the datum */

    while (i < n) {
        char c = s[i];
        size_t e = token(L, s, n, i, kind, depth);
        int one = e == i + 1;
        if (kind[i] == K_COMMENT || (one && strchr(" \t\r\n\f\v'`,@^~#", c))) {
            i = e; /* before the datum, or inside its list */
            continue;
        }
        if (one && strchr("([{", c)) {
            lists++;
        } else if (one && strchr(")]}", c)) {
            if (lists == 0)
                return i;
            lists--;
        }
        i = e;
        if (lists == 0)
            return e;
    }
    return n;
}

/* Marks one token from i and returns the index after it: a comment, a
 * string, a character literal, a bracket, or a run of atom bytes (code). */
static size_t token(const struct lisp *L, const char *s, size_t n, size_t i, unsigned char *kind,
                    int depth)
{
    size_t e;
    char c = s[i], d = i + 1 < n ? s[i + 1] : '\0';

    if (c == ';') {
        e = sec_lex_to_eol(s, n, i);
        sec_lex_mark(kind, i, e, K_COMMENT);
        return e;
    }
    if (c == '"') {
        e = sec_lex_quoted(s, n, i, "\"", 1, 1, 0);
        sec_lex_mark(kind, i, e, K_STR);
        return e;
    }
    if (L->racket && c == '#' && d == '|') {
        e = sec_lex_nested(s, n, i, "#|", "|#");
        sec_lex_mark(kind, i, e, K_COMMENT);
        return e;
    }
    if ((L->racket && c == '#' && d == ';') || (!L->racket && c == '#' && d == '_')) {
        if (depth >= DATUM_DEPTH) { /* too deep: the datum is lexed as code */
            sec_lex_mark(kind, i, i + 2, K_CODE);
            return i + 2;
        }
        e = datum(L, s, n, i + 2, kind, depth + 1);
        sec_lex_mark(kind, i, e, K_COMMENT);
        return e > i + 2 ? e : i + 2;
    }
    if (L->racket && c == '#' && d == '\\') {
        e = char_end(s, n, i + 2);
        sec_lex_mark(kind, i, e, K_STR);
        return e;
    }
    if (!L->racket && c == '\\') {
        e = char_end(s, n, i + 1);
        sec_lex_mark(kind, i, e, K_STR);
        return e;
    }
    if (!L->racket && c == '#' && d == '"') {
        e = sec_lex_quoted(s, n, i + 1, "\"", 1, 1, 0);
        sec_lex_mark(kind, i, e, K_STR);
        return e;
    }
    if (L->racket && c == '#' && d == '<' && i + 2 < n && s[i + 2] == '<' &&
        (e = here_string(s, n, i)) != 0) {
        sec_lex_mark(kind, i, e, K_STR);
        return e;
    }
    if (L->racket && c == '|') { /* |a symbol; with anything| */
        e = sec_lex_quoted(s, n, i, "|", 1, 0, 0);
        sec_lex_mark(kind, i, e, K_CODE);
        return e;
    }
    if (delimiter(L, c) || strchr("`,@^~", c)) {
        kind[i] = K_CODE;
        return i + 1;
    }
    /* an atom, to the next delimiter; a # inside it (a#b) starts nothing */
    for (e = i + 1; e < n && !delimiter(L, s[e]) && !(L->racket && s[e] == '|'); e++)
        if (!L->racket && s[e] == '\\')
            break;
    sec_lex_mark(kind, i, e, K_CODE);
    return e;
}

static void lex_lisp(const struct lisp *L, const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;)
        i = token(L, s, n, i, kind, 0);
}

void sec_lex_racket(const char *s, size_t n, unsigned char *kind)
{
    static const struct lisp L = {.racket = 1};
    lex_lisp(&L, s, n, kind);
}

void sec_lex_clojure(const char *s, size_t n, unsigned char *kind)
{
    static const struct lisp L = {.racket = 0};
    lex_lisp(&L, s, n, kind);
}
