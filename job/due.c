/* due.c - when a delayed job is due (docs/jobs.md, not_before and
 * delay_ms): the fields' values, a duration as `submit --delay` takes it,
 * and the fields a deferred entry is stored with.  Pure: the worker's
 * deferral and the mover live in queue/delayed.c, these only decide. */
#include "job.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int64_t y, int64_t m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* n digits of s as a number; -1 when one is not a digit. */
static int64_t digits(const char *s, size_t n)
{
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00)" (RFC 3339, UTC only) into
 * epoch ms; 0, or -1 when it is not one. */
static int rfc3339_utc(const char *s, size_t n, int64_t *ms)
{
    int64_t y, mo, d, h, mi, se, frac = 0;
    size_t i = 19, fd = 0;

    if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
        s[16] != ':')
        return -1;
    y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
    h = digits(s + 11, 2), mi = digits(s + 14, 2), se = digits(s + 17, 2);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h < 0 || h > 23 ||
        mi < 0 || mi > 59 || se < 0 || se > 59)
        return -1;
    if (s[i] == '.') {
        for (i++; i < n && isdigit((unsigned char)s[i]); i++, fd++)
            if (fd < 3)
                frac = frac * 10 + (s[i] - '0');
        if (fd == 0)
            return -1;
        for (; fd < 3; fd++)
            frac *= 10;
    }
    if (!((n - i == 1 && (s[i] == 'Z' || s[i] == 'z')) ||
          (n - i == 6 && (memcmp(s + i, "+00:00", 6) == 0 || memcmp(s + i, "-00:00", 6) == 0))))
        return -1;
    *ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 + se * 1000 + frac;
    return 0;
}

static int due_err(struct llmsb_err *err, const char *field, const char *v, size_t n,
                   const char *why)
{
    char shown[80];
    llmsb_escape(shown, sizeof(shown), v, n);
    return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: \"%s\" %s", field, shown, why);
}

int job_not_before_parse(const char *v, size_t n, int64_t *ms, struct llmsb_err *err)
{
    int64_t t = -1;

    if (n > 0 && n <= 15 && digits(v, n) >= 0)
        t = digits(v, n);
    else if (rfc3339_utc(v, n, &t) != 0)
        return due_err(err, "not_before", v, n,
                       "is not a time: epoch milliseconds (e.g. 1767225600000) or an RFC 3339 "
                       "UTC time (e.g. 2026-01-01T00:00:00Z)");
    if (t > JOB_NOT_BEFORE_MAX_MS)
        return due_err(err, "not_before", v, n, "is past the year 9999");
    *ms = t;
    return 0;
}

int job_delay_parse(const char *v, size_t n, int64_t *ms, struct llmsb_err *err)
{
    int64_t d = n > 0 && n <= 12 ? digits(v, n) : -1;

    if (d < 0)
        return due_err(err, "delay_ms", v, n, "is not a whole number of milliseconds");
    if (d > JOB_DELAY_MAX_MS)
        return due_err(err, "delay_ms", v, n,
                       "is over the longest delay, " JOB_DELAY_MAX_TEXT " (31622400000 ms)");
    *ms = d;
    return 0;
}

int job_duration_parse(const char *what, const char *s, int64_t *ms, struct llmsb_err *err)
{
    static const struct {
        const char *unit;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || isspace((unsigned char)*s))
        goto bad;
    for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++)
        if (strcmp(end, units[k].unit) == 0) {
            double total = v * (double)units[k].ms;
            if (total > (double)JOB_DELAY_MAX_MS)
                return llmsb_err_set(err, LLMSB_ERR_INVALID,
                                     "%s: \"%.40s\" is over the longest delay, " JOB_DELAY_MAX_TEXT,
                                     what, s);
            *ms = (int64_t)(total + 0.5);
            return 0;
        }
bad:
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "%s: \"%.40s\" is not a duration: a number and a unit, ms, s, m, h or d "
                         "(e.g. 30s, 500ms, 2h)",
                         what, s);
}

int job_due_ms(const struct fields *f, int64_t entry_ms, int64_t *due, struct llmsb_err *err)
{
    size_t nb_len = 0, d_len = 0;
    const char *nb = fields_get(f, "not_before", &nb_len), *d = fields_get(f, "delay_ms", &d_len);
    int64_t v;

    *due = 0;
    if (nb && d)
        return llmsb_err_set(err, LLMSB_ERR_INVALID,
                             "delay_ms: not with not_before (a job gives one of them)");
    if (nb) {
        if (job_not_before_parse(nb, nb_len, &v, err) != 0)
            return err->code;
        *due = v;
    } else if (d) {
        if (job_delay_parse(d, d_len, &v, err) != 0)
            return err->code;
        *due = entry_ms + v;
    }
    return 0;
}

int job_due_fields(const struct fields *in, const char *id, int64_t due_ms, struct fields *out)
{
    char at[24];
    int rc = 0;

    snprintf(at, sizeof(at), "%lld", (long long)due_ms);
    fields_init(out, in->n + 2);
    if (!fields_get(in, "id", NULL))
        rc |= fields_add_copy(out, "id", 2, id, strlen(id));
    for (size_t i = 0; i < in->n && rc == 0; i++) {
        const struct field *v = &in->v[i];
        if (strcmp(v->name, "delay_ms") == 0 || strcmp(v->name, "not_before") == 0)
            continue;
        rc |= fields_add_copy(out, v->name, v->name_len, v->value, v->len);
    }
    rc |= fields_add_copy(out, "not_before", 10, at, strlen(at));
    if (rc != 0) {
        fields_release(out);
        return LLMSB_ERR_NOMEM;
    }
    return 0;
}
