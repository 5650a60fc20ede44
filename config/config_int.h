/* config_int.h - shared inside config/: YAML documents walked with
 * bounds, and YAML nodes as JSON values. */
#ifndef LLMSB_CONFIG_INT_H
#define LLMSB_CONFIG_INT_H

#include <cjson/cJSON.h>
#include <yaml.h>
#include "common/common.h"

/* A walk over a loaded YAML document.  Every node visit counts, so an
 * alias that repeats a big subtree ("billion laughs": a 2 KB file of nested
 * aliases expands to 10^8 nodes) is stopped at a budget the size of the
 * text, as is nesting past max_depth; duplicate keys are refused, not
 * last-wins.  Every refusal carries file:line. */
struct yaml_walk {
    yaml_document_t *doc;
    const char *file;
    size_t visits, max_visits;
    int max_depth;
    struct llmsb_err *err;
};

#define YAML_WALK_SLACK 1024 /* visits allowed beyond the text's length */

void yaml_walk_init(struct yaml_walk *w, yaml_document_t *doc, const char *file, size_t text_len,
                    int max_depth, struct llmsb_err *err);
/* Counts a visit of n at depth. Returns 0 to go on, or LLMSB_ERR_INVALID
 * with w->err set (too deep, or past the budget). */
int yaml_walk_enter(struct yaml_walk *w, const yaml_node_t *n, int depth);
/* The key of pair p of a mapping as a string; NULL with w->err set when it
 * is not a scalar or repeats a key of an earlier pair of the same map. */
const char *yaml_walk_key(struct yaml_walk *w, const yaml_node_t *map, const yaml_node_pair_t *p);

/* Converts a YAML node (plain scalars typed like YAML 1.2's core schema)
 * to a new cJSON value; NULL with w->err set when it breaks a bound. */
cJSON *config_yaml_to_json(struct yaml_walk *w, yaml_node_t *n, int depth);

#endif
