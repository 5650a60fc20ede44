/* batch.c - a batch's plan (batch.h): what it knows of each job, the
 * checks of the whole file before anything runs (every bad job said with
 * file:line, duplicate ids, copies naming a job), and the dedup groups:
 * identical programs run once, their copies riding on the run, within
 * the caps of a copies field.  Running it is local.c's or queue.c's; its
 * outcomes summary.c's. */
#include "batch/batch_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/status.h"
#include "job/dedup.h"
#include "job/job.h"
#include "scheduler/decide.h"

/* A line's room: an error (512 bytes) after a file name (256) and more; a
 * line cut at it ends in "...". */
#define SAY_MAX 2048

static void vsay(const struct batch *b, enum batch_say kind, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void vsay(const struct batch *b, enum batch_say kind, const char *fmt, va_list ap)
{
    char line[SAY_MAX];

    if (!b->o.say)
        return;
    if (vsnprintf(line, sizeof(line), fmt, ap) >= (int)sizeof(line))
        memcpy(line + sizeof(line) - 4, "...", 4);
    b->o.say(b->o.ud, kind, line);
}

void batch__say(const struct batch *b, enum batch_say kind, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(b, kind, fmt, ap);
    va_end(ap);
}

const char *batch__name(const struct batch *b, enum batch_name n)
{
    return b->o.names && b->o.names[n] ? b->o.names[n] : "";
}

const char *batch__str(const cJSON *o, const char *k, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

int batch__stop_asked(const struct batch *b)
{
    return llmsb_interrupted || (b->o.cancel && atomic_load(b->o.cancel) != SCHED_GO);
}

void batch__progress(const struct batch *b, const struct batch_progress *p)
{
    if (b->o.progress)
        b->o.progress(b->o.ud, p);
}

int batch_init(struct batch *b, const struct config *cfg, const struct jobfile *jf,
               const struct batch_opts *o, struct llmsb_err *err)
{
    size_t n = jf->n ? jf->n : 1;

    memset(b, 0, sizeof(*b));
    b->cfg = cfg;
    b->jf = jf;
    b->o = *o;
    b->n = jf->n;
    b->dedup = o->dedup;
    b->dedup_off = batch__name(b, BATCH_NAME_NO_DEDUP);
    b->jobs = calloc(n, sizeof(*b->jobs));
    b->results = calloc(n, sizeof(*b->results));
    if (!b->jobs || !b->results)
        return llmsb_err_set(err, LLMSB_ERR_NOMEM, "batch: out of memory for %zu jobs", jf->n);
    for (size_t i = 0; i < jf->n; i++)
        b->jobs[i].rep = i, b->jobs[i].next = BATCH_NO_COPY;
    b->runs = jf->n;
    return 0;
}

void batch_release(struct batch *b)
{
    for (size_t i = 0; b->jobs && i < b->n; i++) {
        free(b->jobs[i].id);
        free(b->jobs[i].meta);
    }
    for (size_t i = 0; b->results && i < b->n; i++)
        cJSON_Delete(b->results[i]);
    free(b->jobs);
    free(b->results);
    b->jobs = NULL;
    b->results = NULL;
}

const char *batch_job_lang(const struct batch *b, size_t i)
{
    cJSON *const *jobs = b->jf->jobs;
    const char *sess = batch__str(jobs[i], "session", NULL);

    if (batch__str(jobs[i], "lang", NULL) || !sess)
        return batch__str(jobs[i], "lang", "?");
    for (size_t k = 0; k < i; k++)
        if (strcmp(batch__str(jobs[k], "session", ""), sess) == 0 &&
            batch__str(jobs[k], "lang", NULL))
            return batch__str(jobs[k], "lang", "?");
    return "?";
}

/* ---- the checks before anything runs ------------------------------------------- */

void batch__problem(const struct batch *b, size_t *count, const char *fmt, ...)
{
    va_list ap;

    if (*count < BATCH_SHOW_MAX) {
        va_start(ap, fmt);
        vsay(b, BATCH_SAY_LINE, fmt, ap);
        va_end(ap);
    }
    (*count)++;
}

/* An id the file names: a job's own (sorted by id, then line, to find
 * duplicates) or one its hand-written copies field names. */
struct id_at {
    const char *id;
    size_t line, job;
};

static int by_id(const void *a, const void *b)
{
    const struct id_at *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->line < y->line ? -1 : 1);
}

/* bsearch over the ids: key is an id. */
static int id_is(const void *key, const void *elt)
{
    return strcmp(key, ((const struct id_at *)elt)->id);
}

/* The ids the file's own copies fields name (by hand: a batch's dedup
 * sets none in the file): none may be a job's id too. */
struct hand_copies {
    struct id_at *v;
    size_t n;
};

static void hand_copy_add(struct hand_copies *hc, const char *id, size_t line, size_t job)
{
    void *nv = realloc(hc->v, (hc->n + 1) * sizeof(*hc->v));
    char *d = strdup(id);

    if (nv)
        hc->v = nv;
    if (!nv || !d) {
        free(d);
        return;
    }
    hc->v[hc->n++] = (struct id_at){d, line, job};
}

/* Job i through the worker's parser: its id, meta and expectations kept,
 * the ids its own copies field names added to hc. */
static void check_job(struct batch *b, size_t i, size_t *bad, struct hand_copies *hc)
{
    const struct jobfile *jf = b->jf;
    struct batch_job *bj = &b->jobs[i];
    struct llmsb_err err = {0};
    struct fields f;
    struct job j;

    fields_init(&f, JOB_MAX_FIELDS);
    job_init(&j, b->cfg);
    if (jobfile_fields(jf->jobs[i], &f) != 0)
        batch__problem(b, bad, "%s:%zu: more than %d fields", jf->name, jf->lines[i],
                       JOB_MAX_FIELDS);
    else if (job_from_fields(&j, b->cfg, &f, "", &err) != 0)
        batch__problem(b, bad, "%s:%zu: %s", jf->name, jf->lines[i], err.msg);
    else
        bj->valid = 1;
    bj->meta = j.meta ? strdup(j.meta) : NULL;
    bj->id = strdup(j.id ? j.id : "");
    bj->explicit_ = j.id && j.id[0];
    bj->checked = j.expect_stdout != NULL || j.has_expect_exit || j.ncases;
    for (size_t c = 0; c < j.ncopies; c++) /* checked against the ids by validate */
        hand_copy_add(hc, j.copies[c].id, jf->lines[i], i);
    job_release(&j);
    fields_release(&f);
}

/* Every job through the parser, then duplicate ids and hand-written copies
 * naming a job's id (it would get two results).  Returns the problems;
 * b->invalid gets the jobs the parser refused. */
static size_t validate(struct batch *b)
{
    const struct jobfile *jf = b->jf;
    size_t bad = 0, nids = 0;
    struct id_at *ids = calloc(jf->n ? jf->n : 1, sizeof(*ids));
    struct hand_copies hc = {0};

    for (size_t i = 0; i < jf->n; i++) {
        check_job(b, i, &bad, &hc);
        if (b->jobs[i].explicit_ && ids && b->jobs[i].id)
            ids[nids++] = (struct id_at){b->jobs[i].id, jf->lines[i], i};
    }
    b->invalid = bad;
    if (ids)
        qsort(ids, nids, sizeof(*ids), by_id);
    for (size_t k = 1; ids && k < nids; k++)
        if (strcmp(ids[k].id, ids[k - 1].id) == 0) {
            char shown[160];
            llmsb_escape(shown, sizeof(shown), ids[k].id, strlen(ids[k].id));
            batch__problem(b, &bad, "%s:%zu: id \"%s\" is also the id of the job at line %zu",
                           jf->name, ids[k].line, shown, ids[k - 1].line);
        }
    for (size_t k = 0; ids && k < hc.n; k++) {
        const struct id_at *at = bsearch(hc.v[k].id, ids, nids, sizeof(*ids), id_is);
        char shown[160];
        if (!at)
            continue;
        llmsb_escape(shown, sizeof(shown), hc.v[k].id, strlen(hc.v[k].id));
        batch__problem(
            b, &bad,
            "%s:%zu: copies: id \"%s\" is also the id of the job at line %zu (it would get "
            "two results)",
            jf->name, hc.v[k].line, shown, at->line);
    }
    for (size_t k = 0; k < hc.n; k++)
        free((char *)hc.v[k].id);
    free(hc.v);
    free(ids);
    if (bad > BATCH_SHOW_MAX)
        batch__say(b, BATCH_SAY_LINE, "... and %zu more", bad - BATCH_SHOW_MAX);
    return bad;
}

int batch_check(struct batch *b, struct llmsb_err *err)
{
    const char *allow = batch__name(b, BATCH_NAME_ALLOW_INVALID);
    size_t bad = validate(b);

    for (size_t i = 0; i < b->n; i++)
        if (!b->jobs[i].id)
            return llmsb_err_set(err, LLMSB_ERR_NOMEM, "batch: out of memory");
    b->problems = bad;
    if (bad && !(b->o.allow_invalid && bad == b->invalid)) {
        char more[160] = "";
        if (bad == b->invalid)
            snprintf(more, sizeof(more), " (%s submits such jobs as invalid results)", allow);
        llmsb_err_set(err, LLMSB_ERR_INVALID, "%zu problem(s) in %s; nothing was %s%s", bad,
                      b->jf->name, b->o.queue ? "enqueued" : "run", more);
        batch__say(b, BATCH_SAY_NOTE, "%s", err->msg);
        return err->code;
    }
    if (bad)
        batch__say(b, BATCH_SAY_NOTE, "%zu invalid job(s) submitted anyway (%s)", bad, allow);
    return 0;
}

/* ---- dedup: identical programs run once ----------------------------------------- */

/* 1 when job i must run on its own whatever its form: it did not parse,
 * an existing result stands (reuse), it carries submit's own fields, or
 * (through Redis) it has no id (its result goes under the stream entry id
 * it gets, unknown to its copies' writes). */
static int runs_alone(const struct batch *b, size_t i, int redis)
{
    const struct batch_job *j = &b->jobs[i];
    return !j->valid || j->reused || (redis && !j->explicit_) ||
           cJSON_GetObjectItemCaseSensitive(b->jf->jobs[i], "copies") ||
           cJSON_GetObjectItemCaseSensitive(b->jf->jobs[i], "recheck");
}

/* The copies field a run carries stays under this many bytes (ids and
 * metas as text), well under the worker's cap on a field (JOB_MAX_STDIN):
 * a copy that would pass it starts a run of its own, as past
 * JOB_MAX_COPIES.  It also bounds what one Lua script writes. */
#define COPIES_MAX_BYTES ((size_t)4 << 20)

/* At most what copy c adds to its run's copies field, {"id": ID, "meta": META},
 * an id escaped at worst (\u00XX), meta as cJSON prints it again. */
static size_t copy_bytes(const struct batch *b, size_t c)
{
    return strlen(b->jobs[c].id) * 6 + (b->jobs[c].meta ? strlen(b->jobs[c].meta) : 0) + 24;
}

/* Links each run to its copies (next), at most JOB_MAX_COPIES and
 * COPIES_MAX_BYTES a run: the copy past that starts a run of its own for
 * the rest.  -1: no memory. */
static int link_copies(struct batch *b)
{
    size_t n = b->n ? b->n : 1;
    size_t *last = calloc(n, sizeof(size_t)), *count = calloc(n, sizeof(size_t));
    size_t *head = calloc(n, sizeof(size_t)), *bytes = calloc(n, sizeof(size_t));
    int rc = last && count && head && bytes ? 0 : -1;

    for (size_t i = 0; rc == 0 && i < b->n; i++) {
        struct batch_job *j = &b->jobs[i];
        size_t r = j->rep, add = r == i ? 0 : copy_bytes(b, i);
        if (r == i) {
            last[i] = head[i] = i;
            continue;
        }
        if (count[head[r]] == JOB_MAX_COPIES || bytes[head[r]] + add > COPIES_MAX_BYTES) {
            j->rep = i; /* i runs; the next copies are its */
            head[r] = last[r] = i;
            continue;
        }
        j->rep = head[r];
        b->jobs[last[r]].next = i;
        last[r] = i;
        count[head[r]]++;
        bytes[head[r]] += add;
    }
    free(last);
    free(count);
    free(head);
    free(bytes);
    return rc;
}

int batch__plan_dedup(struct batch *b, int redis, struct llmsb_err *err)
{
    size_t n = b->n ? b->n : 1;
    struct buf *forms = calloc(n, sizeof(*forms));
    int *alone = calloc(n, sizeof(int)), rc = 0;
    size_t *rep = calloc(n, sizeof(size_t));

    for (size_t i = 0; forms && alone && i < b->n && rc == 0; i++) {
        struct fields f;
        buf_init(&forms[i], JOBFILE_MAX_BYTES);
        if ((alone[i] = runs_alone(b, i, redis)))
            continue;
        fields_init(&f, JOB_MAX_FIELDS);
        if (jobfile_fields(b->jf->jobs[i], &f) != 0 || (rc = job_dedup_form(&f, &forms[i])) > 0)
            alone[i] = 1, rc = 0;
        fields_release(&f);
    }
    if (!forms || !alone || !rep || rc < 0 || job_dedup_group(forms, alone, b->n, rep) < 0) {
        rc = -1;
    } else {
        for (size_t i = 0; i < b->n; i++)
            b->jobs[i].rep = rep[i];
        rc = link_copies(b);
    }
    if (rc != 0) {
        rc = llmsb_err_set(err, LLMSB_ERR_NOMEM, "submit: dedup: out of memory");
        batch__say(b, BATCH_SAY_ERROR, "%s", err->msg);
    } else {
        b->runs = b->copies = 0;
        for (size_t i = 0; i < b->n; i++)
            if (b->jobs[i].rep != i)
                b->copies++;
            else if (!b->jobs[i].reused)
                b->runs++;
    }
    for (size_t i = 0; forms && i < b->n; i++)
        buf_release(&forms[i]);
    free(forms);
    free(alone);
    free(rep);
    return rc;
}

void batch__undedup(struct batch *b, const char *why)
{
    b->dedup = 0;
    b->dedup_off = why;
    b->copies = b->runs = 0;
    for (size_t i = 0; i < b->n; i++) {
        b->jobs[i].rep = i, b->jobs[i].next = BATCH_NO_COPY;
        b->runs += !b->jobs[i].reused;
    }
}

/* ---- recheck: what runs again, and what it found --------------------------------- */

int batch__is_timeout(const cJSON *r)
{
    return r && strcmp(batch__str(r, "status", ""), status_name(STATUS_TIMEOUT)) == 0;
}

int batch__recheckable(const struct batch *b, size_t i)
{
    return b->jobs[i].rep == i && !b->jobs[i].reused && batch__is_timeout(b->results[i]);
}

void batch__count_flaky(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        const cJSON *r = b->results[i];
        if (!b->jobs[i].rechecked)
            continue;
        b->rechecked++;
        if (!r || !cJSON_IsTrue(cJSON_GetObjectItem(r, "rechecked")))
            b->recheck_pending++;
        else if (strcmp(batch__str(r, "status", ""), status_name(STATUS_INTERNAL_ERROR)) == 0)
            b->recheck_errors++;
        else
            b->flaky += !batch__is_timeout(r);
    }
}
