/* config_int.h - shared inside config/: YAML nodes as JSON values. */
#ifndef LLMSB_CONFIG_INT_H
#define LLMSB_CONFIG_INT_H

#include <cjson/cJSON.h>
#include <yaml.h>

/* Converts a YAML node (plain scalars typed like YAML 1.2's core schema)
 * to a new cJSON value; NULL if too deep or malformed. */
cJSON *config_yaml_to_json(yaml_document_t *doc, yaml_node_t *n, int depth);

#endif
