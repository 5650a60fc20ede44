/* fields.h - the one name/value list of the tree: a job's fields (from a
 * stream entry, a YAML or JSON Lines job), a result hash, a heartbeat, a
 * dead letter.  Values are bytes with a length (Redis values may hold NUL);
 * names keep their length too, so a NUL hidden in a name is seen.  A list
 * has a hard maximum: adds past it are refused and counted, never silently
 * lost. */
#ifndef LLMSB_FIELDS_H
#define LLMSB_FIELDS_H

#include <stddef.h>

struct field {
    const char *name; /* NUL-terminated at name_len */
    size_t name_len;
    const char *value; /* NUL-terminated at len */
    size_t len;
};

struct fields {
    struct field *v;
    unsigned char *owned; /* per entry: 1 = the list made the copies */
    size_t n, alloc;
    size_t max;       /* entries at most */
    size_t dropped;   /* adds refused for being past max */
    size_t oversized; /* values its source left out for their size */
};

void fields_init(struct fields *f, size_t max);
/* Frees the list and the copies it made; borrowed strings are untouched. */
void fields_release(struct fields *f);
/* Adds a borrowed pair: name and value must outlive the list. Returns 0,
 * LLMSB_ERR_LIMIT past max (counted in dropped) or LLMSB_ERR_NOMEM. */
int fields_add(struct fields *f, const char *name, const char *value, size_t len);
int fields_adds(struct fields *f, const char *name, const char *value);
/* Adds copies of name[0..nlen) and value[0..len); the list owns them. */
int fields_add_copy(struct fields *f, const char *name, size_t nlen, const char *value, size_t len);
/* The first value named name, or NULL; *len gets its length if len. */
const char *fields_get(const struct fields *f, const char *name, size_t *len);
/* Moves src's entries (and ownership) to the end of dst; src is then empty. */
int fields_move(struct fields *dst, struct fields *src);

#endif
