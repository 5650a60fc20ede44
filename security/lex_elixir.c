/* lex_elixir.c - Elixir: # comments, "..." strings and '...' charlists,
 * """ and ''' heredocs, quoted atoms (:"..."), sigils (~s(...), ~r/.../,
 * ~w[...] with any of Elixir's eight delimiters or a heredoc), ?c
 * character literals (?# is a character, not a comment).  Interpolation
 * (#{...}) in strings, charlists, atoms and lower-case sigils is code, as
 * deep as it nests; upper-case sigils (~S, ~R, ...) have none. */
#include "lex_int.h"

#include <string.h>

#define MAX_DEPTH 32 /* interpolations inside interpolations; deeper is code */

static size_t code(const char *s, size_t n, size_t i, unsigned char *kind, int in_interp,
                   int depth);

/* A literal's body from i (after its opening delimiter) up to close (a
 * 1-byte delimiter, or """/''' for heredocs): text a string, #{...} code
 * when interp.  Returns the index after the closing delimiter. */
static size_t body(const char *s, size_t n, size_t i, const char *close, int interp, int escapes,
                   char open, unsigned char *kind, int depth)
{
    size_t cl = strlen(close);
    (void)open; /* a sigil's paired delimiters do not nest: ~s(a(b) is "a(b" */

    while (i < n) {
        if (escapes && s[i] == '\\' && i + 1 < n) {
            sec_lex_mark(kind, i, i + 2, K_STR);
            i += 2;
        } else if (interp && s[i] == '#' && i + 1 < n && s[i + 1] == '{') {
            if (depth >= MAX_DEPTH) {
                sec_lex_mark(kind, i, n, K_CODE);
                return n;
            }
            sec_lex_mark(kind, i, i + 2, K_CODE);
            i = code(s, n, i + 2, kind, 1, depth + 1);
        } else if (i + cl <= n && memcmp(s + i, close, cl) == 0) {
            sec_lex_mark(kind, i, i + cl, K_STR);
            return i + cl;
        } else {
            kind[i++] = K_STR;
        }
    }
    return n;
}

/* A sigil at i (~ then a letter): returns the index after it, or 0 when
 * its delimiter is not one Elixir has (then the ~ is code). */
static size_t sigil(const char *s, size_t n, size_t i, unsigned char *kind, int depth)
{
    static const char opens[] = "/|\"'([{<", closes[] = "/|\"')]}>";
    size_t j = i + 1;
    int interp = s[j] >= 'a' && s[j] <= 'z';
    const char *d;
    char close[4] = {0};

    while (j < n && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')))
        j++; /* ~r, or a multi-letter upper-case sigil (~HTML) */
    if (j >= n || !(d = strchr(opens, s[j])) || !s[j])
        return 0;
    sec_lex_mark(kind, i, j + 1, K_STR);
    if ((s[j] == '"' || s[j] == '\'') && j + 2 < n && s[j + 1] == s[j] && s[j + 2] == s[j]) {
        memset(close, s[j], 3);
        sec_lex_mark(kind, j, j + 3, K_STR);
        j = body(s, n, j + 3, close, interp, interp, 0, kind, depth);
    } else {
        close[0] = closes[d - opens];
        j = body(s, n, j + 1, close, interp, 1, s[j], kind, depth);
    }
    while (j < n && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')))
        kind[j++] = K_CODE; /* modifiers: ~r/x/i */
    return j;
}

/* Code from i; inside an interpolation it ends after the } that closes
 * it.  Returns that index (n at the end). */
static size_t code(const char *s, size_t n, size_t i, unsigned char *kind, int in_interp, int depth)
{
    int braces = 0;

    while (i < n) {
        char c = s[i], prev = i > 0 ? s[i - 1] : ' ';
        size_t e;
        if (c == '#') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (c == '?' && i + 1 < n && !sec_lex_ident(prev) && !strchr(")]}?", prev)) {
            /* ?a ?# ?\n: a character literal */
            e = s[i + 1] == '\\' && i + 2 < n ? i + 3 : i + 2;
            sec_lex_mark(kind, i, e, K_STR);
            i = e;
        } else if ((c == '"' || c == '\'') && i + 2 < n && s[i + 1] == c && s[i + 2] == c) {
            char close[4] = {c, c, c, 0};
            sec_lex_mark(kind, i, i + 3, K_STR);
            i = body(s, n, i + 3, close, 1, 1, 0, kind, depth);
        } else if (c == '"' || c == '\'') {
            char close[2] = {c, 0};
            /* :"atom", "string", 'charlist': all interpolate */
            kind[i] = K_STR;
            i = body(s, n, i + 1, close, 1, 1, 0, kind, depth);
        } else if (c == '~' && i + 1 < n &&
                   ((s[i + 1] >= 'a' && s[i + 1] <= 'z') || (s[i + 1] >= 'A' && s[i + 1] <= 'Z')) &&
                   (e = sigil(s, n, i, kind, depth)) != 0) {
            i = e;
        } else {
            kind[i++] = K_CODE;
            if (in_interp && c == '{')
                braces++;
            else if (in_interp && c == '}' && braces-- == 0)
                return i;
        }
    }
    return n;
}

void sec_lex_elixir(const char *s, size_t n, unsigned char *kind)
{
    code(s, n, 0, kind, 0, 0);
}
