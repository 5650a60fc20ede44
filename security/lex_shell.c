/* lex_shell.c - Bash: # comments (at a word's start), '...' and $'...'
 * strings, "..." strings (the $(...) and `...` in them code: they run),
 * here-documents: strings with a quoted delimiter, else code (they
 * expand).  A quoted part of a command's name ("ev"al, e''val, 'eval') is
 * code: it is the name of what runs. */
#include "lex_int.h"

#include <string.h>

#define SHELL_MAX_HEREDOCS 8
#define SHELL_MAX_NESTING 64

/* A here-document whose body follows the line of its operator. */
struct heredoc {
    char word[64];
    size_t len;
    int tabs, literal;
};

/* A here-document's operator at i (<<WORD, <<-WORD, <<'WORD', <<"WORD"):
 * fills h and returns the index after the operator's word, or 0 when
 * there is none at i. */
static size_t heredoc_op(const char *s, size_t n, size_t i, struct heredoc *h)
{
    size_t w = i + 2;
    char q = 0;

    memset(h, 0, sizeof(*h));
    if (w < n && s[w] == '<')
        return 0; /* <<< here-string: a word, lexed as code */
    if (w < n && s[w] == '-')
        h->tabs = 1, w++;
    while (w < n && (s[w] == ' ' || s[w] == '\t'))
        w++;
    if (w < n && (s[w] == '\'' || s[w] == '"'))
        q = s[w++];
    while (w < n && h->len < sizeof(h->word) - 1 &&
           (sec_lex_ident(s[w]) || s[w] == '-' || s[w] == '.'))
        h->word[h->len++] = s[w++];
    if (h->len == 0 || (q && (w >= n || s[w] != q)))
        return 0;
    h->literal = q != 0;
    return q ? w + 1 : w;
}

/* The bodies of the here-documents of the line ending at nl, one after
 * another, each with its terminator line: a string when literal, else
 * code (it expands).  Returns the index after the last. */
static size_t heredoc_bodies(const char *s, size_t n, size_t nl, const struct heredoc *docs,
                             size_t ndocs, unsigned char *kind)
{
    size_t at = nl + 1;

    for (size_t d = 0; d < ndocs && at < n; d++) {
        size_t line = at, end = n;
        while (line < n) {
            size_t k = line, eol = sec_lex_to_eol(s, n, line);
            while (docs[d].tabs && k < eol && s[k] == '\t')
                k++;
            if (eol - k == docs[d].len && memcmp(s + k, docs[d].word, docs[d].len) == 0) {
                end = eol;
                break;
            }
            line = eol + 1;
        }
        sec_lex_mark(kind, at, end, docs[d].literal ? K_STR : K_CODE);
        at = end < n ? end + 1 : n;
        if (end < n)
            kind[end] = K_CODE;
    }
    return at;
}

static size_t dquote_end(const char *s, size_t n, size_t i, int depth);

/* From the '(' of a command substitution at i, the index after the ')'
 * that closes it: quotes inside it are its own (a ')' in them closes
 * nothing).  Past SHELL_MAX_NESTING levels: n (the rest is code). */
static size_t subst_end(const char *s, size_t n, size_t i, int depth)
{
    int open = 0;

    if (depth > SHELL_MAX_NESTING)
        return n;
    for (; i < n; i++) {
        const char *q;
        switch (s[i]) {
        case '\\':
            i++;
            break;
        case '\'':
            if (!(q = memchr(s + i + 1, '\'', n - i - 1)))
                return n;
            i = (size_t)(q - s);
            break;
        case '"':
            i = dquote_end(s, n, i, depth + 1) - 1;
            break;
        case '`':
            i = sec_lex_quoted(s, n, i, "`", 1, 1, 0) - 1;
            break;
        case '(':
            open++;
            break;
        case ')':
            if (--open == 0)
                return i + 1;
            break;
        }
    }
    return n;
}

/* From a '"' at i, the index after the '"' that closes it. */
static size_t dquote_end(const char *s, size_t n, size_t i, int depth)
{
    for (i++; i < n && s[i] != '"'; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '$' && i + 1 < n && s[i + 1] == '(')
            i = subst_end(s, n, i + 1, depth + 1) - 1;
    }
    return i < n ? i + 1 : n;
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
            e = subst_end(s, n, i + 1, 0);
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

/* A word that keeps the next one in command position (if cmd, then cmd). */
static int keyword(const char *w, size_t len)
{
    static const char *const kw[] = {"if", "then", "else", "elif", "do", "while", "until",
                                     "time", "!", "{", NULL};
    for (int k = 0; kw[k]; k++)
        if (strlen(kw[k]) == len && memcmp(kw[k], w, len) == 0)
            return 1;
    return 0;
}

void sec_lex_shell(const char *s, size_t n, unsigned char *kind)
{
    struct heredoc docs[SHELL_MAX_HEREDOCS];
    size_t ndocs = 0, word = 0;
    /* the next word is a command's name; the current word is one (a
     * quoted part of it, "ev"al or e''val, is code: it names what runs) */
    int at_cmd = 1, in_word = 0, word_cmd = 0, assign = 0;

    for (size_t i = 0; i < n;) {
        size_t e;
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || strchr(";&|(`", c)) {
            if (in_word && !assign && !keyword(s + word, i - word))
                at_cmd = 0; /* an assignment (x='a' cmd) leaves it a command's */
            in_word = 0;
            if (c != ' ' && c != '\t')
                at_cmd = 1;
        } else if (!in_word && c != '#') {
            in_word = 1;
            word = i;
            word_cmd = at_cmd;
            assign = 0;
        }
        if (in_word && c == '=' && word_cmd)
            assign = 1; /* a quote after it is a value's, not a name's */
        if (c == '\n' && ndocs) { /* the pending here-documents' bodies */
            kind[i] = K_CODE;
            i = heredoc_bodies(s, n, i, docs, ndocs, kind);
            ndocs = 0;
        } else if (c == '\\' && i + 1 < n) {
            sec_lex_mark(kind, i, i + 2, K_CODE);
            i += 2;
        } else if (c == '#' && (i == 0 || strchr(" \t\n;|&(", s[i - 1]))) {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (c == '\'') {
            int ansi = i > 0 && s[i - 1] == '$';
            e = sec_lex_quoted(s, n, i, "'", 1, ansi, 0);
            sec_lex_mark(kind, i, e, in_word && word_cmd && !assign ? K_CODE : K_STR);
            i = e;
        } else if (c == '"') {
            e = dquoted(s, n, i, kind);
            if (in_word && word_cmd && !assign)
                sec_lex_mark(kind, i, e, K_CODE);
            i = e;
        } else if (c == '<' && i + 1 < n && s[i + 1] == '<' && ndocs < SHELL_MAX_HEREDOCS &&
                   (e = heredoc_op(s, n, i, &docs[ndocs])) != 0) {
            ndocs++;
            sec_lex_mark(kind, i, e, K_CODE);
            i = e;
        } else {
            kind[i++] = K_CODE;
        }
    }
}
