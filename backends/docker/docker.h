/* docker.h - the Docker Engine API backend and its Podman flavour, as the
 * registry (backends/registry/) lists them: their ops tables, nothing else.
 * Everything else of the folder is its own (internal.h). */
#ifndef LLMSB_DOCKER_H
#define LLMSB_DOCKER_H

#include "backends/backend.h"

extern const struct backend_ops docker_ops;
extern const struct backend_ops podman_ops;

#endif
