/* strlist.c - owned string lists (see strlist.h). */
#include "strlist.h"

#include <stdlib.h>
#include <string.h>

#include "common.h"

int strlist_add(char ***list, size_t *n, const char *s, size_t len)
{
    char **nl;
    char *copy;

    if (*n >= STRLIST_MAX)
        return LLMSB_ERR_LIMIT;
    if (memchr(s, '\0', len))
        return LLMSB_ERR_INVALID;
    if (!(copy = xstrndup(s, len)))
        return LLMSB_ERR_NOMEM;
    nl = realloc(*list, (*n + 2) * sizeof(*nl));
    if (!nl) {
        free(copy);
        return LLMSB_ERR_NOMEM;
    }
    nl[*n] = copy;
    nl[*n + 1] = NULL;
    *list = nl;
    (*n)++;
    return 0;
}

void strlist_free(char **list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

int strlist_add_all(char ***list, size_t *n, char *const *from, size_t nfrom)
{
    int rc = 0;

    for (size_t i = 0; i < nfrom && rc == 0; i++)
        rc = strlist_add(list, n, from[i], strlen(from[i]));
    return rc;
}

int strlist_has(char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}
