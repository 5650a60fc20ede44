/* test_pool.c - the warm container pool (sandbox/pool.c) over the fake
 * engine, no container engine: reuse, max_uses and max_age retirement,
 * the three exhaustion policies, health checks, failed removes retried,
 * release_all. */
#include <pthread.h>
#include <time.h>

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

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
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

FAKE_TEST(warm_container_is_reused)
{
    struct pool p;
    struct pool_config pc = config_of(2, POOL_WAIT);
    struct container_spec spec = spec_of("llmsb/a:latest");
    struct pool_lease l;
    struct llmsb_err err = {0};
    char id[BACKEND_ID_MAX];
    int idle;

    pool_init(&p, fake_engine_backend(fe), &pc);
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    ASSERT_EQ(run_true(&l), 0);
    snprintf(id, sizeof(id), "%s", l.sb->id);
    pool_put(&p, &l, 1);
    ASSERT_EQ(pool_size(&p, &idle), 1);
    ASSERT_EQ(idle, 1);
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    ASSERT_STR(l.sb->id, id);
    ASSERT_EQ(p.reused, 1);
    ASSERT_EQ(p.created, 1);
    ASSERT_EQ(run_true(&l), 0);
    pool_put(&p, &l, 1);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 1);
    /* another image is another key: not handed out for this one */
    struct container_spec other = spec_of("llmsb/b:latest");
    ASSERT_EQ(pool_acquire(&p, &other, &l, &err), 0);
    ASSERT(strcmp(l.sb->id, id) != 0);
    pool_put(&p, &l, 1);
    pool_release_all(&p);
}

FAKE_TEST(max_uses_retires)
{
    struct pool p;
    struct pool_config pc = config_of(2, POOL_WAIT);
    struct container_spec spec = spec_of("llmsb/a:latest");
    struct pool_lease l;
    struct llmsb_err err = {0};

    pc.max_uses = 2;
    pool_init(&p, fake_engine_backend(fe), &pc);
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    ASSERT_EQ(run_true(&l), 0);
    pool_put(&p, &l, 1);
    ASSERT_EQ(fake_engine_containers(fe), 1); /* one use of two: kept */
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    ASSERT_EQ(run_true(&l), 0);
    pool_put(&p, &l, 1);
    ASSERT_EQ(fake_engine_containers(fe), 0); /* its second: retired */
    ASSERT_EQ(pool_size(&p, NULL), 0);
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    ASSERT_EQ(p.created, 2);
    pool_put(&p, &l, 1);
    pool_release_all(&p);
}

FAKE_TEST(max_age_retires)
{
    struct pool p;
    struct pool_config pc = config_of(2, POOL_WAIT);
    struct container_spec spec = spec_of("llmsb/a:latest");
    struct pool_lease l;
    struct llmsb_err err = {0};

    pc.max_age_ms = 300;
    pool_init(&p, fake_engine_backend(fe), &pc);
    /* given back old: destroyed at once */
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    sleep_ms(350);
    pool_put(&p, &l, 1);
    ASSERT_EQ(fake_engine_containers(fe), 0);
    /* given back young, aging idle: maintenance destroys it */
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    pool_put(&p, &l, 1);
    ASSERT_EQ(fake_engine_containers(fe), 1);
    pool_maintain(&p);
    ASSERT_EQ(fake_engine_containers(fe), 1);
    sleep_ms(350);
    pool_maintain(&p);
    ASSERT_EQ(fake_engine_containers(fe), 0);
    ASSERT_EQ(pool_size(&p, NULL), 0);
    pool_release_all(&p);
}

FAKE_TEST(exhausted_fail_fast)
{
    struct pool p;
    struct pool_config pc = config_of(1, POOL_FAIL_FAST);
    struct container_spec spec = spec_of("llmsb/a:latest");
    struct pool_lease a, b;
    struct llmsb_err err = {0};
    int64_t t0;

    pool_init(&p, fake_engine_backend(fe), &pc);
    ASSERT_EQ(pool_acquire(&p, &spec, &a, &err), 0);
    t0 = clock_mono_ms();
    ASSERT_EQ(pool_acquire(&p, &spec, &b, &err), LLMSB_ERR_LIMIT);
    ASSERT(clock_mono_ms() - t0 < 100);
    ASSERT_CONTAINS(err.msg, "fail_fast");
    ASSERT_EQ(fake_engine_containers(fe), 1);
    pool_put(&p, &a, 1);
    pool_release_all(&p);
}

struct giver {
    struct pool *p;
    struct pool_lease *l;
};

static void *give_back_soon(void *ud)
{
    struct giver *g = ud;

    sleep_ms(200);
    pool_put(g->p, g->l, 1);
    return NULL;
}

FAKE_TEST(exhausted_wait)
{
    struct pool p;
    struct pool_config pc = config_of(1, POOL_WAIT);
    struct container_spec spec = spec_of("llmsb/a:latest");
    struct pool_lease a, b;
    struct llmsb_err err = {0};
    struct giver g = {&p, &a};
    char id[BACKEND_ID_MAX];
    pthread_t th;
    int64_t t0;

    pool_init(&p, fake_engine_backend(fe), &pc);
    ASSERT_EQ(pool_acquire(&p, &spec, &a, &err), 0);
    snprintf(id, sizeof(id), "%s", a.sb->id);
    /* nobody gives it back: waits wait_ms, then gives up */
    t0 = clock_mono_ms();
    ASSERT_EQ(pool_acquire(&p, &spec, &b, &err), LLMSB_ERR_TIMEOUT);
    ASSERT(clock_mono_ms() - t0 >= 290);
    /* given back meanwhile: the waiter gets it */
    p.cfg.wait_ms = 3000;
    pthread_create(&th, NULL, give_back_soon, &g);
    ASSERT_EQ(pool_acquire(&p, &spec, &b, &err), 0);
    pthread_join(th, NULL);
    ASSERT_STR(b.sb->id, id);
    ASSERT_EQ(fake_engine_calls(fe, FAKE_OP_CREATE), 1);
    pool_put(&p, &b, 1);
    pool_release_all(&p);
}

FAKE_TEST(exhausted_temporary)
{
    struct pool p;
    struct pool_config pc = config_of(1, POOL_TEMPORARY);
    struct container_spec spec = spec_of("llmsb/a:latest");
    struct pool_lease a, b;
    struct llmsb_err err = {0};

    pool_init(&p, fake_engine_backend(fe), &pc);
    ASSERT_EQ(pool_acquire(&p, &spec, &a, &err), 0);
    ASSERT_EQ(pool_acquire(&p, &spec, &b, &err), 0);
    ASSERT_EQ(b.temporary, 1);
    ASSERT_EQ(fake_engine_containers(fe), 2);
    ASSERT_EQ(pool_size(&p, NULL), 1); /* a temporary one is not counted */
    ASSERT_EQ(run_true(&b), 0);
    pool_put(&p, &b, 1);
    ASSERT_EQ(fake_engine_containers(fe), 1); /* and not kept */
    pool_put(&p, &a, 1);
    pool_release_all(&p);
}

FAKE_TEST(dead_idle_container_fails_health_check_and_is_replaced)
{
    struct pool p;
    struct pool_config pc = config_of(2, POOL_WAIT);
    struct container_spec spec = spec_of("llmsb/a:latest");
    struct pool_lease l;
    struct llmsb_err err = {0};
    char id[BACKEND_ID_MAX];

    pool_init(&p, fake_engine_backend(fe), &pc);
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    snprintf(id, sizeof(id), "%s", l.sb->id);
    pool_put(&p, &l, 1);
    ASSERT_EQ(fake_engine_kill(fe, id, 0), 1);
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    ASSERT(strcmp(l.sb->id, id) != 0);
    ASSERT_EQ(run_true(&l), 0);
    ASSERT_EQ(p.reused, 0);
    ASSERT_EQ(fake_engine_containers(fe), 1);
    pool_put(&p, &l, 1);
    pool_release_all(&p);
}

FAKE_TEST(failed_remove_is_retried_by_maintenance)
{
    struct pool p;
    struct pool_config pc = config_of(2, POOL_WAIT);
    struct container_spec spec = spec_of("llmsb/a:latest");
    struct pool_lease l;
    struct llmsb_err err = {0};
    char id[BACKEND_ID_MAX];

    pool_init(&p, fake_engine_backend(fe), &pc);
    ASSERT_EQ(pool_acquire(&p, &spec, &l, &err), 0);
    snprintf(id, sizeof(id), "%s", l.sb->id);
    ASSERT_EQ(pool_knows(&p, id), 1);
    fake_engine_fail(fe, FAKE_OP_REMOVE, 1);
    pool_put(&p, &l, 0);
    ASSERT_EQ(fake_engine_containers(fe), 1);
    ASSERT_EQ(pool_knows(&p, id), 1); /* in the graveyard */
    pool_maintain(&p);
    ASSERT_EQ(fake_engine_containers(fe), 0);
    ASSERT_EQ(pool_knows(&p, id), 0);
    pool_release_all(&p);
}

static void count_one(void *ud, const struct container_info *ci)
{
    (void)ci;
    (*(int *)ud)++;
}

FAKE_TEST(release_all_destroys_idle_containers)
{
    struct pool p;
    struct pool_config pc = config_of(4, POOL_WAIT);
    struct container_spec a = spec_of("llmsb/a:latest"), b = spec_of("llmsb/b:latest");
    struct pool_lease la, lb, lc;
    struct llmsb_err err = {0};
    struct backend be;
    int n = 0;

    pool_init(&p, fake_engine_backend(fe), &pc);
    ASSERT_EQ(pool_acquire(&p, &a, &la, &err), 0);
    ASSERT_EQ(pool_acquire(&p, &a, &lc, &err), 0);
    ASSERT_EQ(pool_acquire(&p, &b, &lb, &err), 0);
    pool_put(&p, &la, 1);
    pool_put(&p, &lb, 1);
    /* the pool's labels are on its containers */
    ASSERT_EQ(backend_clone(&be, fake_engine_backend(fe), &err), 0);
    ASSERT_EQ(be.ops->list(&be, "llmsb.managed=1", count_one, &n, &err), 0);
    backend_close(&be);
    ASSERT_EQ(n, 3);
    pool_release_all(&p);
    /* the idle ones are gone; the one handed out is its holder's */
    ASSERT_EQ(fake_engine_containers(fe), 1);
    ASSERT_EQ(pool_size(&p, NULL), 1);
    pool_put(&p, &lc, 0);
    ASSERT_EQ(fake_engine_containers(fe), 0);
    ASSERT_EQ(pool_size(&p, NULL), 0);
}

TEST_MAIN("pool", T(warm_container_is_reused), T(max_uses_retires), T(max_age_retires),
          T(exhausted_fail_fast), T(exhausted_wait), T(exhausted_temporary),
          T(dead_idle_container_fails_health_check_and_is_replaced),
          T(failed_remove_is_retried_by_maintenance), T(release_all_destroys_idle_containers))
