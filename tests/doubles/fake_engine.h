/* fake_engine.h - TEST DOUBLE of a container engine: a struct backend_ops
 * whose "containers" are plain child processes of the test running the
 * test-double agent (tests/doubles/fake_agent.c --shell) in a temp dir,
 * speaking the agent protocol over a socket pair.  It lets the unit tests
 * drive the real sandbox, pool, session and executor code without Docker,
 * and inject the faults a real engine cannot produce on demand: an op that
 * fails, an engine that stops answering pings, a container that dies
 * mid-job, an agent that starts slowly or answers internal_error, a call
 * held until the test lets it go (an engine busy at that moment).
 *
 * Every image exists; a job's source runs with /bin/sh -c whatever its
 * language.  All state hangs off the engine handle (no globals): make one
 * per test, free it at the end, which kills and removes what is left. */
#ifndef LLMSB_FAKE_ENGINE_H
#define LLMSB_FAKE_ENGINE_H

#include <stdint.h>
#include "backends/backend.h"

struct fake_engine;

/* The ops of the engine, for fault injection and call counts. */
enum fake_op {
    FAKE_OP_OPEN,
    FAKE_OP_PING,
    FAKE_OP_IMAGE_EXISTS,
    FAKE_OP_CREATE,
    FAKE_OP_ATTACH,
    FAKE_OP_START,
    FAKE_OP_INSPECT,
    FAKE_OP_STOP,
    FAKE_OP_REMOVE,
    FAKE_OP_LIST,
    FAKE_OP_EXEC,
    FAKE_OP_COUNT
};

/* A new engine with no containers.  agent: the test-double agent's path
 * (NULL: $FAKE_AGENT, else fake-agent beside the running test binary,
 * where `make unit` builds it).  Returns NULL with err set.  Caller frees
 * with fake_engine_free. */
struct fake_engine *fake_engine_new(const char *agent, struct llmsb_err *err);
/* Kills and removes every container left, and the engine's temp dir.
 * NULL is a no-op.  Sandboxes opened on it must be closed first. */
void fake_engine_free(struct fake_engine *fe);
/* The engine as a backend template, for pool_init, sandbox_open, exec_job
 * (its name is "fake"); valid until fake_engine_free. */
const struct backend *fake_engine_backend(struct fake_engine *fe);

/* The next n calls of op fail with LLMSB_ERR_BACKEND (n < 0: every call
 * until set again; 0: none). */
void fake_engine_fail(struct fake_engine *fe, enum fake_op op, int n);
/* The next n calls of op wait (each in its caller's thread) until
 * fake_engine_let_go, or 10 s at most; then they go on as usual. */
void fake_engine_hold(struct fake_engine *fe, enum fake_op op, int n);
/* The held calls of op go on; no more are held. */
void fake_engine_let_go(struct fake_engine *fe, enum fake_op op);
/* How many times op was called, failed and held calls included. */
int fake_engine_calls(struct fake_engine *fe, enum fake_op op);
/* Containers created and not removed yet. */
int fake_engine_containers(struct fake_engine *fe);
/* Containers whose agent process is still alive. */
int fake_engine_running(struct fake_engine *fe);

/* How the agents of containers started from now on behave: broken: each
 * JOB gets a RESULT of status internal_error; hello_delay_ms: the agent
 * waits this long before its HELLO (a slow start). */
void fake_engine_agent(struct fake_engine *fe, int broken, int64_t hello_delay_ms);
/* on: the agents of containers started from now on take PRESTART, and
 * their jobs see what it asked for (tests/doubles/fake_agent.c). */
void fake_engine_agent_prestart(struct fake_engine *fe, int on);
/* on: the agents of containers started from now on send a live job's
 * output in OUTPUT frames, with a chunk out of order after it. */
void fake_engine_agent_live(struct fake_engine *fe, int on);
/* on: the agents of containers started from now on say in their HELLO
 * that their kernel is gVisor's. */
void fake_engine_agent_gvisor(struct fake_engine *fe, int on);
/* on: the agents of containers started from now on run nothing: each
 * JOB gets a RESULT ok with no output at once (fake_agent.c --null; the
 * queue bench's null runner, bench/bench_queue_scale.c). */
void fake_engine_agent_null(struct fake_engine *fe, int on);
/* Kills container id (NULL: every container) with SIGKILL, as an engine
 * or the kernel would; oom: inspect says it was OOM-killed.  Returns the
 * count killed. */
int fake_engine_kill(struct fake_engine *fe, const char *id, int oom);

#endif
