/* common.c - the error type, the log writer, the capped buffer and strict
 * number parsing.  Kept free of any library so the static agent links it. */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int llmsb_log_level = LOG_LEVEL_INFO;
volatile sig_atomic_t llmsb_interrupted;

int llmsb_err_set(struct llmsb_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        int n;
        va_start(ap, fmt);
        n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        if (n >= (int)sizeof(err->msg)) /* cut: say so */
            memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
        err->code = code;
    }
    return code;
}

int llmsb_err_wrap(struct llmsb_err *err, const char *fmt, ...)
{
    char prefix[128], old[sizeof(err->msg)];
    va_list ap;

    if (!err)
        return LLMSB_ERR_INVALID;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    llmsb_fmt(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
    return err->code;
}

void llmsb_err_clear(struct llmsb_err *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

void llmsb_log_raw(int level, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    char line[1024];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    int n;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s [%d] ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 ts.tv_nsec / 1000000, names[level & 3], (int)getpid());
    if (n < 0 || (size_t)n >= sizeof(line))
        n = 0;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}

int llmsb_log_level_parse(const char *s)
{
    static const char *names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int llmsb_printable_utf8(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;

    while (p < end) {
        uint32_t cp;
        size_t need;
        if (*p < 0x80) {
            if (*p < 0x20 || *p == 0x7f)
                return 0;
            p++;
            continue;
        }
        if ((*p & 0xe0) == 0xc0)
            cp = *p & 0x1f, need = 1;
        else if ((*p & 0xf0) == 0xe0)
            cp = *p & 0x0f, need = 2;
        else if ((*p & 0xf8) == 0xf0)
            cp = *p & 0x07, need = 3;
        else
            return 0;
        if ((size_t)(end - p) <= need)
            return 0;
        for (size_t i = 1; i <= need; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
            return 0;
        p += need + 1;
    }
    return 1;
}

void llmsb_escape(char *out, size_t outsz, const char *s, size_t len)
{
    size_t o = 0;

    if (outsz == 0)
        return;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char tmp[8];
        size_t tl;

        if (c == '\n')
            memcpy(tmp, "\\n", tl = 2);
        else if (c == '\t')
            memcpy(tmp, "\\t", tl = 2);
        else if (c == '\\' || c == '"')
            tmp[0] = '\\', tmp[1] = (char)c, tl = 2;
        else if (c < 0x20 || c >= 0x7f)
            tl = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", c);
        else
            tmp[0] = (char)c, tl = 1;
        if (o + tl + 4 > outsz) {
            if (o + 4 <= outsz) {
                memcpy(out + o, "...", 3);
                o += 3;
            }
            break;
        }
        memcpy(out + o, tmp, tl);
        o += tl;
    }
    out[o < outsz ? o : outsz - 1] = '\0';
}

int llmsb_fmt(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (size == 0)
        return 1;
    va_start(ap, fmt);
    n = vsnprintf(dst, size, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < size)
        return 0;
    if (size > 4)
        memcpy(dst + size - 4, "...", 4);
    return 1;
}

int llmsb_append(char *dst, size_t size, const char *fmt, ...)
{
    size_t used = strnlen(dst, size);
    va_list ap;
    int n;

    if (used >= size)
        return LLMSB_ERR_LIMIT;
    va_start(ap, fmt);
    n = vsnprintf(dst + used, size - used, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= size - used ? LLMSB_ERR_LIMIT : 0;
}

/* ---- buffer ------------------------------------------------------------ */

void buf_init(struct buf *b, size_t cap)
{
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    b->cap = cap ? cap : BUF_DEFAULT_CAP;
}

void buf_release(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->alloc = 0;
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static int buf_reserve(struct buf *b, size_t extra)
{
    size_t need, na;
    char *p;

    if (extra > b->cap || b->len > b->cap - extra)
        return LLMSB_ERR_LIMIT;
    need = b->len + extra + 1;
    if (need <= b->alloc)
        return 0;
    na = b->alloc ? b->alloc : 256;
    while (na < need)
        na = na > SIZE_MAX / 2 ? need : na * 2;
    p = realloc(b->data, na);
    if (!p)
        return LLMSB_ERR_NOMEM;
    b->data = p;
    b->alloc = na;
    return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
    int rc = buf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_append_str(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int n, rc;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return LLMSB_ERR_INVALID;
    if ((rc = buf_reserve(b, (size_t)n)) != 0)
        return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

size_t buf_append_some(struct buf *b, const void *p, size_t n)
{
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    if (n > room)
        n = room;
    if (n && buf_append(b, p, n) != 0)
        return 0;
    return n;
}

void buf_consume(struct buf *b, size_t n)
{
    if (n >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *buf_steal(struct buf *b)
{
    char *p = b->data;
    if (!p)
        p = calloc(1, 1);
    b->data = NULL;
    b->len = b->alloc = 0;
    return p;
}

/* ---- numbers ----------------------------------------------------------- */

int parse_ll(const char *s, long long min, long long max, long long *out)
{
    char *end;
    long long v;

    if (!s || !*s || isspace((unsigned char)*s))
        return LLMSB_ERR_INVALID;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end != '\0' || v < min || v > max)
        return LLMSB_ERR_INVALID;
    *out = v;
    return 0;
}

int parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    double v;

    /* decimal notation only: strtod would also take hex, inf and nan */
    if (!s || !*s || strspn(s, "+-0123456789.eE") != strlen(s))
        return LLMSB_ERR_INVALID;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end != '\0' || !isfinite(v) || v < min || v > max)
        return LLMSB_ERR_INVALID;
    *out = v;
    return 0;
}

int parse_bool(const char *s, int *out)
{
    static const char *yes[] = {"true", "yes", "1", "on"};
    static const char *no[] = {"false", "no", "0", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return LLMSB_ERR_INVALID;
}

int64_t clock_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t clock_mono_ms(void)
{
    return clock_mono_us() / 1000;
}

int64_t clock_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    if (n) /* s may be NULL for nothing */
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void llmsb_signals(void (*handler)(int))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *u = p;
    if (h == 0)
        h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= u[i];
        h *= 1099511628211ULL;
    }
    return h;
}
