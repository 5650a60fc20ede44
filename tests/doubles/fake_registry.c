/* fake_registry.c - TEST ONLY: the backend registry of the test build
 * bin/bench/llm-sandbox-fake (make bench-queue), linked in place of
 * backends/registry/registry.c.  It lists the production backends and two
 * more made of the unit tests' fake engine (fake_engine.c), so that the
 * real worker, pool, runner and agent protocol run without Docker:
 *   fake  containers are processes running the fake agent (fake_agent.c
 *         --shell): each job's source runs with /bin/sh -c
 *   null  the same, but the agent runs nothing (--null): every job is ok
 *         at once, no process a job; what is left is the queue and the
 *         worker
 * The production binary links registry.c and knows neither name.  One
 * engine a process (made at the first open, freed at exit); the agent is
 * $FAKE_AGENT, else fake-agent beside the running binary. */
#include "backends/registry/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/docker/docker.h"
#include "backends/kubernetes/kubernetes.h"
#include "tests/doubles/fake_engine.h"

enum { FAKE_KIND_SHELL, FAKE_KIND_NULL, FAKE_KINDS };

static pthread_mutex_t engines_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_engine *engines[FAKE_KINDS];
static struct backend_ops kind_ops[FAKE_KINDS]; /* the engine's, with open() below */
static int (*engine_open)(struct backend *, const char *, struct llmsb_err *); /* its own */

static void engines_free(void)
{
    for (int k = 0; k < FAKE_KINDS; k++)
        fake_engine_free(engines[k]);
}

/* The engine of kind k, made at the first call. Returns NULL with err set. */
static struct fake_engine *engine_get(int k, struct llmsb_err *err)
{
    static int registered;
    struct fake_engine *fe;

    pthread_mutex_lock(&engines_mu);
    if (!engines[k] && (engines[k] = fake_engine_new(NULL, err)))
        fake_engine_agent_null(engines[k], k == FAKE_KIND_NULL);
    if (engines[k] && !registered)
        registered = atexit(engines_free) == 0;
    fe = engines[k];
    pthread_mutex_unlock(&engines_mu);
    return fe;
}

/* A backend opened by name has no host (or the config's backend.host,
 * which means nothing here): it gets the process's engine of its kind.
 * A clone (backend_clone) passes its source's "fake:<address>" on. */
static int kind_open(struct backend *b, const char *host, int k, struct llmsb_err *err)
{
    struct fake_engine *fe;

    if (host && strncmp(host, "fake:", 5) == 0)
        return engine_open(b, host, err);
    if (!(fe = engine_get(k, err)))
        return LLMSB_ERR_BACKEND;
    return engine_open(b, fake_engine_backend(fe)->host, err);
}

static int shell_open(struct backend *b, const char *host, struct llmsb_err *err)
{
    return kind_open(b, host, FAKE_KIND_SHELL, err);
}

static int null_open(struct backend *b, const char *host, struct llmsb_err *err)
{
    return kind_open(b, host, FAKE_KIND_NULL, err);
}

static const char *const kind_names[FAKE_KINDS] = {"fake", "null"};
static int (*const kind_opens[FAKE_KINDS])(struct backend *, const char *,
                                           struct llmsb_err *) = {shell_open, null_open};

/* The ops of each kind: the fake engine's (read from an engine made for
 * the purpose and freed), with its name and open. */
static void kinds_init(void)
{
    struct llmsb_err err = {0};
    struct fake_engine *fe = fake_engine_new(NULL, &err);

    if (fe)
        engine_open = fake_engine_backend(fe)->ops->open;
    for (int k = 0; k < FAKE_KINDS; k++) {
        if (fe)
            kind_ops[k] = *fake_engine_backend(fe)->ops;
        kind_ops[k].name = kind_names[k];
        kind_ops[k].open = kind_opens[k];
    }
    if (!fe)
        fprintf(stderr, "fake registry: %s\n", err.msg);
    fake_engine_free(fe);
}

static const struct backend_ops *registry(size_t i)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    static const struct backend_ops *const prod[] = {&docker_ops, &podman_ops, &kubernetes_ops};
    const size_t nprod = sizeof(prod) / sizeof(prod[0]);

    pthread_once(&once, kinds_init);
    if (i < nprod)
        return prod[i];
    return i - nprod < FAKE_KINDS && kind_ops[i - nprod].ping ? &kind_ops[i - nprod] : NULL;
}

const char *backend_names(void)
{
    static char names[128];
    const struct backend_ops *ops;

    if (!names[0])
        for (size_t i = 0; (ops = registry(i)); i++)
            if (llmsb_append(names, sizeof(names), "%s%s", i ? ", " : "", ops->name) != 0)
                break;
    return names;
}

int backend_known(const char *name)
{
    const struct backend_ops *ops;

    for (size_t i = 0; (ops = registry(i)); i++)
        if (strcmp(name, ops->name) == 0)
            return 1;
    return 0;
}

int backend_open(struct backend *b, const char *name, const char *host,
                 const struct backend_opts *opts, struct llmsb_err *err)
{
    const struct backend_ops *ops;

    memset(b, 0, sizeof(*b));
    for (size_t i = 0; (ops = registry(i)); i++)
        if (strcmp(name, ops->name) == 0)
            return backend_open_ops(b, ops, host, opts, err);
    return llmsb_err_set(err, LLMSB_ERR_INVALID,
                         "backend: \"%s\" is not available (this build has: %s)", name,
                         backend_names());
}
