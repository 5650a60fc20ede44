/* test_runtime_kind.c - how a backend tells gVisor from the host's kernel
 * (backend_runtime_resolve): Docker's and Podman's GET /info answers
 * (docker_info_runtime_kind: the default runtime, a runtime registered
 * under another name, a path, runc; Podman refusing a runtime its
 * compatible API would ignore), a Kubernetes RuntimeClass's handler
 * (kubernetes_runtime_class_kind), and what the runner and the executor
 * make of the answer: one job per container on gVisor and on a runtime
 * nobody described, RLIMIT_NPROC at the pids limit on gVisor only, a
 * Java container's room for the warm javac's threads. */
#include "test.h"

#include "backends/docker/internal.h"
#include "backends/kubernetes/internal.h"
#include "backends/registry/registry.h"
#include "exec/exec.h"
#include "exec/runner.h"

/* dockerd's answer with runsc registered as scripts/gvisor-up.sh does,
 * and again under other names; default is DefaultRuntime */
static const char *info(const char *def)
{
    static char s[2048];

    snprintf(s, sizeof(s),
             "{\"DefaultRuntime\":\"%s\",\"Runtimes\":{"
             "\"io.containerd.runc.v2\":{\"path\":\"runc\"},\"runc\":{\"path\":\"runc\"},"
             "\"runsc\":{\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":[\"--platform=ptrace\"]},"
             "\"gvisor-test\":{\"path\":\"/usr/bin/runsc\"},"
             "\"sandboxed\":{\"path\":\"/opt/gvisor/bin/runsc-2024\"},"
             "\"crun\":{\"path\":\"/usr/bin/crun\"},"
             "\"kata\":{\"path\":\"/usr/bin/kata-runtime\"},"
             /* Docker 23+: a containerd shim, runtimeType and no path */
             "\"shimmed\":{\"runtimeType\":\"io.containerd.runsc.v1\"},"
             "\"runc-shim\":{\"runtimeType\":\"io.containerd.runc.v2\"}}}",
             def);
    return s;
}

static int kind(const char *def, const char *runtime)
{
    const char *s = info(def);
    return docker_info_runtime_kind(s, strlen(s), runtime);
}

TEST(docker_info_names_gvisor_by_its_binary)
{
    static const struct {
        const char *def, *runtime;
        int want;
    } rows[] = {
        /* backend.runtime empty: the daemon's default-runtime decides */
        {"runc", "", BACKEND_RUNTIME_KERNEL},
        {"runc", NULL, BACKEND_RUNTIME_KERNEL},
        {"runsc", "", BACKEND_RUNTIME_GVISOR},
        {"gvisor-test", "", BACKEND_RUNTIME_GVISOR},
        /* named: runsc under any name, by the path it was registered with */
        {"runc", "runsc", BACKEND_RUNTIME_GVISOR},
        {"runc", "gvisor-test", BACKEND_RUNTIME_GVISOR},
        {"runc", "sandboxed", BACKEND_RUNTIME_GVISOR},
        {"runsc", "runc", BACKEND_RUNTIME_KERNEL},
        {"runc", "crun", BACKEND_RUNTIME_KERNEL},
        {"runc", "kata", BACKEND_RUNTIME_KERNEL}, /* a VM's own kernel */
        /* by its containerd shim (daemon.json's runtimeType, no path) */
        {"runc", "shimmed", BACKEND_RUNTIME_GVISOR},
        {"shimmed", "", BACKEND_RUNTIME_GVISOR},
        {"runc", "runc-shim", BACKEND_RUNTIME_KERNEL},
        /* a path (Podman takes one), or a name the engine did not register */
        {"runc", "/usr/bin/runsc", BACKEND_RUNTIME_GVISOR},
        {"runc", "/usr/local/bin/runsc-kvm", BACKEND_RUNTIME_GVISOR},
        {"runc", "runsc-kvm", BACKEND_RUNTIME_GVISOR},
        {"runc", "io.containerd.runsc.v1", BACKEND_RUNTIME_GVISOR},
        {"runc", "/usr/bin/crun", BACKEND_RUNTIME_KERNEL},
        {"runc", "mystery", BACKEND_RUNTIME_UNKNOWN},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        ASSERT_MSG(kind(rows[i].def, rows[i].runtime) == rows[i].want,
                   rows[i].runtime ? rows[i].runtime : "(NULL)");
    /* an engine that does not say */
    ASSERT_EQ(docker_info_runtime_kind("{}", 2, ""), BACKEND_RUNTIME_UNKNOWN);
    ASSERT_EQ(docker_info_runtime_kind("{}", 2, "runsc"), BACKEND_RUNTIME_GVISOR);
    ASSERT_EQ(docker_info_runtime_kind("[1]", 3, ""), -1);
    ASSERT_EQ(docker_info_runtime_kind("nope", 4, ""), -1);
}

/* Podman's compatible API ignores the runtime a create names: refused,
 * before any call (the socket is never reached) */
TEST(podman_refuses_a_runtime_it_would_ignore)
{
    struct backend b;
    struct llmsb_err err = {0};

    ASSERT_EQ(backend_open(&b, "podman", "unix:///nonexistent/podman.sock", NULL, &err), 0);
    ASSERT_EQ(backend_runtime_resolve(&b, "/usr/bin/runsc", &err), LLMSB_ERR_INVALID);
    ASSERT_CONTAINS(err.msg, "podman: backend.runtime \"/usr/bin/runsc\": Podman's");
    ASSERT_CONTAINS(err.msg, "engine.runtime in containers.conf");
    backend_close(&b);
}

static int class_kind(const char *json)
{
    cJSON *rc = cJSON_Parse(json);
    int k = kubernetes_runtime_class_kind(rc);

    cJSON_Delete(rc);
    return k;
}

TEST(runtime_class_handler_names_gvisor)
{
    /* docs/kubernetes.md's RuntimeClass "gvisor" */
    ASSERT_EQ(class_kind("{\"apiVersion\":\"node.k8s.io/v1\",\"kind\":\"RuntimeClass\","
                         "\"metadata\":{\"name\":\"gvisor\"},\"handler\":\"runsc\"}"),
              BACKEND_RUNTIME_GVISOR);
    ASSERT_EQ(class_kind("{\"metadata\":{\"name\":\"sandboxed\"},\"handler\":\"gvisor\"}"),
              BACKEND_RUNTIME_GVISOR);
    ASSERT_EQ(class_kind("{\"metadata\":{\"name\":\"x\"},\"handler\":\"runsc-kvm\"}"),
              BACKEND_RUNTIME_GVISOR);
    ASSERT_EQ(class_kind("{\"metadata\":{\"name\":\"gvisor\"},\"handler\":\"runc\"}"),
              BACKEND_RUNTIME_KERNEL);
    ASSERT_EQ(class_kind("{\"metadata\":{\"name\":\"kata\"},\"handler\":\"kata\"}"),
              BACKEND_RUNTIME_KERNEL);
    ASSERT_EQ(class_kind("{\"metadata\":{\"name\":\"x\"}}"), BACKEND_RUNTIME_UNKNOWN);
    ASSERT_EQ(kubernetes_runtime_class_kind(NULL), BACKEND_RUNTIME_UNKNOWN);
}

/* ---- what the answer changes ------------------------------------------------------------ */

static int answer;

static int fake_runtime_kind(struct backend *b, const char *runtime, struct llmsb_err *err)
{
    (void)b;
    if (answer < 0)
        return llmsb_err_set(err, LLMSB_ERR_BACKEND, "info: refused (%s)", runtime);
    return answer;
}

static const struct backend_ops fake_ops = {.name = "fake", .runtime_kind = fake_runtime_kind};

/* gVisor: one job per container, the job bounded by RLIMIT_NPROC at its
 * pids limit under a host pids cgroup well above it (exec.c); runc: the
 * config's reuse and limits as they are; a runtime nobody described: one
 * job per container, the host kernel's limits. */
TEST(the_engines_answer_sets_reuse_and_limits)
{
    const struct runner_opts o = {.slots = 1};
    struct backend be = {.ops = &fake_ops};
    struct llmsb_err err = {0};
    struct config cfg;
    struct identity id;
    struct pool_config pc;
    struct container_spec spec;
    struct job j;

    config_defaults(&cfg);
    identity_init(&id, NULL, NULL, NULL);
    job_init(&j, &cfg);
    /* any name: the engine's answer counts, not the string */
    snprintf(cfg.runtime, sizeof(cfg.runtime), "gvisor-test");
    answer = BACKEND_RUNTIME_GVISOR;
    ASSERT_EQ(backend_runtime_resolve(&be, cfg.runtime, &err), 0);
    runner_pool_config(&cfg, &be, &o, &id, &pc);
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/python:latest");
    ASSERT_EQ(be.runtime.kind, BACKEND_RUNTIME_GVISOR);
    ASSERT_EQ(pc.max_uses, 1);
    /* pids - 1: gVisor does not count the job's first process */
    ASSERT_EQ(spec.nproc, 255);
    ASSERT_EQ(exec_job_nproc(&be, &j), 255);
    ASSERT_EQ(spec.pids, 256 * 8 + 512 * 32);
    j.limits.nproc = 100; /* under the pids limit: kept */
    ASSERT_EQ(exec_job_nproc(&be, &j), 100);
    j.limits.nproc = 4096;
    /* not described: one job per container, the host kernel's limits */
    answer = BACKEND_RUNTIME_UNKNOWN;
    ASSERT_EQ(backend_runtime_resolve(&be, cfg.runtime, &err), 0);
    runner_pool_config(&cfg, &be, &o, &id, &pc);
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/python:latest");
    ASSERT_EQ(be.runtime.kind, BACKEND_RUNTIME_UNKNOWN);
    ASSERT_EQ(pc.max_uses, 1);
    ASSERT_EQ(spec.nproc, 4096);
    ASSERT_EQ(spec.pids, 256);
    /* runc under any name: the config's reuse */
    answer = BACKEND_RUNTIME_KERNEL;
    ASSERT_EQ(backend_runtime_resolve(&be, "runsc", &err), 0);
    runner_pool_config(&cfg, &be, &o, &id, &pc);
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/python:latest");
    ASSERT_EQ(pc.max_uses, 200);
    ASSERT_EQ(spec.nproc, 4096);
    ASSERT_EQ(spec.pids, 256);
    /* an engine that will not answer is an error, the last answer kept */
    answer = -1;
    ASSERT_EQ(backend_runtime_resolve(&be, "runsc", &err), LLMSB_ERR_BACKEND);
    ASSERT_CONTAINS(err.msg, "info: refused (runsc)");
    ASSERT_EQ(be.runtime.kind, BACKEND_RUNTIME_KERNEL);
    job_release(&j);
}

/* A Java container where the agent may start the warm javac gets the
 * server's threads on top of the job's pids limit (exec.c, proto.h), so
 * that they take none of the job's; nowhere else, and never for a job
 * whose sandbox runs no server (the switch, a pids or memory limit below
 * the server's). */
TEST(a_java_container_has_room_for_the_warm_javac)
{
    struct backend be = {.ops = &fake_ops};
    struct llmsb_err err = {0};
    struct config cfg;
    struct container_spec spec;
    struct job j;

    config_defaults(&cfg);
    job_init(&j, &cfg);
    answer = BACKEND_RUNTIME_KERNEL;
    ASSERT_EQ(backend_runtime_resolve(&be, "", &err), 0);
    ASSERT_EQ(job_set_language(&j, "java", &err), 0);
    j.limits.memory_mb = 512;
    j.limits.pids = 256;
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/java:latest");
    ASSERT_EQ(spec.pids, 256 + PROTO_JAVAC_PIDS);
    j.limits.pids = 255; /* below the server's threshold: no server, no room */
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/java:latest");
    ASSERT_EQ(spec.pids, 255);
    j.limits.pids = 256;
    j.limits.memory_mb = 511;
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/java:latest");
    ASSERT_EQ(spec.pids, 256);
    j.limits.memory_mb = 512;
    /* gVisor: the backstop above the pids, the server's among them */
    answer = BACKEND_RUNTIME_GVISOR;
    ASSERT_EQ(backend_runtime_resolve(&be, "runsc", &err), 0);
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/java:latest");
    ASSERT_EQ(spec.pids, (256 + PROTO_JAVAC_PIDS) * 8 + 512 * 32);
    ASSERT_EQ(spec.nproc, 255); /* the job's own bound: the server is another uid */
    answer = BACKEND_RUNTIME_KERNEL;
    ASSERT_EQ(backend_runtime_resolve(&be, "", &err), 0);
    ASSERT_EQ(job_add_env(&j, "LLMSB_COMPILE_CACHE=0", &err), 0);
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/java:latest");
    ASSERT_EQ(spec.pids, 256);
    ASSERT(job_compile_server(&j) == NULL);
    job_release(&j);
    job_init(&j, &cfg);
    ASSERT_EQ(job_set_language(&j, "python", &err), 0);
    j.limits.memory_mb = 512;
    j.limits.pids = 256;
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/python:latest");
    ASSERT_EQ(spec.pids, 256);
    job_release(&j);
}

/* The profiles: a row a kind; the host kernel's is all zero (a backend
 * never resolved reads it), gVisor's is the only one with other limits,
 * an unknown runtime's differs from the host kernel's in reuse only. */
TEST(each_runtime_kind_has_one_profile)
{
    const struct runtime_profile zero = {0};
    const struct runtime_profile *k = runtime_profile_of(BACKEND_RUNTIME_KERNEL);
    const struct runtime_profile *g = runtime_profile_of(BACKEND_RUNTIME_GVISOR);
    const struct runtime_profile *u = runtime_profile_of(BACKEND_RUNTIME_UNKNOWN);
    struct backend be = {.ops = &fake_ops};

    for (int i = 0; i < BACKEND_RUNTIME_COUNT; i++)
        ASSERT_EQ((int)runtime_profile_of((enum backend_runtime_kind)i)->kind, i);
    ASSERT(runtime_profile_of(BACKEND_RUNTIME_COUNT) == u);
    ASSERT(memcmp(k, &zero, sizeof(zero)) == 0);
    ASSERT(memcmp(&be.runtime, k, sizeof(zero)) == 0);
    ASSERT(g->one_job_per_container && g->nproc_from_pids && g->no_engine_seccomp);
    ASSERT(u->one_job_per_container && !u->nproc_from_pids && !u->no_engine_seccomp);
    ASSERT_EQ(u->host_pids_per_pid, 0);
    /* the nproc rule: pids - 1, never 0, nproc when smaller, none without pids */
    ASSERT_EQ(runtime_profile_nproc(g, 256, 4096), 255);
    ASSERT_EQ(runtime_profile_nproc(g, 256, 100), 100);
    ASSERT_EQ(runtime_profile_nproc(g, 1, 4096), 1);
    ASSERT_EQ(runtime_profile_nproc(g, 0, 4096), 4096);
    ASSERT_EQ(runtime_profile_nproc(k, 256, 4096), 4096);
    ASSERT_EQ(runtime_profile_nproc(u, 256, 4096), 4096);
    ASSERT_EQ(runtime_profile_host_pids(g, 256, 512), 256 * 8 + 512 * 32);
    ASSERT_EQ(runtime_profile_host_pids(k, 256, 512), 256);
    ASSERT_EQ(runtime_profile_host_pids(u, 256, 512), 256);
}

TEST_MAIN("runtime_kind", T(docker_info_names_gvisor_by_its_binary),
          T(podman_refuses_a_runtime_it_would_ignore), T(runtime_class_handler_names_gvisor),
          T(the_engines_answer_sets_reuse_and_limits),
          T(a_java_container_has_room_for_the_warm_javac), T(each_runtime_kind_has_one_profile))
