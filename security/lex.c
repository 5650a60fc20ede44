/* lex.c - per-language lexing for the scanner: which bytes are code,
 * string literal, or comment.  Errs on the side of "code": an unknown or
 * interpolating construct is code, so the scanner sees it. */
#include "security.h"
#include "lex_int.h"

#include <string.h>

void sec_lex_mark(unsigned char *kind, size_t from, size_t to, unsigned char k)
{
    memset(kind + from, k, to - from);
}

size_t sec_lex_quoted(const char *s, size_t n, size_t i, const char *q, size_t qlen, int escapes,
                      int stop_at_newline)
{
    for (i += qlen; i < n; i++) {
        if (escapes && s[i] == '\\') {
            i++;
            continue;
        }
        if (stop_at_newline && s[i] == '\n')
            return i;
        if (i + qlen <= n && memcmp(s + i, q, qlen) == 0)
            return i + qlen;
    }
    return n;
}

size_t sec_lex_to_eol(const char *s, size_t n, size_t i)
{
    const char *nl = memchr(s + i, '\n', n - i);
    return nl ? (size_t)(nl - s) : n;
}

size_t sec_lex_until(const char *s, size_t n, size_t i, const char *end)
{
    size_t k = strlen(end);
    for (; i + k <= n; i++)
        if (memcmp(s + i, end, k) == 0)
            return i + k;
    return n;
}

size_t sec_lex_nested(const char *s, size_t n, size_t i, const char *open, const char *close)
{
    size_t lo = strlen(open), lc = strlen(close);
    int depth = 0;
    while (i < n) {
        if (i + lo <= n && memcmp(s + i, open, lo) == 0) {
            depth++;
            i += lo;
        } else if (i + lc <= n && memcmp(s + i, close, lc) == 0) {
            i += lc;
            if (--depth == 0)
                return i;
        } else {
            i++;
        }
    }
    return n;
}

int sec_lex_unicode_structural(const char *s, size_t n)
{
    for (const char *p = s; (p = memchr(p, '\\', n - (size_t)(p - s))) != NULL;) {
        size_t i = (size_t)(p - s) + 1, h;
        unsigned v = 0;
        while (i < n && s[i] == 'u')
            i++;
        for (h = 0; i > (size_t)(p - s) + 1 && h < 4 && i + h < n; h++) {
            char c = s[i + h];
            int d = c >= '0' && c <= '9'                     ? c - '0'
                    : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10
                                                         : -1;
            if (d < 0)
                break;
            v = v * 16 + (unsigned)d;
        }
        if (h == 4 && v && v < 128 && strchr("\"'`/*\n\r\\{}$", (int)v))
            return 1;
        p++;
    }
    return 0;
}

int sec_lex_at_line_start(const char *s, size_t i)
{
    return i == 0 || s[i - 1] == '\n';
}

int sec_lex_ident(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

static void lex_python(const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;) {
        size_t p = i, e;
        int fstring = 0;
        if (s[i] == '#') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
            continue;
        }
        /* string prefix: up to two of r b u f, only right before a quote */
        while (p < n && p - i < 2 && strchr("rRbBuUfF", s[p]) && s[p])
            p++;
        if (p < n && (s[p] == '\'' || s[p] == '"') && (p == i || i == 0 || !sec_lex_ident(s[i - 1]))) {
            for (size_t k = i; k < p; k++)
                fstring |= (s[k] | 32) == 'f';
            int triple = p + 2 < n && s[p + 1] == s[p] && s[p + 2] == s[p];
            char q[3] = {s[p], s[p], s[p]};
            e = sec_lex_quoted(s, n, p, q, triple ? 3 : 1, 1, !triple);
            sec_lex_mark(kind, i, e, fstring ? K_CODE : K_STR);
            i = e > i ? e : i + 1;
            continue;
        }
        kind[i++] = K_CODE;
    }
}

static void lex_c_family(const char *s, size_t n, unsigned char *kind, int lexer)
{
    for (size_t i = 0; i < n;) {
        size_t e;
        if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
            const char *end = NULL;
            for (size_t k = i + 2; k + 1 < n; k++)
                if (s[k] == '*' && s[k + 1] == '/') {
                    end = s + k + 2;
                    break;
                }
            e = end ? (size_t)(end - s) : n;
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (lexer == LEX_C && i + 2 < n && s[i] == '"' && s[i + 1] == '"' &&
                   s[i + 2] == '"') {
            e = sec_lex_quoted(s, n, i, "\"\"\"", 3, 1, 0); /* Java text block */
            sec_lex_mark(kind, i, e, K_STR);
            i = e;
        } else if (lexer == LEX_C && i + 2 < n && s[i] == 'R' && s[i + 1] == '"') {
            /* C++ raw string R"delim( ... )delim" */
            size_t d = i + 2, close;
            char end[20] = ")";
            while (d < n && s[d] != '(' && d - i < 18)
                d++;
            memcpy(end + 1, s + i + 2, d - i - 2);
            end[d - i - 1] = '"';
            end[d - i] = '\0';
            for (close = d; close < n; close++)
                if (close + strlen(end) <= n && memcmp(s + close, end, strlen(end)) == 0)
                    break;
            e = close < n ? close + strlen(end) : n;
            sec_lex_mark(kind, i, e, K_STR);
            i = e;
        } else if (s[i] == '"' || s[i] == '\'') {
            char q[1] = {s[i]};
            e = sec_lex_quoted(s, n, i, q, 1, 1, 1);
            sec_lex_mark(kind, i, e, K_STR);
            i = e > i ? e : i + 1;
        } else if (s[i] == '`') {
            char q[1] = {'`'};
            e = sec_lex_quoted(s, n, i, q, 1, lexer == LEX_JS, 0);
            /* JS template literals interpolate: code; Go raw strings: string */
            sec_lex_mark(kind, i, e, lexer == LEX_GO ? K_STR : K_CODE);
            i = e > i ? e : i + 1;
        } else {
            kind[i++] = K_CODE;
        }
    }
}

static void lex_hash_family(const char *s, size_t n, unsigned char *kind, int ruby)
{
    for (size_t i = 0; i < n;) {
        size_t e;
        if (ruby && sec_lex_at_line_start(s, i) && n - i >= 6 && memcmp(s + i, "=begin", 6) == 0) {
            const char *end = NULL;
            for (size_t k = i + 6; k + 4 <= n; k++)
                if (sec_lex_at_line_start(s, k) && memcmp(s + k, "=end", 4) == 0) {
                    end = s + k + 4;
                    break;
                }
            e = end ? sec_lex_to_eol(s, n, (size_t)(end - s)) : n;
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (s[i] == '#') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (s[i] == '\'' || s[i] == '"' || s[i] == '`') {
            char q[1] = {s[i]};
            int code = ruby ? s[i] != '\'' : s[i] == '`'; /* Ruby "..." and `...` run code */
            e = sec_lex_quoted(s, n, i, q, 1, 1, 0);
            sec_lex_mark(kind, i, e, code ? K_CODE : K_STR);
            i = e > i ? e : i + 1;
        } else {
            kind[i++] = K_CODE;
        }
    }
}

/* The later languages' lexers (security/lex_NAME.c), by their value. */
static void (*const later[])(const char *s, size_t n, unsigned char *kind) = {
    [LEX_SHELL] = sec_lex_shell,
    [LEX_HASKELL] = sec_lex_haskell,
    [LEX_OCAML] = sec_lex_ocaml,
    [LEX_RUST] = sec_lex_rust,
    [LEX_D] = sec_lex_d,
    [LEX_ELIXIR] = sec_lex_elixir,
    [LEX_ADA] = sec_lex_ada,
    [LEX_LUA] = sec_lex_lua,
    [LEX_PERL] = sec_lex_perl,
    [LEX_PHP] = sec_lex_php,
    [LEX_TS] = sec_lex_ts,
    [LEX_RACKET] = sec_lex_racket,
    [LEX_CLOJURE] = sec_lex_clojure,
    [LEX_SCALA] = sec_lex_scala,
    [LEX_CSHARP] = sec_lex_csharp,
};

void sec_lex(const struct language *l, const char *src, size_t n, unsigned char *kind)
{
    if ((size_t)l->lexer < sizeof(later) / sizeof(later[0]) && later[l->lexer]) {
        later[l->lexer](src, n, kind);
        return;
    }
    switch (l->lexer) {
    case LEX_JAVA:
        if (sec_lex_unicode_structural(src, n))
            sec_lex_mark(kind, 0, n, K_CODE);
        else
            lex_c_family(src, n, kind, LEX_C);
        break;
    case LEX_PYTHON:
        lex_python(src, n, kind);
        break;
    case LEX_RUBY:
        lex_hash_family(src, n, kind, 1);
        break;
    case LEX_R:
        lex_hash_family(src, n, kind, 0);
        break;
    default:
        lex_c_family(src, n, kind, l->lexer);
    }
}
