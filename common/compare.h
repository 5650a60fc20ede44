/* compare.h - how a program's output is compared with what was expected
 * (expect_stdout of a job and of each test case): exactly, ignoring
 * trailing whitespace (the default), as whitespace-separated tokens, as
 * tokens where numbers match within a tolerance, or by the rule of one of
 * the stdin/stdout benchmarks' harnesses (LiveCodeBench, CodeContests,
 * APPS), each named after what it does. */
#ifndef LLMSB_COMPARE_H
#define LLMSB_COMPARE_H

#include <stddef.h>
#include <stdint.h>

/* White space is space, tab, newline, CR, VT and FF (C's isspace). */
enum compare_mode {
    /* each line's trailing white space (so CRLF ends match LF), and the
     * white space and blank lines at the end, ignored */
    COMPARE_TRAILING_WS = 0,
    COMPARE_EXACT = 1,  /* byte for byte */
    COMPARE_TOKENS = 2, /* the same tokens between any white space */
    /* tokens; where both are numbers, equal within tol (absolute, or
     * relative to the expected one).  A number is decimal: an optional
     * sign, then digits with an optional fraction (or a fraction alone)
     * and an optional exponent of at most 18 digits, leading zeros aside
     * (1, -2.5, .5, 5., 1e-3, 6.02E+23), of any length; or inf, infinity
     * or nan in any case.  The same value however written is equal
     * (10.0e399 and 1 followed by 400 zeros).  Numbers within a double's
     * range compare as doubles; beyond it (10**400, 1e999) by value,
     * their first 40 significant digits within tol relative, so two
     * different big integers differ.  An infinity word equals an infinity
     * word or a decimal beyond a double's range of its sign (1e999 is
     * inf; 1e400 is inf too but not 1e999); NaN equals NaN.  Other tokens
     * (0x10, 1_000, nan(1), 1e1000000000000000000) are words, equal only
     * as the same text. */
    COMPARE_FLOAT = 3,
    /* LiveCodeBench's stdin rule: each text stripped of the white space at
     * both ends, split at '\n', each line stripped; as many lines, each
     * pair equal as text or as lists of decimals of equal value (Python's
     * Decimal: 1.0 = 1, 1e-9 = 0.000000001, 2 = 2.000; NaN equals nothing;
     * Infinity equals Infinity of its sign).  White space here is C's plus
     * the ASCII separators 0x1c-0x1f, as Python's str.strip has them. */
    COMPARE_LINES_DECIMAL = 4,
    /* CodeContests' rule: tokens between space, tab, newline, CR and VT
     * (not FF), ASCII letters lowercased; the same list passes, else as
     * many tokens, each pair equal as text or, both numbers (absl's
     * SimpleAtod: decimal, inf, infinity, nan; an overflow is infinite),
     * less than tol apart (default 1e-5; inf and nan are never that) */
    COMPARE_TOKENS_ICASE_ABS = 5,
    /* APPS's cascade for standard-input problems: the output's lines
     * (Python's splitlines) pass when any of its checks does: the texts
     * equal once stripped (each line stripped, or not); the lines equal the
     * expected text's non-empty lines, stripped; each line a float within
     * numpy.allclose (1e-5 relative + 1e-8); or the SET of each non-blank
     * line's SET of tokens equal (order of lines and of tokens, repeats
     * ignored), also with every token a float rounded to 3 decimals. */
    COMPARE_LINE_TOKEN_SETS = 6
};

#define COMPARE_MODES 7
#define COMPARE_DEFAULT_TOL 1e-6
/* line_token_sets: past this many lines or tokens in either text, only
 * its first check (the stripped texts equal, line ends aside) is made; the
 * others fail (their line and token sets would take many times the
 * outputs' memory) */
#define COMPARE_LTS_MAX_LINES ((size_t)1 << 20)
#define COMPARE_LTS_MAX_TOKENS ((size_t)1 << 21)

/* CodeContests' kDoublePrecision */
#define COMPARE_ICASE_ABS_TOL 1e-5

struct compare {
    enum compare_mode mode;
    double tol; /* COMPARE_FLOAT and COMPARE_TOKENS_ICASE_ABS only */
};

/* Parses "exact", "trailing_whitespace", "tokens", "float" or "float:TOL"
 * (TOL a decimal number of the grammar above from 0 to 1, e.g. 1e-9),
 * "lines_decimal", "tokens_icase_abs" or "tokens_icase_abs:TOL",
 * "line_token_sets".  Returns 0, or -1 with why set to a static text. */
int compare_parse(const char *s, size_t n, struct compare *c, const char **why);
/* 1 when got matches want under c. */
int compare_output(const struct compare *c, const char *got, size_t gn, const char *want,
                   size_t wn);
/* Whether a run met its expectations (a job's, or one test case's): it
 * ran (ok or runtime_error: ran != 0), exited with expect_exit, and its
 * stdout matches want under c (want NULL: stdout is not compared). */
int compare_expected(int ran, int64_t exit_code, int64_t expect_exit, const struct compare *c,
                     const char *out, size_t on, const char *want, size_t wn);
/* c as compare_parse reads it ("tokens", "float:1e-06"); out of 48 bytes
 * always holds it.  Only COMPARE_FLOAT and COMPARE_TOKENS_ICASE_ABS carry
 * a tolerance. */
void compare_format(const struct compare *c, char *out, size_t outsz);
/* The mode's name as compare_parse reads it (without the tolerance). */
const char *compare_name(enum compare_mode mode);

#endif
