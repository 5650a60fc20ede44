/* compare.c - output comparison modes (see compare.h): our own, and the
 * rules of the stdin/stdout benchmarks' harnesses, each reimplemented from
 * its checker (docs/eval.md cites them).  Runs in the worker (a job's
 * expectations) and in the agent (each test case's). */
#include "compare.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const names[] = {
    "trailing_whitespace", "exact",          "tokens", "float", "lines_decimal",
    "tokens_icase_abs",    "line_token_sets"};

const char *compare_name(enum compare_mode mode)
{
    return (unsigned)mode < sizeof(names) / sizeof(names[0]) ? names[mode] : "?";
}

void compare_format(const struct compare *c, char *out, size_t outsz)
{
    if (c->mode == COMPARE_FLOAT || c->mode == COMPARE_TOKENS_ICASE_ABS)
        snprintf(out, outsz, "%s:%.17g", compare_name(c->mode), c->tol);
    else
        snprintf(out, outsz, "%s", compare_name(c->mode));
}

static int blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* The next line of s[*off..n) without its trailing blanks; 0 at the end. */
static int next_line(const char *s, size_t n, size_t *off, const char **line, size_t *len)
{
    const char *nl;
    size_t end;

    if (*off >= n)
        return 0;
    *line = s + *off;
    nl = memchr(*line, '\n', n - *off);
    end = nl ? (size_t)(nl - s) : n;
    *len = end - *off;
    *off = nl ? end + 1 : n;
    while (*len && blank((*line)[*len - 1]))
        (*len)--;
    return 1;
}

/* The length of s without trailing whitespace (blank lines included). */
static size_t rtrim(const char *s, size_t n)
{
    while (n && (blank(s[n - 1]) || s[n - 1] == '\n'))
        n--;
    return n;
}

static int same_lines(const char *a, size_t an, const char *b, size_t bn)
{
    size_t ao = 0, bo = 0, al, bl;
    const char *la, *lb;

    an = rtrim(a, an);
    bn = rtrim(b, bn);
    for (;;) {
        int ha = next_line(a, an, &ao, &la, &al), hb = next_line(b, bn, &bo, &lb, &bl);
        if (!ha || !hb)
            return ha == hb;
        if (al != bl || memcmp(la, lb, al) != 0)
            return 0;
    }
}

static int space(char ch)
{
    return blank(ch) || ch == '\n';
}

/* The next whitespace-separated token of s[*off..n); 0 at the end. */
static int next_token(const char *s, size_t n, size_t *off, const char **tok, size_t *len)
{
    while (*off < n && space(s[*off]))
        (*off)++;
    if (*off >= n)
        return 0;
    *tok = s + *off;
    while (*off < n && !space(s[*off]))
        (*off)++;
    *len = (size_t)(s + *off - *tok);
    return 1;
}

/* A number token read by compare.h's grammar.  A decimal is kept as
 * written, normalised: its value is 0.D * 10^exp10 with D the significant
 * digits (no leading or trailing zeros; none for zero), so decimals of any
 * length or size compare by value without a double overflowing. */
enum num_kind { NUM_DECIMAL, NUM_INF, NUM_NAN };

struct num {
    enum num_kind kind;
    int neg;
    const char *t;     /* the token */
    size_t first, dot; /* the first significant digit; the '.' (or past the mantissa) */
    size_t ndigits;    /* of D */
    int64_t exp10;
};

/* An exponent of more digits (leading zeros aside) makes the token a word:
 * below this, exp10 (the exponent plus at most the token's length) fits in
 * an int64_t and differences of two of them do too. */
#define EXPONENT_DIGITS_MAX 18
/* The significant digits a double is made from: more than it holds. */
#define DOUBLE_DIGITS 40

static size_t digits(const char *t, size_t n, size_t *i)
{
    size_t from = *i;

    while (*i < n && t[*i] >= '0' && t[*i] <= '9')
        (*i)++;
    return *i - from;
}

static int word_is(const char *t, size_t n, const char *w)
{
    return n == strlen(w) && strncasecmp(t, w, n) == 0;
}

/* The k-th significant digit of x (the '.' skipped). */
static char num_digit(const struct num *x, size_t k)
{
    size_t at = x->first + k;

    return x->t[at + (x->first < x->dot && at >= x->dot)];
}

/* The exponent e[0..n) (digits only) into *v; 0 when it has more than
 * EXPONENT_DIGITS_MAX digits, leading zeros aside. */
static int exponent(const char *e, size_t n, int neg, int64_t *v)
{
    while (n && *e == '0')
        e++, n--;
    if (n > EXPONENT_DIGITS_MAX)
        return 0;
    *v = 0;
    for (size_t i = 0; i < n; i++)
        *v = *v * 10 + (e[i] - '0');
    if (neg)
        *v = -*v;
    return 1;
}

/* Normalises the mantissa t[from..mend) of x (its '.' at x->dot, or mend
 * when there is none) with exponent e. */
static void normalise(struct num *x, size_t from, size_t mend, int64_t e)
{
    size_t i = from, count;

    while (i < mend && (x->t[i] == '0' || x->t[i] == '.'))
        i++;
    x->first = i;
    x->ndigits = 0;
    x->exp10 = 0;
    if (i == mend)
        return; /* zero */
    count = mend - i - (i < x->dot && x->dot < mend);
    x->ndigits = count;
    while (x->ndigits && num_digit(x, x->ndigits - 1) == '0')
        x->ndigits--;
    /* 0.D * 10^exp10: the digits before the point, or minus the zeros after it */
    if (i < x->dot)
        x->exp10 = e + (int64_t)(x->dot - i);
    else
        x->exp10 = e - (int64_t)(i - x->dot - 1);
}

/* A whole token as a number, by compare.h's grammar: decimal only (strtod
 * alone would read "0x10" and "0x1p4" too). */
static int number(const char *t, size_t n, struct num *x)
{
    size_t i = 0, from, whole, frac = 0, mend, sign, at;
    int64_t e = 0;

    memset(x, 0, sizeof(*x));
    if (n == 0)
        return 0;
    x->t = t;
    x->neg = t[0] == '-';
    if (t[0] == '+' || t[0] == '-')
        i++;
    if (word_is(t + i, n - i, "inf") || word_is(t + i, n - i, "infinity")) {
        x->kind = NUM_INF;
        return 1;
    }
    if (word_is(t + i, n - i, "nan")) {
        x->kind = NUM_NAN;
        return 1;
    }
    from = i;
    whole = digits(t, n, &i);
    x->dot = i;
    if (i < n && t[i] == '.') {
        i++;
        frac = digits(t, n, &i);
    }
    if (whole + frac == 0)
        return 0;
    mend = i;
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        sign = ++i;
        if (i < n && (t[i] == '+' || t[i] == '-'))
            i++;
        at = i;
        if (digits(t, n, &i) == 0 || !exponent(t + at, i - at, i > sign && t[sign] == '-', &e))
            return 0;
    }
    if (i != n)
        return 0;
    normalise(x, from, mend, e);
    return 1;
}

/* x as a double, rounded from its first DOUBLE_DIGITS digits: +-HUGE_VAL,
 * an infinity, beyond a double's range. */
static double num_double(const struct num *x)
{
    char buf[DOUBLE_DIGITS + 32];
    size_t k, o = 0;

    buf[o++] = x->neg ? '-' : '+';
    buf[o++] = '0';
    buf[o++] = '.';
    for (k = 0; k < x->ndigits && k < DOUBLE_DIGITS; k++)
        buf[o++] = num_digit(x, k);
    snprintf(buf + o, sizeof(buf) - o, "0e%lld", (long long)x->exp10);
    return strtod(buf, NULL);
}

/* x's mantissa 0.D as a double in [0.1, 1) (0 for zero), signed. */
static double num_mantissa(const struct num *x)
{
    struct num m = *x;

    m.exp10 = 0;
    return num_double(&m);
}

/* The same decimal value, however written (0.50 and 5e-1). */
static int num_equal(const struct num *x, const struct num *y)
{
    if (x->ndigits == 0 || y->ndigits == 0)
        return x->ndigits == y->ndigits;
    if (x->neg != y->neg || x->exp10 != y->exp10 || x->ndigits != y->ndigits)
        return 0;
    for (size_t k = 0; k < x->ndigits; k++)
        if (num_digit(x, k) != num_digit(y, k))
            return 0;
    return 1;
}

/* Within tol relative to y, for decimals beyond a double's range: their
 * mantissas scaled to y's exponent (no absolute test needed: |x - y| <=
 * tol <= 1 with either beyond DBL_MAX implies the relative one). */
static int num_near_relative(const struct num *x, const struct num *y, double tol)
{
    int64_t d = x->exp10 - y->exp10;
    double mx = num_mantissa(x), my = num_mantissa(y);

    if (d > 999 || d < -999)
        d = d > 0 ? 999 : -999; /* 10^+-999 is +inf or 0 as a double */
    mx *= pow(10, (double)d);
    return fabs(mx - my) <= tol * fabs(my);
}

static int same_number(double tol, const struct num *x, const struct num *y)
{
    double a, b;

    if (x->kind == NUM_NAN || y->kind == NUM_NAN)
        return x->kind == y->kind;
    if (x->kind == NUM_DECIMAL && y->kind == NUM_DECIMAL && num_equal(x, y))
        return 1;
    a = x->kind == NUM_INF ? (x->neg ? -INFINITY : INFINITY) : num_double(x);
    b = y->kind == NUM_INF ? (y->neg ? -INFINITY : INFINITY) : num_double(y);
    /* an infinity word equals an infinity or a decimal beyond a double's
     * range of its sign (1e999 is inf), and nothing else */
    if (x->kind == NUM_INF || y->kind == NUM_INF)
        return a == b;
    if (isinf(a) || isinf(b))
        return num_near_relative(x, y, tol);
    return fabs(a - b) <= tol || fabs(a - b) <= tol * fabs(b);
}

static int same_token(const struct compare *c, const char *a, size_t an, const char *b, size_t bn)
{
    struct num x, y;

    if (an == bn && memcmp(a, b, an) == 0)
        return 1;
    if (c->mode != COMPARE_FLOAT || !number(a, an, &x) || !number(b, bn, &y))
        return 0;
    return same_number(c->tol, &x, &y);
}

static int same_tokens(const struct compare *c, const char *a, size_t an, const char *b, size_t bn)
{
    size_t ao = 0, bo = 0, al, bl;
    const char *ta, *tb;

    for (;;) {
        int ha = next_token(a, an, &ao, &ta, &al), hb = next_token(b, bn, &bo, &tb, &bl);
        if (!ha || !hb)
            return ha == hb;
        if (!same_token(c, ta, al, tb, bl))
            return 0;
    }
}

/* ---- the stdin/stdout benchmarks' own rules (compare.h) ---- */

struct span {
    const char *p;
    size_t n;
};

/* Python's str.isspace on ASCII: C's white space and 0x1c-0x1f. */
static int py_space(unsigned char ch)
{
    return ch == ' ' || (ch >= '\t' && ch <= '\r') || (ch >= 0x1c && ch <= 0x1f);
}

/* Python's str.strip(). */
static struct span py_strip(struct span s)
{
    while (s.n && py_space((unsigned char)s.p[0]))
        s.p++, s.n--;
    while (s.n && py_space((unsigned char)s.p[s.n - 1]))
        s.n--;
    return s;
}

static int span_eq(struct span a, struct span b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* The next piece of s between separators sep accepts (empty ones
 * skipped: Python's str.split()); 0 at the end. */
static int next_field(struct span s, size_t *off, int (*sep)(unsigned char), struct span *f)
{
    while (*off < s.n && sep((unsigned char)s.p[*off]))
        (*off)++;
    if (*off >= s.n)
        return 0;
    f->p = s.p + *off;
    while (*off < s.n && !sep((unsigned char)s.p[*off]))
        (*off)++;
    f->n = (size_t)(s.p + *off - f->p);
    return 1;
}

/* The next piece of s.split("\n") (Python: "" is one empty piece); 0 at
 * the end.  *off starts at 0 and ends past s.n. */
static int next_split_line(struct span s, size_t *off, struct span *line)
{
    const char *nl;

    if (*off > s.n)
        return 0;
    line->p = s.p + *off;
    nl = s.n > *off ? memchr(line->p, '\n', s.n - *off) : NULL;
    line->n = nl ? (size_t)(nl - line->p) : s.n - *off;
    *off += line->n + 1;
    return 1;
}

/* A token's text as strtod reads it: NUL-terminated, in buf when it fits
 * (else a new string the caller frees in *heap); underscores left out
 * when skip_underscores.  NULL when out of memory. */
static const char *token_cstr(struct span t, int skip_underscores, char *buf, size_t bufsz,
                              char **heap)
{
    char *s = buf;
    size_t o = 0;

    *heap = NULL;
    if (t.n >= bufsz && !(s = *heap = malloc(t.n + 1)))
        return NULL;
    for (size_t i = 0; i < t.n; i++)
        if (!(skip_underscores && t.p[i] == '_'))
            s[o++] = t.p[i];
    s[o] = '\0';
    return s;
}

/* Two tokens as Python's Decimal compares them: every '_' left out
 * (Decimal("1_0_0") is 100), then decimals by value; NaN equals nothing. */
static int same_decimal(struct span ta, struct span tb)
{
    char ba[128], bb[128], *ha = NULL, *hb = NULL;
    const char *a = ta.p, *b = tb.p;
    struct num x, y;
    int same = 0;

    if (memchr(ta.p, '_', ta.n) && (a = token_cstr(ta, 1, ba, sizeof(ba), &ha)))
        ta.n = strlen(a);
    if (memchr(tb.p, '_', tb.n) && (b = token_cstr(tb, 1, bb, sizeof(bb), &hb)))
        tb.n = strlen(b);
    if (a && b && number(a, ta.n, &x) && number(b, tb.n, &y) && x.kind == y.kind &&
        x.kind != NUM_NAN)
        same = x.kind == NUM_INF ? x.neg == y.neg : num_equal(&x, &y);
    free(ha);
    free(hb);
    return same;
}

/* lines_decimal: one line's tokens as lists of Decimal. */
static int decimal_lines_equal(struct span a, struct span b)
{
    size_t ao = 0, bo = 0;
    struct span ta = {0}, tb = {0};

    for (;;) {
        int ha = next_field(a, &ao, py_space, &ta), hb = next_field(b, &bo, py_space, &tb);
        if (!ha || !hb)
            return ha == hb;
        if (!same_decimal(ta, tb))
            return 0;
    }
}

static int compare_lines_decimal(const char *a, size_t an, const char *b, size_t bn)
{
    struct span sa = py_strip((struct span){a, an}), sb = py_strip((struct span){b, bn});
    size_t ao = 0, bo = 0;
    struct span la, lb;

    for (;;) {
        int ha = next_split_line(sa, &ao, &la), hb = next_split_line(sb, &bo, &lb);
        if (!ha || !hb)
            return ha == hb;
        la = py_strip(la);
        lb = py_strip(lb);
        if (!span_eq(la, lb) && !decimal_lines_equal(la, lb))
            return 0;
    }
}

/* Digits of t from *i, with a '_' allowed between two of them when
 * underscores (Python's literals); their count, or 0 on a misplaced '_'. */
static size_t digit_run(struct span t, size_t *i, int underscores)
{
    size_t from = *i, count = 0;

    while (*i < t.n) {
        if (t.p[*i] >= '0' && t.p[*i] <= '9') {
            count++;
        } else if (!(underscores && t.p[*i] == '_' && *i > from && *i + 1 < t.n &&
                     t.p[*i + 1] >= '0' && t.p[*i + 1] <= '9')) {
            break;
        }
        (*i)++;
    }
    return count;
}

/* A decimal mantissa and optional exponent, the whole of t from i: 1 when
 * it is one. */
static int decimal_syntax(struct span t, size_t i, int underscores)
{
    size_t whole = digit_run(t, &i, underscores), frac = 0;

    if (i < t.n && t.p[i] == '.') {
        i++;
        frac = digit_run(t, &i, underscores);
    }
    if (whole + frac == 0)
        return 0;
    if (i < t.n && (t.p[i] == 'e' || t.p[i] == 'E')) {
        i++;
        if (i < t.n && (t.p[i] == '+' || t.p[i] == '-'))
            i++;
        if (digit_run(t, &i, underscores) == 0)
            return 0;
    }
    return i == t.n;
}

/* nan(chars) as from_chars reads it: letters, digits and '_' inside. */
static int nan_with_payload(struct span t)
{
    if (t.n < 5 || strncasecmp(t.p, "nan(", 4) != 0 || t.p[t.n - 1] != ')')
        return 0;
    for (size_t i = 4; i + 1 < t.n; i++)
        if (!isalnum((unsigned char)t.p[i]) && t.p[i] != '_')
            return 0;
    return 1;
}

/* A number by one of two harnesses' readers into *v: absl's SimpleAtod
 * (CodeContests: a '+' not before '-', then from_chars: '-', inf,
 * infinity, nan, nan(chars) or a decimal) or Python's float() (a sign,
 * inf, infinity, nan or a decimal with '_' between digits).  1 when t is
 * one. */
enum num_reader { READ_ABSL, READ_PYTHON };

static int read_double(struct span t, enum num_reader r, double *v)
{
    char buf[128], *heap = NULL;
    const char *s;
    size_t i = 0;
    int neg = 0;

    if (r == READ_ABSL && t.n && t.p[0] == '+') {
        t.p++, t.n--;
        if (t.n && t.p[0] == '-')
            return 0;
    }
    if (t.n && (t.p[0] == '-' || (r == READ_PYTHON && t.p[0] == '+')))
        neg = t.p[i++] == '-';
    struct span w = {t.p + i, t.n - i};
    if (word_is(w.p, w.n, "inf") || word_is(w.p, w.n, "infinity")) {
        *v = neg ? -INFINITY : INFINITY;
        return 1;
    }
    if (word_is(w.p, w.n, "nan") || (r == READ_ABSL && nan_with_payload(w))) {
        *v = NAN;
        return 1;
    }
    if (!decimal_syntax(t, i, r == READ_PYTHON))
        return 0;
    if (!(s = token_cstr(t, r == READ_PYTHON, buf, sizeof(buf), &heap)))
        return 0;
    *v = strtod(s, NULL); /* an overflow is +-HUGE_VAL: inf, as both harnesses read it */
    free(heap);
    return 1;
}

static int cc_space(unsigned char ch)
{
    return ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r' || ch == '\v';
}

static int same_icase(struct span a, struct span b)
{
    if (a.n != b.n)
        return 0;
    for (size_t i = 0; i < a.n; i++)
        if (tolower((unsigned char)a.p[i]) != tolower((unsigned char)b.p[i]))
            return 0;
    return 1;
}

/* CodeContests' ValuesMatch on two lowercased tokens. */
static int icase_values_match(double tol, struct span a, struct span b)
{
    double x, y;

    if (!read_double(a, READ_ABSL, &x) || !read_double(b, READ_ABSL, &y))
        return same_icase(a, b);
    return fabs(x - y) < tol;
}

static int compare_tokens_icase_abs(double tol, const char *a, size_t an, const char *b, size_t bn)
{
    struct span sa = {a, an}, sb = {b, bn}, ta, tb;
    size_t ao = 0, bo = 0;
    int same = 1;

    for (;;) {
        int ha = next_field(sa, &ao, cc_space, &ta), hb = next_field(sb, &bo, cc_space, &tb);
        if (ha != hb)
            return 0; /* as many tokens, or none match */
        if (!ha)
            break;
        same = same && same_icase(ta, tb);
    }
    if (same)
        return 1;
    ao = bo = 0;
    while (next_field(sa, &ao, cc_space, &ta) && next_field(sb, &bo, cc_space, &tb))
        if (!icase_values_match(tol, ta, tb))
            return 0;
    return 1;
}

/* ---- line_token_sets: APPS's cascade ---- */

struct spans {
    struct span *v;
    size_t n, cap;
};

static int spans_add(struct spans *s, struct span x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct span *v = reallocarray(s->v, cap, sizeof(*v));
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

/* Python's str.splitlines() on ASCII: \n, \r, \r\n, VT, FF, 0x1c-0x1e. */
static int py_splitlines(struct span s, struct spans *out)
{
    size_t i = 0, from = 0;

    while (i < s.n) {
        unsigned char ch = (unsigned char)s.p[i];
        if (ch != '\n' && ch != '\r' && ch != '\v' && ch != '\f' && !(ch >= 0x1c && ch <= 0x1e)) {
            i++;
            continue;
        }
        if (spans_add(out, (struct span){s.p + from, i - from}) != 0)
            return -1;
        i += ch == '\r' && i + 1 < s.n && s.p[i + 1] == '\n' ? 2 : 1;
        from = i;
    }
    return from < s.n ? spans_add(out, (struct span){s.p + from, s.n - from}) : 0;
}

static int spans_eq(const struct spans *a, const struct spans *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (!span_eq(a->v[i], b->v[i]))
            return 0;
    return 1;
}

/* "\n".join(lines, each stripped when strip), then stripped, equals want
 * stripped: APPS's custom_compare_.  buf holds the join (as long as the
 * output at most). */
static int joined_equal(const struct spans *lines, int strip, char *buf, struct span want)
{
    size_t o = 0;

    for (size_t i = 0; i < lines->n; i++) {
        struct span l = strip ? py_strip(lines->v[i]) : lines->v[i];
        if (i)
            buf[o++] = '\n';
        if (l.n)
            memcpy(buf + o, l.p, l.n);
        o += l.n;
    }
    return span_eq(py_strip((struct span){buf, o}), py_strip(want));
}

/* numpy.allclose(got, want) of each line read by float(): |a - b| <=
 * 1e-8 + 1e-5 * |b|; infinities equal when the same; NaN never. */
static int lines_allclose(const struct spans *got, const struct spans *want)
{
    if (got->n != want->n)
        return 0;
    for (size_t i = 0; i < got->n; i++) {
        double a, b;
        if (!read_double(py_strip(got->v[i]), READ_PYTHON, &a) ||
            !read_double(py_strip(want->v[i]), READ_PYTHON, &b))
            return 0;
        if (isnan(a) || isnan(b) ||
            (isinf(a) || isinf(b) ? a != b : fabs(a - b) > 1e-8 + 1e-5 * fabs(b)))
            return 0;
    }
    return 1;
}

/* A frozenset of one line's tokens as a key: its distinct members sorted,
 * each as a length and its bytes (text), or as the double it rounds to at
 * 3 decimals (Python's round(float(t), 3); -0 is 0). */
struct key {
    char *p;
    size_t n;
};

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    size_t m = x->n < y->n ? x->n : y->n;
    int c = m ? memcmp(x->p, y->p, m) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_key(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    size_t m = x->n < y->n ? x->n : y->n;
    int c = m ? memcmp(x->p, y->p, m) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* round(x, 3) as CPython does it: correctly rounded to 3 decimals, then
 * read back (printf and strtod are exact in glibc). */
static double py_round3(double x)
{
    char buf[400];

    if (!isfinite(x))
        return x;
    snprintf(buf, sizeof(buf), "%.3f", x);
    return strtod(buf, NULL) + 0.0;
}

/* The key of one line; 1 made, 0 when rounded and a token is not a float
 * or is NaN (no set with NaN equals another), -1 out of memory. */
static int line_key(struct span line, int rounded, struct spans *toks, struct key *k)
{
    size_t off = 0, o = 0, d = 0, m;
    struct span t;
    double *vals = NULL;

    toks->n = 0;
    while (next_field(line, &off, py_space, &t))
        if (spans_add(toks, t) != 0)
            return -1;
    k->p = NULL;
    k->n = 0;
    if (rounded) {
        if (toks->n && !(vals = calloc(toks->n, sizeof(*vals))))
            return -1;
        for (size_t i = 0; i < toks->n; i++)
            if (!read_double(toks->v[i], READ_PYTHON, &vals[i]) || isnan(vals[i])) {
                free(vals);
                return 0;
            } else {
                vals[i] = py_round3(vals[i]);
            }
        if (toks->n)
            qsort(vals, toks->n, sizeof(*vals), cmp_double);
        for (size_t i = 0; i < toks->n; i++)
            if (i == 0 || vals[i] != vals[d - 1])
                vals[d++] = vals[i];
        k->n = d * sizeof(double);
        k->p = (char *)vals;
        return 1;
    }
    if (toks->n)
        qsort(toks->v, toks->n, sizeof(*toks->v), cmp_span);
    m = 0;
    for (size_t i = 0; i < toks->n; i++)
        m += sizeof(size_t) + toks->v[i].n;
    if (!(k->p = malloc(m + 1)))
        return -1;
    for (size_t i = 0; i < toks->n; i++) {
        if (i && span_eq(toks->v[i], toks->v[i - 1]))
            continue;
        memcpy(k->p + o, &toks->v[i].n, sizeof(size_t));
        memcpy(k->p + o + sizeof(size_t), toks->v[i].p, toks->v[i].n);
        o += sizeof(size_t) + toks->v[i].n;
    }
    k->n = o;
    return 1;
}

static void keys_free(struct key *keys, size_t n)
{
    for (size_t i = 0; keys && i < n; i++)
        free(keys[i].p);
    free(keys);
}

/* The set of the lines' keys, sorted and distinct, into *out (*nout); the
 * lines with no token are left out when skip_empty.  1, 0 (rounded and a
 * token not a float), -1 out of memory. */
static int key_set(const struct spans *lines, int rounded, int skip_empty, struct key **out,
                   size_t *nout)
{
    struct spans toks = {0};
    struct key *keys = calloc(lines->n + 1, sizeof(*keys));
    size_t n = 0, d = 0;
    int rc = keys ? 1 : -1;

    for (size_t i = 0; rc == 1 && i < lines->n; i++) {
        size_t off = 0;
        struct span t;
        if (skip_empty && !next_field(lines->v[i], &off, py_space, &t))
            continue;
        if ((rc = line_key(lines->v[i], rounded, &toks, &keys[n])) == 1)
            n++;
    }
    free(toks.v);
    if (rc != 1) {
        keys_free(keys, n);
        return rc;
    }
    if (n)
        qsort(keys, n, sizeof(*keys), cmp_key);
    for (size_t i = 0; i < n; i++) {
        if (d && cmp_key(&keys[i], &keys[d - 1]) == 0) {
            free(keys[i].p);
            continue;
        }
        keys[d++] = keys[i];
    }
    *out = keys;
    *nout = d;
    return 1;
}

/* set(frozenset(line.split()) ...) of got's lines with tokens equals that
 * of every line of want (an empty one too), as text or rounded floats. */
static int same_line_sets(const struct spans *got, const struct spans *want, int rounded)
{
    struct key *a = NULL, *b = NULL;
    size_t an = 0, bn = 0;
    int same = 0;

    if (key_set(got, rounded, 1, &a, &an) == 1 && key_set(want, rounded, 0, &b, &bn) == 1 &&
        an == bn) {
        same = 1;
        for (size_t i = 0; same && i < an; i++)
            same = cmp_key(&a[i], &b[i]) == 0;
    }
    keys_free(a, an);
    keys_free(b, bn);
    return same;
}

/* APPS's checks in its order; the first that holds passes. */
static int line_token_sets(struct span want, struct spans *o, struct spans *w, char *buf)
{
    struct spans nonempty = {0};
    size_t off = 0;
    struct span l;
    int same;

    if (joined_equal(o, 0, buf, want) || joined_equal(o, 1, buf, want))
        return 1;
    if (o->n == 1 && span_eq(o->v[0], want))
        return 1;
    /* want: its non-empty "\n" pieces, stripped */
    while (next_split_line(want, &off, &l))
        if (l.n && spans_add(w, py_strip(l)) != 0)
            return 0;
    if (spans_eq(o, w))
        return 1;
    for (size_t i = 0; i < o->n; i++)
        if (o->v[i].n && spans_add(&nonempty, o->v[i]) != 0) {
            free(nonempty.v);
            return 0;
        }
    same = spans_eq(&nonempty, w) || lines_allclose(&nonempty, w) ||
           same_line_sets(&nonempty, w, 0) || same_line_sets(&nonempty, w, 1);
    free(nonempty.v);
    return same;
}

/* "\n".join(s.splitlines()) into buf (s.n bytes at most), without the
 * lines' spans: APPS's first check needs no more. */
static size_t py_join_lines(struct span s, char *buf)
{
    size_t o = 0;

    for (size_t i = 0; i < s.n; i++) {
        unsigned char ch = (unsigned char)s.p[i];
        if (ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f' || (ch >= 0x1c && ch <= 0x1e)) {
            i += ch == '\r' && i + 1 < s.n && s.p[i + 1] == '\n';
            if (i + 1 < s.n) /* splitlines() has no empty last line */
                buf[o++] = '\n';
        } else {
            buf[o++] = (char)ch;
        }
    }
    return o;
}

/* Over COMPARE_LTS_MAX_LINES lines or COMPARE_LTS_MAX_TOKENS tokens (either
 * text): the cascade's spans and token sets would take many times the
 * outputs' size (docs/jobs.md). */
static int lts_too_big(struct span s)
{
    size_t lines = 0, tokens = 0;

    for (size_t i = 0; i < s.n; i++) {
        unsigned char ch = (unsigned char)s.p[i];
        lines += ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f' || (ch >= 0x1c && ch <= 0x1e);
        tokens += !py_space(ch) && (i == 0 || py_space((unsigned char)s.p[i - 1]));
    }
    return lines > COMPARE_LTS_MAX_LINES || tokens > COMPARE_LTS_MAX_TOKENS;
}

static int compare_line_token_sets(const char *a, size_t an, const char *b, size_t bn)
{
    struct span got = {a, an}, want = {b, bn};
    struct spans o = {0}, w = {0};
    char *buf = malloc(an + 1);
    int same = 0;

    if (!buf)
        return 0;
    /* the common pass first, in the output's size; past the caps no more */
    if (span_eq(py_strip((struct span){buf, py_join_lines(got, buf)}), py_strip(want)))
        same = 1;
    else if (!lts_too_big(got) && !lts_too_big(want) && py_splitlines(got, &o) == 0)
        same = line_token_sets(want, &o, &w, buf);
    free(o.v);
    free(w.v);
    free(buf);
    return same;
}

/* TOL of "float:TOL": a decimal of compare.h's grammar from 0 to 1. */
static int tolerance(const char *s, size_t n, double *tol, const char **why)
{
    struct num x;

    if (!number(s, n, &x)) {
        *why = "has a tolerance that is not a decimal number (e.g. float:1e-6; hex is not read)";
        return -1;
    }
    *tol = x.kind == NUM_DECIMAL ? num_double(&x) : -1;
    if (x.kind != NUM_DECIMAL || (x.neg && x.ndigits) || *tol > 1) {
        *why = "has a tolerance that is not a number from 0 to 1 (inf, nan and negative "
               "ones are not; e.g. float:1e-6)";
        return -1;
    }
    *tol = fabs(*tol); /* -0 */
    return 0;
}

int compare_parse(const char *s, size_t n, struct compare *c, const char **why)
{
    c->tol = COMPARE_DEFAULT_TOL;
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (strlen(names[k]) == n && memcmp(s, names[k], n) == 0) {
            c->mode = (enum compare_mode)k;
            if (c->mode == COMPARE_TOKENS_ICASE_ABS)
                c->tol = COMPARE_ICASE_ABS_TOL;
            return 0;
        }
    for (enum compare_mode m = COMPARE_FLOAT; m <= COMPARE_TOKENS_ICASE_ABS;
         m += COMPARE_TOKENS_ICASE_ABS - COMPARE_FLOAT) {
        size_t k = strlen(names[m]);
        if (n > k && memcmp(s, names[m], k) == 0 && s[k] == ':') {
            if (tolerance(s + k + 1, n - k - 1, &c->tol, why) != 0)
                return -1;
            c->mode = m;
            return 0;
        }
    }
    *why = "is not a comparison (exact, trailing_whitespace, tokens, float or float:TOL, "
           "lines_decimal, tokens_icase_abs or tokens_icase_abs:TOL, line_token_sets)";
    return -1;
}

int compare_expected(int ran, int64_t exit_code, int64_t expect_exit, const struct compare *c,
                     const char *out, size_t on, const char *want, size_t wn)
{
    return ran && exit_code == expect_exit &&
           (!want || compare_output(c, out ? out : "", on, want, wn));
}

int compare_output(const struct compare *c, const char *got, size_t gn, const char *want, size_t wn)
{
    switch (c->mode) {
    case COMPARE_EXACT:
        return gn == wn && memcmp(got, want, gn) == 0;
    case COMPARE_TOKENS:
    case COMPARE_FLOAT:
        return same_tokens(c, got, gn, want, wn);
    case COMPARE_LINES_DECIMAL:
        return compare_lines_decimal(got, gn, want, wn);
    case COMPARE_TOKENS_ICASE_ABS:
        return compare_tokens_icase_abs(c->tol, got, gn, want, wn);
    case COMPARE_LINE_TOKEN_SETS:
        return compare_line_token_sets(got, gn, want, wn);
    case COMPARE_TRAILING_WS:
    default:
        return same_lines(got, gn, want, wn);
    }
}
