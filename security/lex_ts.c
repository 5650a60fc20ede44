/* lex_ts.c - TypeScript (and what it shares with JavaScript): // and
 * block comments, '...' and "..." strings, template literals whose text
 * is a string and whose ${...} are code (lexed as code again, nested
 * templates and braces included), and regular-expression literals, told
 * from a division by what precedes the slash: a quote inside a regex
 * (s.split(/'/)) is then no string that hides the rest of the line. */
#include "lex_int.h"

#include <string.h>

#define TS_MAX_DEPTH 32 /* templates nested in substitutions; deeper is code */
/* a regex literal's length at most: a longer one is taken for a division
 * (so a line of slashes costs linear time, not quadratic) */
#define TS_MAX_REGEX 1024

struct ts_lex {
    const char *s;
    size_t n;
    unsigned char *kind;
};

static size_t code(struct ts_lex *x, size_t i, int in_subst, int depth);

/* After the word s[from, to), a slash starts a regex (return /x/) or is a
 * division (a / b). */
static int regex_after_word(const char *s, size_t from, size_t to)
{
    static const char *const kw[] = {"return", "typeof", "instanceof", "in",    "of",
                                     "new",    "delete", "void",       "throw", "case",
                                     "do",     "else",   "yield",      "await", NULL};
    for (int k = 0; kw[k]; k++)
        if (strlen(kw[k]) == to - from && memcmp(s + from, kw[k], to - from) == 0)
            return 1;
    return 0;
}

/* A regex literal's end from the slash at i (after its flags), or 0 when
 * the line has no closing slash within TS_MAX_REGEX bytes (then it was a
 * division after all). */
static size_t regex_end(const char *s, size_t n, size_t i)
{
    size_t start = i;
    int in_class = 0;
    for (i++; i < n && s[i] != '\n' && i - start < TS_MAX_REGEX; i++) {
        if (s[i] == '\\') {
            i++;
            continue;
        }
        if (s[i] == '[')
            in_class = 1;
        else if (s[i] == ']')
            in_class = 0;
        else if (s[i] == '/' && !in_class) {
            for (i++; i < n && sec_lex_ident(s[i]);)
                i++;
            return i;
        }
    }
    return 0;
}

/* A template literal from the backtick at i: its text a string, each
 * ${...} code.  Returns the index after the closing backtick. */
static size_t template(struct ts_lex *x, size_t i, int depth)
{
    x->kind[i++] = K_STR;
    while (i < x->n && x->s[i] != '`') {
        if (x->s[i] == '\\' && i + 1 < x->n) {
            sec_lex_mark(x->kind, i, i + 2, K_STR);
            i += 2;
        } else if (x->s[i] == '$' && i + 1 < x->n && x->s[i + 1] == '{') {
            sec_lex_mark(x->kind, i, i + 2, K_CODE);
            i = code(x, i + 2, 1, depth + 1);
        } else {
            x->kind[i++] = K_STR;
        }
    }
    if (i < x->n)
        x->kind[i++] = K_STR;
    return i;
}

/* Code from i; in a substitution, up to and with the } that closes it.
 * Returns the index where it stopped. */
static size_t code(struct ts_lex *x, size_t i, int in_subst, int depth)
{
    const char *s = x->s;
    size_t n = x->n, e;
    int braces = 0, regex_ok = 1, ambiguous = 0;

    if (depth > TS_MAX_DEPTH) { /* past the depth: the rest is code */
        sec_lex_mark(x->kind, i, n, K_CODE);
        return n;
    }
    while (i < n) {
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            x->kind[i++] = K_CODE;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(x->kind, i, e, K_COMMENT);
            i = e;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            e = sec_lex_until(s, n, i + 2, "*/");
            sec_lex_mark(x->kind, i, e, K_COMMENT);
            i = e;
        } else if (c == '/' && regex_ok && (e = regex_end(s, n, i)) != 0) {
            sec_lex_mark(x->kind, i, e, K_STR);
            i = e;
            regex_ok = 0;
        } else if (c == '/' && ambiguous && regex_end(s, n, i) != 0) {
            /* after ) } ++ --, a slash may start a regex (if (x) /'/) or
             * divide ((a) / 2 + '/'): neither reading is safe, so the
             * line is code; when what follows on it may run past the
             * line (a template, a block comment, a line continuation) or
             * a substitution is open, the rest of the source is */
            size_t eol = sec_lex_to_eol(s, n, i), k;
            int past = in_subst || (eol > i && s[eol - 1] == '\\');
            for (k = i; k < eol && !past; k++)
                past = s[k] == '`' || (s[k] == '/' && k + 1 < eol && s[k + 1] == '*');
            e = past ? n : eol;
            sec_lex_mark(x->kind, i, e, K_CODE);
            if (past)
                return n;
            i = e;
            regex_ok = 1;
            ambiguous = 0;
        } else if (c == '\'' || c == '"') {
            char q[1] = {c};
            e = sec_lex_quoted(s, n, i, q, 1, 1, 1);
            sec_lex_mark(x->kind, i, e, K_STR);
            i = e;
            regex_ok = ambiguous = 0;
        } else if (c == '`') {
            i = template(x, i, depth);
            regex_ok = ambiguous = 0;
        } else if (sec_lex_ident(c) || c == '$' || (unsigned char)c >= 0x80) {
            size_t from = i;
            while (i < n && (sec_lex_ident(s[i]) || s[i] == '$' || (unsigned char)s[i] >= 0x80))
                x->kind[i++] = K_CODE;
            regex_ok = regex_after_word(s, from, i);
            ambiguous = 0;
        } else {
            x->kind[i++] = K_CODE;
            if (c == '{') {
                braces++;
            } else if (c == '}') {
                if (in_subst && braces == 0)
                    return i;
                braces--;
            }
            /* after a closing bracket a slash divides; after an operator
             * or an opening one it starts a regex */
            regex_ok = c != ')' && c != ']' && c != '}';
            ambiguous = c == ')' || c == '}';
            if ((c == '+' || c == '-') && i >= 2 && s[i - 2] == c) { /* a++ / b, ++/re/.x */
                regex_ok = 0;
                ambiguous = 1;
            }
        }
    }
    return i;
}

void sec_lex_ts(const char *s, size_t n, unsigned char *kind)
{
    struct ts_lex x = {s, n, kind};
    code(&x, 0, 0, 0);
}
