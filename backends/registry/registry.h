/* registry.h - the backends of this build by name (config `backend.name`):
 * the one place that lists them.  A folder of its own above the engines'
 * (it names their ops tables) and below config/ (which checks a name
 * against it); this header includes backends/backend.h only, so that what
 * includes it reaches no engine's folder. */
#ifndef LLMSB_REGISTRY_H
#define LLMSB_REGISTRY_H

#include "backends/backend.h"

/* Opens the named backend at host (NULL or "": the backend's default),
 * with opts (NULL: defaults).  An unknown name is an error that lists the
 * available ones. */
int backend_open(struct backend *b, const char *name, const char *host,
                 const struct backend_opts *opts, struct llmsb_err *err);
/* 1 if name is a backend of this build. */
int backend_known(const char *name);
/* "docker, podman, ..." for messages and help. */
const char *backend_names(void);

#endif
