/* backend.c - picks the ops table for a backend name and opens its client. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    const struct backend_ops *ops;
    const char *default_host;
    const char *host_env;
} registry[] = {
    {"docker", &docker_ops, "unix:///var/run/docker.sock", "DOCKER_HOST"},
};

int backend_open(struct backend *b, const char *name, const char *host, struct llmsb_err *err)
{
    memset(b, 0, sizeof(*b));
    for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
        if (strcmp(name, registry[i].name) != 0)
            continue;
        if (!host || !*host)
            host = getenv(registry[i].host_env);
        if (!host || !*host)
            host = registry[i].default_host;
        snprintf(b->host, sizeof(b->host), "%s", host);
        b->ops = registry[i].ops;
        if (http_client_init(&b->http, host, "/v1.41", err) != 0)
            return llmsb_err_wrap(err, "backend %s", name);
        return 0;
    }
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "backend: \"%s\" is not available (this build supports: docker)", name);
}

void backend_close(struct backend *b)
{
    if (b->ops)
        http_client_release(&b->http);
    b->ops = NULL;
}
