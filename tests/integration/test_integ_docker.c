/* test_integ_docker.c - end-to-end runs against the real dockerd and the
 * llmsb/<lang> images: every language, every run status, stdin, and no
 * residue between two jobs of one container.  A missing engine or image is
 * a failure, not a skip.  LLMSB_BACKEND=podman (or kubernetes) runs the
 * same cases against that engine, as suite integration_<name>; LLMSB_RUNTIME
 * (or backend.runtime in LLMSB_CONFIG) runs them on that OCI runtime, as
 * suite integration_<name>_<runtime> (make test-gvisor: runsc). */
#include "tests/unit/test.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/registry/registry.h"
#include "sandbox/pool.h"
#include "exec/exec.h"
#include "exec/runner.h"
#include "job/job.h"
#include "job/result.h"
#include "proto/proto.h"

static struct config cfg;
static struct backend be;
static int backend_ok;

static const char *backend_name(void)
{
    const char *n = getenv("LLMSB_BACKEND");
    return n && *n ? n : "docker";
}

/* integration_docker, or with a runtime integration_docker_<its name>
 * (a path's last part; what is not [a-z0-9_] as _, for run-suite.sh) */
static const char *suite_name(void)
{
    static char name[128];
    const char *rt = strrchr(cfg.runtime, '/') ? strrchr(cfg.runtime, '/') + 1 : cfg.runtime;

    snprintf(name, sizeof(name), "integration_%s%s%s", backend_name(), rt[0] ? "_" : "", rt);
    for (char *c = name; *c; c++)
        if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c))
            *c = '_';
    return name;
}

/* One attempt in a one-container pool that is gone afterwards (as `run`).
 * Returns 0 with r final, or -1 with err set. */
static int exec_once(const struct job *j, struct job_result *r, struct llmsb_err *err)
{
    const struct runner_opts ro = {.kind = "run", .slots = 1, .max_size = 1};
    struct backend engine;
    struct runner rn;
    enum sched_outcome o;

    if (backend_clone(&engine, &be, err) != 0 ||
        runner_open_engine(&rn, &cfg, &ro, &engine, err) != 0)
        return -1;
    o = exec_job(&rn, &rn.be, j, NULL, r, err);
    runner_close(&rn, "the test's job ended");
    return o == SCHED_OUT_FINAL ? 0 : -1;
}

/* Runs code in a fresh container; r must be released by the caller. */
static int run_code(const char *lang, const char *code, const char *stdin_text, const char *timeout,
                    const char *memory, const char *output, struct job_result *r)
{
    struct llmsb_err err = {0};
    struct job j;
    int rc;

    job_init(&j, &cfg);
    if (job_set_language(&j, lang, &err) || job_set_code(&j, code, strlen(code), &err) ||
        (timeout && job_set_limit(&j, &cfg, "timeout", timeout, &err)) ||
        (memory && job_set_limit(&j, &cfg, "memory", memory, &err)) ||
        (output && job_set_limit(&j, &cfg, "output", output, &err))) {
        fprintf(stderr, "  job: %s\n", err.msg);
        job_release(&j);
        return -1;
    }
    if (stdin_text) {
        j.stdin_data = strdup(stdin_text);
        j.stdin_len = strlen(stdin_text);
    }
    job_result_init(r, &j);
    rc = exec_once(&j, r, &err);
    if (rc != 0)
        fprintf(stderr, "  exec: %s\n", err.msg);
    else if (r->r.err.len && r->r.status != STATUS_OK)
        fprintf(stderr, "  [%s] stderr: %.300s\n", status_name(r->r.status), r->r.err.data);
    job_release(&j);
    return rc;
}

#define RUN(lang, code, stdin_text, timeout, memory, output) \
    struct job_result r;                                     \
    ASSERT(backend_ok);                                      \
    ASSERT_EQ(run_code(lang, code, stdin_text, timeout, memory, output, &r), 0)

/* 1 when the jobs run on gVisor, as a job's kernel says (gVisor's uname
 * version is its own fixed one), whatever the runtime is called: what the
 * cases expect follows this, not the runtime's name. */
static int on_gvisor(void)
{
    static int gvisor = -1;
    struct job_result r;

    if (gvisor < 0 && run_code("python", "import os\nprint(os.uname().version)\n", NULL, "30", NULL,
                               NULL, &r) == 0) {
        gvisor = r.r.out.data && strcmp(r.r.out.data, PROTO_GVISOR_UNAME_VERSION "\n") == 0;
        job_result_release(&r);
    }
    return gvisor == 1;
}

static void hello(const char *lang, const char *code)
{
    RUN(lang, code, NULL, "30", NULL, NULL);
    if (r.r.status != STATUS_OK)
        fprintf(stderr, "  %s: status %s, compile output: %.500s\n", lang, status_name(r.r.status),
                r.r.compile_output.data ? r.r.compile_output.data : "");
    ASSERT_STR(status_name(r.r.status), "ok");
    ASSERT_STR(r.r.out.data, "hello world\n");
    ASSERT_EQ(r.r.exit_code, 0);
    job_result_release(&r);
}

TEST(hello_python)
{
    hello("python", "print('hello world')\n");
}
TEST(hello_javascript)
{
    hello("javascript", "console.log('hello world');\n");
}
TEST(hello_java)
{
    hello("java", "public class Hello {\n  public static void main(String[] a) {\n"
                  "    System.out.println(\"hello world\");\n  }\n}\n");
}
TEST(hello_cpp)
{
    hello("cpp",
          "#include <iostream>\nint main() { std::cout << \"hello world\" << std::endl; }\n");
}
TEST(hello_go)
{
    hello("go", "package main\nimport \"fmt\"\nfunc main() { fmt.Println(\"hello world\") }\n");
}
TEST(hello_r)
{
    hello("r", "cat('hello world\\n')\n");
}
TEST(hello_ruby)
{
    hello("ruby", "puts 'hello world'\n");
}

/* The job runs on the runtime the config names, not the engine's default:
 * gVisor (runsc) answers with a kernel of its own, runc with the host's;
 * and what the engine told of the runtime (its profile: what the pool
 * and the limits follow) agrees with the job's kernel, whatever the
 * runtime's name. */
TEST(runs_on_the_configured_runtime)
{
    struct utsname u;
    char host[sizeof(u.release) + 1];

    ASSERT_EQ(uname(&u), 0);
    snprintf(host, sizeof(host), "%s\n", u.release);
    RUN("python", "import os\nprint(os.uname().release)\n", NULL, NULL, NULL, NULL);
    ASSERT_STR(status_name(r.r.status), "ok");
    fprintf(stderr,
            "  runtime \"%s\": the job's kernel %s  gVisor by the job: %d, by the engine: %d\n",
            cfg.runtime, r.r.out.data, on_gvisor(), be.runtime.kind == BACKEND_RUNTIME_GVISOR);
    if (on_gvisor())
        ASSERT(strcmp(r.r.out.data, host) != 0);
    else
        ASSERT_STR(r.r.out.data, host);
    if (strstr(cfg.runtime, "runsc") || strstr(cfg.runtime, "gvisor"))
        ASSERT(on_gvisor()); /* not runc under gVisor's name */
    ASSERT_EQ(be.runtime.kind == BACKEND_RUNTIME_GVISOR, on_gvisor());
    job_result_release(&r);
}

TEST(spin_loop_times_out_within_a_second)
{
    int64_t t0 = clock_mono_ms(), wall;
    RUN("python", "while True:\n    pass\n", NULL, "2", NULL, NULL);
    wall = clock_mono_ms() - t0;
    fprintf(stderr, "  timeout: duration_ms=%lld, wall with container start=%lld ms\n",
            (long long)r.r.duration_ms, (long long)wall);
    ASSERT_STR(status_name(r.r.status), "timeout");
    ASSERT(r.r.duration_ms >= 2000);
    ASSERT(r.r.duration_ms < 3000);
    job_result_release(&r);
}

TEST(timeout_keeps_output_so_far)
{
    RUN("python", "import time\nprint('before', flush=True)\ntime.sleep(60)\n", NULL, "1", NULL,
        NULL);
    ASSERT_STR(status_name(r.r.status), "timeout");
    ASSERT_STR(r.r.out.data, "before\n");
    job_result_release(&r);
}

TEST(memory_bomb_is_memory_limit)
{
    RUN("python", "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n",
        NULL, "20", "256", NULL);
    ASSERT_STR(status_name(r.r.status), "memory_limit");
    job_result_release(&r);
}

TEST(output_flood_is_output_limit_with_prefix)
{
    RUN("python", "import sys\nwhile True:\n    sys.stdout.write('x' * 4096)\n", NULL, "20", NULL,
        "10000");
    ASSERT_STR(status_name(r.r.status), "output_limit");
    ASSERT(r.r.out_truncated);
    ASSERT_EQ(r.r.out.len, (size_t)10000);
    ASSERT(strspn(r.r.out.data, "x") == 10000);
    job_result_release(&r);
}

TEST(segfault_is_runtime_error_signal_11)
{
    RUN("cpp", "int main() { volatile int *p = nullptr; *p = 1; return 0; }\n", NULL, "30", NULL,
        NULL);
    ASSERT_STR(status_name(r.r.status), "runtime_error");
    ASSERT_EQ(r.r.signal, 11);
    job_result_release(&r);
}

TEST(exit_code_passes_through)
{
    RUN("ruby", "STDERR.puts 'bad'\nexit 3\n", NULL, NULL, NULL, NULL);
    ASSERT_STR(status_name(r.r.status), "runtime_error");
    ASSERT_EQ(r.r.exit_code, 3);
    ASSERT_EQ(r.r.signal, 0);
    ASSERT_STR(r.r.err.data, "bad\n");
    job_result_release(&r);
}

TEST(stdin_reaches_the_program)
{
    RUN("python", "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n",
        "1 2 3\n39\n", NULL, NULL, NULL);
    ASSERT_STR(status_name(r.r.status), "ok");
    ASSERT_STR(r.r.out.data, "45\n");
    job_result_release(&r);
}

TEST(compile_error_is_not_runtime_error)
{
    RUN("cpp", "int main() { return undefined_name; }\n", NULL, "30", NULL, NULL);
    ASSERT_STR(status_name(r.r.status), "compile_error");
    ASSERT_CONTAINS(r.r.compile_output.data, "undefined_name");
    job_result_release(&r);
}

TEST(java_compile_error)
{
    RUN("java", "public class A { public static void main(String[] a) { int x = \"s\"; } }\n", NULL,
        "30", NULL, NULL);
    ASSERT_STR(status_name(r.r.status), "compile_error");
    ASSERT_CONTAINS(r.r.compile_output.data, "incompatible types");
    job_result_release(&r);
}

/* The hardening audit: one check per layer, read from inside a job. */
static const char audit_code[] =
    "import ctypes, os, resource\n"
    "st = open('/proc/self/status').read()\n"
    "f = {l.split(':')[0]: l.split(':')[1].strip() for l in st.splitlines() if ':' in l}\n"
    "print('uid', os.getuid(), os.geteuid(), os.getgid())\n"
    "print('nnp', ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))\n" /* PR_GET_NO_NEW_PRIVS */
    "print('seccomp', f['Seccomp'])\n"
    "print('capeff', f['CapEff'], 'capbnd', f['CapBnd'])\n"
    "root = [l.split() for l in open('/proc/self/mounts') if l.split()[1] == '/'][-1]\n"
    "print('rootfs ro', 'ro' in root[3].split(','))\n"
    "try:\n    open('/usr/x', 'w')\n    print('rootfs writable')\n"
    "except OSError as e:\n    print('rootfs', e.errno)\n"
    "try:\n    open('/run/x', 'w')\n    print('run writable')\n"
    "except OSError as e:\n    print('run denied', e.errno in (13, 30))\n"
    "try:\n    open('/dev/termination-log', 'a').write('x')\n    print('termlog writable')\n"
    "except OSError as e:\n    print('termlog denied', e.errno in (2, 13, 30))\n"
    "print('ifaces', sorted(os.listdir('/sys/class/net')))\n"
    "print('env', sorted(k for k in os.environ if 'DOCKER' in k or 'REDIS' in k or 'LLMSB' in k))\n"
    "print('nofile', resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    "print('fsize', resource.getrlimit(resource.RLIMIT_FSIZE)[0] >> 20)\n"
    "print('core', resource.getrlimit(resource.RLIMIT_CORE)[0])\n"
    "print('nproc', resource.getrlimit(resource.RLIMIT_NPROC)[0])\n"
    "for d in ('/work', '/tmp', '/var/tmp', '/dev/shm'):\n"
    "    s = os.statvfs(d)\n"
    "    print('size', d, s.f_blocks * s.f_frsize >> 20)\n"
    "def first(*paths):\n"
    "    for p in paths:\n"
    "        try:\n            return open(p).read().split()[0]\n"
    "        except OSError:\n            pass\n"
    "m = first('/sys/fs/cgroup/memory/memory.limit_in_bytes', '/sys/fs/cgroup/memory.max')\n"
    "print('mem', m and int(m) >> 20)\n"
    "print('pids', first('/sys/fs/cgroup/pids/pids.max', '/sys/fs/cgroup/pids.max'))\n"
    "print('cpu', first('/sys/fs/cgroup/cpu/cpu.cfs_quota_us', '/sys/fs/cgroup/cpu.max'))\n";

static void audit_checks(const char *out)
{
    int gvisor = on_gvisor();

    ASSERT(out != NULL);
    ASSERT_CONTAINS(out, "uid 10001 10001 10001\n");
    ASSERT_CONTAINS(out, "nnp 1\n");
    /* gVisor: the OCI profile is not loaded, the agent's namespace filter
     * is (docs/security.md#gvisor-runsc) */
    ASSERT_CONTAINS(out, "seccomp 2\n");
    ASSERT_CONTAINS(out, "capeff 0000000000000000 capbnd 00000000000000e0\n");
    ASSERT_CONTAINS(out, "rootfs ro True\n");
    /* EROFS; gVisor checks the file's permission first: EACCES */
    ASSERT_CONTAINS(out, gvisor ? "rootfs 13\n" : "rootfs 30\n");
    /* Podman mounts a root-only tmpfs on /run: EACCES there, EROFS elsewhere */
    ASSERT_CONTAINS(out, "run denied True\n");
    /* Kubernetes' termination log (0666 from the kubelet) closed by the agent */
    ASSERT_CONTAINS(out, "termlog denied True\n");
    /* a pod always has the pod network: on Kubernetes the NetworkPolicy
     * of deploy/kubernetes is what isolates it (docs/kubernetes.md) */
    ASSERT_CONTAINS(out, strcmp(backend_name(), "kubernetes") == 0 ? "ifaces ['eth0', 'lo']\n"
                                                                   : "ifaces ['lo']\n");
    ASSERT_CONTAINS(out, "env []\n");
    ASSERT_CONTAINS(out, "nofile 1024\n");
    ASSERT_CONTAINS(out, "fsize 64\n");
    ASSERT_CONTAINS(out, "core 0\n");
    /* gVisor: the job's pids limit is its RLIMIT_NPROC, less its first
     * process, which gVisor does not count (exec.c) */
    ASSERT_CONTAINS(out, gvisor ? "nproc 255\n" : "nproc 4096\n");
    ASSERT_CONTAINS(out, "size /work 256\n");
    ASSERT_CONTAINS(out, "size /tmp 256\n");
    ASSERT_CONTAINS(out, "size /var/tmp 256\n");
    ASSERT_CONTAINS(out, "size /dev/shm 64\n");
    if (gvisor) { /* no cgroupfs inside: the host's cgroup holds the whole sandbox */
        ASSERT_CONTAINS(out, "mem None\npids None\ncpu None\n");
        return;
    }
    ASSERT_CONTAINS(out, "mem 512\n");
    /* Kubernetes has no per-pod pids limit (the kubelet's podPidsLimit is
     * node-wide, on the pod's cgroup); RLIMIT_NPROC still holds jobs */
    if (strcmp(backend_name(), "kubernetes") != 0)
        ASSERT_CONTAINS(out, "pids 256\n");
    ASSERT_CONTAINS(out, "cpu 100000");
}

TEST(hardened_by_default)
{
    RUN("python", audit_code, NULL, NULL, NULL, NULL);
    if (r.r.status != STATUS_OK || !r.r.out.data)
        fprintf(stderr, "  %s\n", r.r.err.data ? r.r.err.data : "");
    ASSERT_STR(status_name(r.r.status), "ok");
    audit_checks(r.r.out.data);
    job_result_release(&r);
}

static int run_in_one_container(const char *lang, const char *const *codes, size_t n, char **outs,
                                int *zygote);

/* The audit again from a job the zygote forked (the second job of a
 * container), and the zygote out of the job's reach: it cannot signal it
 * or read its memory or environment.  With jobs.fresh_interpreter (make
 * test-zygote) there is no zygote to find. */
TEST(hardened_in_the_zygote)
{
    static const char reach[] =
        "import os, signal\n"
        "z = []\n"
        "for d in os.listdir('/proc'):\n"
        "    if d.isdigit() and int(d) != os.getpid():\n"
        "        try:\n"
        "            if b'llmsb_zygote' in open('/proc/%s/cmdline' % d, 'rb').read():\n"
        "                z.append(int(d))\n"
        "        except OSError:\n"
        "            pass\n"
        "print('zygotes', len(z))\n"
        "def denied(f, *a):\n"
        "    try:\n"
        "        f(*a)\n"
        "        return False\n"
        "    except PermissionError:\n"
        "        return True\n"
        "for p in z:\n"
        "    print('kill', denied(os.kill, p, signal.SIGKILL))\n"
        "    print('mem', denied(open, '/proc/%d/mem' % p, 'rb'))\n"
        "    print('environ', denied(open, '/proc/%d/environ' % p, 'rb'))\n"
        "    print('uid', os.stat('/proc/%d' % p).st_uid)\n";
    const char *codes[] = {"print('warm')\n", audit_code, reach};
    char *outs[3] = {NULL, NULL, NULL};
    int zygote = -1, want = !cfg.fresh_interpreter;

    ASSERT(backend_ok);
    ASSERT_EQ(run_in_one_container("python", codes, 3, outs, &zygote), 0);
    ASSERT_EQ(zygote, want); /* the last job's */
    audit_checks(outs[1]);
    ASSERT_CONTAINS(outs[2], want ? "zygotes 1\n" : "zygotes 0\n");
    if (want) {
        /* gVisor lets the job read the zygote's environ (its fixed start-up
         * environment): docs/security.md#gvisor-runsc */
        ASSERT_CONTAINS(outs[2], on_gvisor() ? "kill True\nmem True\nenviron False\nuid 0\n"
                                             : "kill True\nmem True\nenviron True\nuid 0\n");
    }
    for (int i = 0; i < 3; i++)
        free(outs[i]);
}

TEST(file_size_limit_stops_a_huge_file)
{
    RUN("python", "f = open('/work/big', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))\n", NULL,
        "20", NULL, NULL);
    /* RLIMIT_FSIZE: Python ignores SIGXFSZ, so the write fails with EFBIG */
    ASSERT_STR(status_name(r.r.status), "runtime_error");
    ASSERT_CONTAINS(r.r.err.data, "File too large");
    job_result_release(&r);
}

struct count {
    int n;
};

static void count_one(void *ud, const struct container_info *ci)
{
    (void)ci;
    ((struct count *)ud)->n++;
}

/* Two jobs in one container: the first leaves files and a detached
 * process; the second must see none of them. */
TEST(no_residue_between_jobs_and_labels)
{
    const char *dirty = "import os, subprocess\n"
                        "for p in ('/tmp/left', '/dev/shm/left', '/var/tmp/left', '/work/left'):\n"
                        "    open(p, 'w').write('x')\n"
                        "os.makedirs('/tmp/d/e', exist_ok=True)\n"
                        "os.chmod('/tmp/d', 0)\n"
                        "subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
                        "if os.fork() == 0:\n"
                        "    os.setsid()\n"
                        "    if os.fork() == 0:\n"
                        "        import time; time.sleep(1000)\n"
                        "    os._exit(0)\n"
                        "print('dirty')\n";
    const char *check =
        "import os\n"
        "left = [p for p in ('/tmp/left', '/dev/shm/left', '/var/tmp/left', '/work/left', '/tmp/d')\n"
        "        if os.path.exists(p)]\n"
        "me = os.getpid()\n"
        "procs = []\n"
        "for d in os.listdir('/proc'):\n"
        "    if d.isdigit() and int(d) not in (me, os.getppid()):\n"
        "        try:\n"
        "            if os.stat('/proc/' + d).st_uid == os.getuid():\n"
        "                procs.append(open('/proc/%s/cmdline' % d).read())\n"
        "        except OSError:\n"
        "            pass\n"
        "print('left', left, 'procs', procs)\n";
    struct container_spec spec;
    struct sandbox sb;
    struct job j;
    struct proto_job pj;
    struct proto_result res;
    struct llmsb_err err = {0};
    struct count c = {0};
    char label[400], who[64];

    ASSERT(backend_ok);
    job_init(&j, &cfg);
    ASSERT_EQ(job_set_language(&j, "python", &err), 0);
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/python:latest");
    snprintf(who, sizeof(who), "integ-residue-%d", (int)getpid());
    spec.labels[0][0] = "llmsb.worker";
    spec.labels[0][1] = who;
    spec.nlabels = 1;
    ASSERT_EQ(sandbox_open(&sb, &be, &spec, 60000, &err), 0);
    snprintf(label, sizeof(label), "llmsb.worker=%s", who);
    ASSERT_EQ(be.ops->list(&be, label, count_one, &c, &err), 0);
    ASSERT_EQ(c.n, 1);
    for (int round = 0; round < 2; round++) {
        const char *code = round == 0 ? dirty : check;
        ASSERT_EQ(job_set_code(&j, code, strlen(code), &err), 0);
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        proto_result_init(&res, 1 << 20);
        ASSERT_EQ(sandbox_run(&sb, &pj, 30000, &res, &err), 0);
        proto_job_release(&pj);
        if (round == 0) {
            ASSERT_STR(status_name(res.status), "ok");
            ASSERT_STR(res.out.data, "dirty\n");
        } else {
            ASSERT_STR(status_name(res.status), "ok");
            ASSERT_STR(res.out.data, "left [] procs []\n");
        }
        proto_result_release(&res);
    }
    sandbox_close(&sb);
    c.n = 0;
    ASSERT_EQ(be.ops->list(&be, label, count_one, &c, &err), 0);
    ASSERT_EQ(c.n, 0); /* removed */
    job_release(&j);
}

/* Runs codes[0..n) in order in one container of lang; outs[i] gets job
 * i's stdout (caller frees). */
static int run_in_one_container(const char *lang, const char *const *codes, size_t n, char **outs,
                                int *zygote)
{
    struct container_spec spec;
    struct sandbox sb;
    struct job j;
    struct llmsb_err err = {0};
    int rc = 0;

    job_init(&j, &cfg);
    if (job_set_language(&j, lang, &err) != 0)
        return -1;
    exec_spec_for_job(&spec, &be, &cfg, &j,
                      lang[0] == 'c' ? "llmsb/cpp:latest" : "llmsb/python:latest");
    if (sandbox_open(&sb, &be, &spec, 60000, &err) != 0) {
        fprintf(stderr, "  sandbox: %s\n", err.msg);
        job_release(&j);
        return -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct proto_job pj;
        struct proto_result res;
        proto_result_init(&res, 1 << 20);
        rc = job_set_code(&j, codes[i], strlen(codes[i]), &err) || job_to_proto(&j, &pj, &err) ||
             sandbox_run(&sb, &pj, 60000, &res, &err);
        if (rc == 0 && res.status != STATUS_OK)
            fprintf(stderr, "  job %zu: %s: %.300s%.300s\n", i, status_name(res.status),
                    res.compile_output.data ? res.compile_output.data : "",
                    res.err.data ? res.err.data : "");
        outs[i] = strdup(rc == 0 && res.out.data ? res.out.data : "");
        if (zygote)
            *zygote = res.zygote;
        proto_job_release(&pj);
        proto_result_release(&res);
    }
    if (rc)
        fprintf(stderr, "  run: %s\n", err.msg);
    sandbox_close(&sb);
    job_release(&j);
    return rc;
}

/* IPC objects a job makes (POSIX message queue, SysV shared memory,
 * message queue and semaphore set) are gone before the next job, run
 * through the pool as every front end runs jobs (runner_pool_config): the
 * second job must find none of them, by name or key, nor in
 * /proc/sysvipc.  On runc both jobs share the container and the agent
 * removes them; gVisor keeps POSIX queues and shows neither /dev/mqueue
 * nor /proc/sysvipc (-1 below), so there each job gets a new container. */
TEST(ipc_objects_do_not_survive_into_the_next_job)
{
    const char *make =
        "#include <mqueue.h>\n#include <fcntl.h>\n#include <sys/ipc.h>\n#include <sys/shm.h>\n"
        "#include <sys/msg.h>\n#include <sys/sem.h>\n#include <cstdio>\n#include <cstring>\n"
        "struct m { long t; char s[8]; };\n"
        "int main() {\n"
        "  mqd_t q = mq_open(\"/residue\", O_CREAT | O_RDWR, 0666, nullptr);\n"
        "  int okq = q != (mqd_t)-1;\n"
        "  if (okq) mq_send(q, \"secret\", 6, 0);\n"
        "  int shm = shmget(0x4c4c, 4096, IPC_CREAT | 0666);\n"
        "  char *p = (char *)shmat(shm, nullptr, 0); if (p != (char *)-1) strcpy(p, \"secret\");\n"
        "  int msq = msgget(0x4c4d, IPC_CREAT | 0666); m msg = {1, \"secret\"};\n"
        "  int okm = msgsnd(msq, &msg, sizeof(msg.s), 0) == 0;\n"
        "  int sem = semget(0x4c4e, 1, IPC_CREAT | 0666);\n"
        "  std::printf(\"made %d %d %d %d\\n\", okq, shm >= 0, okm, sem >= 0);\n"
        "}\n";
    const char *check =
        "#include <mqueue.h>\n#include <fcntl.h>\n#include <sys/ipc.h>\n#include <sys/shm.h>\n"
        "#include <sys/msg.h>\n#include <sys/sem.h>\n#include <cstdio>\n"
        "static int lines(const char *f) { FILE *p = std::fopen(f, \"r\"); int n = 0, c;\n"
        "  if (!p) return -1; while ((c = std::fgetc(p)) != EOF) n += c == '\\n';\n"
        "  std::fclose(p); return n - 1; }\n"
        "int main() {\n"
        "  int q = mq_open(\"/residue\", O_RDONLY) != (mqd_t)-1;\n"
        "  int keys = (shmget(0x4c4c, 0, 0) >= 0) + (msgget(0x4c4d, 0) >= 0) +\n"
        "             (semget(0x4c4e, 0, 0) >= 0);\n"
        "  std::printf(\"left mq=%d keys=%d shm=%d msg=%d sem=%d\\n\", q, keys,\n"
        "              lines(\"/proc/sysvipc/shm\"), lines(\"/proc/sysvipc/msg\"),\n"
        "              lines(\"/proc/sysvipc/sem\"));\n"
        "}\n";
    const char *codes[2] = {make, check};
    const char *want[2] = {"made 1 1 1 1\n", "left mq=0 keys=0 shm=0 msg=0 sem=0\n"};
    int gvisor = on_gvisor();
    struct runner_opts o = {.kind = RUNNER_KIND_LOCAL, .slots = 1};
    struct identity id;
    struct pool_config pc;
    struct pool p;
    struct job j;
    struct llmsb_err err = {0};
    char first[80] = "";

    ASSERT(backend_ok);
    if (gvisor)
        want[1] = "left mq=0 keys=0 shm=-1 msg=-1 sem=-1\n";
    identity_init(&id, NULL, RUNNER_KIND_LOCAL, NULL);
    runner_pool_config(&cfg, &be, &o, &id, &pc);
    pool_init(&p, &be, &pc);
    job_init(&j, &cfg);
    ASSERT_EQ(job_set_language(&j, "cpp", &err), 0);
    for (int i = 0; i < 2; i++) {
        struct container_spec spec;
        struct pool_lease lease;
        struct proto_job pj;
        struct proto_result res;

        exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/cpp:latest");
        ASSERT_EQ(job_set_code(&j, codes[i], strlen(codes[i]), &err), 0);
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        ASSERT_EQ(pool_acquire(&p, &spec, &lease, &err), 0);
        /* the agent's HELLO agrees with the engine on what the kernel is */
        ASSERT_EQ(lease.sb->runtime.kind == BACKEND_RUNTIME_GVISOR, gvisor);
        /* runc: the same container again; gVisor: a new one */
        if (i == 1)
            ASSERT_EQ(strcmp(lease.sb->id, first) == 0, !gvisor);
        snprintf(first, sizeof(first), "%s", lease.sb->id);
        proto_result_init(&res, 1 << 20);
        ASSERT_EQ(sandbox_run(lease.sb, &pj, 60000, &res, &err), 0);
        ASSERT_STR(status_name(res.status), "ok");
        ASSERT_STR(res.out.data, want[i]);
        pool_put(&p, &lease, 1);
        proto_job_release(&pj);
        proto_result_release(&res);
    }
    pool_release_all(&p);
    job_release(&j);
}

TEST(many_jobs_in_one_container)
{
    struct container_spec spec;
    struct sandbox sb;
    struct job j;
    struct llmsb_err err = {0};
    char code[64];

    ASSERT(backend_ok);
    job_init(&j, &cfg);
    ASSERT_EQ(job_set_language(&j, "python", &err), 0);
    exec_spec_for_job(&spec, &be, &cfg, &j, "llmsb/python:latest");
    ASSERT_EQ(sandbox_open(&sb, &be, &spec, 60000, &err), 0);
    for (int i = 0; i < 20; i++) {
        struct proto_job pj;
        struct proto_result res;
        char want[32];
        snprintf(code, sizeof(code), "print(%d * 2)\n", i);
        snprintf(want, sizeof(want), "%d\n", i * 2);
        ASSERT_EQ(job_set_code(&j, code, strlen(code), &err), 0);
        ASSERT_EQ(job_to_proto(&j, &pj, &err), 0);
        proto_result_init(&res, 1 << 20);
        ASSERT_EQ(sandbox_run(&sb, &pj, 30000, &res, &err), 0);
        ASSERT_STR(status_name(res.status), "ok");
        ASSERT_STR(res.out.data, want);
        proto_job_release(&pj);
        proto_result_release(&res);
    }
    ASSERT_EQ(sb.jobs, 20);
    sandbox_close(&sb);
    job_release(&j);
}

TEST(missing_image_is_a_clear_error)
{
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;

    ASSERT(backend_ok);
    job_init(&j, &cfg);
    ASSERT_EQ(job_set_language(&j, "python", &err), 0);
    ASSERT_EQ(job_set_code(&j, "print(1)", 8, &err), 0);
    j.image = strdup("llmsb/does-not-exist:nope");
    job_result_init(&r, &j);
    ASSERT(exec_once(&j, &r, &err) != 0); /* infrastructure: retried elsewhere, not a result */
    ASSERT_CONTAINS(err.msg, "llmsb/does-not-exist:nope");
    ASSERT_CONTAINS(err.msg, "images build");
    job_result_release(&r);
    job_release(&j);
}

/* Artifacts: globs, caps, and nothing that is not a regular file. */
TEST(artifacts_collected_safely)
{
    struct llmsb_err err = {0};
    struct job j;
    struct job_result r;
    const char *code = "import os\n"
                       "os.makedirs('out/deep', exist_ok=True)\n"
                       "open('out/a.txt', 'w').write('alpha')\n"
                       "open('out/deep/b.csv', 'w').write('1,2')\n"
                       "for i in range(5):\n    open('out/n%d.log' % i, 'w').write('x')\n"
                       "open('out/big.bin', 'wb').write(b'0' * 3000)\n"
                       "os.symlink('/etc/passwd', 'out/passwd')\n"
                       "os.mkfifo('out/fifo')\n"
                       "open('secret.txt', 'w').write('not asked for')\n";
    cJSON *res, *a, *it;
    int files = 0, skipped_link = 0, skipped_fifo = 0, skipped_big = 0, skipped_count = 0;

    ASSERT(backend_ok);
    job_init(&j, &cfg);
    ASSERT_EQ(job_set_language(&j, "python", &err), 0);
    ASSERT_EQ(job_set_code(&j, code, strlen(code), &err), 0);
    ASSERT_EQ(job_add_artifact_glob(&j, "out/*", &err), 0);
    j.artifact_max_count = 4;
    j.artifact_max_file_mb = 1;
    j.artifact_max_total_mb = 1;
    job_result_init(&r, &j);
    ASSERT_EQ(exec_once(&j, &r, &err), 0);
    ASSERT_STR(status_name(r.r.status), "ok");
    ASSERT(r.artifacts != NULL);
    res = cJSON_Parse(r.artifacts);
    cJSON_ArrayForEach(it, res) {
        const char *name = cJSON_GetObjectItem(it, "name")->valuestring;
        cJSON *sk = cJSON_GetObjectItem(it, "skipped");
        ASSERT(strncmp(name, "out/", 4) == 0); /* secret.txt was not asked for */
        if (!sk) {
            files++;
            ASSERT(cJSON_IsString(cJSON_GetObjectItem(it, "base64")));
            ASSERT(strcmp(name, "out/passwd") != 0);
        } else if (strcmp(name, "out/passwd") == 0) {
            skipped_link += strstr(sk->valuestring, "symbolic link") != NULL;
        } else if (strcmp(name, "out/fifo") == 0) {
            skipped_fifo += strstr(sk->valuestring, "not a regular file") != NULL;
        } else if (strstr(sk->valuestring, "count cap")) {
            skipped_count++;
        } else {
            skipped_big++;
        }
    }
    ASSERT_EQ(files, 4); /* the count cap */
    ASSERT_EQ(skipped_link, 1);
    ASSERT_EQ(skipped_fifo, 1);
    ASSERT(skipped_count >= 1);
    a = cJSON_GetArrayItem(res, 0);
    ASSERT(cJSON_GetObjectItem(a, "mime") != NULL);
    cJSON_Delete(res);
    (void)skipped_big;
    job_result_release(&r);
    job_release(&j);
}

static void pool_spec(struct container_spec *spec, struct job *j)
{
    struct llmsb_err err = {0};
    job_init(j, &cfg);
    job_set_language(j, "python", &err);
    exec_spec_for_job(spec, &be, &cfg, j, "llmsb/python:latest");
}

TEST(pool_reuse_limits_and_exhaustion)
{
    struct pool_config pc = {.min_idle = 0,
                             .max_size = 1,
                             .max_uses = 2,
                             .wait_ms = 300,
                             .on_exhausted = POOL_FAIL_FAST,
                             .start_timeout_ms = 60000};
    struct container_spec spec;
    struct pool_lease a, b;
    struct llmsb_err err = {0};
    struct pool p;
    struct job j;
    char first[80];
    int idle;

    ASSERT(backend_ok);
    pool_spec(&spec, &j);
    pool_init(&p, &be, &pc);
    ASSERT_EQ(pool_acquire(&p, &spec, &a, &err), 0);
    snprintf(first, sizeof(first), "%s", a.sb->id);
    /* full: fail_fast refuses at once */
    ASSERT(pool_acquire(&p, &spec, &b, &err) != 0);
    ASSERT_CONTAINS(err.msg, "fail_fast");
    /* temporary: an extra container, gone after its job */
    p.cfg.on_exhausted = POOL_TEMPORARY;
    ASSERT_EQ(pool_acquire(&p, &spec, &b, &err), 0);
    ASSERT(b.temporary);
    pool_put(&p, &b, 1);
    ASSERT_EQ(pool_size(&p, &idle), 1);
    ASSERT_EQ(idle, 0);
    /* wait: times out while the one container is busy */
    p.cfg.on_exhausted = POOL_WAIT;
    ASSERT(pool_acquire(&p, &spec, &b, &err) != 0);
    ASSERT_CONTAINS(err.msg, "no container free");
    /* back in the pool, then handed out again after a health check */
    a.sb->jobs = 1;
    pool_put(&p, &a, 1);
    if (on_gvisor()) { /* the agent's HELLO said gVisor: retired, whatever max_uses says */
        ASSERT_EQ(pool_size(&p, &idle), 0);
        ASSERT_EQ(pool_settle(&p, 60000), 0); /* removed by the pool's remover */
        ASSERT_EQ(p.destroyed, 2);
        pool_release_all(&p);
        job_release(&j);
        return;
    }
    ASSERT_EQ(pool_size(&p, &idle), 1);
    ASSERT_EQ(idle, 1);
    ASSERT_EQ(pool_acquire(&p, &spec, &a, &err), 0);
    ASSERT_STR(a.sb->id, first);
    /* max_uses reached: destroyed on return */
    a.sb->jobs = 2;
    pool_put(&p, &a, 1);
    ASSERT_EQ(pool_size(&p, &idle), 0);
    /* not reusable (e.g. its job timed out): destroyed */
    ASSERT_EQ(pool_acquire(&p, &spec, &a, &err), 0);
    ASSERT(strcmp(a.sb->id, first) != 0);
    pool_put(&p, &a, 0);
    ASSERT_EQ(pool_size(&p, &idle), 0);
    ASSERT_EQ(pool_settle(&p, 60000), 0);
    ASSERT_EQ(p.destroyed, 3);
    pool_release_all(&p);
    job_release(&j);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
    struct llmsb_err err = {0};
    char version[64];

    config_defaults(&cfg);
    /* the backend's own settings (kubernetes.*) from the config file */
    if (getenv("LLMSB_CONFIG") && config_load(&cfg, getenv("LLMSB_CONFIG"), &err) != 0) {
        fprintf(stderr, "integration: %s\n", err.msg);
        return;
    }
    snprintf(cfg.backend, sizeof(cfg.backend), "%s", backend_name());
    if (getenv("LLMSB_RUNTIME")) /* as the CLI reads it */
        snprintf(cfg.runtime, sizeof(cfg.runtime), "%s", getenv("LLMSB_RUNTIME"));
    if (backend_open(&be, backend_name(), NULL, &cfg.kube, &err) != 0 ||
        be.ops->ping(&be, version, sizeof(version), &err) != 0 ||
        backend_runtime_resolve(&be, cfg.runtime, &err) != 0) {
        fprintf(stderr, "integration: no %s engine: %s\n", backend_name(), err.msg);
        return;
    }
    /* the languages this suite runs (the later ones: tests/languages) */
    static const char *const used[] = {"python", "javascript", "java", "cpp",
                                       "go",     "go_test",    "r",    "ruby"};
    for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++) {
        char img[256];
        config_image(&cfg, language_find(used[i]), img, sizeof(img));
        if (be.ops->image_exists(&be, img, &err) != 1) {
            fprintf(stderr, "integration: image %s missing (run: bin/llm-sandbox images build)\n",
                    img);
            return;
        }
    }
    backend_ok = 1;
}

TEST_MAIN(suite_name(), T(hello_python), T(hello_javascript), T(hello_java), T(hello_cpp),
          T(hello_go), T(hello_r), T(hello_ruby), T(runs_on_the_configured_runtime),
          T(spin_loop_times_out_within_a_second), T(timeout_keeps_output_so_far),
          T(memory_bomb_is_memory_limit), T(output_flood_is_output_limit_with_prefix),
          T(segfault_is_runtime_error_signal_11), T(exit_code_passes_through),
          T(stdin_reaches_the_program), T(compile_error_is_not_runtime_error),
          T(java_compile_error), T(hardened_by_default), T(hardened_in_the_zygote),
          T(file_size_limit_stops_a_huge_file), T(no_residue_between_jobs_and_labels),
          T(ipc_objects_do_not_survive_into_the_next_job), T(many_jobs_in_one_container),
          T(pool_reuse_limits_and_exhaustion), T(artifacts_collected_safely),
          T(missing_image_is_a_clear_error))
