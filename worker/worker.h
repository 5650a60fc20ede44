/* worker.h - the worker process: N slots pulling jobs through the consumer
 * group into a shared warm pool, a janitor thread (heartbeat, the
 * scheduler's timers, pool upkeep, reaping of leaked containers), signals
 * and graceful drain.  Job files run in-process with no Redis through
 * exec/local.h (`submit --local`). */
#ifndef LLMSB_WORKER_H
#define LLMSB_WORKER_H

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include "config/config.h"

/* Set by the first SIGTERM/SIGINT: drain. A second signal exits at once. */
extern atomic_int worker_stop;

#define WORKER_JANITOR_TICK_MS 250
#define WORKER_MAINTAIN_EVERY_MS 10000
#define WORKER_ENGINE_PROBE_MS 1000      /* while paused: how often the engine is asked */
#define WORKER_PAUSED_POLL_MS 200        /* while paused: how often a slot looks again */
#define WORKER_OWN_LEFTOVER_AGE_MS 60000 /* own containers unknown to the pool, past start */
#define WORKER_DRAIN_POLL_MS 100
#define WORKER_CONTROL_TIMEOUT_MS 3000

/* Runs the Redis worker until SIGTERM/SIGINT; returns the exit code. */
int worker_main(const struct config *cfg, int slots, const char *name);

#endif
