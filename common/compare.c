/* compare.c - output comparison modes (see compare.h).  Runs in the
 * worker (a job's expectations) and in the agent (each test case's). */
#include "compare.h"

#include <math.h>
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

int compare_parse(const char *s, size_t n, struct compare *c, const char **why)
{
    c->tol = COMPARE_DEFAULT_TOL;
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (strlen(names[k]) == n && memcmp(s, names[k], n) == 0) {
            c->mode = (enum compare_mode)k;
            return 0;
        }
    if (n > 6 && n < 40 && memcmp(s, "float:", 6) == 0) {
        char num[40], *end;
        memcpy(num, s + 6, n - 6);
        num[n - 6] = '\0';
        c->tol = strtod(num, &end);
        if (end != num && !*end && c->tol >= 0 && c->tol <= 1) {
            c->mode = COMPARE_FLOAT;
            return 0;
        }
        *why = "has a tolerance that is not a number from 0 to 1 (e.g. float:1e-6)";
        return -1;
    }
    *why = "is not a comparison (exact, trailing_whitespace, tokens, float or float:TOL)";
    return -1;
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

/* Longer tokens are words (a number token is held for strtod). */
#define NUMBER_MAX 512

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

/* A whole token as a number, by compare.h's grammar: decimal only (strtod
 * alone would read "0x10" and "0x1p4" too), overflow as an infinity. */
static int number(const char *t, size_t n, double *v)
{
    char buf[NUMBER_MAX + 1];
    size_t i = 0, whole, frac = 0;
    int neg;

    if (n == 0 || n > NUMBER_MAX)
        return 0;
    neg = t[0] == '-';
    if (t[0] == '+' || t[0] == '-')
        i++;
    if (word_is(t + i, n - i, "inf") || word_is(t + i, n - i, "infinity")) {
        *v = neg ? -INFINITY : INFINITY;
        return 1;
    }
    if (word_is(t + i, n - i, "nan")) {
        *v = NAN;
        return 1;
    }
    whole = digits(t, n, &i);
    if (i < n && t[i] == '.') {
        i++;
        frac = digits(t, n, &i);
    }
    if (whole + frac == 0)
        return 0;
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < n && (t[i] == '+' || t[i] == '-'))
            i++;
        if (digits(t, n, &i) == 0)
            return 0;
    }
    if (i != n)
        return 0;
    memcpy(buf, t, n);
    buf[n] = '\0';
    *v = strtod(buf, NULL); /* +-HUGE_VAL, an infinity, when it overflows */
    return 1;
}

static int same_token(const struct compare *c, const char *a, size_t an, const char *b, size_t bn)
{
    double x, y;

    if (an == bn && memcmp(a, b, an) == 0)
        return 1;
    if (c->mode != COMPARE_FLOAT || !number(a, an, &x) || !number(b, bn, &y))
        return 0;
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y);
    if (isinf(x) || isinf(y))
        return x == y;
    return fabs(x - y) <= c->tol || fabs(x - y) <= c->tol * fabs(y);
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
