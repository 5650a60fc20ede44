/* lex_ada.c - Ada: -- comments to the end of the line, "..." strings (a
 * doubled "" is a quote inside; a string ends at its line), 'c' character
 * literals.  A quote right after a name or a closing parenthesis is an
 * attribute or a qualification (X'First, Integer'Image, T'(...)), code. */
#include "lex_int.h"

void sec_lex_ada(const char *s, size_t n, unsigned char *kind)
{
    for (size_t i = 0; i < n;) {
        size_t e;
        if (s[i] == '-' && i + 1 < n && s[i + 1] == '-') {
            e = sec_lex_to_eol(s, n, i);
            sec_lex_mark(kind, i, e, K_COMMENT);
            i = e;
        } else if (s[i] == '"') {
            for (e = i + 1; e < n && s[e] != '\n'; e++) {
                if (s[e] == '"' && e + 1 < n && s[e + 1] == '"')
                    e++;
                else if (s[e] == '"')
                    break;
            }
            e = e < n && s[e] == '"' ? e + 1 : e;
            sec_lex_mark(kind, i, e, K_STR);
            i = e;
        } else if (s[i] == '\'' && i + 2 < n && s[i + 2] == '\'' && s[i + 1] != '\n' &&
                   !(i > 0 && (sec_lex_ident(s[i - 1]) || s[i - 1] == ')'))) {
            sec_lex_mark(kind, i, i + 3, K_STR);
            i += 3;
        } else {
            kind[i++] = K_CODE;
        }
    }
}
