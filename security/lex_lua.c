/* lex_lua.c - Lua: -- line comments, --[[ ]] and --[==[ ]==] block
 * comments, '...' and "..." strings (backslash escapes, an unescaped line
 * break ends them) and [[ ]] / [==[ ]==] long strings.  Lua strings never
 * interpolate, so all of them are strings; Lua's lexer reads [[ as a long
 * string wherever it stands, and so does this one. */
#include "lex_int.h"

#include <string.h>

/* A long bracket at i ([[, [=[, [==[ ...): its level (the count of '='),
 * or -1 when there is none at i. */
static int long_open(const char *s, size_t n, size_t i)
{
    size_t k = i + 1;

    if (i >= n || s[i] != '[')
        return -1;
    while (k < n && s[k] == '=')
        k++;
    return k < n && s[k] == '[' ? (int)(k - i - 1) : -1;
}

/* From a long bracket of level lvl at i, the index after its close
 * (]], ]=], ...), n when it has none. */
static size_t long_close(const char *s, size_t n, size_t i, int lvl)
{
    for (i += (size_t)lvl + 2; i < n; i++) {
        size_t k = i + 1;
        if (s[i] != ']')
            continue;
        while (k < n && s[k] == '=' && k - i - 1 < (size_t)lvl)
            k++;
        if (k - i - 1 == (size_t)lvl && k < n && s[k] == ']')
            return k + 1;
    }
    return n;
}

void sec_lex_lua(const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;) {
        size_t e;
        int lvl;
        if (i + 1 < n && s[i] == '-' && s[i + 1] == '-') {
            lvl = long_open(s, n, i + 2);
            e = lvl >= 0 ? long_close(s, n, i + 2, lvl) : sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
        } else if ((lvl = long_open(s, n, i)) >= 0) {
            e = long_close(s, n, i, lvl);
            sec_lex_mark(kind, i, e, K_STR);
        } else if (s[i] == '\'' || s[i] == '"') {
            char q[1] = {s[i]};
            e = sec_lex_quoted(s, n, i, q, 1, 1, 1);
            sec_lex_mark(kind, i, e, K_STR);
        } else {
            kind[i] = K_CODE;
            e = i + 1;
        }
        i = e > i ? e : i + 1;
    }
}
