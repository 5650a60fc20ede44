/* base64.h - RFC 4648 base64, for job files and artifacts. */
#ifndef LLMSB_BASE64_H
#define LLMSB_BASE64_H

#include <stddef.h>

/* Returns a new NUL-terminated encoding; caller frees. NULL on ENOMEM. */
char *base64_encode(const void *p, size_t n, size_t *outlen);
/* Decodes s (whitespace ignored, padding optional). Returns a new buffer
 * (NUL-terminated for convenience) or NULL on bad input / ENOMEM. */
char *base64_decode(const char *s, size_t n, size_t *outlen);

#endif
