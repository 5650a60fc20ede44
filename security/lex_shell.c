/* lex_shell.c - Bash: # comments (at a word's start), '...' and $'...'
 * strings, "..." strings (the $(...) and `...` in them code: they run),
 * here-documents: strings with a quoted delimiter, else code (they
 * expand). */
#include "lex_int.h"

#include <string.h>

/* A here-document's operator at i (<<WORD, <<-WORD, <<'WORD', <<"WORD"):
 * sets the body's [from, to) and whether it is literal; returns the
 * index after the operator's word, or 0 when there is none at i. */
static size_t heredoc(const char *s, size_t n, size_t i, size_t *from, size_t *to, int *literal)
{
    size_t w = i + 2, wn = 0, eol, line;
    int tabs = 0;
    char q = 0, word[64];

    if (w < n && s[w] == '<')
        return 0; /* <<< here-string: a word, lexed as code */
    if (w < n && s[w] == '-')
        tabs = 1, w++;
    while (w < n && (s[w] == ' ' || s[w] == '\t'))
        w++;
    if (w < n && (s[w] == '\'' || s[w] == '"'))
        q = s[w++];
    while (w < n && wn < sizeof(word) - 1 && (sec_lex_ident(s[w]) || s[w] == '-' || s[w] == '.'))
        word[wn++] = s[w++];
    if (wn == 0)
        return 0;
    word[wn] = '\0';
    if (q && (w >= n || s[w] != q))
        return 0;
    if (q)
        w++;
    *literal = q != 0;
    eol = sec_lex_to_eol(s, n, w);
    *from = eol;
    for (line = eol + 1; line < n;) {
        size_t k = line, end = sec_lex_to_eol(s, n, line);
        while (tabs && k < end && s[k] == '\t')
            k++;
        if (end - k == wn && memcmp(s + k, word, wn) == 0) {
            *to = end;
            return w;
        }
        line = end + 1;
    }
    *to = n;
    return w;
}

/* A double-quoted string from i: its text a string, the $(...) and `...`
 * in it code.  Returns the index after the closing quote. */
static size_t dquoted(const char *s, size_t n, size_t i, unsigned char *kind)
{
    kind[i++] = K_STR;
    while (i < n && s[i] != '"') {
        size_t e;
        if (s[i] == '\\' && i + 1 < n) {
            sec_lex_mark(kind, i, i + 2, K_STR);
            i += 2;
        } else if (s[i] == '$' && i + 1 < n && s[i + 1] == '(') {
            e = sec_lex_nested(s, n, i + 1, "(", ")");
            sec_lex_mark(kind, i, e, K_CODE);
            i = e;
        } else if (s[i] == '`') {
            e = sec_lex_quoted(s, n, i, "`", 1, 1, 0);
            sec_lex_mark(kind, i, e, K_CODE);
            i = e;
        } else {
            kind[i++] = K_STR;
        }
    }
    if (i < n)
        kind[i++] = K_STR;
    return i;
}

void sec_lex_shell(const char *s, size_t n, unsigned char *kind)
{
    size_t doc_from = 0, doc_to = 0;
    int doc_literal = 0;

    for (size_t i = 0; i < n;) {
        size_t e;
        if (doc_to > doc_from && i >= doc_from) { /* a pending here-document's body */
            if (i < doc_to) {
                sec_lex_mark(kind, i, doc_to, doc_literal ? K_STR : K_CODE);
                i = doc_to;
            }
            doc_from = doc_to = 0;
            continue;
        }
        if (s[i] == '\\' && i + 1 < n) {
            sec_lex_mark(kind, i, i + 2, K_CODE);
            i += 2;
        } else if (s[i] == '#' && (i == 0 || strchr(" \t\n;|&(", s[i - 1]))) {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (s[i] == '\'') {
            int ansi = i > 0 && s[i - 1] == '$';
            e = sec_lex_quoted(s, n, i, "'", 1, ansi, 0);
            sec_lex_mark(kind, i, e, K_STR);
            i = e;
        } else if (s[i] == '"') {
            i = dquoted(s, n, i, kind);
        } else if (s[i] == '<' && i + 1 < n && s[i + 1] == '<' && !doc_to &&
                   (e = heredoc(s, n, i, &doc_from, &doc_to, &doc_literal)) != 0) {
            sec_lex_mark(kind, i, e, K_CODE);
            i = e;
        } else {
            kind[i++] = K_CODE;
        }
    }
}
