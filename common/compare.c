/* compare.c - output comparison modes (see compare.h).  Runs in the
 * worker (a job's expectations) and in the agent (each test case's). */
#include "compare.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const names[] = {"trailing_whitespace", "exact", "tokens", "float"};

const char *compare_name(enum compare_mode mode)
{
    return (unsigned)mode < sizeof(names) / sizeof(names[0]) ? names[mode] : "?";
}

void compare_format(const struct compare *c, char *out, size_t outsz)
{
    if (c->mode == COMPARE_FLOAT)
        snprintf(out, outsz, "float:%.17g", c->tol);
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
            return 0;
        }
    if (n >= 6 && memcmp(s, "float:", 6) == 0) {
        if (tolerance(s + 6, n - 6, &c->tol, why) != 0)
            return -1;
        c->mode = COMPARE_FLOAT;
        return 0;
    }
    *why = "is not a comparison (exact, trailing_whitespace, tokens, float or float:TOL)";
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
    case COMPARE_TRAILING_WS:
    default:
        return same_lines(got, gn, want, wn);
    }
}
