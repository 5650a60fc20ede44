/* backend.c - picks the ops table for a backend name.  The registry is the
 * one place that lists the backends of this build. */
#include "backend.h"

#include <string.h>

extern const struct backend_ops docker_ops, podman_ops, kubernetes_ops;

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

/* Opens b with ops at host (NULL or "": the backend's default). */
static int open_ops(struct backend *b, const struct backend_ops *ops, const char *host,
                    const struct backend_opts *opts, struct llmsb_err *err)
{
    memset(b, 0, sizeof(*b));
    if (opts)
        b->opts = *opts;
    b->ops = ops;
    if (ops->open(b, host && *host ? host : NULL, err) != 0) {
        b->ops = NULL;
        return llmsb_err_wrap(err, "backend %s", ops->name);
    }
    return 0;
}

int backend_open(struct backend *b, const char *name, const char *host,
                 const struct backend_opts *opts, struct llmsb_err *err)
{
    memset(b, 0, sizeof(*b));
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(name, registry[i]->name) == 0)
            return open_ops(b, registry[i], host, opts, err);
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "backend: \"%s\" is not available (this build has: %s)", name,
                         backend_names());
}

int backend_clone(struct backend *dst, const struct backend *src, struct llmsb_err *err)
{
    /* by its ops, not its name: a backend outside the registry (the unit
     * tests' fake engine) clones as well */
    int rc = open_ops(dst, src->ops, src->host, &src->opts, err);

    dst->runtime = src->runtime;
    return rc;
}

int backend_runtime_resolve(struct backend *b, const char *runtime, struct llmsb_err *err)
{
    int kind = b->ops->runtime_kind ? b->ops->runtime_kind(b, runtime, err) : 0;

    if (kind < 0)
        return kind;
    b->runtime = *runtime_profile_of((enum backend_runtime_kind)kind);
    return 0;
}

int backend_runtime_is_runsc(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

    /* runsc, runsc-kvm, containerd's shim io.containerd.runsc.v1 */
    return strstr(base, "runsc") != NULL || strcmp(base, "gvisor") == 0;
}

void backend_close(struct backend *b)
{
    if (b->ops)
        b->ops->close(b);
    b->ops = NULL;
    b->priv = NULL;
}

void backend_stream_log(struct backend_stream *s, const char *p, size_t n)
{
    if (n >= s->log.cap) { /* keep the tail */
        p += n - s->log.cap;
        n = s->log.cap;
    }
    if (s->log.len + n > s->log.cap)
        buf_consume(&s->log, s->log.len + n - s->log.cap);
    buf_append(&s->log, p, n);
}
