/* prespawn.c - a job's run-step process started ahead of the job.
 *
 * Node cannot fork after start-up, so there is no zygote for it; what
 * costs a JavaScript job its time is node's own start.  A job whose
 * language names a start-up variable (TAG_PRESPAWN "NAME=words", the
 * language's row) gets its run step started before it arrives: after a
 * cleanup that left the sandbox clean, or at the worker's PRESTART, the
 * agent starts the last job's run step exactly as a step starts (same argv,
 * env, limits, cwd, uid, session, pipes: agent_child_spawn) with one
 * difference: words are added to variable NAME, which loads a hook of the
 * image (node-wait.js) that says "R" on PRESPAWN_READY_FD and blocks on
 * PRESPAWN_GO_FD before the main module is read.  A job whose first run
 * is that same spec gets the process: "g" on the go pipe, and the hook
 * puts NAME back as the job set it and returns; from there the agent
 * supervises it as any run step (wall clock from the go).  Any other job
 * has it killed and reaped before its files are unpacked: the process
 * holds the previous job's env, so it never lives beside another job.
 *
 * A process that died, did not say "R" within PRESPAWN_READY_MS, or could
 * not be told to go is ended and the run starts plainly; after three such
 * failures in a row the sandbox starts none any more. */
#include "prespawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PRESPAWN_READY_MS 5000
#define PRESPAWN_MAX_FAILURES 3

/* What a process is started with; equal specs start equal processes. */
struct pspec {
    char **argv; /* the first run's: run argv and the first case's args */
    size_t nargv;
    char **env; /* the job's, as it runs plainly */
    size_t nenv;
    char *var; /* TAG_PRESPAWN: "NAME=words"; NULL: no spec */
    uint64_t fsize_limit, nofile, nproc;
};

static struct pspec wanted;  /* what the last job asked for */
static struct pspec running; /* what the process was started with */
static pid_t pid = -1;       /* the process started ahead, -1: none */
static int gone;             /* it was reaped (prespawn_reaped) */
static int said_ready;       /* it wrote "R" */
static int64_t started_ms;
static int failures;
/* the agent's ends: stdin, stdout, stderr, ready, go */
static int fds[5] = {-1, -1, -1, -1, -1};

static void spec_release(struct pspec *s)
{
    strlist_free(s->argv, s->nargv);
    strlist_free(s->env, s->nenv);
    free(s->var);
    memset(s, 0, sizeof(*s));
}

/* 1 when the job's run step may be started ahead: a run from a clean
 * sandbox (no compile or install step, whose kills by uid would end it;
 * no session; no zygote).  With cases, the first case's run: the later
 * ones start plainly, from the snapshot. */
static int job_fits(const struct proto_job *job)
{
    return job->prespawn && job->nrun && !job->session && !job->zygote && !job->ncompile &&
           !job->ninstall;
}

/* A copy of src in dst (empty); 0, -1 when out of memory (dst empty). */
static int spec_copy(struct pspec *dst, const struct pspec *src)
{
    int rc;

    memset(dst, 0, sizeof(*dst));
    rc = strlist_add_all(&dst->argv, &dst->nargv, src->argv, src->nargv);
    if (rc == 0)
        rc = strlist_add_all(&dst->env, &dst->nenv, src->env, src->nenv);
    if (rc == 0 && !(dst->var = strdup(src->var)))
        rc = -1;
    dst->fsize_limit = src->fsize_limit;
    dst->nofile = src->nofile;
    dst->nproc = src->nproc;
    if (rc != 0)
        spec_release(dst);
    return rc;
}

/* Fills s (empty) from what job asks for; 0, -1 when out of memory. */
static int spec_from_job(const struct proto_job *job, struct pspec *s)
{
    struct pspec view = {job->run_argv, job->nrun,        job->env,    job->nenv,
                         job->prespawn, job->fsize_limit, job->nofile, job->nproc};
    int rc;

    memset(s, 0, sizeof(*s));
    if (!job_fits(job))
        return 0;
    rc = spec_copy(s, &view);
    if (rc == 0 && job->ncases &&
        (rc = strlist_add_all(&s->argv, &s->nargv, job->cases[0].args, job->cases[0].nargs)) != 0)
        spec_release(s);
    return rc;
}

static int strlist_equal(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

static int spec_equal(const struct pspec *a, const struct pspec *b)
{
    return a->var && b->var && strcmp(a->var, b->var) == 0 &&
           strlist_equal(a->argv, a->nargv, b->argv, b->nargv) &&
           strlist_equal(a->env, a->nenv, b->env, b->nenv) && a->fsize_limit == b->fsize_limit &&
           a->nofile == b->nofile && a->nproc == b->nproc;
}

static void close_fds(void)
{
    for (int i = 0; i < 5; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

/* Forgets the process (handed over, or ended and reaped). */
static void forget(void)
{
    close_fds();
    spec_release(&running);
    pid = -1;
    gone = said_ready = 0;
}

/* Kills and reaps the process started ahead, if any. */
static void end(void)
{
    if (pid > 0 && !gone) {
        kill(-pid, SIGKILL); /* its session: anything it started */
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    forget();
}

static void failed(const char *why)
{
    fprintf(stderr, "llmsb-agent: the run step started ahead %s: started plainly\n", why);
    end();
    if (++failures == PRESPAWN_MAX_FAILURES)
        fprintf(stderr,
                "llmsb-agent: %d failures in a row: no run step is started ahead any "
                "more\n",
                failures);
}

/* The job's env with words added to the variable spec->var names (its own
 * value first, or words alone where the job has none).  Returns a new
 * NULL-terminated list (*n entries), NULL when out of memory. */
static char **wait_env(const struct pspec *s, size_t *n)
{
    const char *eq = strchr(s->var, '='), *words = eq + 1;
    size_t nlen = (size_t)(eq - s->var) + 1; /* "NAME=" */
    char **env = NULL;
    int rc = 0, found = 0;

    *n = 0;
    for (size_t i = 0; i < s->nenv && rc == 0; i++) {
        if (strncmp(s->env[i], s->var, nlen) != 0) {
            rc = strlist_add(&env, n, s->env[i], strlen(s->env[i]));
            continue;
        }
        char *kv = NULL;
        found = 1;
        rc = asprintf(&kv, "%s %s", s->env[i], words) < 0 ? -1 : 0;
        if (rc == 0)
            rc = strlist_add(&env, n, kv, strlen(kv));
        free(kv);
    }
    if (rc == 0 && !found)
        rc = strlist_add(&env, n, s->var, strlen(s->var));
    if (rc != 0) {
        strlist_free(env, *n);
        return NULL;
    }
    return env;
}

/* Starts the process for wanted; 0, or -1 with nothing left running. */
static int start(const struct agent_conf *conf)
{
    struct proto_job limits;
    int p[5][2], child[5], rc = -1;
    size_t nenv = 0;
    char **env = NULL;

    for (int i = 0; i < 5; i++)
        p[i][0] = p[i][1] = -1;
    if (spec_copy(&running, &wanted) != 0 || !(env = wait_env(&running, &nenv)))
        goto out;
    for (int i = 0; i < 5; i++)
        if (pipe2(p[i], O_CLOEXEC) != 0)
            goto out;
    /* the child reads stdin and go, writes stdout, stderr and ready */
    for (int i = 0; i < 5; i++) {
        int r = i == 0 || i == 4 ? 0 : 1;
        child[i] = p[i][r];
        fds[i] = p[i][1 - r];
        p[i][1 - r] = -1; /* the agent's end stays open */
    }
    proto_job_init(&limits);
    limits.fsize_limit = running.fsize_limit;
    limits.nofile = running.nofile;
    limits.nproc = running.nproc;
    started_ms = clock_mono_ms();
    if ((pid = agent_child_spawn(conf, &limits, running.argv, env, child)) < 0) {
        fprintf(stderr, "llmsb-agent: start the run step ahead: fork: %s\n", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    for (int i = 0; i < 5; i++) {
        if (p[i][0] >= 0)
            close(p[i][0]);
        if (p[i][1] >= 0)
            close(p[i][1]);
    }
    strlist_free(env, nenv);
    if (rc != 0)
        forget();
    return rc;
}

/* Waits (until PRESPAWN_READY_MS after its start) for the process to say
 * it waits for its go; 0 once it did, -1 (why set) when it cannot. */
static int await_ready(const char **why)
{
    char c = 0;
    ssize_t n;

    if (said_ready)
        return 0;
    for (;;) {
        int64_t left = started_ms + PRESPAWN_READY_MS - clock_mono_ms();
        struct pollfd pf = {fds[3], POLLIN, 0};
        int rc = poll(&pf, 1, left > 0 ? (int)left : 0);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0) {
            *why = "did not say it waits in time";
            return -1;
        }
        break;
    }
    while ((n = read(fds[3], &c, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1 || c != 'R') {
        *why = "ended before it waited"; /* EOF: dead, or the hook never ran */
        return -1;
    }
    said_ready = 1;
    return 0;
}

/* Its state: 0 alive, -1 (reaped now) when it died. */
static int alive(void)
{
    if (gone)
        return -1;
    if (waitpid(pid, NULL, WNOHANG) == pid) {
        gone = 1;
        return -1;
    }
    return 0;
}

void prespawn_for_job(const struct agent_conf *conf, const struct proto_job *job)
{
    (void)conf;
    spec_release(&wanted);
    if (spec_from_job(job, &wanted) != 0)
        fprintf(stderr, "llmsb-agent: prespawn: out of memory\n");
    if (pid > 0 && !spec_equal(&running, &wanted))
        end();
}

pid_t prespawn_go(char *const *argv, int *in_w, int *out_r, int *err_r)
{
    const char *why = NULL;
    size_t nargv = 0;
    pid_t p = pid;

    while (argv[nargv])
        nargv++;
    if (pid <= 0)
        return -1;
    if (!strlist_equal(argv, nargv, running.argv, running.nargv)) {
        end(); /* not this run's: a case whose args differ */
        return -1;
    }
    if (await_ready(&why) != 0 || (alive() != 0 && (why = "died before its go")) ||
        (write(fds[4], "g", 1) != 1 && (why = "could not be told to go"))) {
        failed(why);
        return -1;
    }
    failures = 0;
    *in_w = fds[0];
    *out_r = fds[1];
    *err_r = fds[2];
    fds[0] = fds[1] = fds[2] = -1;
    forget(); /* the job's process now: the caller's to supervise */
    return p;
}

int prespawn_held(void)
{
    return pid > 0 && !gone;
}

void prespawn_idle(const struct agent_conf *conf)
{
    if (wanted.var && pid <= 0 && failures < PRESPAWN_MAX_FAILURES)
        start(conf);
}

void prespawn_prestart(const struct agent_conf *conf, const struct proto_job *job)
{
    const char *why = NULL;

    spec_release(&wanted);
    end();
    if (spec_from_job(job, &wanted) != 0 || !wanted.var || failures >= PRESPAWN_MAX_FAILURES ||
        start(conf) != 0)
        return;
    if (await_ready(&why) != 0)
        failed(why);
}

void prespawn_reaped(pid_t p)
{
    if (pid > 0 && p == pid) {
        gone = 1;
        end(); /* nothing left to wait for: closes its pipes */
    }
}

void prespawn_stop(void)
{
    end();
}
