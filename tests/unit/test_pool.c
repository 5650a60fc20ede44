/* test_pool.c - the warm container pool (sandbox/pool.c) over the fake
 * engine, no container engine: reuse, max_uses and max_age retirement,
 * the three exhaustion policies, health checks, failed removes retried,
 * release_all, a warm container prestarted when it is made, single-use
 * containers replaced as they retire and made ahead at their rate, removes
 * off the job's path and bounded, an acquire waiting for the container
 * being made, a key that fails to warm not stopping the others. */
#include <pthread.h>

#include "common/clock.h"
#include "sandbox/pool.h"
#include "fake_test.h"

static struct container_spec spec_of(const char *image)
{
    struct container_spec spec = {0};
    spec.image = image;
    spec.memory_bytes = (int64_t)256 << 20;
    return spec;
}

static struct pool_config config_of(int max_size, enum pool_exhausted on_exhausted)
{
    struct pool_config pc = {0};
    pc.max_size = max_size;
    pc.on_exhausted = on_exhausted;
    pc.wait_ms = 300;
    pc.start_timeout_ms = 5000;
    pool_config_label(&pc, "llmsb.managed", "1");
    return pc;
}

/* One job through a lease's sandbox; 0 when it ran ok. */
static int run_true(struct pool_lease *l)
{
    struct proto_result res;
    struct llmsb_err err = {0};
    int rc = fake_test_run(l->sb, "true", NULL, 5000, &res, &err);

    rc = rc != 0 ? rc : res.status != STATUS_OK;
    proto_result_release(&res);
    return rc;
}

/* A pool on the engine, its spec (image llmsb/a), the first lease taken
 * from it and that container's id, and room for two more leases. */
struct fx {
    struct pool p;
    struct container_spec spec;
    struct pool_lease l, more[2];
    struct llmsb_err err;
    char id[BACKEND_ID_MAX];
};

/* Gives back what is still out (not reusable) and releases the pool: after
 * the body, however it ended; after a body that did so itself, nothing. */
static void fx_close(void *ud)
{
    struct fx *x = ud;

    if (x->l.sb)
        pool_put(&x->p, &x->l, 0);
    for (int i = 0; i < 2; i++)
        if (x->more[i].sb)
            pool_put(&x->p, &x->more[i], 0);
    pool_release_all(&x->p);
}

/* Inits x->p (x static in the body, held) with pc on fe and takes x->l; 0,
 * or the acquire's code. */
static int fx_start(struct fx *x, struct fake_engine *fe, struct pool_config pc)
{
    int rc;

    memset(x, 0, sizeof(*x));
    x->spec = spec_of("llmsb/a:latest");
    pool_init(&x->p, fake_engine_backend(fe), &pc);
    fake_test_hold(fx_close, x);
    if ((rc = pool_acquire(&x->p, &x->spec, &x->l, &x->err)) == 0)
        snprintf(x->id, sizeof(x->id), "%s", x->l.sb->id);
    return rc;
}

FAKE_TEST(warm_container_is_reused)
{
    static struct fx x; /* held: fx_start */
    struct container_spec other = spec_of("llmsb/b:latest");
    int idle;

    ASSERT_EQ(fx_start(&x, fe, config_of(2, POOL_WAIT)), 0);
    ASSERT_EQ(run_true(&x.l), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_EQ(pool_size(&x.p, &idle), 1);
    ASSERT_EQ(idle, 1);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    ASSERT_STR(x.l.sb->id, x.id);
    ASSERT_EQ(x.p.reused, 1);
    ASSERT_EQ(x.p.created, 1);
    ASSERT_EQ(run_true(&x.l), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 1);
    /* another image is another key: not handed out for this one */
    ASSERT_EQ(pool_acquire(&x.p, &other, &x.l, &x.err), 0);
    ASSERT(strcmp(x.l.sb->id, x.id) != 0);
    pool_put(&x.p, &x.l, 1);
    pool_release_all(&x.p);
}

FAKE_TEST(max_uses_retires)
{
    struct pool_config pc = config_of(2, POOL_WAIT);
    static struct fx x; /* held: fx_start */

    pc.max_uses = 2;
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    ASSERT_EQ(run_true(&x.l), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_CONTAINERS(&x.p, 1); /* one use of two: kept */
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    ASSERT_EQ(run_true(&x.l), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_CONTAINERS(&x.p, 0); /* its second: retired */
    ASSERT_EQ(pool_size(&x.p, NULL), 0);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    ASSERT_EQ(x.p.created, 2);
    pool_put(&x.p, &x.l, 1);
    pool_release_all(&x.p);
}

/* An agent whose HELLO says its kernel is gVisor's runs one job, whatever
 * max_uses says and the engine told of the runtime: gVisor keeps what the
 * agent cannot clean (docs/security.md#gvisor-runsc). */
FAKE_TEST(agent_on_gvisor_retires_after_one_job)
{
    struct pool_config pc = config_of(2, POOL_WAIT);
    static struct fx x; /* held: fx_start */

    pc.max_uses = 200;
    fake_engine_agent_gvisor(fe, 1);
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    ASSERT_EQ(x.l.sb->runtime.kind, BACKEND_RUNTIME_GVISOR);
    ASSERT(x.l.sb->runtime.one_job_per_container);
    ASSERT_EQ(run_true(&x.l), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_CONTAINERS(&x.p, 0);
    ASSERT_EQ(pool_size(&x.p, NULL), 0);
    fake_engine_agent_gvisor(fe, 0); /* the host's kernel: kept */
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    ASSERT_EQ(x.l.sb->runtime.kind, BACKEND_RUNTIME_KERNEL);
    ASSERT_EQ(run_true(&x.l), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_CONTAINERS(&x.p, 1);
    pool_release_all(&x.p);
}

FAKE_TEST(max_age_retires)
{
    struct pool_config pc = config_of(2, POOL_WAIT);
    static struct fx x; /* held: fx_start */

    /* ages made by moving a container's birth back: 5 s of margin for a
     * young one, none spent waiting */
    pc.max_age_ms = 5000;
    /* given back old: destroyed at once */
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    x.l.sb->born_ms -= 6000;
    pool_put(&x.p, &x.l, 1);
    ASSERT_CONTAINERS(&x.p, 0);
    /* given back young, aging idle: maintenance destroys it */
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_CONTAINERS(&x.p, 1);
    pool_maintain(&x.p);
    ASSERT_CONTAINERS(&x.p, 1);
    ASSERT_EQ(x.p.nidle, 1u);
    x.p.idle[0].sb->born_ms -= 6000;
    pool_maintain(&x.p);
    ASSERT_CONTAINERS(&x.p, 0);
    ASSERT_EQ(pool_size(&x.p, NULL), 0);
    pool_release_all(&x.p);
}

FAKE_TEST(exhausted_fail_fast)
{
    static struct fx x; /* held: fx_start */
    struct pool_config pc = config_of(1, POOL_FAIL_FAST);
    int64_t t0;

    pc.wait_ms = 10000; /* what it does not wait for */
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    t0 = clock_mono_ms();
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.more[0], &x.err), LLMSB_ERR_LIMIT);
    ASSERT(clock_mono_ms() - t0 < 5000);
    ASSERT_CONTAINS(x.err.msg, "fail_fast");
    ASSERT_CONTAINERS(&x.p, 1);
    pool_put(&x.p, &x.l, 1);
    pool_release_all(&x.p);
}

static void *give_back_soon(void *ud)
{
    struct fx *x = ud;

    clock_sleep_ms(200);
    pool_put(&x->p, &x->l, 1);
    return NULL;
}

FAKE_TEST(exhausted_wait)
{
    static struct fx x; /* held: fx_start */
    struct pool_lease *b = &x.more[0];
    pthread_t th;
    int64_t t0;
    int rc;

    ASSERT_EQ(fx_start(&x, fe, config_of(1, POOL_WAIT)), 0);
    /* nobody gives it back: waits wait_ms, then gives up */
    t0 = clock_mono_ms();
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, b, &x.err), LLMSB_ERR_TIMEOUT);
    ASSERT(clock_mono_ms() - t0 >= 290);
    /* given back meanwhile: the waiter gets it (the thread joined before
     * any ASSERT, so it never outlives the body) */
    x.p.cfg.wait_ms = 10000;
    ASSERT_EQ(pthread_create(&th, NULL, give_back_soon, &x), 0);
    rc = pool_acquire(&x.p, &x.spec, b, &x.err);
    pthread_join(th, NULL);
    ASSERT_EQ(rc, 0);
    ASSERT_STR(b->sb->id, x.id);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 1);
    pool_put(&x.p, b, 1);
    pool_release_all(&x.p);
}

FAKE_TEST(exhausted_temporary)
{
    static struct fx x; /* held: fx_start */
    struct pool_lease *b = &x.more[0];

    ASSERT_EQ(fx_start(&x, fe, config_of(1, POOL_TEMPORARY)), 0);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, b, &x.err), 0);
    ASSERT_EQ(b->temporary, 1);
    ASSERT_CONTAINERS(&x.p, 2);
    ASSERT_EQ(pool_size(&x.p, NULL), 1); /* a temporary one is not counted */
    ASSERT_EQ(run_true(b), 0);
    pool_put(&x.p, b, 1);
    ASSERT_CONTAINERS(&x.p, 1); /* and not kept */
    pool_put(&x.p, &x.l, 1);
    pool_release_all(&x.p);
}

FAKE_TEST(dead_idle_container_fails_health_check_and_is_replaced)
{
    static struct fx x; /* held: fx_start */

    ASSERT_EQ(fx_start(&x, fe, config_of(2, POOL_WAIT)), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_EQ(fake_engine_kill(fe, x.id, 0), 1);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    ASSERT(strcmp(x.l.sb->id, x.id) != 0);
    ASSERT_EQ(run_true(&x.l), 0);
    ASSERT_EQ(x.p.reused, 0);
    ASSERT_CONTAINERS(&x.p, 1);
    pool_put(&x.p, &x.l, 1);
    pool_release_all(&x.p);
}

FAKE_TEST(failed_remove_is_retried_by_maintenance)
{
    static struct fx x; /* held: fx_start */

    ASSERT_EQ(fx_start(&x, fe, config_of(2, POOL_WAIT)), 0);
    ASSERT_EQ(pool_knows(&x.p, x.id), 1);
    fake_engine_fail(fe, FAKE_OP_REMOVE, 1);
    pool_put(&x.p, &x.l, 0);
    ASSERT_CONTAINERS(&x.p, 1);
    ASSERT_EQ(pool_knows(&x.p, x.id), 1); /* in the graveyard */
    pool_maintain(&x.p);
    ASSERT_CONTAINERS(&x.p, 0);
    ASSERT_EQ(pool_knows(&x.p, x.id), 0);
    pool_release_all(&x.p);
}

static void count_one(void *ud, const struct container_info *ci)
{
    (void)ci;
    (*(int *)ud)++;
}

FAKE_TEST(release_all_destroys_idle_containers)
{
    static struct fx x; /* held: fx_start */
    struct container_spec b = spec_of("llmsb/b:latest");
    struct backend be;
    int n = 0;

    ASSERT_EQ(fx_start(&x, fe, config_of(4, POOL_WAIT)), 0);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.more[0], &x.err), 0);
    ASSERT_EQ(pool_acquire(&x.p, &b, &x.more[1], &x.err), 0);
    pool_put(&x.p, &x.more[0], 1);
    pool_put(&x.p, &x.more[1], 1);
    /* the pool's labels are on its containers */
    ASSERT_EQ(backend_clone(&be, fake_engine_backend(fe), &x.err), 0);
    ASSERT_EQ(be.ops->list(&be, "llmsb.managed=1", count_one, &n, &x.err), 0);
    backend_close(&be);
    ASSERT_EQ(n, 3);
    pool_release_all(&x.p);
    /* the idle ones are gone; the one handed out is its holder's */
    ASSERT_CONTAINERS(&x.p, 1);
    ASSERT_EQ(pool_size(&x.p, NULL), 1);
    pool_put(&x.p, &x.l, 0);
    ASSERT_CONTAINERS(&x.p, 0);
    ASSERT_EQ(pool_size(&x.p, NULL), 0);
}

/* Runs a job of profile "data" in l's sandbox that prints what the fake
 * agent was asked to start before it; 0 when out is what it printed. */
static int run_showing_prestart(struct pool_lease *l, const char *out, struct llmsb_err *err)
{
    struct proto_result res;
    struct proto_job pj;
    int rc;

    fake_test_job(&pj, "echo \"[$FAKE_PRESTARTED]\"", NULL);
    pj.zygote_profile = strdup("data");
    proto_result_init(&res, 1 << 20);
    rc = sandbox_run(l->sb, &pj, 5000, &res, err);
    if (rc == 0 && (res.status != STATUS_OK || res.out.len != strlen(out) ||
                    memcmp(res.out.data, out, res.out.len) != 0)) {
        fprintf(stderr, "  printed \"%.*s\", not \"%s\"\n", (int)res.out.len,
                res.out.data ? res.out.data : "", out);
        rc = -1;
    }
    proto_result_release(&res);
    proto_job_release(&pj);
    return rc;
}

/* A container made ahead of any job (min_idle) has its agent asked, as it
 * is made, to start what the key's last job used (run argv, zygote
 * profile): its first job finds that started.  The first container, made
 * for a job, had nothing sent by the pool (exec_job prestarts it). */
FAKE_TEST(warm_container_is_prestarted_as_it_is_made)
{
    struct pool_config pc = config_of(2, POOL_WAIT);
    static struct fx x; /* held: fx_start */
    int idle;

    pc.min_idle = 1;
    pc.prestart = 1;
    fake_engine_agent_prestart(fe, 1);
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    ASSERT_EQ(run_showing_prestart(&x.l, "[]\n", &x.err), 0);
    pool_put(&x.p, &x.l, 1);
    /* handed out again: none idle for the key, so maintenance makes one */
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    pool_maintain(&x.p);
    ASSERT_EQ(pool_size(&x.p, &idle), 2);
    ASSERT_EQ(idle, 1);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.more[0], &x.err), 0);
    ASSERT(strcmp(x.more[0].sb->id, x.id) != 0);
    ASSERT_EQ(x.more[0].sb->prestart, 0); /* sent: its job sends none */
    ASSERT_EQ(run_showing_prestart(&x.more[0], "[sh:data]\n", &x.err), 0);
    pool_put(&x.p, &x.more[0], 1);
    pool_put(&x.p, &x.l, 1);
    pool_release_all(&x.p);
}

/* max_uses 1 (gVisor: one job per container): every container is retired
 * after its job, and its replacement is made (and prestarted) as it
 * retires, by the pool's refiller, not on maintenance's tick: the next job
 * finds one ready with nobody calling pool_maintain. */
FAKE_TEST(single_use_container_is_replaced_as_it_retires)
{
    struct pool_config pc = config_of(2, POOL_WAIT);
    static struct fx x; /* held: fx_start */
    int idle;

    pc.min_idle = 1;
    pc.max_uses = 1;
    pc.prestart = 1;
    fake_engine_agent_prestart(fe, 1);
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    ASSERT_EQ(run_showing_prestart(&x.l, "[]\n", &x.err), 0);
    pool_put(&x.p, &x.l, 1);
    /* its one job: retired, and a fresh one made in its place */
    ASSERT_CONTAINERS(&x.p, 1);
    ASSERT_EQ(pool_knows(&x.p, x.id), 0);
    ASSERT_EQ(pool_size(&x.p, &idle), 1);
    ASSERT_EQ(idle, 1);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    ASSERT(strcmp(x.l.sb->id, x.id) != 0);
    ASSERT_EQ(x.p.reused, 1); /* a warm one, never used */
    ASSERT_EQ(run_showing_prestart(&x.l, "[sh:data]\n", &x.err), 0);
    pool_put(&x.p, &x.l, 1);
    /* and again: one, or two once two used up make a rate whose create is
     * slower than its gap (a busy host) */
    ASSERT_EQ(pool_settle(&x.p, 10000), 0);
    ASSERT(fake_engine_containers(fe) >= 1 && fake_engine_containers(fe) <= 2);
    ASSERT_EQ(x.p.created, 2 + fake_engine_containers(fe));
    pool_release_all(&x.p);
    ASSERT_EQ(fake_engine_containers(fe), 0);
}

/* One job at a time, one job per container, no min_idle (submit --local,
 * the MCP server): a single job leaves nothing made after it (`run`), but
 * once jobs use containers up at a rate the next one is made as the last
 * retires: one or two (the rate's, at most two a slot). */
FAKE_TEST(single_use_containers_follow_the_rate)
{
    struct pool_config pc = config_of(4, POOL_WAIT);
    static struct fx x; /* held: fx_start */
    int idle;

    pc.max_uses = 1;
    pc.slots = 1;
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    ASSERT_EQ(run_true(&x.l), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_CONTAINERS(&x.p, 0); /* one job is no rate */
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
        ASSERT_EQ(x.l.warm, i > 0); /* the first after the rate is known */
        ASSERT_EQ(run_true(&x.l), 0);
        pool_put(&x.p, &x.l, 1);
        ASSERT_EQ(pool_settle(&x.p, 10000), 0);
        ASSERT_EQ(pool_size(&x.p, &idle), fake_engine_containers(fe)); /* none in use */
        ASSERT(idle >= 1 && idle <= 2);                                /* the next, made ahead */
    }
}

/* A job's retired container is removed off its path: pool_put returns
 * while the engine's remove is still held, the pool knows the container
 * until it is gone (the worker's reaper leaves it alone), and it goes
 * once the remove is let go. */
FAKE_TEST(retired_container_is_removed_off_the_jobs_path)
{
    struct pool_config pc = config_of(2, POOL_WAIT);
    static struct fx x; /* held: fx_start */

    pc.max_uses = 1;
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    ASSERT_EQ(run_true(&x.l), 0);
    fake_engine_hold(fe, FAKE_OP_REMOVE, 1);
    pool_put(&x.p, &x.l, 1);
    ASSERT_EQ(fake_engine_containers(fe), 1); /* not removed yet: held */
    ASSERT_EQ(pool_knows(&x.p, x.id), 1);
    ASSERT_EQ(pool_size(&x.p, NULL), 0); /* no longer the pool's to hand out */
    fake_engine_let_go(fe, FAKE_OP_REMOVE);
    ASSERT_CONTAINERS(&x.p, 0);
    ASSERT_EQ(pool_knows(&x.p, x.id), 0);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_REMOVE), 1);
}

/* A container whose job did not end (cancelled or cut short, its agent
 * silent) may still run its program: pool_put removes it before it
 * returns, before the job's result is written and the slot takes its next
 * job, even while the remover is busy with another. */
FAKE_TEST(container_of_a_job_cut_short_is_removed_before_put_returns)
{
    struct pool_config pc = config_of(3, POOL_WAIT);
    static struct fx x; /* held: fx_start */
    static struct pool_lease cut;

    pc.max_uses = 1;
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &cut, &x.err), 0);
    ASSERT_EQ(run_true(&x.l), 0); /* its one use */
    fake_engine_hold(fe, FAKE_OP_REMOVE, 1);
    pool_put(&x.p, &x.l, 1); /* the remover's, held */
    for (int i = 0; i < 1000 && fake_engine_calls(fe, FAKE_OP_REMOVE) < 1; i++)
        clock_sleep_ms(10);
    pool_put(&x.p, &cut, 0);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_REMOVE), 2);
    ASSERT_EQ(fake_engine_containers(fe), 1); /* the held one alone */
    fake_engine_let_go(fe, FAKE_OP_REMOVE);
    ASSERT_CONTAINERS(&x.p, 0);
}

/* The remover's queue is bounded: with its remove held, POOL_REMOVE_MAX
 * retired containers wait for it and the next one is removed by pool_put
 * itself; pool_release_all removes every one left before it returns. */
FAKE_TEST(remover_queue_is_bounded)
{
    enum { N = POOL_REMOVE_MAX + 2 };
    struct pool_config pc = config_of(N, POOL_WAIT);
    static struct fx x; /* held: fx_start */
    static struct pool_lease l[N];

    pc.max_uses = 1;
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    pool_put(&x.p, &x.l, 0);
    ASSERT_CONTAINERS(&x.p, 0);
    for (int i = 0; i < N; i++) { /* each used once: retired when put back */
        ASSERT_EQ(pool_acquire(&x.p, &x.spec, &l[i], &x.err), 0);
        ASSERT_EQ(run_true(&l[i]), 0);
    }
    fake_engine_hold(fe, FAKE_OP_REMOVE, 1);
    pool_put(&x.p, &l[0], 1);
    /* the remover's first remove is held: the rest wait for it, but for
     * the last one, past the bound */
    for (int i = 0; i < 1000 && fake_engine_calls(fe, FAKE_OP_REMOVE) < 2; i++)
        clock_sleep_ms(10);
    for (int i = 1; i < N; i++)
        pool_put(&x.p, &l[i], 1);
    /* the first, held; the last, by pool_put (the refillers meanwhile make
     * the used up's next ones: the containers are not counted here) */
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_REMOVE), 3);
    fake_engine_let_go(fe, FAKE_OP_REMOVE);
    pool_release_all(&x.p);
    ASSERT_EQ(fake_engine_containers(fe), 0);
}

/* An acquire while the next container of its key is being made waits for
 * that one rather than make another: with the refiller's create held, the
 * acquire still gets the container made ahead. */
static void *let_go_soon(void *ud)
{
    clock_sleep_ms(300);
    fake_engine_let_go(ud, FAKE_OP_CREATE);
    return NULL;
}

FAKE_TEST(acquire_waits_for_the_container_being_made)
{
    struct pool_config pc = config_of(4, POOL_WAIT);
    static struct fx x; /* held: fx_start */
    pthread_t th;
    int rc, i;

    pc.max_uses = 1;
    pc.slots = 1;
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    ASSERT_EQ(run_true(&x.l), 0);
    pool_put(&x.p, &x.l, 1);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
    ASSERT_EQ(run_true(&x.l), 0);
    /* two used up: the next made ahead (or two, when a create is slower
     * than the gap, as on a busy host), their creates held; a create of
     * the acquire's own would be held too (and show in its create_ms) */
    fake_engine_hold(fe, FAKE_OP_CREATE, 3);
    pool_put(&x.p, &x.l, 1);
    for (i = 0; i < 1000 && fake_engine_calls(fe, FAKE_OP_CREATE) < 3; i++)
        clock_sleep_ms(10);
    ASSERT(fake_engine_calls(fe, FAKE_OP_CREATE) >= 3);
    ASSERT_EQ(pthread_create(&th, NULL, let_go_soon, fe), 0);
    rc = pool_acquire(&x.p, &x.spec, &x.l, &x.err);
    pthread_join(th, NULL);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(x.l.warm, 1);      /* the one made ahead, */
    ASSERT_EQ(x.l.create_ms, 0); /* none made for it */
}

/* The acquire right after the put that made a make due (the same thread,
 * before the refiller has taken it up) waits for that container rather
 * than make its own. */
FAKE_TEST(acquire_right_after_the_put_gets_the_one_made_for_it)
{
    struct pool_config pc = config_of(4, POOL_WAIT);
    static struct fx x; /* held: fx_start */

    pc.max_uses = 1;
    pc.slots = 1;
    ASSERT_EQ(fx_start(&x, fe, pc), 0);
    for (int i = 0; i < 3; i++) {
        if (i > 0)
            ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0);
        ASSERT_EQ(x.l.warm, i == 2); /* the third: two used up make a rate */
        ASSERT_EQ(run_true(&x.l), 0);
        pool_put(&x.p, &x.l, 1);
    }
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE) >= 3, 1);
}

/* The number a key wants ready: the jobs expected during one create,
 * rounded up, from two containers used up on, at most the slots; falling
 * as the gap since the last grows, none past the window; a pause past the
 * window starts the rate afresh. */
TEST(rate_target_follows_the_arrivals)
{
    struct pool_rate r = {0};
    int64_t t = 100000;

    ASSERT_EQ(pool_rate_target(&r, t, 0), 0);
    pool_rate_used(&r, t);
    ASSERT_EQ(pool_rate_target(&r, t, 0), 0); /* one: no rate yet */
    pool_rate_used(&r, t + 100);
    ASSERT_EQ(pool_rate_target(&r, t + 100, 0), POOL_CREATE_GUESS_MS / 100);
    pool_rate_created(&r, 350);
    ASSERT_EQ(r.create_ms, 350);
    ASSERT_EQ(pool_rate_target(&r, t + 100, 0), 4); /* 350 ms at one per 100 ms */
    ASSERT_EQ(pool_rate_target(&r, t + 100, 2), 2);
    ASSERT_EQ(pool_rate_target(&r, t + 300, 0), 2);  /* 200 ms without one */
    ASSERT_EQ(pool_rate_target(&r, t + 2000, 0), 1); /* falling, still some */
    ASSERT_EQ(pool_rate_target(&r, t + 100 + POOL_RATE_WINDOW_MS + 1, 0), 0);
    pool_rate_used(&r, t + 200); /* gaps of 100, 100: moving average 100 */
    ASSERT_EQ(r.gap_ms, 100);
    pool_rate_used(&r, t + 600); /* then 400: (3 * 100 + 400) / 4 */
    ASSERT_EQ(r.gap_ms, 175);
    pool_rate_created(&r, 750); /* (3 * 350 + 750) / 4 */
    ASSERT_EQ(r.create_ms, 450);
    pool_rate_used(&r, t + 600 + POOL_RATE_WINDOW_MS + 1);
    ASSERT_EQ(r.gap_ms, 0); /* after a pause: afresh */
    ASSERT_EQ(pool_rate_target(&r, t + 600 + POOL_RATE_WINDOW_MS + 1, 0), 0);
}

/* One key whose warming fails (its image removed, say) does not stop the
 * warming of the keys after it. */
FAKE_TEST(failed_warm_key_does_not_stop_the_others)
{
    struct pool_config pc = config_of(4, POOL_WAIT);
    static struct fx x; /* held: fx_start */
    struct container_spec b = spec_of("llmsb/b:latest");
    int idle;

    pc.min_idle = 1;
    ASSERT_EQ(fx_start(&x, fe, pc), 0); /* keys a, then b, each used once */
    ASSERT_EQ(run_true(&x.l), 0);
    ASSERT_EQ(pool_acquire(&x.p, &b, &x.more[0], &x.err), 0);
    ASSERT_EQ(run_true(&x.more[0]), 0);
    pool_put(&x.p, &x.l, 1);
    pool_put(&x.p, &x.more[0], 1);
    ASSERT_EQ(pool_acquire(&x.p, &x.spec, &x.l, &x.err), 0); /* both in use again */
    ASSERT_EQ(pool_acquire(&x.p, &b, &x.more[0], &x.err), 0);
    fake_engine_fail(fe, FAKE_OP_CREATE, 1); /* a's warm container fails */
    pool_maintain(&x.p);
    ASSERT_EQ(pool_size(&x.p, &idle), 3);
    ASSERT_EQ(idle, 1); /* b's was made all the same */
    ASSERT_EQ(pool_acquire(&x.p, &b, &x.more[1], &x.err), 0);
    ASSERT_EQ(x.p.reused, 3);
}

TEST_MAIN("pool", T(warm_container_is_reused), T(max_uses_retires),
          T(agent_on_gvisor_retires_after_one_job), T(max_age_retires), T(exhausted_fail_fast),
          T(exhausted_wait), T(exhausted_temporary),
          T(dead_idle_container_fails_health_check_and_is_replaced),
          T(failed_remove_is_retried_by_maintenance), T(release_all_destroys_idle_containers),
          T(warm_container_is_prestarted_as_it_is_made),
          T(single_use_container_is_replaced_as_it_retires),
          T(single_use_containers_follow_the_rate),
          T(retired_container_is_removed_off_the_jobs_path),
          T(container_of_a_job_cut_short_is_removed_before_put_returns), T(remover_queue_is_bounded),
          T(acquire_waits_for_the_container_being_made),
          T(acquire_right_after_the_put_gets_the_one_made_for_it),
          T(rate_target_follows_the_arrivals), T(failed_warm_key_does_not_stop_the_others))
