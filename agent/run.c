/* run.c - how the agent runs one job and leaves nothing behind.
 *
 * The job's files are written as the sandbox user, then its steps run one
 * after another (step.c): the library install (its offline part after the
 * worker's CONTINUE), the compile step, then the program once or once per
 * test case, each case from the state right after the compile step
 * (snapshot.c); then what it made is collected (artifacts.c).  Every
 * problem becomes a status of the result.  The warm helpers are told of
 * the job before its files exist (warm.c); a session's call runs in the
 * session's one process (zygote.c). */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifacts.h"
#include "common/compare.h"
#include "javac.h"
#include "prespawn.h"
#include "snapshot.h"
#include "step.h"
#include "warm.h"
#include "zygote.h"

/* A job's case left what the agent could not undo: the cleanup after it
 * says the container is not clean, whatever it manages (not reused). */
static int leave_dirty;

int agent_cleanup(const struct agent_conf *conf)
{
    int dirty = leave_dirty;

    leave_dirty = 0;
    if (agent_wipe(conf) != 0)
        return -1;
    return dirty ? -1 : 0;
}

/* ---- files --------------------------------------------------------------- */

/* Opens (creating as needed) the directory that holds path's last part. */
static int open_parent(int root, const char *path, const char **base)
{
    char part[256];
    const char *p = path, *slash;
    int fd = dup(root);

    while (fd >= 0 && (slash = strchr(p, '/')) != NULL) {
        size_t n = (size_t)(slash - p);
        int next;
        memcpy(part, p, n); /* proto_path_check bounds parts to 255 */
        part[n] = '\0';
        if (mkdirat(fd, part, 0755) != 0 && errno != EEXIST) {
            close(fd);
            return -1;
        }
        next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
        p = slash + 1;
    }
    *base = p;
    return fd;
}

static int unpack_fn(const struct agent_conf *conf, const void *arg, int msgfd)
{
    const struct proto_job *job = arg;
    int root = open(conf->work_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    umask(022);
    if (root < 0) {
        dprintf(msgfd, "open %s: %s", conf->work_dir, strerror(errno));
        return 2;
    }
    /* readable by the agent (root without DAC capabilities), which looks
     * whether anything was drawn before it forks a collector */
    if (job->plots_dir && mkdir(job->plots_dir, 0755) != 0 && errno != EEXIST) {
        dprintf(msgfd, "mkdir %s: %s", job->plots_dir, strerror(errno));
        close(root);
        return 2;
    }
    for (size_t i = 0; i < job->nfiles; i++) {
        const struct proto_file *f = &job->files[i];
        const char *base, *p = f->data;
        size_t left = f->len;
        int dir = open_parent(root, f->path, &base), fd = -1;

        /* a session's call replaces what an earlier call left under the
         * same name (its program's file, first of all) */
        if (dir >= 0 && job->session && unlinkat(dir, base, 0) != 0 && errno != ENOENT &&
            errno != EISDIR) {
            dprintf(msgfd, "replace \"%s\": %s", f->path, strerror(errno));
            close(dir);
            close(root);
            return 1;
        }
        if (dir >= 0)
            fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        f->mode ? f->mode : 0644);
        while (fd >= 0 && left > 0) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            p += w;
            left -= (size_t)w;
        }
        if (fd < 0 || left > 0) {
            int e = errno;
            dprintf(msgfd, "write file \"%s\": %s", f->path, strerror(e));
            return (e == ENOSPC || e == EDQUOT || e == EFBIG || e == EEXIST) ? 1 : 2;
        }
        close(fd);
        close(dir);
    }
    close(root);
    return 0;
}

/* ---- the job ----------------------------------------------------------------- */

/* A step before the run (install, compile): both streams go to
 * compile_output; failing ends the job as fail_status (memory_limit when
 * the cgroup OOM-killed it and oom_status says so) with a note naming what. */
static int prep_step(const struct agent_conf *conf, const struct proto_job *job, char *const *argv,
                     char *const *env, uint64_t timeout_ms, enum job_status fail_status,
                     enum job_status oom_status, const char *what, int javac,
                     struct proto_result *res)
{
    struct agent_step s = {0};
    struct agent_outcome o;
    long long oom0 = agent_oom_count();

    s.argv = argv;
    s.env = env;
    s.timeout_ms = timeout_ms;
    s.out_cap = job->compile_output_limit ? job->compile_output_limit : 65536;
    if (s.out_cap > PROTO_MAX_COMPILE_OUTPUT)
        s.out_cap = PROTO_MAX_COMPILE_OUTPUT;
    s.out = s.err = &res->compile_output;
    s.job = job;
    s.javac = javac;
    int rc = agent_step_run(conf, &s, &o, res->error, sizeof(res->error));
    if (javac)
        javac_end(rc != 0 || o.timed_out || o.signal);
    if (rc != 0) {
        res->status = STATUS_INTERNAL_ERROR;
        return -1;
    }
    if (oom0 >= 0 && agent_oom_count() > oom0) {
        res->status = oom_status;
        res->not_run = 1; /* memory_limit, of the compiler's */
        buf_printf(&res->compile_output, "\n[llm-sandbox: the %s ran out of memory]\n", what);
        return -1;
    }
    if (o.timed_out || o.exit_code != 0) {
        res->status = fail_status;
        res->exit_code = o.exit_code;
        res->signal = o.signal;
        if (o.timed_out)
            buf_printf(&res->compile_output, "\n[llm-sandbox: the %s timed out after %llu ms]\n",
                       what, (unsigned long long)timeout_ms);
        return -1;
    }
    return 0;
}

static int compile(const struct agent_conf *conf, const struct proto_job *job,
                   struct proto_result *res)
{
    return prep_step(conf, job, job->compile_argv, job->env,
                     job->compile_timeout_ms ? job->compile_timeout_ms : 30000,
                     STATUS_COMPILE_ERROR, STATUS_MEMORY_LIMIT, "compiler", javac_begin(job), res);
}

/* The library install step; extra env (registry, index) applies to it only. */
static int install(const struct agent_conf *conf, const struct proto_job *job, char *const *argv,
                   const char *what, struct proto_result *res)
{
    char **env = NULL;
    size_t nenv = 0;
    int rc = 0;

    for (size_t i = 0; i < job->nenv && rc == 0; i++)
        rc = strlist_add(&env, &nenv, job->env[i], strlen(job->env[i]));
    for (size_t i = 0; i < job->ninstall_env && rc == 0; i++)
        rc = strlist_add(&env, &nenv, job->install_env[i], strlen(job->install_env[i]));
    if (rc != 0) {
        res->status = STATUS_INTERNAL_ERROR;
        snprintf(res->error, sizeof(res->error), "agent: install env: out of memory");
    } else {
        rc = prep_step(conf, job, argv, env,
                       job->install_timeout_ms ? job->install_timeout_ms : 120000,
                       STATUS_INSTALL_ERROR, STATUS_INSTALL_ERROR, what, 0, res);
    }
    strlist_free(env, nenv);
    return rc;
}

/* What one run of the program came to. */
struct run_out {
    enum job_status status;
    int64_t exit_code, signal, duration_ms, cpu_ms, max_rss_kb;
    int out_trunc, err_trunc;
    int zygote, prespawned;
};

/* Runs the program once: argv, stdin, the job's limits; output into out
 * and err.  Returns -1 (errmsg set) when the agent itself failed. */
static int run_program(const struct agent_conf *conf, const struct proto_job *job, int zygote,
                       int live, char *const *argv, const char *in, size_t inlen, struct buf *out,
                       struct buf *err, struct run_out *ro, char *errmsg, size_t errsz)
{
    struct agent_step s = {0};
    struct agent_outcome o;
    long long oom0 = agent_oom_count();

    s.argv = argv;
    s.env = job->env;
    s.stdin_data = in;
    s.stdin_len = inlen;
    s.timeout_ms = job->timeout_ms ? job->timeout_ms : 10000;
    s.out_cap = job->output_limit ? job->output_limit : (1u << 20);
    if (s.out_cap > PROTO_MAX_OUTPUT)
        s.out_cap = PROTO_MAX_OUTPUT; /* the most one RESULT carries */
    s.kill_on_cap = 1;
    s.zygote = zygote;
    s.live = live;
    s.out = out;
    s.err = err;
    s.job = job;
    if (agent_step_run(conf, &s, &o, errmsg, errsz) != 0)
        return -1;
    ro->exit_code = o.exit_code;
    ro->signal = o.signal;
    ro->out_trunc = o.out_trunc;
    ro->err_trunc = o.err_trunc;
    ro->duration_ms = o.duration_ms;
    ro->cpu_ms = ((int64_t)o.ru.ru_utime.tv_sec + o.ru.ru_stime.tv_sec) * 1000 +
                 (o.ru.ru_utime.tv_usec + o.ru.ru_stime.tv_usec) / 1000;
    ro->max_rss_kb = o.ru.ru_maxrss;
    ro->zygote = o.zygote;
    ro->prespawned = o.prespawned;
    if (o.timed_out)
        ro->status = STATUS_TIMEOUT;
    else if (o.over_output)
        ro->status = STATUS_OUTPUT_LIMIT;
    else if (oom0 >= 0 && agent_oom_count() > oom0)
        ro->status = STATUS_MEMORY_LIMIT;
    else if (o.signal || o.exit_code != 0)
        ro->status = STATUS_RUNTIME_ERROR;
    else
        ro->status = STATUS_OK;
    return 0;
}

static void set_result(struct proto_result *res, const struct run_out *ro)
{
    res->status = ro->status;
    res->exit_code = ro->exit_code;
    res->signal = ro->signal;
    res->out_truncated = ro->out_trunc;
    res->err_truncated = ro->err_trunc;
    res->zygote = ro->zygote;
    res->prespawned = ro->prespawned;
}

static void run(const struct agent_conf *conf, const struct proto_job *job, int zygote,
                struct proto_result *res)
{
    struct run_out ro = {0};

    if (run_program(conf, job, zygote, job->live == 1, job->run_argv, job->stdin_data,
                    job->stdin_len, &res->out, &res->err, &ro, res->error,
                    sizeof(res->error)) != 0) {
        /* a session's process that fails is the session's end, not ours */
        res->status = job->session ? STATUS_SESSION_LOST : STATUS_INTERNAL_ERROR;
        return;
    }
    set_result(res, &ro);
    res->duration_ms = ro.duration_ms;
    res->cpu_ms = ro.cpu_ms;
    res->max_rss_kb = ro.max_rss_kb;
}

/* One case's entry in the result: its numbers, the first PROTO_CASE_KEEP
 * bytes of each stream while the cases' share of the RESULT frame lasts
 * (truncated flags say when that is not all), passed. */
static int case_entry(struct buf *cases, const struct run_out *ro, const struct buf *out,
                      const struct buf *err, int passed)
{
    struct buf e;
    size_t left = cases->len < PROTO_MAX_CASE_OUTPUT ? (PROTO_MAX_CASE_OUTPUT - cases->len) / 2 : 0;
    size_t keep = left < PROTO_CASE_KEEP ? left : PROTO_CASE_KEEP;
    size_t on = out->len < keep ? out->len : keep;
    size_t en = err->len < keep ? err->len : keep;
    int rc = 0;

    buf_init(&e, 2 * PROTO_CASE_KEEP + 512);
    rc |= proto_put_str(&e, TAG_STATUS, status_name(ro->status));
    rc |= proto_put_u64(&e, TAG_EXIT_CODE, (uint64_t)ro->exit_code);
    rc |= proto_put_u64(&e, TAG_SIGNAL, (uint64_t)ro->signal);
    rc |= proto_put_bytes(&e, TAG_STDOUT, out->data, on);
    rc |= proto_put_bytes(&e, TAG_STDERR, err->data, en);
    rc |= proto_put_u64(&e, TAG_STDOUT_TRUNC, (uint64_t)(ro->out_trunc || on < out->len));
    rc |= proto_put_u64(&e, TAG_STDERR_TRUNC, (uint64_t)(ro->err_trunc || en < err->len));
    rc |= proto_put_u64(&e, TAG_DURATION_MS, (uint64_t)ro->duration_ms);
    rc |= proto_put_u64(&e, TAG_CPU_MS, (uint64_t)ro->cpu_ms);
    rc |= proto_put_u64(&e, TAG_MAX_RSS_KB, (uint64_t)ro->max_rss_kb);
    rc |= proto_put_u64(&e, TAG_CASE_PASSED, (uint64_t)passed);
    rc |= proto_put_bytes(cases, TAG_CASE_RESULT, e.data, e.len);
    buf_release(&e);
    return rc;
}

/* The program's argv with a case's arguments after it. */
static char **case_argv(const struct proto_job *job, const struct proto_case *c, size_t *n)
{
    char **argv = NULL;
    int rc = 0;

    *n = 0;
    for (size_t i = 0; i < job->nrun && rc == 0; i++)
        rc = strlist_add(&argv, n, job->run_argv[i], strlen(job->run_argv[i]));
    for (size_t i = 0; i < c->nargs && rc == 0; i++)
        rc = strlist_add(&argv, n, c->args[i], strlen(c->args[i]));
    if (rc != 0) {
        strlist_free(argv, *n);
        return NULL;
    }
    return argv;
}

/* After a case: nothing it started lives on, and (when another case
 * follows) the dirs hold what they held after the compile step again.
 * Returns 0; 1 when what the case did cannot be undone (why in why); -1
 * with res->error when the agent failed (an internal_error, retried). */
static int case_done(const struct agent_conf *conf, const struct agent_snapshot *snap, int last,
                     struct proto_result *res, char *why, size_t whysz)
{
    int rc;

    if (agent_uid_kill_all(conf) != 0) {
        snprintf(res->error, sizeof(res->error), "agent: cases: processes of a case survive");
        return -1;
    }
    if (last || (rc = agent_snapshot_restore(conf, snap, why, whysz)) == 0)
        return 0;
    if (rc < 0)
        llmsb_fmt(res->error, sizeof(res->error),
                  "agent: cases: could not put back the state after the compile step: %s", why);
    leave_dirty = 1; /* either way, what is left is not a fresh sandbox */
    return rc;
}

/* The cases end after case n of the job's, which left what cannot be
 * undone: the job does not pass (the rest did not run), and is not ours to
 * retry; its container is not reused. */
static void cases_cut(const struct proto_job *job, size_t n, const char *why,
                      struct proto_result *res)
{
    char rest[48];

    if (res->status == STATUS_OK)
        res->status = STATUS_RUNTIME_ERROR;
    if (n + 1 == job->ncases)
        snprintf(rest, sizeof(rest), "case %zu was", n + 1);
    else
        snprintf(rest, sizeof(rest), "cases %zu-%zu were", n + 1, job->ncases);
    llmsb_fmt(res->error, sizeof(res->error),
              "cases: case %zu left what cannot be put back as it was after the compile step, so "
              "%s not run: %s",
              n, rest, why);
    leave_dirty = 1;
}

/* Each test case against the one compiled program, each with the job's
 * limits, each from the state right after the compile step (snapshot.c).
 * The job's status, exit code and output are those of the first case that
 * did not pass (else the last), its times the sums, its RSS the largest. */
static void run_cases(const struct agent_conf *conf, const struct proto_job *job, int zygote,
                      struct proto_result *res)
{
    struct agent_snapshot snap = {0};
    struct buf out, err;
    char why[200];
    int shown = 0, failed = 0, prespawned = 0, rc;

    if (job->ncases > 1) {
        /* the snapshot is taken with no process of the uid but the first
         * case's, started ahead and waiting (prespawn.c), when it is the
         * only one: no compile step ran */
        int spare = prespawn_held() && agent_uid_procs(conf) == 1;
        rc = !spare && agent_uid_kill_all(conf) != 0
                 ? -1
                 : agent_snapshot_take(conf, &snap, res->error, sizeof(res->error));
        if (rc != 0) {
            if (!res->error[0])
                snprintf(res->error, sizeof(res->error),
                         "agent: cases: processes of the compile step survive");
            res->status = rc > 0 ? STATUS_INVALID : STATUS_INTERNAL_ERROR;
            return;
        }
    }
    buf_init(&out, PROTO_MAX_OUTPUT);
    buf_init(&err, PROTO_MAX_OUTPUT);
    for (size_t i = 0; i < job->ncases; i++) {
        const struct proto_case *c = &job->cases[i];
        struct run_out ro = {0};
        size_t nargv;
        char **argv = case_argv(job, c, &nargv);
        int passed;

        buf_reset(&out);
        buf_reset(&err);
        if (!argv || run_program(conf, job, zygote, 0, argv, c->stdin_data, c->stdin_len, &out,
                                 &err, &ro, res->error, sizeof(res->error)) != 0) {
            if (!argv)
                snprintf(res->error, sizeof(res->error), "agent: case argv: out of memory");
            strlist_free(argv, nargv);
            failed = 1;
            break;
        }
        strlist_free(argv, nargv);
        /* a case killed by a signal never passes, whatever its expect_exit */
        passed = !ro.signal && compare_expected(status_info(ro.status)->ran, ro.exit_code,
                                                (int64_t)c->expect_exit, &job->compare, out.data,
                                                out.len, c->expect_stdout, c->expect_len);
        if (case_entry(&res->cases, &ro, &out, &err, passed) != 0) {
            snprintf(res->error, sizeof(res->error), "agent: case results over the frame cap");
            failed = 1;
            break;
        }
        prespawned |= ro.prespawned;
        res->duration_ms += ro.duration_ms;
        res->cpu_ms += ro.cpu_ms;
        if (ro.max_rss_kb > res->max_rss_kb)
            res->max_rss_kb = ro.max_rss_kb;
        rc = case_done(conf, &snap, i + 1 == job->ncases || (!passed && job->stop_on_failure), res,
                       why, sizeof(why));
        if (!shown && (!passed || i + 1 == job->ncases || rc > 0)) {
            set_result(res, &ro);
            buf_append(&res->out, out.data, out.len);
            buf_append(&res->err, err.data, err.len);
            shown = 1;
        }
        if (rc < 0) {
            failed = 1;
            break;
        }
        if (rc > 0) {
            cases_cut(job, i + 1, why, res);
            break;
        }
        if (!passed && job->stop_on_failure)
            break;
    }
    if (failed)
        res->status = STATUS_INTERNAL_ERROR;
    res->prespawned = prespawned; /* the first case's run, whichever case shows */
    agent_snapshot_release(&snap);
    buf_release(&out);
    buf_release(&err);
}

/* Milliseconds since t0_us (clock_mono_us), rounded: a step's phase. */
static int64_t since_ms(int64_t t0_us)
{
    return (clock_mono_us() - t0_us + 500) / 1000;
}

/* The library install, the worker's CONTINUE, the offline step: its phase
 * is the two steps' time, not the wait for the worker between them. */
static int timed_install(const struct agent_conf *conf, const struct proto_job *job,
                         struct proto_result *res)
{
    int64_t t0 = clock_mono_us();
    int rc = install(conf, job, job->install_argv, "install", res);

    res->phases.install_ms = since_ms(t0);
    if (rc != 0)
        return -1;
    if (job->install_pause && (!conf->install_pause || conf->install_pause() != 0)) {
        res->status = STATUS_INTERNAL_ERROR;
        snprintf(res->error, sizeof(res->error),
                 "agent: the worker did not continue after the install");
        return -1;
    }
    /* the offline part: package code that runs at install time runs
     * here, after the worker took the network away */
    t0 = clock_mono_us();
    rc = job->nbuild ? install(conf, job, job->build_argv, "offline install step", res) : 0;
    res->phases.install_ms += since_ms(t0);
    if (rc != 0)
        return -1;
    /* the install's own lines are not the program's compile output */
    buf_reset(&res->compile_output);
    return 0;
}

void agent_job_run(const struct agent_conf *conf, const struct proto_job *job,
                   struct proto_result *res)
{
    char msg[256];
    int64_t t0;
    int zygote, rc;

    /* before the job's files are there: a helper still warming up reads
     * nothing of this job's, one that does not fit ends here */
    warm_for_job(conf, job);
    zygote = job->session || zygote_in_use();
    if (job->session && zygote_session(conf, job, res->error, sizeof(res->error)) != 0) {
        res->status = STATUS_SESSION_LOST;
        res->session_ended = 1;
        return;
    }
    rc = agent_as_user_msg(conf, unpack_fn, job, msg, sizeof(msg));

    if (rc != 0) {
        res->status = rc == 1 ? STATUS_INVALID : STATUS_INTERNAL_ERROR;
        llmsb_fmt(res->error, sizeof(res->error), "files: %s", msg);
        return;
    }
    if (job->ninstall && timed_install(conf, job, res) != 0)
        return;
    if (job->ncompile) {
        t0 = clock_mono_us();
        rc = compile(conf, job, res);
        res->phases.compile_ms = since_ms(t0);
        if (rc != 0)
            return;
    }
    t0 = clock_mono_us();
    if (job->ncases)
        run_cases(conf, job, zygote, res);
    else
        run(conf, job, zygote, res);
    res->phases.run_ms = since_ms(t0);
    if (res->status != STATUS_INTERNAL_ERROR) {
        t0 = clock_mono_us();
        agent_collect_artifacts(conf, job, res); /* also after a timeout: what it made */
        res->phases.collect_ms = since_ms(t0);
    }
    if (job->session && (res->status == STATUS_SESSION_LOST || !zygote_session_alive())) {
        zygote_session_end();
        res->session_ended = 1;
        if (!res->error[0])
            snprintf(res->error, sizeof(res->error),
                     "this call ended the session (its interpreter is gone: %s); later calls "
                     "are session_lost",
                     res->status == STATUS_OK || res->status == STATUS_RUNTIME_ERROR
                         ? "it exited"
                         : "killed with the call");
    }
}
