/* strlist.h - NULL-terminated lists of owned strings (argv, env, globs,
 * library names), with a hard cap on their length: every list built from a
 * job, a config or an agent frame goes through strlist_add. */
#ifndef LLMSB_STRLIST_H
#define LLMSB_STRLIST_H

#include <stddef.h>

#define STRLIST_MAX 256 /* entries in one list */

/* Appends a copy of s[0..len) to *list (kept NULL-terminated).  Returns 0,
 * LLMSB_ERR_LIMIT past STRLIST_MAX entries, LLMSB_ERR_INVALID when s holds a
 * NUL byte, or LLMSB_ERR_NOMEM. */
int strlist_add(char ***list, size_t *n, const char *s, size_t len);
/* Appends copies of from[0..nfrom) to *list, as strlist_add does each,
 * stopping at the first failure (its code; what was added stays). */
int strlist_add_all(char ***list, size_t *n, char *const *from, size_t nfrom);
/* Frees the strings and the list; NULL is a no-op. */
void strlist_free(char **list, size_t n);
/* 1 when s is one of the list's strings. */
int strlist_has(char *const *list, size_t n, const char *s);

#endif
