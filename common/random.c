/* random.c - bytes from the kernel's RNG (random.h).  getrandom(2) rather
 * than /dev/urandom: no file descriptor, so a process out of them (EMFILE
 * under many connections) still gets its bytes; and no fallback of any
 * kind, so a failure reaches the caller as one. */
#include "common/random.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

int random_bytes(void *p, size_t n, const char *what, struct llmsb_err *err)
{
    unsigned char *out = p;
    size_t got = 0;

    if (n > RANDOM_MAX_BYTES)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: %zu random bytes asked, at most %d",
                             what, n, RANDOM_MAX_BYTES);
    while (got < n) {
        ssize_t k = getrandom(out + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = k < 0 ? errno : EIO;
            memset(p, 0, n);
            return llmsb_err_set(err, LLMSB_ERR_SYS, "%s: getrandom(%zu bytes): %s", what, n,
                                 strerror(e));
        }
        got += (size_t)k;
    }
    return 0;
}

int random_hex(char *out, size_t outsz, size_t n, const char *what, struct llmsb_err *err)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char rnd[RANDOM_MAX_BYTES];
    int rc;

    if (outsz)
        out[0] = '\0';
    if (outsz < 2 * n + 1)
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "%s: %zu bytes for %zu hex digits", what,
                             outsz, 2 * n);
    if ((rc = random_bytes(rnd, n, what, err)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[rnd[i] >> 4];
        out[2 * i + 1] = hex[rnd[i] & 15];
    }
    out[2 * n] = '\0';
    return 0;
}
