/* random.h - bytes from the kernel's RNG (getrandom(2)) for what must not
 * collide or be guessed: job and run ids, MCP session ids and the scope
 * that keeps one MCP client's sandbox sessions from another's, WebSocket
 * masks.  A failure is an error the caller must handle, never a weaker
 * value.  Apart from common.h: the static agent needs none. */
#ifndef LLMSB_RANDOM_H
#define LLMSB_RANDOM_H

#include <stddef.h>
#include "common/common.h"

#define RANDOM_MAX_BYTES 256 /* one call's most: getrandom(2) never cuts it short */

/* Fills p with n bytes (at most RANDOM_MAX_BYTES) from getrandom(2),
 * reading again after EINTR or a short read.  Returns 0, or LLMSB_ERR_SYS
 * (LLMSB_ERR_INVALID for n too large) with err saying which bytes (what)
 * and why; p's bytes are then zeroed and must not be used. */
int random_bytes(void *p, size_t n, const char *what, struct llmsb_err *err);
/* out gets 2 * n lower-case hex digits of n random bytes and a NUL
 * (outsz at least 2 * n + 1).  Returns 0 or random_bytes's error; out is
 * then "". */
int random_hex(char *out, size_t outsz, size_t n, const char *what, struct llmsb_err *err);

#endif
