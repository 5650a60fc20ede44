/* identity.c - who this process is (see identity.h). */
#include "exec/identity.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void identity_init(struct identity *id, const char *worker_name, const char *kind,
                   const char *queue)
{
    memset(id, 0, sizeof(*id));
    if (gethostname(id->host, sizeof(id->host) - 1) != 0)
        snprintf(id->host, sizeof(id->host), "unknown");
    if (worker_name && *worker_name)
        snprintf(id->worker, sizeof(id->worker), "%.159s", worker_name);
    else
        snprintf(id->worker, sizeof(id->worker), "%.100s-%d", id->host, (int)getpid());
    snprintf(id->kind, sizeof(id->kind), "%.15s", kind ? kind : "run");
    snprintf(id->pid, sizeof(id->pid), "%d", (int)getpid());
    snprintf(id->queue, sizeof(id->queue), "%.23s", queue ? queue : "");
}

void identity_queue_label(const char *redis_url, const char *prefix, char out[24])
{
    uint64_t h = hash_fnv1a(0, redis_url, strlen(redis_url));

    h = hash_fnv1a(h, "\n", 1);
    h = hash_fnv1a(h, prefix, strlen(prefix));
    snprintf(out, 24, "q%016llx", (unsigned long long)h);
}

void identity_pool_labels(const struct identity *id, struct pool_config *pc)
{
    pc->nlabels = 0;
    pool_config_label(pc, "llmsb.managed", "1");
    pool_config_label(pc, "llmsb.host", id->host);
    pool_config_label(pc, "llmsb.worker", id->worker);
    pool_config_label(pc, "llmsb.kind", id->kind);
    pool_config_label(pc, "llmsb.pid", id->pid);
    if (id->queue[0])
        pool_config_label(pc, "llmsb.queue", id->queue);
}
