/* exec.c - executing one job (see exec.h). */
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "security/security.h"
#include "exec/scan.h"
#include "exec/runner.h"
#include "exec/session.h"

#define IMAGE_CACHE_MS 60000
#define SHM_BYTES ((int64_t)64 << 20)

/* ---- the container ------------------------------------------------------------- */

/* The tasks a job's warm javac holds in its container's pids cgroup (its
 * threads), where the agent may start one (proto.h): added to the
 * container's pids limit, so that a program of the job starts as many
 * threads with the server there as without it. */
static int64_t helper_pids(const struct job *j)
{
    return job_compile_server(j) && j->limits.memory_mb >= PROTO_JAVAC_MIN_MEMORY_MB &&
                   j->limits.pids >= PROTO_JAVAC_MIN_PIDS
               ? PROTO_JAVAC_PIDS
               : 0;
}

int64_t exec_job_nproc(const struct backend *be, const struct job *j)
{
    return (int64_t)runtime_profile_nproc(&be->runtime, (uint64_t)j->limits.pids,
                                          (uint64_t)j->limits.nproc);
}

void exec_spec_for_job(struct container_spec *spec, const struct backend *be,
                       const struct config *cfg, const struct job *j, const char *image)
{
    memset(spec, 0, sizeof(*spec));
    spec->image = image;
    spec->runtime = cfg->runtime[0] ? cfg->runtime : NULL;
    spec->engine_seccomp = strcmp(cfg->seccomp, "engine") == 0;
    spec->memory_bytes = j->limits.memory_mb << 20;
    spec->cpus = j->limits.cpus;
    /* the job's processes and its helpers' threads; on a runtime whose
     * pids cgroup holds more than the job (gVisor's), a backstop above them */
    spec->pids = runtime_profile_host_pids(&be->runtime, j->limits.pids + helper_pids(j),
                                           j->limits.memory_mb);
    spec->nofile = j->limits.nofile;
    spec->nproc = exec_job_nproc(be, j);
    spec->work_tmpfs_bytes = j->limits.work_mb << 20;
    spec->tmp_tmpfs_bytes = j->limits.tmp_mb << 20;
    spec->shm_bytes = SHM_BYTES;
    spec->network = j->network;
    spec->network_name = j->network ? BACKEND_EGRESS_NETWORK : NULL;
    spec->agent_uid = cfg->sandbox_uid;
}

int64_t exec_backstop_ms(const struct config *cfg, const struct job *j)
{
    /* each case has the whole run limit, and a second for the clean-up after it */
    int64_t run =
        j->ncases ? (int64_t)j->ncases * (j->limits.timeout_ms + 1000) : j->limits.timeout_ms;
    return scheduler_backstop_ms(run, j->lang->compile[0] ? j->limits.compile_timeout_ms : 0,
                                 j->nlibraries ? cfg->libraries_timeout_ms : 0,
                                 cfg->backstop_grace_ms);
}

void exec_images_init(struct exec_images *c)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
}

void exec_images_release(struct exec_images *c)
{
    pthread_mutex_destroy(&c->mu);
}

/* Whether image exists and, when it is a custom image (the llmsb.custom
 * label of images build --dockerfile), its llmsb.lang label into lang.
 * 1 present, 0 absent, negative on error (like ops->image_exists). */
static int image_look(const struct backend *be, const char *image, char lang[32],
                      struct llmsb_err *err)
{
    struct buf text;
    cJSON *c;
    const cJSON *labels, *v;
    int rc;

    lang[0] = '\0';
    if (!be->ops->image_config) /* the engine cannot say: no language check */
        return be->ops->image_exists((struct backend *)be, image, err);
    buf_init(&text, (size_t)4 << 20);
    if ((rc = be->ops->image_config((struct backend *)be, image, &text, err)) == 1) {
        c = cJSON_ParseWithLength(text.data, text.len);
        labels = cJSON_GetObjectItemCaseSensitive(c, "Labels");
        v = cJSON_GetObjectItemCaseSensitive(labels, "llmsb.lang");
        if (cJSON_GetObjectItemCaseSensitive(labels, "llmsb.custom") && cJSON_IsString(v))
            snprintf(lang, 32, "%s", v->valuestring);
        cJSON_Delete(c);
    }
    buf_release(&text);
    return rc;
}

/* 1 present, 0 absent, negative on error (like ops->image_exists); c
 * answers for a minute what be said. */
static int image_present(struct exec_images *c, const struct backend *be, const char *image,
                         char lang[32], struct llmsb_err *err)
{
    int64_t now = clock_mono_ms();
    int rc, slot = 0;

    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < EXEC_IMAGE_CACHE; i++) {
        if (strcmp(c->seen[i].name, image) == 0 && c->seen[i].until_ms > now) {
            memcpy(lang, c->seen[i].lang, 32);
            pthread_mutex_unlock(&c->mu);
            return 1;
        }
        if (c->seen[i].until_ms < c->seen[slot].until_ms)
            slot = i;
    }
    pthread_mutex_unlock(&c->mu);
    if ((rc = image_look(be, image, lang, err)) == 1) {
        pthread_mutex_lock(&c->mu);
        snprintf(c->seen[slot].name, sizeof(c->seen[0].name), "%s", image);
        memcpy(c->seen[slot].lang, lang, 32);
        c->seen[slot].until_ms = now + IMAGE_CACHE_MS;
        pthread_mutex_unlock(&c->mu);
    }
    return rc;
}

/* ---- one job ---------------------------------------------------------------------- */

/* Scans before anything runs. Returns 0 to go on, 1 when r is final
 * (blocked, or invalid when the job's own policy does not compile). */
static int check_security(const struct config *cfg, const struct job *j, struct job_result *r,
                          struct llmsb_err *err)
{
    struct sec_result *sr = calloc(1, sizeof(*sr));
    int rc = 0;

    if (!sr)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "security: out of memory");
    if (job_scan(cfg, j, sr, err) != 0) {
        /* a job's bad inline policy is its own fault; scanning limits hit
         * by hostile code block it rather than let it through */
        job_result_set_status(r, err->code == LLMSB_ERR_LIMIT ? STATUS_BLOCKED : STATUS_INVALID,
                              "%s", err->msg);
        rc = 1;
    } else if (sr->blocked) {
        job_result_set_status(r, STATUS_BLOCKED,
                              "the security policy refused this code (see "
                              "violations); nothing ran");
        rc = 1;
    }
    if (sr->n)
        r->violations = sec_result_json(sr);
    free(sr);
    return rc;
}

/* What the job needs before a container: the scan, the agent's JOB, its
 * image, its container spec.  Returns 0 to run, 1 when r is final already,
 * or a negative code (infrastructure). */
struct prepared {
    struct proto_job pj;
    struct container_spec spec;
    char image[256];
    int install; /* the job installs libraries: its container is not reused */
};

static int prepare(struct runner *rn, const struct backend *be, const struct job *j,
                   struct prepared *p, struct job_result *r, struct llmsb_err *err)
{
    const struct config *cfg = rn->cfg;
    char image_lang[32];
    int rc;

    proto_job_init(&p->pj);
    if (j->image)
        snprintf(p->image, sizeof(p->image), "%s", j->image);
    else
        config_image(cfg, j->lang, p->image, sizeof(p->image));
    snprintf(r->image, sizeof(r->image), "%s", p->image);
    snprintf(r->backend, sizeof(r->backend), "%s", be->ops->name);
    if (check_security(cfg, j, r, err) != 0)
        return r->r.status != STATUS_NONE ? 1 : err->code;
    if (j->nlibraries && !cfg->libraries_enabled) {
        job_result_set_status(r, STATUS_INVALID,
                              "libraries: installs are turned off on this "
                              "worker (libraries.enabled: false)");
        return 1;
    }
    /* libraries baked into the configured image (pool.preinstall) need no
     * install; a job that names another image installs its own */
    p->install = j->nlibraries &&
                 (j->image || !config_preinstalled(cfg, j->lang, j->libraries, j->nlibraries));
    if (job_to_proto(j, &p->pj, err) != 0 || (p->install && job_add_install(j, cfg, &p->pj, err))) {
        /* code with nothing to start (Java without main) fails as a
         * compiler's error would (judged alike), before any container */
        if (err->code == LLMSB_ERR_NOTFOUND) {
            job_result_set_status(r, STATUS_COMPILE_ERROR, NULL);
            buf_printf(&r->r.compile_output, "%s\n", err->msg);
            job_result_check(r, j);
        } else {
            job_result_set_status(r, STATUS_INVALID, "%s", err->msg);
        }
        return 1;
    }
    p->pj.nproc = (uint64_t)exec_job_nproc(be, j);
    if ((rc = image_present(&rn->images, be, p->image, image_lang, err)) <= 0)
        return rc < 0 ? rc
                      : llmsb_err_set(err, LLMSB_ERR_NOTFOUND,
                                      "image \"%s\" is missing on this worker's engine "
                                      "(llm-sandbox images build %s)",
                                      p->image, j->lang->name);
    if (image_lang[0] && strcmp(image_lang, j->lang->name) != 0) {
        job_result_set_status(r, STATUS_INVALID,
                              "image: \"%s\" was built for language %s (its llmsb.lang "
                              "label), and this job's language is %s",
                              p->image, image_lang, j->lang->name);
        return 1;
    }
    exec_spec_for_job(&p->spec, be, cfg, j, p->image);
    if (p->install && !j->network && strcmp(cfg->libraries_network, "none") != 0) {
        /* the install step gets a network; the agent pauses after it and the
         * container is taken off the network before the program runs */
        p->spec.network = 1;
        p->spec.network_name = strcmp(cfg->libraries_network, "egress") == 0
                                   ? BACKEND_EGRESS_NETWORK
                                   : cfg->libraries_network;
        p->pj.install_pause = 1;
    }
    if (p->spec.network && strcmp(p->spec.network_name, BACKEND_EGRESS_NETWORK) == 0)
        return be->ops->egress_ensure((struct backend *)be, err);
    return 0;
}

/* After the run: what the attempt came to. */
static enum sched_outcome conclude(struct pool *pool, struct pool_lease *lease, int rc,
                                   const atomic_int *cancel, const struct prepared *p,
                                   const struct job *j, struct job_result *r, struct llmsb_err *err)
{
    int flag = cancel ? atomic_load(cancel) : SCHED_GO;
    char shown[200];

    if (rc == LLMSB_ERR_INTERRUPTED) {
        pool_put(pool, lease, 0);
        if (flag == SCHED_CANCEL_USER) {
            job_result_set_status(r, STATUS_CANCELLED, "cancelled while running");
            return SCHED_OUT_CANCELLED;
        }
        return SCHED_OUT_ABORTED;
    }
    if (rc == LLMSB_ERR_INVALID) { /* the JOB frame itself was refused: the job's fault */
        pool_put(pool, lease, 1);
        job_result_set_status(r, STATUS_INVALID, "%s", err->msg);
        return SCHED_OUT_FINAL;
    }
    if (rc != 0) {
        sandbox_agent_log(lease->sb, shown, sizeof(shown));
        if (shown[0])
            log_warn("job=%s: agent log: %s", j->id ? j->id : "-", shown);
        pool_put(pool, lease, 0);
        return SCHED_OUT_FAILED;
    }
    /* a container that installed libraries goes with its job */
    pool_put(pool, lease, !lease->sb->healthy ? POOL_PUT_CUT : p->install ? POOL_PUT_RETIRE : POOL_PUT_REUSE);
    job_result_check(r, j);
    if (job_result_artifacts(r) != 0)
        log_warn("job=%s: artifacts could not be encoded", j->id ? j->id : "-");
    return SCHED_OUT_FINAL;
}

/* An attempt's host-side phases start afresh (a retry's are its own). */
static void phases_reset(struct job_result *r)
{
    r->ph.prepare_ms = r->ph.acquire_ms = r->ph.agent_ms = r->ph.finish_ms = -1;
    r->ph.acquire = RESULT_ACQUIRE_NONE;
}

/* The agent's turn, with its wall-clock stamps and its phase; a live
 * job's chunks go to j's sink meanwhile. */
static int timed_run(struct sandbox *sb, const struct job *j, const struct proto_job *pj,
                     int64_t backstop_ms, struct job_result *r, struct llmsb_err *err)
{
    int64_t t0 = clock_mono_ms();
    int rc;

    r->started_at = clock_wall_ms();
    sb->sink = j->sink;
    rc = sandbox_run(sb, pj, backstop_ms, &r->r, err);
    sb->sink = NULL;
    r->finished_at = clock_wall_ms();
    r->ph.agent_ms = clock_mono_ms() - t0;
    return rc;
}

/* A session's call: in the session's own sandbox (session.c), never
 * retried elsewhere (a new sandbox would silently start afresh): a sandbox
 * that fails during the call ends the session.  The call runs, and is
 * scanned, in the session's language, whatever it named (a call that
 * names another is invalid, session_take). */
static enum sched_outcome session_call(struct runner *rn, const struct backend *be,
                                       const struct job *j, atomic_int *cancel,
                                       struct job_result *r, struct llmsb_err *err)
{
    struct session_table *t = &rn->sessions;
    struct job call = *j; /* a view: owns nothing but policy and security below */
    struct prepared p;
    struct sandbox *sb;
    char owner[160], why[600], *policy = NULL, *security = NULL;
    enum sched_outcome out = SCHED_OUT_FINAL;
    int64_t t0 = clock_mono_ms(), took;
    int rc;

    phases_reset(r);
    rc = session_take(t, rn->cfg, j, &call.lang, &policy, &security, &sb, r, owner, sizeof(owner),
                      err);
    took = clock_mono_ms() - t0;
    proto_job_init(&p.pj);
    if (rc == SESSION_FINAL)
        goto out;
    if (rc == SESSION_ELSEWHERE) {
        snprintf(r->worker, sizeof(r->worker), "%s", owner);
        out = SCHED_OUT_ELSEWHERE;
        goto out;
    }
    if (rc < 0) {
        out = SCHED_OUT_FAILED; /* no session was made: the call may be tried again */
        goto out;
    }
    if (policy) { /* a later call: scanned as the session's calls all are */
        call.policy = policy;
        call.security = security;
    }
    t0 = clock_mono_ms();
    rc = prepare(rn, be, &call, &p, r, err);
    r->ph.prepare_ms = clock_mono_ms() - t0;
    if (rc != 0) {
        session_put(t, j, 0, NULL); /* nothing ran: the session goes on */
        out = rc > 0 ? SCHED_OUT_FINAL : SCHED_OUT_FAILED;
        goto out;
    }
    /* the session's own sandbox, or (its first call) one made for it */
    r->ph.acquire = sb ? RESULT_ACQUIRE_SESSION : RESULT_ACQUIRE_COLD;
    t0 = clock_mono_ms();
    if (!sb && session_start(t, j, &p.spec, &sb, err) != 0) {
        out = SCHED_OUT_FAILED; /* no session was made: the call may be tried again */
        goto out;
    }
    r->ph.acquire_ms = took + clock_mono_ms() - t0;
    sb->cancel = cancel;
    rc = timed_run(sb, j, &p.pj, exec_backstop_ms(rn->cfg, &call), r, err);
    t0 = clock_mono_ms();
    sb->cancel = NULL;
    if (rc == LLMSB_ERR_INTERRUPTED) {
        int user = cancel && atomic_load(cancel) == SCHED_CANCEL_USER;
        session_put(t, j, 1,
                    user ? "a call was cancelled while it ran"
                         : "the worker stopped during a call");
        if (!user) {
            out = SCHED_OUT_ABORTED;
            goto out;
        }
        job_result_set_status(r, STATUS_CANCELLED, "cancelled while running; the session ended");
        out = SCHED_OUT_CANCELLED;
        goto out;
    }
    if (rc != 0) {
        snprintf(why, sizeof(why), "its sandbox failed during a call (%s)", err->msg);
        session_put(t, j, 1, why);
        job_result_set_status(r, STATUS_SESSION_LOST, "session \"%s\": %s", j->session, why);
        goto out;
    }
    /* the agent's own word when the session was already gone; else which
     * call ended it and how */
    if (r->r.status == STATUS_SESSION_LOST)
        snprintf(why, sizeof(why), "%s", r->r.error);
    else
        snprintf(why, sizeof(why), "call \"%s\" ended it (%s)", j->id ? j->id : "-",
                 status_name(r->r.status));
    session_put(t, j, r->r.session_ended || !sb->healthy, why);
    job_result_check(r, &call);
    if (job_result_artifacts(r) != 0)
        log_warn("job=%s: artifacts could not be encoded", j->id ? j->id : "-");
    r->ph.finish_ms = clock_mono_ms() - t0;
out:
    proto_job_release(&p.pj);
    free(policy);
    free(security);
    return out;
}

enum sched_outcome exec_job(struct runner *rn, const struct backend *be, const struct job *j,
                            atomic_int *cancel, struct job_result *r, struct llmsb_err *err)
{
    struct pool *pool = &rn->pool;
    struct prepared p;
    struct pool_lease lease;
    enum sched_outcome out = SCHED_OUT_FAILED;
    int64_t t0;
    int rc;

    if (j->session_close) {
        snprintf(r->backend, sizeof(r->backend), "%s", be->ops->name);
        r->r.not_run = 1; /* ok, and no program ran: exit_code null */
        return session_close(&rn->sessions, j, r, r->worker, sizeof(r->worker)) == SESSION_ELSEWHERE
                   ? SCHED_OUT_ELSEWHERE
                   : SCHED_OUT_FINAL;
    }
    if (j->session) {
        out = session_call(rn, be, j, cancel, r, err);
        job_result_phases_end(r);
        return out;
    }
    phases_reset(r);
    t0 = clock_mono_ms();
    rc = prepare(rn, be, j, &p, r, err);
    r->ph.prepare_ms = clock_mono_ms() - t0;
    if (rc != 0) {
        out = rc > 0 ? SCHED_OUT_FINAL : SCHED_OUT_FAILED;
        goto out;
    }
    t0 = clock_mono_ms();
    if (pool_acquire(pool, &p.spec, &lease, err) != 0)
        goto out;
    lease.sb->cancel = cancel;
    /* part of handing a new container over: its zygote starts now */
    if (pool->cfg.prestart && sandbox_prestart(lease.sb, &p.pj, err) != 0) {
        pool_put(pool, &lease, 0); /* as a failed acquire: nothing of the job ran */
        goto out;
    }
    r->ph.acquire_ms = clock_mono_ms() - t0;
    r->ph.acquire = lease.warm        ? RESULT_ACQUIRE_WARM
                    : lease.temporary ? RESULT_ACQUIRE_TEMPORARY
                                      : RESULT_ACQUIRE_COLD;
    rc = timed_run(lease.sb, j, &p.pj, exec_backstop_ms(rn->cfg, j), r, err);
    t0 = clock_mono_ms();
    out = conclude(pool, &lease, rc, cancel, &p, j, r, err);
    r->ph.finish_ms = clock_mono_ms() - t0;
out:
    job_result_phases_end(r);
    proto_job_release(&p.pj);
    return out;
}
