/* kubernetes.h - the Kubernetes backend as the registry
 * (backends/registry/) lists it: its ops table, nothing else.  Everything
 * else of the folder is its own (internal.h). */
#ifndef LLMSB_KUBERNETES_H
#define LLMSB_KUBERNETES_H

#include "backends/backend.h"

extern const struct backend_ops kubernetes_ops;

#endif
