/* backend.c - what every engine shares: opening one by its ops table,
 * cloning, the runtime's profile (its rows in runtime.c).  Which engines
 * there are by name is the registry's (backends/registry/), above the
 * engines' folders. */
#include "backend.h"

#include <string.h>

int backend_open_ops(struct backend *b, const struct backend_ops *ops, const char *host,
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

int backend_clone(struct backend *dst, const struct backend *src, struct llmsb_err *err)
{
    /* by its ops, not its name: a backend outside the registry (the unit
     * tests' fake engine) clones as well */
    int rc = backend_open_ops(dst, src->ops, src->host, &src->opts, err);

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
