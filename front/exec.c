/* exec.c - the HTTP front's executor: the host (front/routes.h) every
 * route set runs its jobs through.  In process, one runner (opened at the
 * first job) and o->slots jobs at a time, each on an engine handle of its
 * own kept for the next; through Redis (--queue), each job enqueued as
 * any producer's and its result waited for on a connection kept for the
 * next call.  Identical jobs of calls at once share one run (and, within
 * --dedup-window, a run that just ended).  Jobs started without a wait
 * (Judge0's wait=false) run on threads of their own in process, their
 * results kept for lookups (FRONT_DONE_KEPT at most), or go through
 * Redis, where the result outlives this server; a callback is sent once
 * the result is final. */
#include "front/front_int.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"
#include "exec/runner.h"
#include "job/job.h"
#include "job/result.h"
#include "queue/queue.h"
#include "scheduler/decide.h"

#define WAIT_STEP_MS 100 /* how often a waiting call looks at its cancel flag */

/* An engine handle (in process) or a Redis connection (--queue) kept
 * for the next job. */
struct handle {
    struct backend be;
    struct queue q;
    struct handle *next;
};

/* A run identical jobs of calls at once share (dedup). */
struct flight {
    unsigned char key[32];
    char id[FRONT_ID_MAX + 1]; /* the job that runs */
    int done, failed;          /* ended: with result; without (its caller left) */
    cJSON *result;
    int64_t done_ms;
    size_t bytes; /* result's, counted in flight_bytes */
    int refs;     /* its runner's and each waiter's; under mu */
    struct flight *next;
};

/* A place in the line for a slot: calls (and groups of calls) get the
 * slots in the order they came, so that no call waits much longer than
 * the others (a broadcast wakes waiters in no order). */
struct place {
    struct place *next;
    /* a call's own, signalled when it comes first (one waiter woken, not
     * every one); NULL: a group's, whose members wait on the executor's */
    pthread_cond_t *cv;
};

/* Compile once: calls of one program (every field equal but stdin) that
 * wait for a slot together become one job with cases, compiled once,
 * each call's stdin a case (in process, languages with a compile step). */
#define GROUP_MAX 64
struct member {
    const struct fields *f; /* the call's fields, id first */
    const char *id;
    cJSON *result; /* its share of the group's run, or NULL: it runs alone */
    int done;
};
struct group {
    unsigned char key[32];
    struct member *m[GROUP_MAX];
    int n;
    int taken;          /* a member holds a slot and runs it: no one joins */
    struct place place; /* the group's place in the line for a slot */
    struct group *next;
};

/* A job started without a wait, in process. */
struct started {
    char id[FRONT_ID_MAX + 1];
    enum front_state state;
    cJSON *result;
    size_t bytes; /* result's, counted in done_bytes */
    int64_t done_ms;
};

struct front_exec {
    const struct front_options *o;
    const struct config *cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a slot freed, a flight ended, a background job ended */
    int rn_open;
    struct runner rn;
    int slots_free;
    struct place *line, **line_tail; /* waiting for a slot, first come first */
    struct handle *idle;             /* handles kept */
    struct flight *flights;
    size_t flight_bytes;     /* their results', FRONT_DONE_BYTES at most once ended */
    struct group *groups;    /* open: waiting for a slot */
    struct started *started; /* FRONT_DONE_KEPT */
    size_t done_bytes;       /* their results' bytes, FRONT_DONE_BYTES at most */
    int background;          /* threads of started jobs and callbacks alive */
    size_t background_bytes; /* ... and the bytes of their jobs' fields */
    atomic_int stop;         /* front_exec_free: background waits end */
};

/* ---- handles ----------------------------------------------------------------------- */

/* The shared runner, opened at the first job in process. */
static int runner_ready(struct front_exec *x, struct llmsb_err *err)
{
    const struct runner_opts ro = {.kind = RUNNER_KIND_LOCAL, .slots = x->o->slots, .prestart = 1};
    int rc = 0;

    pthread_mutex_lock(&x->mu);
    if (!x->rn_open && (rc = runner_open(&x->rn, x->cfg, &ro, err)) == 0)
        x->rn_open = 1;
    pthread_mutex_unlock(&x->mu);
    return rc;
}

/* A kept handle, or a new one (an engine clone, or a Redis connection). */
static struct handle *handle_get(struct front_exec *x, struct llmsb_err *err)
{
    struct handle *h;

    pthread_mutex_lock(&x->mu);
    if ((h = x->idle))
        x->idle = h->next;
    pthread_mutex_unlock(&x->mu);
    if (h)
        return h;
    if (!(h = calloc(1, sizeof(*h)))) {
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (x->o->queue_mode
            ? queue_open(&h->q, x->o->redis_url, x->o->redis_prefix, NULL,
                         (int)(x->o->wait_s * 1000) + 5000, err) != 0
            : runner_ready(x, err) != 0 || backend_clone(&h->be, &x->rn.be, err) != 0) {
        free(h);
        return NULL;
    }
    return h;
}

static void handle_close(struct front_exec *x, struct handle *h)
{
    if (x->o->queue_mode)
        queue_close(&h->q);
    else
        backend_close(&h->be);
    free(h);
}

/* Keeps h for the next job; broken (its connection failed): closes it. */
static void handle_put(struct front_exec *x, struct handle *h, int broken)
{
    if (!h)
        return;
    if (broken) {
        handle_close(x, h);
        return;
    }
    pthread_mutex_lock(&x->mu);
    h->next = x->idle;
    x->idle = h;
    pthread_mutex_unlock(&x->mu);
}

/* p joins the end of the line, or leaves it (under mu). */
static void line_join(struct front_exec *x, struct place *p)
{
    p->next = NULL;
    *x->line_tail = p;
    x->line_tail = &p->next;
}

/* Wakes whoever is first in line (under mu): it may take a slot now. */
static void wake_first(struct front_exec *x)
{
    if (x->line && x->line->cv)
        pthread_cond_signal(x->line->cv);
    else if (x->line)
        pthread_cond_broadcast(&x->cv);
}

static void line_leave(struct front_exec *x, struct place *p)
{
    for (struct place **pp = &x->line; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            if (!*pp)
                x->line_tail = pp;
            break;
        }
    wake_first(x); /* the next in line may go */
}

/* Waits for one of the slots (in process), in the order calls came.
 * Returns 0, or -1 when *cancel or a stop came first. */
static int slot_take(struct front_exec *x, atomic_int *cancel)
{
    pthread_cond_t cv;
    struct place me = {NULL, &cv};
    int rc = 0;

    if (clock_cond_init(&cv) != 0)
        me.cv = NULL; /* woken with the groups, then */
    pthread_mutex_lock(&x->mu);
    line_join(x, &me);
    while (!(x->slots_free > 0 && x->line == &me) &&
           !(rc = runner_stop_asked(cancel) || atomic_load(&x->stop)))
        clock_cond_wait_ms(me.cv ? me.cv : &x->cv, &x->mu, WAIT_STEP_MS);
    if (!rc)
        x->slots_free--;
    line_leave(x, &me);
    pthread_mutex_unlock(&x->mu);
    if (me.cv)
        pthread_cond_destroy(&cv);
    return rc ? -1 : 0;
}

static void slot_give(struct front_exec *x)
{
    pthread_mutex_lock(&x->mu);
    x->slots_free++;
    wake_first(x);
    pthread_mutex_unlock(&x->mu);
}

/* ---- one job ------------------------------------------------------------------------ */

/* A result of status st with error why, for a job that did not run. */
static cJSON *result_without_run(struct front_exec *x, const struct job *j, const char *id,
                                 enum job_status st, const char *why)
{
    struct job_result r;
    cJSON *out;

    job_result_init(&r, j);
    if (!r.id[0])
        snprintf(r.id, sizeof(r.id), "%s", id);
    job_result_set_status(&r, st, "%s", why);
    if (x->rn_open)
        runner_stamp(&x->rn, &r);
    out = job_result_json(&r);
    job_result_release(&r);
    return out;
}

/* In process: j on the slot the caller holds (asked: when its call came).
 * NULL when stopped (*cancel, or the server). */
static cJSON *run_on_slot(struct front_exec *x, const struct job *j, atomic_int *cancel,
                          int64_t asked, struct llmsb_err *err)
{
    struct job_result r;
    struct handle *h;
    cJSON *out = NULL;

    if (!(h = handle_get(x, err)))
        return result_without_run(x, j, j->id, STATUS_INTERNAL_ERROR, err->msg);
    job_result_init(&r, j);
    switch (runner_run(&x->rn, &h->be, j, cancel, &r)) {
    case SCHED_OUT_ABORTED:
    case SCHED_OUT_CANCELLED:
        break;
    default:
        r.queued_at = asked; /* its queue wait: the wait for a slot */
        out = job_result_json(&r);
    }
    job_result_release(&r);
    handle_put(x, h, 0);
    return out;
}

/* In process: j on a slot.  NULL when stopped. */
static cJSON *run_here(struct front_exec *x, const struct job *j, atomic_int *cancel,
                       struct llmsb_err *err)
{
    int64_t asked = clock_wall_ms();
    cJSON *out;

    if (slot_take(x, cancel) != 0)
        return NULL;
    out = run_on_slot(x, j, cancel, asked, err);
    slot_give(x);
    return out;
}

/* Through Redis: f (with its "id") enqueued, then its result within
 * wait_s.  NULL when stopped (the job is then cancelled on its worker). */
static cJSON *run_queued(struct front_exec *x, const struct job *j, const struct fields *f,
                         atomic_int *cancel, struct llmsb_err *err)
{
    int64_t until = clock_mono_ms() + (int64_t)(x->o->wait_s * 1000);
    struct handle *h = handle_get(x, err);
    char entry[QUEUE_ENTRY_ID_MAX], status[32];
    int rc = 0, broken = 0;
    cJSON *out = NULL;

    if (!h)
        return result_without_run(x, j, j->id, STATUS_INTERNAL_ERROR, err->msg);
    /* Redis away (a restart, a failover): tried again within the wait */
    while ((rc = queue_enqueue(&h->q, f, entry, sizeof(entry), err)) != 0 &&
           queue_err_retryable(err) && clock_mono_ms() < until && !runner_stop_asked(cancel))
        queue_reconnect_wait(&h->q, 2000, NULL, err);
    if (rc != 0) {
        handle_put(x, h, 1);
        return result_without_run(x, j, j->id, STATUS_INTERNAL_ERROR, err->msg);
    }
    for (;;) {
        int64_t left = until - clock_mono_ms();
        if (runner_stop_asked(cancel) || atomic_load(&x->stop)) {
            if (queue_cancel(&h->q, j->id, x->cfg->result_ttl_s, err) != 0)
                log_warn("http: cannot cancel job \"%s\": %s", j->id, err->msg);
            break;
        }
        if (left <= 0) {
            char why[300];
            snprintf(why, sizeof(why),
                     "no result within %.0f s (--wait): the job \"%s\" is still queued or running",
                     x->o->wait_s, j->id);
            out = result_without_run(x, j, j->id, STATUS_INTERNAL_ERROR, why);
            break;
        }
        rc = queue_wait_done(&h->q, j->id, left < 1000 ? (double)left / 1000 : 1.0, status,
                             sizeof(status), err);
        if (rc < 0 && queue_err_retryable(err)) {
            broken = queue_reconnect_wait(&h->q, left < 2000 ? left : 2000, NULL, err) != 0;
            continue;
        }
        if (rc < 0) {
            out = result_without_run(x, j, j->id, STATUS_INTERNAL_ERROR, err->msg);
            broken = 1;
            break;
        }
        /* woken, or a second gone: a result written before the wait began
         * (a notification taken by another reader) is seen either way */
        out = batch_result_get(&h->q, j->id, NULL);
        if (result_json_final(out))
            break;
        cJSON_Delete(out);
        out = NULL;
    }
    handle_put(x, h, broken);
    return out;
}

/* ---- compile once: a program's calls that wait together run as cases ------------------ */

/* The fields a call may have to share a group's run: those a job with
 * cases takes from the job for every case (its stdin becomes the case's),
 * and meta (each member's own: kept out of the key, put back in its
 * result; Judge0's calls always carry one). */
static const char *const group_fields[] = {
    "id",   "lang",   "code",     "stdin", "timeout", "compile_timeout", "memory",
    "cpus", "pids",   "output",   "files", "args",    "compile_flags",   "link_flags",
    "env",  "policy", "security", "image", "needs",   "plots",           "meta",
    NULL};

/* 1 when job j (made of f) may share a group's run: compile_once on, in
 * process, a language with a compile step, no field but group_fields,
 * a stdin that a JSON string carries as it is (valid UTF-8, no NUL). */
static int groupable(const struct front_exec *x, const struct job *j, const struct fields *f)
{
    if (!x->o->compile_once || x->o->queue_mode || !j->lang || !j->lang->compile[0])
        return 0;
    for (size_t i = 0; i < f->n; i++) {
        size_t k = 0;
        while (group_fields[k] && strcmp(group_fields[k], f->v[i].name) != 0)
            k++;
        if (!group_fields[k])
            return 0;
    }
    if (j->stdin_len == 0)
        return 1;
    /* valid UTF-8 without NUL: what the cleaning keeps as it is */
    char *clean = json_utf8_clean(j->stdin_data, j->stdin_len);
    int same =
        clean && strlen(clean) == j->stdin_len && memcmp(clean, j->stdin_data, j->stdin_len) == 0;
    free(clean);
    return same;
}

/* SHA-256 of f's names and values, each with its length, but its id and
 * (grouping) its stdin and meta: what a group's calls may differ in. */
static void fields_key_but(const struct fields *f, int grouping, unsigned char key[32]);

/* The group's job: the first member's fields but stdin, each member's
 * stdin a case.  Returns 0, or -1 (no memory: each runs alone). */
static int group_job_fields(const struct group *g, const char *id, struct fields *out,
                            char **cases_text)
{
    const struct fields *f = g->m[0]->f;
    cJSON *cases = cJSON_CreateArray();

    *cases_text = NULL;
    for (int i = 0; cases && i < g->n; i++) {
        size_t len = 0;
        const char *in = fields_get(g->m[i]->f, "stdin", &len);
        cJSON *c = cJSON_CreateObject();
        if (!c || !cJSON_AddItemToArray(cases, c) ||
            !cJSON_AddStringToObject(c, "stdin", in ? in : "")) {
            cJSON_Delete(cases);
            return -1;
        }
    }
    if (!cases || !(*cases_text = cJSON_PrintUnformatted(cases))) {
        cJSON_Delete(cases);
        return -1;
    }
    cJSON_Delete(cases);
    if (fields_adds(out, "id", id) != 0 || fields_adds(out, "cases", *cases_text) != 0)
        return -1;
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i].name, "id") != 0 && strcmp(f->v[i].name, "stdin") != 0 &&
            strcmp(f->v[i].name, "meta") != 0 &&
            fields_add(out, f->v[i].name, f->v[i].value, f->v[i].len) != 0)
            return -1;
    return 0;
}

/* Case c of the group's result r as member id's own result: r's fields
 * with the case's verdict, output and numbers; NULL when the call must
 * run alone (the case's output was cut to what a case keeps). */
static cJSON *case_result(const cJSON *r, const cJSON *c, const char *id, const char *meta)
{
    static const char *const from_case[] = {
        "status",           "exit_code",   "signal", "stdout",     "stderr", "stdout_truncated",
        "stderr_truncated", "duration_ms", "cpu_ms", "max_rss_kb", NULL};
    static const char *const drop[] = {"cases",  "cases_passed", "cases_total",
                                       "passed", "error",        NULL};
    cJSON *out;

    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "stdout_truncated")) ||
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "stderr_truncated")) ||
        !(out = result_json_copy(r, id, meta, NULL)))
        return NULL;
    for (int k = 0; drop[k]; k++)
        cJSON_DeleteItemFromObjectCaseSensitive(out, drop[k]);
    for (int k = 0; from_case[k]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, from_case[k]);
        cJSON *dup = v ? cJSON_Duplicate(v, 1) : NULL;
        if (!dup) {
            cJSON_Delete(out);
            return NULL;
        }
        if (cJSON_GetObjectItemCaseSensitive(out, from_case[k]))
            cJSON_ReplaceItemInObjectCaseSensitive(out, from_case[k], dup);
        else
            cJSON_AddItemToObject(out, from_case[k], dup);
    }
    return out;
}

/* What the group's run r gives member i: its case's share; the whole
 * result when no case ran for a reason every member shares (the compile
 * failed, the policy blocked the code); NULL: it runs alone. */
static cJSON *member_result(const cJSON *r, int i, const struct member *m)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(r, "cases");
    const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "status"));
    const cJSON *c = cJSON_GetArrayItem(cases, i);

    const char *meta = fields_get(m->f, "meta", NULL);

    if (c)
        return case_result(r, c, m->id, meta);
    if (st && cJSON_GetArraySize(cases) == 0 &&
        (strcmp(st, "compile_error") == 0 || strcmp(st, "blocked") == 0))
        return result_json_copy(r, m->id, meta, NULL);
    return NULL;
}

/* Runs group g on the slot the caller holds, and gives each member its
 * share (done; NULL for one that must run alone). */
static void group_run(struct front_exec *x, struct group *g, atomic_int *cancel, int64_t asked)
{
    struct fields f;
    struct llmsb_err err = {0};
    char id[FRONT_ID_MAX + 1], *cases_text = NULL;
    cJSON *r = NULL;
    struct job j;

    job_init(&j, x->cfg);
    fields_init(&f, JOB_MAX_FIELDS + 2);
    if (g->n == 1) {
        if (job_from_fields(&j, x->cfg, g->m[0]->f, g->m[0]->id, &err) == 0)
            g->m[0]->result = run_on_slot(x, &j, cancel, asked, &err);
        else
            g->m[0]->result = result_without_run(x, &j, g->m[0]->id, STATUS_INVALID, err.msg);
    } else if (snprintf(id, sizeof(id), "%s-cases", g->m[0]->id) > 0 &&
               group_job_fields(g, id, &f, &cases_text) == 0 &&
               job_from_fields(&j, x->cfg, &f, id, &err) == 0) {
        r = run_on_slot(x, &j, cancel, asked, &err);
        for (int i = 0; r && i < g->n; i++)
            g->m[i]->result = member_result(r, i, g->m[i]);
        if (r)
            log_debug("http: %d calls of one program ran as cases of job \"%s\"", g->n, id);
    } else {
        /* each member runs alone, as it would have */
        log_warn("http: %d calls of one program could not run as cases: %s", g->n,
                 err.msg[0] ? err.msg : "out of memory");
    }
    cJSON_Delete(r);
    free(cases_text);
    fields_release(&f);
    job_release(&j);
}

/* Takes g out of the open groups (under mu): no later call joins it. */
static void group_unlink(struct front_exec *x, struct group *g)
{
    for (struct group **p = &x->groups; *p; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            break;
        }
}

/* Call f (its id, job j made of it) run in a group: its result, or NULL
 * when it runs alone after all (*alone) or was stopped (!*alone). */
static cJSON *run_grouped(struct front_exec *x, const struct fields *f, const char *id,
                          atomic_int *cancel, int *alone)
{
    struct member me = {f, id, NULL, 0};
    struct group *g;
    unsigned char key[32];
    int64_t asked = clock_wall_ms();

    *alone = 0;
    fields_key_but(f, 1, key);
    pthread_mutex_lock(&x->mu);
    for (g = x->groups; g; g = g->next)
        if (!g->taken && g->n < GROUP_MAX && memcmp(g->key, key, 32) == 0)
            break;
    if (!g && (g = calloc(1, sizeof(*g)))) {
        memcpy(g->key, key, 32);
        g->next = x->groups;
        x->groups = g;
        line_join(x, &g->place);
    }
    if (!g) {
        pthread_mutex_unlock(&x->mu);
        *alone = 1;
        return NULL;
    }
    g->m[g->n++] = &me;
    /* the first of its members to find a slot free, the group first in line, runs it */
    while (!me.done && !(x->slots_free > 0 && x->line == &g->place && !g->taken)) {
        if (!g->taken && (runner_stop_asked(cancel) || atomic_load(&x->stop))) {
            /* stopped before its group ran: out of it */
            for (int i = 0; i < g->n; i++)
                if (g->m[i] == &me)
                    g->m[i] = g->m[--g->n];
            if (g->n == 0) {
                line_leave(x, &g->place);
                group_unlink(x, g);
                free(g);
            }
            pthread_mutex_unlock(&x->mu);
            return NULL;
        }
        clock_cond_wait_ms(&x->cv, &x->mu, WAIT_STEP_MS);
    }
    if (!me.done) { /* this call runs it */
        x->slots_free--;
        g->taken = 1;
        line_leave(x, &g->place);
        group_unlink(x, g);
        pthread_mutex_unlock(&x->mu);
        group_run(x, g, cancel, asked);
        pthread_mutex_lock(&x->mu);
        x->slots_free++;
        for (int i = 0; i < g->n; i++)
            g->m[i]->done = 1;
        free(g);
        wake_first(x);
        pthread_cond_broadcast(&x->cv); /* its members */
    }
    pthread_mutex_unlock(&x->mu);
    *alone = !me.result;
    return me.result;
}

/* Job f (its id: id) run and waited for: its result, or NULL when
 * stopped.  Fields the job's parser refuses give an invalid result.
 * may_group: a call waiting for its answer (compile once may take it);
 * 0 for a job started without a wait, which runs one job of its own. */
static cJSON *run_fields(struct front_exec *x, const struct fields *f, const char *id,
                         atomic_int *cancel, int may_group)
{
    struct llmsb_err err = {0};
    struct fields withid;
    struct job j;
    cJSON *out = NULL;
    int alone = 1;

    job_init(&j, x->cfg);
    fields_init(&withid, JOB_MAX_FIELDS + 1);
    if (fields_adds(&withid, "id", id) != 0)
        llmsb_err_set(&err, LLMSB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i].name, "id") != 0 &&
            fields_add(&withid, f->v[i].name, f->v[i].value, f->v[i].len) != 0)
            llmsb_err_set(&err, LLMSB_ERR_INVALID, "the job has more than %d fields",
                          JOB_MAX_FIELDS);
    if (err.code || job_from_fields(&j, x->cfg, &withid, id, &err) != 0)
        out = result_without_run(x, &j, id, STATUS_INVALID, err.msg);
    else if (x->o->queue_mode)
        out = run_queued(x, &j, &withid, cancel, &err);
    else if (may_group && groupable(x, &j, &withid) &&
             ((out = run_grouped(x, &withid, id, cancel, &alone)) || !alone))
        ; /* its group's share, or stopped */
    else
        out = run_here(x, &j, cancel, &err);
    job_release(&j);
    fields_release(&withid);
    return out;
}

/* ---- dedup: identical jobs share a run ------------------------------------------------ */

static void fields_key_but(const struct fields *f, int grouping, unsigned char key[32])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    unsigned len = 32;

    memset(key, 0, 32);
    if (!c)
        return;
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    for (size_t i = 0; i < f->n; i++) {
        uint64_t n[2] = {f->v[i].name_len, f->v[i].len};
        if (strcmp(f->v[i].name, "id") == 0 ||
            (grouping && (strcmp(f->v[i].name, "stdin") == 0 || strcmp(f->v[i].name, "meta") == 0)))
            continue;
        EVP_DigestUpdate(c, n, sizeof(n));
        EVP_DigestUpdate(c, f->v[i].name, f->v[i].name_len);
        EVP_DigestUpdate(c, f->v[i].value, f->v[i].len);
    }
    EVP_DigestFinal_ex(c, key, &len);
    EVP_MD_CTX_free(c);
}

static size_t json_bytes(const cJSON *j);

/* fl freed, out of the table already (under mu). */
static void flight_free(struct front_exec *x, struct flight *fl)
{
    x->flight_bytes -= fl->bytes;
    cJSON_Delete(fl->result);
    free(fl);
}

/* Takes fl out of the table, if it is there (under mu): no later call
 * finds it. */
static void flight_unlink(struct front_exec *x, struct flight *fl)
{
    for (struct flight **p = &x->flights; *p; p = &(*p)->next)
        if (*p == fl) {
            *p = fl->next;
            fl->next = NULL;
            break;
        }
}

static void flight_put(struct front_exec *x, struct flight *fl)
{
    /* under mu */
    if (--fl->refs > 0)
        return;
    flight_unlink(x, fl);
    flight_free(x, fl);
}

/* Drops the flights that ended longer than the window ago, then the
 * oldest ended ones while the results kept hold more than
 * FRONT_DONE_BYTES (under mu). */
static void flights_expire(struct front_exec *x, int64_t now)
{
    struct flight **p = &x->flights;

    while (*p) {
        struct flight *fl = *p;
        if (fl->done && fl->refs == 1 && now - fl->done_ms >= x->o->dedup_window_ms) {
            *p = fl->next;
            flight_free(x, fl);
        } else {
            p = &fl->next;
        }
    }
    while (x->flight_bytes > FRONT_DONE_BYTES) {
        struct flight **oldest = NULL, *fl;
        for (p = &x->flights; *p; p = &(*p)->next)
            if ((*p)->done && (*p)->refs == 1 && (!oldest || (*p)->done_ms <= (*oldest)->done_ms))
                oldest = p;
        if (!oldest)
            break;
        fl = *oldest;
        *oldest = fl->next;
        flight_free(x, fl);
    }
}

/* Job f as a fresh id's run, or as a share of an identical one's: its
 * result, or NULL when stopped. */
static cJSON *run_shared(struct front_exec *x, const struct fields *f, const char *id,
                         atomic_int *cancel)
{
    unsigned char key[32];
    struct flight *fl;
    cJSON *out;

    fields_key_but(f, 0, key);
    for (;;) {
        pthread_mutex_lock(&x->mu);
        flights_expire(x, clock_mono_ms());
        for (fl = x->flights; fl; fl = fl->next)
            if (!fl->failed && memcmp(fl->key, key, 32) == 0)
                break;
        if (!fl)
            break; /* mu held: this call runs it */
        fl->refs++;
        while (!fl->done && !fl->failed && !runner_stop_asked(cancel))
            clock_cond_wait_ms(&x->cv, &x->mu, WAIT_STEP_MS);
        /* its own meta: equal to the run's, as every field */
        out =
            fl->done ? result_json_copy(fl->result, id, fields_get(f, "meta", NULL), fl->id) : NULL;
        int failed = fl->failed && !fl->done;
        flight_put(x, fl);
        pthread_mutex_unlock(&x->mu);
        if (!failed || runner_stop_asked(cancel))
            return out; /* its result, or stopped */
        /* its runner's client left: run it here */
    }
    if (!(fl = calloc(1, sizeof(*fl)))) {
        pthread_mutex_unlock(&x->mu);
        return run_fields(x, f, id, cancel, 1);
    }
    memcpy(fl->key, key, 32);
    snprintf(fl->id, sizeof(fl->id), "%s", id);
    fl->refs = 1;
    fl->next = x->flights;
    x->flights = fl;
    pthread_mutex_unlock(&x->mu);

    out = run_fields(x, f, id, cancel, 1);
    pthread_mutex_lock(&x->mu);
    if (out) {
        fl->result = cJSON_Duplicate(out, 1);
        fl->done = fl->result != NULL;
        fl->bytes = json_bytes(fl->result);
        x->flight_bytes += fl->bytes;
    }
    fl->failed = !fl->done;
    fl->done_ms = clock_mono_ms();
    pthread_cond_broadcast(&x->cv);
    if (fl->failed || x->o->dedup_window_ms <= 0) {
        /* out of the table: later calls run again */
        flight_unlink(x, fl);
        if (--fl->refs == 0)
            flight_free(x, fl);
    } else {
        flights_expire(x, fl->done_ms);
    }
    pthread_mutex_unlock(&x->mu);
    return out;
}

/* ---- the host's calls ------------------------------------------------------------------ */

/* A new job id: "http-" and 16 random hex digits. */
static int new_id(char *out, size_t outsz, struct llmsb_err *err)
{
    char rnd[17];

    if (random_hex(rnd, sizeof(rnd), 8, "http: a job id", err) != 0)
        return err->code;
    snprintf(out, outsz, "http-%s", rnd);
    return 0;
}

/* Keeps job id's result for lookups (below). */
static void keep_result(struct front_exec *x, const char *id, const cJSON *result);

static int host_run(void *ud, const struct fields *jobs, size_t n, cJSON **results,
                    struct llmsb_err *err)
{
    struct front_call *c = ud;
    struct front_exec *x = c->x;

    for (size_t i = 0; i < n; i++)
        results[i] = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *given = fields_get(&jobs[i], "id", NULL);
        char id[FRONT_ID_MAX + 1];
        if (given)
            snprintf(id, sizeof(id), "%s", given);
        else if (new_id(id, sizeof(id), err) != 0)
            goto fail;
        results[i] = given ? run_fields(x, &jobs[i], id, c->cancel, 1)
                           : run_shared(x, &jobs[i], id, c->cancel);
        if (!results[i]) {
            llmsb_err_set(err, LLMSB_ERR_INTERRUPTED, "interrupted");
            goto fail;
        }
        if (given && !x->o->queue_mode) /* through Redis it is there */
            keep_result(x, id, results[i]);
    }
    return 0;
fail:
    for (size_t i = 0; i < n; i++) {
        cJSON_Delete(results[i]);
        results[i] = NULL;
    }
    return err->code;
}

/* What a started job's thread or waiter needs. */
struct bg {
    struct front_exec *x;
    struct fields f; /* in process: the job's fields (copies) */
    size_t bytes;    /* f's, counted in background_bytes */
    char id[FRONT_ID_MAX + 1];
    char *callback; /* NULL: none */
    front_render_fn render;
    struct shared_ud *rud;
};

/* The route's render data, shared by a call's jobs. */
struct shared_ud {
    void *ud;
    void (*free)(void *);
    int refs; /* under the executor's mu */
};

static void shared_put(struct front_exec *x, struct shared_ud *s)
{
    int last;

    if (!s)
        return;
    pthread_mutex_lock(&x->mu);
    last = --s->refs == 0;
    pthread_mutex_unlock(&x->mu);
    if (last) {
        if (s->free)
            s->free(s->ud);
        free(s);
    }
}

/* Entry s emptied, its result freed (under mu). */
static void started_clear(struct front_exec *x, struct started *s)
{
    cJSON_Delete(s->result);
    x->done_bytes -= s->bytes;
    memset(s, 0, sizeof(*s));
}

static struct started *started_find(struct front_exec *x, const char *id)
{
    for (size_t i = 0; i < FRONT_DONE_KEPT; i++)
        if (x->started[i].state != FRONT_UNKNOWN && strcmp(x->started[i].id, id) == 0)
            return &x->started[i];
    return NULL;
}

/* A free entry for a started job: an empty one, else the result kept
 * longest; NULL when every entry is a job not yet done (under mu). */
static struct started *started_slot(struct front_exec *x)
{
    struct started *oldest = NULL;

    for (size_t i = 0; i < FRONT_DONE_KEPT; i++) {
        struct started *s = &x->started[i];
        if (s->state == FRONT_UNKNOWN)
            return s;
        if (s->state == FRONT_DONE && (!oldest || s->done_ms < oldest->done_ms))
            oldest = s;
    }
    if (oldest)
        started_clear(x, oldest);
    return oldest;
}

/* About the bytes a result holds: its strings and a little per item. */
static size_t json_bytes(const cJSON *j)
{
    size_t n = 0;

    for (; j; j = j->next) {
        n += 32 + (j->string ? strlen(j->string) : 0) +
             (j->valuestring ? strlen(j->valuestring) : 0);
        n += json_bytes(j->child);
    }
    return n;
}

/* Entry s done with result (consumed), then the results kept longest
 * dropped while they hold more than FRONT_DONE_BYTES (under mu). */
static void started_done(struct front_exec *x, struct started *s, cJSON *result)
{
    s->state = FRONT_DONE;
    s->result = result;
    s->bytes = json_bytes(result);
    s->done_ms = clock_mono_ms();
    x->done_bytes += s->bytes;
    while (x->done_bytes > FRONT_DONE_BYTES) {
        struct started *oldest = NULL;
        for (size_t i = 0; i < FRONT_DONE_KEPT; i++) {
            struct started *o = &x->started[i];
            if (o != s && o->state == FRONT_DONE && (!oldest || o->done_ms < oldest->done_ms))
                oldest = o;
        }
        if (!oldest)
            break;
        started_clear(x, oldest);
    }
}

/* In process: the result of job id, run with an id its route gave (it will
 * be asked about: Judge0's GET after wait=true), kept for lookups as a
 * started job's; nothing when every entry is a job not yet done. */
static void keep_result(struct front_exec *x, const char *id, const cJSON *result)
{
    struct started *s;
    cJSON *copy = cJSON_Duplicate(result, 1);

    if (!copy)
        return;
    pthread_mutex_lock(&x->mu);
    if ((s = started_find(x, id)) || (s = started_slot(x))) {
        started_clear(x, s);
        snprintf(s->id, sizeof(s->id), "%s", id);
        started_done(x, s, copy);
        copy = NULL;
    }
    pthread_mutex_unlock(&x->mu);
    cJSON_Delete(copy);
}

static void callback_send(struct front_exec *x, struct bg *b, const cJSON *result)
{
    cJSON *body;
    char *text;

    if (!b->callback || !result)
        return;
    body = b->render ? b->render(result, b->rud ? b->rud->ud : NULL) : cJSON_Duplicate(result, 1);
    text = body ? cJSON_PrintUnformatted(body) : NULL;
    cJSON_Delete(body);
    if (text && front_callback_put(b->callback, x->o->callback_allow, text) == 0)
        log_info("http: job \"%s\": callback sent", b->id);
    free(text);
}

/* The bytes f's names and values hold (0 for NULL). */
static size_t fields_bytes(const struct fields *f)
{
    size_t n = 0;

    for (size_t i = 0; f && i < f->n; i++)
        n += f->v[i].name_len + f->v[i].len;
    return n;
}

static void bg_free(struct front_exec *x, struct bg *b)
{
    size_t bytes = b->bytes;

    fields_release(&b->f);
    free(b->callback);
    shared_put(x, b->rud);
    free(b);
    pthread_mutex_lock(&x->mu);
    x->background--;
    x->background_bytes -= bytes;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

/* In process: a started job's run, its result kept, then its callback. */
static void *bg_run(void *arg)
{
    struct bg *b = arg;
    struct front_exec *x = b->x;
    struct started *s;
    cJSON *out;

    pthread_mutex_lock(&x->mu);
    if ((s = started_find(x, b->id)))
        s->state = FRONT_RUNNING;
    pthread_mutex_unlock(&x->mu);
    out = run_fields(x, &b->f, b->id, &x->stop, 0);
    pthread_mutex_lock(&x->mu);
    if ((s = started_find(x, b->id))) {
        cJSON *copy = out ? cJSON_Duplicate(out, 1) : NULL;
        if (copy)
            started_done(x, s, copy);
        else
            started_clear(x, s); /* stopped: the server is going */
    }
    pthread_mutex_unlock(&x->mu);
    callback_send(x, b, out);
    cJSON_Delete(out);
    bg_free(x, b);
    return NULL;
}

/* Through Redis: waits for a started job's result, then its callback. */
static void *bg_wait(void *arg)
{
    struct bg *b = arg;
    struct front_exec *x = b->x;
    struct llmsb_err err = {0};
    struct handle *h = handle_get(x, &err);
    int64_t until = clock_mono_ms() + (int64_t)(x->o->wait_s * 1000);
    cJSON *out = NULL;
    char status[32];

    while (h && !atomic_load(&x->stop) && clock_mono_ms() < until) {
        int rc = queue_wait_done(&h->q, b->id, 1.0, status, sizeof(status), &err);
        if (rc < 0 && queue_reconnect_wait(&h->q, 2000, NULL, &err) != 0)
            continue;
        out = batch_result_get(&h->q, b->id, NULL);
        if (result_json_final(out))
            break;
        cJSON_Delete(out);
        out = NULL;
    }
    handle_put(x, h, 0);
    if (!out)
        log_warn("http: job \"%s\": no result within %.0f s: its callback is not sent", b->id,
                 x->o->wait_s);
    callback_send(x, b, out);
    cJSON_Delete(out);
    bg_free(x, b);
    return NULL;
}

static int bg_spawn(struct front_exec *x, struct bg *b, void *(*fn)(void *), struct llmsb_err *err)
{
    pthread_t th;
    pthread_attr_t a;
    int rc;

    /* its place in background and background_bytes: host_start's */
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&th, &a, fn, b);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        bg_free(x, b);
        return llmsb_err_set(err, LLMSB_ERR_SYS, "http: cannot start a thread: %s", strerror(rc));
    }
    return 0;
}

static struct bg *bg_new(struct front_exec *x, const struct fields *f, const char *id,
                         const char *callback, front_render_fn render, struct shared_ud *rud)
{
    struct bg *b = calloc(1, sizeof(*b));

    if (!b)
        return NULL;
    b->x = x;
    fields_init(&b->f, JOB_MAX_FIELDS + 1);
    snprintf(b->id, sizeof(b->id), "%s", id);
    b->bytes = fields_bytes(f);
    for (size_t i = 0; f && i < f->n; i++)
        if (fields_add_copy(&b->f, f->v[i].name, f->v[i].name_len, f->v[i].value, f->v[i].len)) {
            fields_release(&b->f);
            free(b);
            return NULL;
        }
    if (callback && !(b->callback = strdup(callback))) {
        fields_release(&b->f);
        free(b);
        return NULL;
    }
    b->render = render;
    b->rud = rud;
    if (rud) {
        pthread_mutex_lock(&x->mu);
        rud->refs++;
        pthread_mutex_unlock(&x->mu);
    }
    return b;
}

/* Through Redis: job f (with its id) sent, its pending mark first. */
static int send_one(struct front_exec *x, const struct fields *f, const char *id,
                    struct llmsb_err *err)
{
    struct handle *h = handle_get(x, err);
    char entry[QUEUE_ENTRY_ID_MAX];
    struct job j;
    int rc;

    if (!h)
        return err->code;
    job_init(&j, x->cfg);
    /* refused here as the worker would: no job is sent that cannot run */
    if ((rc = job_from_fields(&j, x->cfg, f, id, err)) == 0 &&
        (rc = queue_pending_mark(&h->q, id, x->cfg->result_ttl_s, err)) == 0)
        rc = queue_enqueue(&h->q, f, entry, sizeof(entry), err);
    job_release(&j);
    handle_put(x, h, rc != 0 && rc != LLMSB_ERR_INVALID);
    return rc;
}

static int host_start(void *ud, const struct fields *jobs, size_t n, const char *callback,
                      front_render_fn render, void *rud, void (*rud_free)(void *),
                      struct llmsb_err *err)
{
    struct front_call *c = ud;
    struct front_exec *x = c->x;
    struct shared_ud *s = NULL;
    char why[300];
    size_t bytes = 0, bytes_used = 0;
    int rc = 0, threads = callback || !x->o->queue_mode ? (int)n : 0, used = 0;

    if (callback && !front_callback_allowed(callback, x->o->callback_allow, why, sizeof(why))) {
        if (rud_free)
            rud_free(rud);
        return llmsb_err_set(err, LLMSB_ERR_INVALID, "callback_url \"%.200s\": %s", callback, why);
    }
    if (callback && !(s = calloc(1, sizeof(*s)))) {
        if (rud_free)
            rud_free(rud);
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
    }
    if (s) {
        s->ud = rud;
        s->free = rud_free;
        s->refs = 1;
    } else if (rud_free) {
        rud_free(rud);
    }
    /* each job is a thread (in process, or waiting for its callback),
     * holding its fields in process: their places taken at once, so
     * calls at the same time cannot all pass the check */
    for (size_t i = 0; !x->o->queue_mode && i < n; i++)
        bytes += fields_bytes(&jobs[i]);
    pthread_mutex_lock(&x->mu);
    if (threads && x->background + threads > FRONT_BACKGROUND_MAX)
        rc = llmsb_err_set(err, LLMSB_ERR_LIMIT,
                           "%d jobs started without a wait or with callbacks are not finished "
                           "yet (at most %d): try again later",
                           x->background, FRONT_BACKGROUND_MAX);
    else if (x->background_bytes + bytes > FRONT_BACKGROUND_BYTES)
        rc = llmsb_err_set(err, LLMSB_ERR_LIMIT,
                           "the jobs started without a wait and not finished hold %zu MiB (at "
                           "most %zu MiB): try again later",
                           x->background_bytes >> 20, FRONT_BACKGROUND_BYTES >> 20);
    if (rc == 0) {
        x->background += threads;
        x->background_bytes += bytes;
    }
    pthread_mutex_unlock(&x->mu);
    if (rc != 0) {
        shared_put(x, s);
        return rc;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *id = fields_get(&jobs[i], "id", NULL);
        struct bg *b;
        if (!id) {
            rc = llmsb_err_set(err, LLMSB_ERR_INVALID, "a job started without a wait needs its id");
            break;
        }
        if (x->o->queue_mode) {
            if ((rc = send_one(x, &jobs[i], id, err)) != 0)
                break;
            if (!callback)
                continue;
            if (!(b = bg_new(x, NULL, id, callback, render, s))) {
                rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
            } else {
                used++;
                rc = bg_spawn(x, b, bg_wait, err);
            }
            continue;
        }
        pthread_mutex_lock(&x->mu);
        struct started *st = started_slot(x);
        if (st) {
            snprintf(st->id, sizeof(st->id), "%s", id);
            st->state = FRONT_QUEUED;
        }
        pthread_mutex_unlock(&x->mu);
        if (!st) {
            rc = llmsb_err_set(err, LLMSB_ERR_LIMIT,
                               "%d started jobs are not finished yet: try again later",
                               FRONT_DONE_KEPT);
            break;
        }
        if (!(b = bg_new(x, &jobs[i], id, callback, render, s))) {
            rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        } else {
            used++;
            bytes_used += b->bytes;
            rc = bg_spawn(x, b, bg_run, err); /* its place freed by bg_free */
        }
    }
    /* the places of the jobs not started given back */
    pthread_mutex_lock(&x->mu);
    x->background -= threads - used;
    x->background_bytes -= bytes - bytes_used;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    shared_put(x, s);
    return rc;
}

static enum front_state host_lookup(void *ud, const char *id, cJSON **result)
{
    struct front_call *c = ud;
    struct front_exec *x = c->x;
    enum front_state st = FRONT_UNKNOWN;
    struct llmsb_err err = {0};
    char status[32];
    struct handle *h;
    int rc;

    *result = NULL;
    if (!x->o->queue_mode) {
        pthread_mutex_lock(&x->mu);
        struct started *s = started_find(x, id);
        if (s) {
            st = s->state;
            if (st == FRONT_DONE && !(*result = cJSON_Duplicate(s->result, 1)))
                st = FRONT_RUNNING; /* ENOMEM: asked again later */
        }
        pthread_mutex_unlock(&x->mu);
        return st;
    }
    if (!(h = handle_get(x, &err)))
        return FRONT_UNKNOWN;
    rc = queue_result_status(&h->q, id, status, sizeof(status), &err);
    if (rc == 1 && strcmp(status, "running") == 0) {
        st = FRONT_RUNNING;
    } else if (rc == 1) {
        *result = batch_result_get(&h->q, id, NULL);
        st = *result ? FRONT_DONE : FRONT_RUNNING;
    } else if (rc == 0 && queue_pending(&h->q, id, &err) == 1) {
        st = FRONT_QUEUED;
    }
    handle_put(x, h, rc < 0);
    return st;
}

static int host_random_hex(void *ud, char *buf, size_t bufsz, size_t n, struct llmsb_err *err)
{
    (void)ud;
    return random_hex(buf, bufsz, n, "http: a token", err);
}

void front_exec_host(struct front_call *c, struct front_host *h)
{
    *h = (struct front_host){.cfg = c->x->cfg,
                             .run = host_run,
                             .start = host_start,
                             .lookup = host_lookup,
                             .random_hex = host_random_hex,
                             .queue = c->x->o->queue_mode,
                             .max_jobs = FRONT_BATCH_MAX,
                             .ud = c};
}

struct front_exec *front_exec_new(const struct front_options *o, struct llmsb_err *err)
{
    struct front_exec *x = calloc(1, sizeof(*x));

    if (!x || !(x->started = calloc(FRONT_DONE_KEPT, sizeof(*x->started))) ||
        clock_cond_init(&x->cv) != 0) {
        if (x)
            free(x->started);
        free(x);
        llmsb_err_set(err, LLMSB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    x->o = o;
    x->cfg = o->cfg;
    x->slots_free = o->slots;
    x->line_tail = &x->line;
    pthread_mutex_init(&x->mu, NULL);
    atomic_init(&x->stop, SCHED_GO);
    return x;
}

void front_exec_free(struct front_exec *x)
{
    struct handle *h;

    if (!x)
        return;
    atomic_store(&x->stop, SCHED_CANCEL_ABORT);
    pthread_mutex_lock(&x->mu);
    while (x->background > 0)
        clock_cond_wait_ms(&x->cv, &x->mu, WAIT_STEP_MS);
    pthread_mutex_unlock(&x->mu);
    while ((h = x->idle)) {
        x->idle = h->next;
        handle_close(x, h);
    }
    while (x->flights) {
        struct flight *fl = x->flights;
        x->flights = fl->next;
        cJSON_Delete(fl->result);
        free(fl);
    }
    for (size_t i = 0; i < FRONT_DONE_KEPT; i++)
        cJSON_Delete(x->started[i].result);
    if (x->rn_open)
        runner_close(&x->rn, "the HTTP front that held it stopped");
    free(x->started);
    pthread_cond_destroy(&x->cv);
    pthread_mutex_destroy(&x->mu);
    free(x);
}
