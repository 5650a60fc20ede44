/* lex_perl.c - Perl: # comments, POD (a line starting =word up to the line
 * starting =cut), what follows __END__ / __DATA__, '...', q{} and qw{}
 * strings, <<'EOF' here-documents; "...", qq{}, `...`, qx{}, <<"EOF" and
 * <<EOF bodies, m//, s///, tr///, y/// and qr// are code (they interpolate,
 * and a regex may hold (?{ code })).  Perl's own parser decides whether a
 * '/' divides or starts a regex; here it starts one unless an operand just
 * ended (a variable, a number, a word that is not an operator, a closing
 * bracket): a regex taken for a division could hide a '#' or a quote. */
#include "lex_int.h"

#include <ctype.h>
#include <string.h>

#define PERL_MAX_HEREDOCS 8

struct heredoc {
    char word[64];
    size_t len;
    int literal, indent;
};

struct perl_lex {
    const char *s;
    size_t n;
    unsigned char *kind;
    struct heredoc doc[PERL_MAX_HEREDOCS];
    size_t ndoc;
    int operand; /* the last token ends an operand: a '/' divides */
    int ambiguous; /* ... unless Perl reads it otherwise: after a bareword (a
                    * sub's name: f /'/) or a closing brace (a block) */
};

static char closer(char c)
{
    switch (c) {
    case '(':
        return ')';
    case '[':
        return ']';
    case '{':
        return '}';
    case '<':
        return '>';
    default:
        return c;
    }
}

/* A quote-like construct from its opening delimiter at d, of nparts parts
 * (s/// and tr/// have two; bracketed parts have delimiters each, s{a}{b}).
 * Returns the index after its last delimiter, n when it is unclosed. */
static size_t quotelike(const char *s, size_t n, size_t d, int nparts)
{
    for (int p = 0; p < nparts && d < n; p++) {
        char open = s[d], close = closer(open);
        size_t i;
        int depth = 1;
        for (i = d + 1; i < n; i++) {
            if (s[i] == '\\') {
                i++;
                continue;
            }
            if (close != open && s[i] == open)
                depth++;
            else if (s[i] == close && --depth == 0)
                break;
        }
        if (i >= n)
            return n;
        if (p + 1 == nparts)
            return i + 1;
        d = i;
        if (close != open) /* the next part has delimiters of its own */
            for (d = i + 1; d < n && isspace((unsigned char)s[d]); d++)
                ;
    }
    return n;
}

/* Words after which a '/' starts a regex. */
static int operator_word(const char *w, size_t len)
{
    static const char *const ops[] = {
        "split",  "grep",  "map",   "join", "return",  "and",   "or",  "not", "if",
        "unless", "while", "until", "push", "unshift", "when",  "x",   "eq",  "ne",
        "lt",     "gt",    "le",    "ge",   "cmp",     "print", "xor", NULL};
    for (int i = 0; ops[i]; i++)
        if (strlen(ops[i]) == len && memcmp(ops[i], w, len) == 0)
            return 1;
    return 0;
}

/* The parts of quote-like operator w (0: w is none) and whether its text
 * is a plain string (q, qw). */
static int quote_op(const char *w, size_t len, int *plain)
{
    static const struct {
        const char *w;
        int parts, plain;
    } ops[] = {{"q", 1, 1}, {"qw", 1, 1}, {"qq", 1, 0}, {"qx", 1, 0}, {"qr", 1, 0},
               {"m", 1, 0}, {"s", 2, 0},  {"tr", 2, 0}, {"y", 2, 0}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strlen(ops[i].w) == len && memcmp(ops[i].w, w, len) == 0) {
            *plain = ops[i].plain;
            return ops[i].parts;
        }
    return 0;
}

static char prev_nonspace(const char *s, size_t i)
{
    while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
        i--;
    return i > 0 ? s[i - 1] : '\n';
}

/* The word at [i, e) read as a quote-like operator: the index after the
 * construct, or 0 when it is not one here (a hash key {s}, s => 1, ->s(),
 * $s, -s FILE). */
static size_t quote_at(struct perl_lex *lx, size_t i, size_t e)
{
    const char *s = lx->s;
    size_t n = lx->n, d = e, end;
    int plain, parts = quote_op(s + i, e - i, &plain);
    char before = i > 0 ? s[i - 1] : '\n';

    if (!parts || strchr("$@%&*-:>", before) || (before == '{' && i > 1 && s[i - 2] == '$'))
        return 0;
    while (d < n && (s[d] == ' ' || s[d] == '\t' || s[d] == '\n'))
        d++;
    if (d >= n || sec_lex_ident(s[d]) || strchr(",;)", s[d]) ||
        (s[d] == '=' && d + 1 < n && s[d + 1] == '>') ||
        (s[d] == '}' && prev_nonspace(s, i) == '{') || (s[d] == '#' && d > e))
        return 0;
    end = quotelike(s, n, d, parts);
    sec_lex_mark(lx->kind, i, end, K_CODE);
    if (plain)
        sec_lex_mark(lx->kind, d, end, K_STR);
    return end;
}

/* A here-document's operator at i (<<EOF, <<"EOF", <<'EOF', <<~EOF): the
 * index after it, its body queued for the line's end; 0 when there is
 * none at i (a shift, 1 << 2). */
static size_t heredoc_at(struct perl_lex *lx, size_t i)
{
    const char *s = lx->s;
    size_t n = lx->n, w = i + 2, len = 0;
    struct heredoc h = {0};
    char q = 0;

    if (w < n && s[w] == '~')
        h.indent = 1, w++;
    if (w < n && s[w] == ' ') { /* << "EOF": a space only before a quote */
        size_t k = w;
        while (k < n && s[k] == ' ')
            k++;
        if (k < n && (s[k] == '"' || s[k] == '\''))
            w = k;
    }
    if (w < n && (s[w] == '"' || s[w] == '\'' || s[w] == '`'))
        q = s[w++];
    else if (w >= n || !(isalpha((unsigned char)s[w]) || s[w] == '_'))
        return 0;
    while (w < n && len < sizeof(h.word) - 1 &&
           (q ? s[w] != q && s[w] != '\n' : sec_lex_ident(s[w])))
        h.word[len++] = s[w++];
    if (q && (w >= n || s[w] != q))
        return 0;
    if (q)
        w++;
    h.len = len;
    h.literal = q == '\'';
    if (lx->ndoc < PERL_MAX_HEREDOCS)
        lx->doc[lx->ndoc++] = h;
    return w;
}

/* The bodies queued on the line that ends at nl: each up to and with its
 * terminator line.  Returns the index after the last. */
static size_t heredoc_bodies(struct perl_lex *lx, size_t nl)
{
    size_t at = nl + 1;

    for (size_t d = 0; d < lx->ndoc && at < lx->n; d++) {
        const struct heredoc *h = &lx->doc[d];
        size_t line = at, end = lx->n;
        while (line < lx->n) {
            size_t k = line, eol = sec_lex_to_eol(lx->s, lx->n, line);
            while (h->indent && k < eol && (lx->s[k] == ' ' || lx->s[k] == '\t'))
                k++;
            if (eol - k == h->len && memcmp(lx->s + k, h->word, h->len) == 0) {
                end = eol < lx->n ? eol + 1 : eol;
                break;
            }
            line = eol + 1;
        }
        sec_lex_mark(lx->kind, at, end, h->literal ? K_STR : K_CODE);
        at = end;
    }
    lx->ndoc = 0;
    return at < lx->n ? at : lx->n;
}

/* At a line start: POD up to the line starting =cut, or the data after
 * __END__ / __DATA__; returns the index after it, 0 when neither. */
static size_t line_start(struct perl_lex *lx, size_t i)
{
    const char *s = lx->s;
    size_t n = lx->n;

    if (s[i] == '=' && i + 1 < n && isalpha((unsigned char)s[i + 1])) {
        size_t e = n;
        for (size_t k = i + 1; k + 4 <= n; k++)
            if (s[k - 1] == '\n' && memcmp(s + k, "=cut", 4) == 0 &&
                (k + 4 == n || !sec_lex_ident(s[k + 4]))) {
                e = sec_lex_to_eol(s, n, k);
                break;
            }
        sec_lex_mark(lx->kind, i, e, K_COMMENT);
        return e > i ? e : i + 1;
    }
    if ((n - i >= 7 && memcmp(s + i, "__END__", 7) == 0) ||
        (n - i >= 8 && memcmp(s + i, "__DATA__", 8) == 0)) {
        sec_lex_mark(lx->kind, i, n, K_STR);
        return n;
    }
    return 0;
}

/* One token from i; returns the index after it. */
static size_t token(struct perl_lex *lx, size_t i)
{
    const char *s = lx->s;
    size_t n = lx->n, e;
    char c = s[i];
    int ambiguous = lx->ambiguous;

    if (c == '/' && lx->operand && lx->ambiguous) {
        /* a regex or a division: when the line could close a regex,
         * neither reading is safe (f /'/ hides what follows the quote in
         * one, f / 2; '/' in the other), so the rest is code */
        for (e = i + 1; e < n && s[e] != '\n'; e++) {
            if (s[e] == '\\')
                e++;
            else if (s[e] == '/') {
                sec_lex_mark(lx->kind, i, n, K_CODE);
                return n;
            }
        }
    }
    lx->ambiguous = 0;
    if (c == '#') {
        e = sec_lex_to_eol(s, n, i);
        sec_lex_mark(lx->kind, i, e, K_COMMENT);
        lx->ambiguous = ambiguous;
        return e;
    }
    if (c == '$' && i + 1 < n && strchr("'\"`#/\\$", s[i + 1])) { /* $' $" $# ... */
        sec_lex_mark(lx->kind, i, i + 2, K_CODE);
        lx->operand = 1;
        return i + 2;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        for (e = i; e < n && sec_lex_ident(s[e]); e++)
            ;
        size_t q = quote_at(lx, i, e);
        if (q) {
            lx->operand = 1;
            return q;
        }
        sec_lex_mark(lx->kind, i, e, K_CODE);
        lx->operand = (i > 0 && strchr("$@%&", s[i - 1]) != NULL) || !operator_word(s + i, e - i);
        lx->ambiguous = lx->operand && !(i > 0 && strchr("$@%&", s[i - 1]) != NULL) &&
                        !(i > 1 && s[i - 1] == '>' && s[i - 2] == '-');
        return e;
    }
    if (c == '\'') {
        e = sec_lex_quoted(s, n, i, "'", 1, 1, 0);
        sec_lex_mark(lx->kind, i, e, K_STR);
        lx->operand = 1;
        return e;
    }
    if (c == '"' || c == '`' || (c == '/' && !lx->operand)) {
        e = quotelike(s, n, i, 1);
        sec_lex_mark(lx->kind, i, e, K_CODE);
        lx->operand = 1;
        return e;
    }
    if (c == '<' && i + 1 < n && s[i + 1] == '<' && (e = heredoc_at(lx, i)) != 0) {
        sec_lex_mark(lx->kind, i, e, K_CODE);
        lx->operand = 1;
        return e;
    }
    lx->kind[i] = K_CODE;
    if (!isspace((unsigned char)c)) {
        lx->operand = isdigit((unsigned char)c) || strchr(")]}", c) != NULL;
        lx->ambiguous = c == '}';
    } else {
        lx->ambiguous = ambiguous;
    }
    return i + 1;
}

void sec_lex_perl(const char *s, size_t n, unsigned char *kind)
{
    struct perl_lex lx = {.s = s, .n = n, .kind = kind};

    for (size_t i = 0; i < n;) {
        size_t e;
        if (sec_lex_at_line_start(s, i) && (e = line_start(&lx, i)) != 0) {
            i = e;
        } else if (s[i] == '\n' && lx.ndoc) {
            kind[i] = K_CODE;
            i = heredoc_bodies(&lx, i);
        } else {
            e = token(&lx, i);
            i = e > i ? e : i + 1;
        }
    }
}
