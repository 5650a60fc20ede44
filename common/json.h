/* json.h - helpers over cJSON for text that came from untrusted programs:
 * bytes that are not valid UTF-8 (and NUL) are replaced by U+FFFD so every
 * document we print is valid JSON. */
#ifndef LLMSB_JSON_H
#define LLMSB_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Returns a new NUL-terminated valid UTF-8 copy of p[0..n); caller frees. */
char *json_utf8_clean(const char *p, size_t n);
/* Adds p[0..n) as a string member, cleaned. Returns 0 or -1 on ENOMEM. */
int json_add_text(cJSON *obj, const char *name, const char *p, size_t n);

/* 1 when the JSON text p[0..n) holds a string with a NUL character
 * (written \u0000), which cJSON would silently cut the string at. */
int json_text_has_nul(const char *p, size_t n);

#endif
