/* lex_php.c - PHP: text outside <?php ... ?> (inline HTML, printed as is)
 * is a string; in PHP mode // and # comments (ended by a newline or by
 * ?>, as PHP ends them; "#[" is an attribute, code), block comments,
 * '...' strings, "..." strings and heredocs with their interpolations
 * ($name, $name->prop, $name[...], {$...}, ${...}) as code, nowdocs
 * (<<<'ID') as strings, and `...` (a shell command) as code. */
#include "lex_int.h"

#include <string.h>
#include <strings.h>

/* An opening tag at i (<?php, <?=, or a short <?): its length, else 0. */
static size_t open_tag(const char *s, size_t n, size_t i)
{
    if (i + 1 >= n || s[i] != '<' || s[i + 1] != '?')
        return 0;
    if (i + 5 <= n && strncasecmp(s + i + 2, "php", 3) == 0)
        return 5;
    if (i + 2 < n && s[i + 2] == '=')
        return 3;
    return 2; /* short tag: PHP mode when short_open_tag is on; code is the safe guess */
}

/* From the { at i of a {$...} or ${...} interpolation, the index after
 * the } that balances it: strings in it are skipped (a "}" in one closes
 * nothing); a comment, a heredoc or a backtick in it makes the rest of
 * the source code (n). */
static size_t brace_end(const char *s, size_t n, size_t i)
{
    int depth = 0;

    for (; i < n; i++) {
        char c = s[i];
        if (c == '{') {
            depth++;
        } else if (c == '}') {
            if (--depth == 0)
                return i + 1;
        } else if (c == '\'' || c == '"') {
            char q[1] = {c};
            i = sec_lex_quoted(s, n, i, q, 1, 1, 0) - 1;
        } else if (c == '#' || c == '`' || (c == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*')) ||
                   (c == '<' && i + 2 < n && s[i + 1] == '<' && s[i + 2] == '<') ||
                   (c == '?' && i + 1 < n && s[i + 1] == '>')) {
            return n;
        }
    }
    return n;
}

/* The end of the interpolation at i (s[i] == '$' or "{$"), which is code:
 * {$ ... } and ${ ... } to the brace that balances; $name with ->name
 * and one [...] after it. */
static size_t interpolation(const char *s, size_t n, size_t i)
{
    if (s[i] == '{' || (i + 1 < n && s[i + 1] == '{'))
        return brace_end(s, n, s[i] == '{' ? i : i + 1);
    i++;
    while (i < n && (sec_lex_ident(s[i]) || (unsigned char)s[i] >= 0x80))
        i++;
    if (i + 2 < n && s[i] == '-' && s[i + 1] == '>' && sec_lex_ident(s[i + 2]))
        for (i += 2; i < n && sec_lex_ident(s[i]);)
            i++;
    else if (i < n && s[i] == '[')
        while (i < n && s[i] != ']' && s[i] != '\n')
            i++;
    return i < n && s[i] == ']' ? i + 1 : i;
}

/* An interpolating body from i to end (a "..." string's inside, or a
 * heredoc's): text a string, interpolations code.  quote: the closing
 * quote ends it early ("), or 0 (a heredoc: it runs to end).  Returns the
 * index where it stopped. */
static size_t interpolating(const char *s, size_t n, size_t i, size_t end, char quote,
                            unsigned char *kind)
{
    while (i < end && (!quote || s[i] != quote)) {
        size_t e;
        if (s[i] == '\\' && i + 1 < end) {
            sec_lex_mark(kind, i, i + 2, K_STR);
            i += 2;
        } else if ((s[i] == '$' && i + 1 < end && (sec_lex_ident(s[i + 1]) || s[i + 1] == '{')) ||
                   (s[i] == '{' && i + 1 < end && s[i + 1] == '$')) {
            e = interpolation(s, n, i);
            if (e > end)
                e = end;
            sec_lex_mark(kind, i, e, K_CODE);
            i = e > i ? e : i + 1;
        } else {
            kind[i++] = K_STR;
        }
    }
    return i;
}

/* A heredoc or nowdoc at i (<<<ID, <<<"ID", <<<'ID'), marked; returns the
 * index after its closing identifier, or 0 when there is none at i. */
static size_t heredoc(const char *s, size_t n, size_t i, unsigned char *kind)
{
    size_t w = i + 3, wn, body, line;
    char q = 0;
    const char *word;

    while (w < n && (s[w] == ' ' || s[w] == '\t'))
        w++;
    if (w < n && (s[w] == '\'' || s[w] == '"'))
        q = s[w++];
    word = s + w;
    for (wn = 0; w < n && (sec_lex_ident(s[w]) || (unsigned char)s[w] >= 0x80); w++)
        wn++;
    if (wn == 0 || (q && (w >= n || s[w] != q)))
        return 0;
    if (q)
        w++;
    body = sec_lex_to_eol(s, n, w);
    sec_lex_mark(kind, i, body, K_CODE);
    /* the closing identifier: first on its line after blanks (PHP 7.3),
     * not followed by an identifier's character */
    for (line = body + 1; line < n;) {
        size_t k = line, eol = sec_lex_to_eol(s, n, line);
        while (k < eol && (s[k] == ' ' || s[k] == '\t'))
            k++;
        if (eol - k >= wn && memcmp(s + k, word, wn) == 0 &&
            (k + wn >= n || !sec_lex_ident(s[k + wn]))) {
            if (q == '\'')
                sec_lex_mark(kind, body, line, K_STR);
            else
                interpolating(s, n, body, line, 0, kind);
            sec_lex_mark(kind, line, k + wn, K_CODE);
            return k + wn;
        }
        line = eol + 1;
    }
    if (body < n) { /* unterminated: nowdoc a string, else interpolating */
        if (q == '\'')
            sec_lex_mark(kind, body, n, K_STR);
        else
            interpolating(s, n, body, n, 0, kind);
    }
    return n;
}

/* A line comment from i: to the newline or to a ?> (which it does not
 * take: PHP mode ends there). */
static size_t line_comment(const char *s, size_t n, size_t i)
{
    for (; i < n && s[i] != '\n'; i++)
        if (s[i] == '?' && i + 1 < n && s[i + 1] == '>')
            return i;
    return i;
}

void sec_lex_php(const char *s, size_t n, unsigned char *kind)
{
    int php = 0;

    for (size_t i = 0; i < n;) {
        size_t e;
        if (!php) { /* inline HTML up to an opening tag */
            if ((e = open_tag(s, n, i)) != 0) {
                sec_lex_mark(kind, i, i + e, K_CODE);
                i += e;
                php = 1;
            } else {
                kind[i++] = K_STR;
            }
        } else if (s[i] == '?' && i + 1 < n && s[i + 1] == '>') {
            sec_lex_mark(kind, i, i + 2, K_CODE);
            i += 2;
            php = 0;
        } else if ((s[i] == '#' && (i + 1 >= n || s[i + 1] != '[')) ||
                   (s[i] == '/' && i + 1 < n && s[i + 1] == '/')) {
            e = line_comment(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            e = sec_lex_until(s, n, i + 2, "*/");
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (s[i] == '\'') {
            e = sec_lex_quoted(s, n, i, "'", 1, 1, 0);
            sec_lex_mark(kind, i, e, K_STR);
            i = e;
        } else if (s[i] == '"') {
            kind[i] = K_STR;
            e = interpolating(s, n, i + 1, n, '"', kind);
            if (e < n)
                kind[e++] = K_STR;
            i = e;
        } else if (s[i] == '`') {
            e = sec_lex_quoted(s, n, i, "`", 1, 1, 0);
            sec_lex_mark(kind, i, e, K_CODE);
            i = e;
        } else if (s[i] == '<' && i + 2 < n && s[i + 1] == '<' && s[i + 2] == '<' &&
                   (e = heredoc(s, n, i, kind)) != 0) {
            i = e;
        } else {
            kind[i++] = K_CODE;
        }
    }
}
