/* worker.h - the Redis worker: N slots pulling jobs through the consumer
 * group into one runner's warm pool (exec/runner.h), a janitor thread
 * (heartbeat, the scheduler's timers, pool upkeep, reaping of leaked
 * containers) and a graceful drain when a stop is asked.  It installs no
 * signal handler: the front end's handler calls worker_stop_ask.  Job files run
 * in-process with no Redis through batch/batch.h (`submit --local`). */
#ifndef LLMSB_WORKER_H
#define LLMSB_WORKER_H

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include "config/config.h"

/* Asks a running worker_main to drain (finish its running jobs up to
 * worker.drain, then stop).  Async-signal-safe.  Returns 0 for the first
 * ask, 1 when a stop was asked already (a signal handler then exits at
 * once). */
int worker_stop_ask(void);

#define WORKER_JANITOR_TICK_MS 250
#define WORKER_MAINTAIN_EVERY_MS 10000
#define WORKER_PRUNE_LANES_EVERY_MS 60000 /* empty lanes pruned, +-25% a pass */
#define WORKER_ENGINE_PROBE_MS 1000       /* while paused: how often the engine is asked */
#define WORKER_PAUSED_POLL_MS 200         /* while paused: how often a slot looks again */
#define WORKER_OWN_LEFTOVER_AGE_MS 60000  /* own containers unknown to the pool, past start */
#define WORKER_DRAIN_POLL_MS 100
#define WORKER_CONTROL_TIMEOUT_MS 3000

/* Runs the Redis worker until worker_stop_ask; returns 0 after a drain, or
 * a negative code (the engine or Redis could not be reached at start, a
 * thread could not start: logged). */
int worker_main(const struct config *cfg, int slots, const char *name);

#endif
