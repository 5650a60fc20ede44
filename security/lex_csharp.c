/* lex_csharp.c - C# (mono's mcs): line and block comments, "..." strings
 * with escapes, @"..." verbatim strings (no escapes, "" is a quote, lines
 * may break), 'c' character literals, and interpolated strings ($"...",
 * $@"...", @$"..."): code, as their {...} holes run. */
#include "lex_int.h"

#include <string.h>

/* A verbatim literal's end from its opening quote at q. */
static size_t verbatim_end(const char *s, size_t n, size_t q)
{
    for (size_t i = q + 1; i < n; i++)
        if (s[i] == '"') {
            if (i + 1 < n && s[i + 1] == '"')
                i++;
            else
                return i + 1;
        }
    return n;
}

/* An interpolated literal's end from its opening quote at q: {{ and }}
 * are braces, a hole { ... } holds code with its own braces and
 * literals; verbatim ones take "" for a quote and no escapes. */
static size_t interpolated_end(const char *s, size_t n, size_t q, int verbatim)
{
    for (size_t i = q + 1; i < n; i++) {
        if (!verbatim && s[i] == '\n')
            return i;
        if (!verbatim && s[i] == '\\') {
            i++;
        } else if (s[i] == '{' && i + 1 < n && s[i + 1] == '{') {
            i++;
        } else if (s[i] == '{') {
            int depth = 0;
            for (; i < n; i++) {
                if (s[i] == '{')
                    depth++;
                else if (s[i] == '}' && --depth == 0)
                    break;
                else if (s[i] == '"')
                    i = sec_lex_quoted(s, n, i, "\"", 1, 1, 1) - 1;
                else if (s[i] == '\'')
                    i = sec_lex_quoted(s, n, i, "'", 1, 1, 1) - 1;
            }
        } else if (s[i] == '"') {
            if (verbatim && i + 1 < n && s[i + 1] == '"')
                i++;
            else
                return i + 1;
        }
    }
    return n;
}

void sec_lex_csharp(const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;) {
        size_t e, p = i;
        int at = 0, dollar = 0;
        if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
            continue;
        }
        if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
            e = sec_lex_until(s, n, i + 2, "*/");
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
            continue;
        }
        /* the prefixes of a string: @, $, $@, @$ */
        while (p < n && p - i < 2 && (s[p] == '@' || s[p] == '$')) {
            at |= s[p] == '@';
            dollar |= s[p] == '$';
            p++;
        }
        if (p < n && s[p] == '"') {
            if (dollar)
                e = interpolated_end(s, n, p, at);
            else if (at)
                e = verbatim_end(s, n, p);
            else
                e = sec_lex_quoted(s, n, p, "\"", 1, 1, 1);
            sec_lex_mark(kind, i, e, dollar ? K_CODE : K_STR);
            i = e > i ? e : i + 1;
            continue;
        }
        if (s[i] == '\'') {
            e = sec_lex_quoted(s, n, i, "'", 1, 1, 1);
            sec_lex_mark(kind, i, e, K_STR);
            i = e > i ? e : i + 1;
            continue;
        }
        kind[i++] = K_CODE;
    }
}
