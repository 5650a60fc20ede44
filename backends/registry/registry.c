/* registry.c - picks the ops table for a backend name.  The one place that
 * lists the backends of this build: a new engine is one row here. */
#include "backends/registry/registry.h"

#include <string.h>

#include "backends/docker/docker.h"
#include "backends/kubernetes/kubernetes.h"

static const struct backend_ops *const registry[] = {&docker_ops, &podman_ops, &kubernetes_ops};

#define NBACKENDS (sizeof(registry) / sizeof(registry[0]))

const char *backend_names(void)
{
    static char names[128];

    if (!names[0])
        for (size_t i = 0; i < NBACKENDS; i++)
            if (llmsb_append(names, sizeof(names), "%s%s", i ? ", " : "", registry[i]->name) != 0)
                break;
    return names;
}

int backend_known(const char *name)
{
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(name, registry[i]->name) == 0)
            return 1;
    return 0;
}

int backend_open(struct backend *b, const char *name, const char *host,
                 const struct backend_opts *opts, struct llmsb_err *err)
{
    memset(b, 0, sizeof(*b));
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(name, registry[i]->name) == 0)
            return backend_open_ops(b, registry[i], host, opts, err);
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "backend: \"%s\" is not available (this build has: %s)", name,
                         backend_names());
}
