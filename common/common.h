/* common.h - errors, logging, bounded buffers and number parsing shared by
 * every module.  Everything that holds data from a job, a container or a
 * daemon goes through struct buf, whose hard cap is set before any byte is
 * accepted, so no untrusted input can grow memory without bound. */
#ifndef LLMSB_COMMON_H
#define LLMSB_COMMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>

#define LLMSB_VERSION "0.1.0"

/* The clone flags that make a namespace (CLONE_NEWNS, NEWCGROUP, NEWUTS,
 * NEWIPC, NEWUSER, NEWPID, NEWNET): a clone with any of them is denied by
 * the container's seccomp profile (backends/seccomp.c) and by the filter
 * the agent installs on itself (agent/confine.c). */
#define LLMSB_CLONE_NS_FLAGS 0x7E020000

/* ---- errors ------------------------------------------------------------ */

enum llmsb_code {
    LLMSB_OK = 0,
    LLMSB_ERR_INVALID = -1, /* bad input: a flag, a field, a config value */
    LLMSB_ERR_SYS = -2,     /* a system call failed */
    LLMSB_ERR_BACKEND = -3, /* the container engine refused or failed */
    LLMSB_ERR_PROTO = -4,   /* the agent or a daemon spoke garbage */
    LLMSB_ERR_NOMEM = -5,
    LLMSB_ERR_TIMEOUT = -6,     /* we gave up waiting */
    LLMSB_ERR_INTERRUPTED = -7, /* a signal asked us to stop */
    LLMSB_ERR_NOTFOUND = -8,
    LLMSB_ERR_LIMIT = -9 /* a cap was reached */
};

struct llmsb_err {
    int code;
    char msg[512]; /* a longer message ends in "..." */
};

/* Sets err (if non-NULL) and returns code, so callers can write
 * `return llmsb_err_set(err, LLMSB_ERR_INVALID, "...")`. */
int llmsb_err_set(struct llmsb_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends "prefix: " to an existing message. */
int llmsb_err_wrap(struct llmsb_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void llmsb_err_clear(struct llmsb_err *err);

/* ---- logging ----------------------------------------------------------- */

enum log_level {
    LOG_LEVEL_DEBUG = 0,
    LOG_LEVEL_INFO,
    LOG_LEVEL_WARN,
    LOG_LEVEL_ERROR,
    LOG_LEVEL_OFF
};

extern int llmsb_log_level;
void llmsb_log_raw(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int llmsb_log_level_parse(const char *s);

#define log_at(lvl, ...)                       \
    do {                                       \
        if ((lvl) >= llmsb_log_level)          \
            llmsb_log_raw((lvl), __VA_ARGS__); \
    } while (0)
#define log_debug(...) log_at(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_info(...) log_at(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_warn(...) log_at(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_error(...) log_at(LOG_LEVEL_ERROR, __VA_ARGS__)

/* Writes s (len bytes) into out as printable ASCII with C escapes, for logs
 * and error messages; always NUL-terminates, truncates with "...". */
void llmsb_escape(char *out, size_t outsz, const char *s, size_t len);
/* 1 when s[0..len) is valid UTF-8 (no overlong forms, surrogates or code
 * points past U+10FFFF) without control characters (C0, DEL, C1). */
int llmsb_printable_utf8(const char *s, size_t len);

/* snprintf for messages, where a cut is acceptable but must show: when the
 * text does not fit it ends in "...". Returns 1 when it was cut, else 0. */
int llmsb_fmt(char *dst, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Appends formatted text to the NUL-terminated string in dst (size bytes in
 * all). Returns 0, or LLMSB_ERR_LIMIT when it did not fit (dst then holds
 * what fitted). */
int llmsb_append(char *dst, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- bounded buffer ---------------------------------------------------- */

struct buf {
    char *data; /* always NUL-terminated when non-NULL */
    size_t len;
    size_t alloc;
    size_t cap; /* hard limit on len; 0 = BUF_DEFAULT_CAP */
};

#define BUF_DEFAULT_CAP ((size_t)64 << 20)

void buf_init(struct buf *b, size_t cap);
void buf_release(struct buf *b);
void buf_reset(struct buf *b);
/* Appends n bytes. Returns 0, LLMSB_ERR_LIMIT if the cap would be passed
 * (nothing appended) or LLMSB_ERR_NOMEM. */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_append_str(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends at most what fits under the cap; returns the bytes taken. */
size_t buf_append_some(struct buf *b, const void *p, size_t n);
/* Removes the first n bytes. */
void buf_consume(struct buf *b, size_t n);
/* Gives the data to the caller (who frees it) and resets the buffer. */
char *buf_steal(struct buf *b);

/* ---- numbers ----------------------------------------------------------- */

/* Parse a whole string as a base-10 integer in [min, max]. */
int parse_ll(const char *s, long long min, long long max, long long *out);
/* Parse a whole string as a finite double in [min, max], in decimal
 * notation (digits, sign, point, exponent: no hex, inf or nan). */
int parse_double(const char *s, double min, double max, double *out);
/* Parse "true/false/yes/no/1/0/on/off". */
int parse_bool(const char *s, int *out);

/* Monotonic clock in milliseconds and microseconds; wall clock in ms. */
int64_t clock_mono_ms(void);
int64_t clock_mono_us(void);
int64_t clock_wall_ms(void);

/* Set by a signal handler when every wait should stop now (Ctrl-C on
 * `run`, a second signal): long waits return LLMSB_ERR_INTERRUPTED. */
extern volatile sig_atomic_t llmsb_interrupted;

/* SIGINT and SIGTERM to handler (which may only set flags), SIGPIPE ignored. */
void llmsb_signals(void (*handler)(int));

/* The n bytes at s (NUL bytes and all) and a closing NUL in new memory; s
 * may be NULL when n is 0.  Aborting is not allowed: NULL on ENOMEM. */
char *xstrndup(const char *s, size_t n);

/* 64-bit FNV-1a of n bytes at p, continued from h (0: start): for tags
 * and labels that name contents, not for anything an attacker must not
 * collide. */
uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n);

#endif
