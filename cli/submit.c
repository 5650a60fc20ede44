/* submit.c - the submit verb.  A job file is validated whole before
 * anything is enqueued (every bad job reported with file:line, duplicate
 * ids refused, ids that already have a result reported), identical
 * programs grouped to run once (dedup; the copies ride on the job that
 * runs), then enqueued or run here (--local), waited for, timeouts run
 * again alone when asked (--recheck-timeouts), and summarised so that a
 * job that did not run or did not pass is never left out of the numbers. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/passk.h"
#include "eval/report.h"
#include "common/features.h"
#include "common/status.h"
#include "config/jobfile.h"
#include "queue/queue.h"
#include "job/job.h"
#include "job/result.h"
#include "job/dedup.h"
#include "exec/batch.h"

#define SHOW_MAX 20 /* problems and failures listed before "... and N more" */
#define NO_COPY ((size_t)-1)

enum existing { EXISTING_REFUSE = 0, EXISTING_RERUN, EXISTING_REUSE };

struct submit_opts {
    const char *file, *out, *artifacts, *group_by, *report;
    int wait, local, allow_invalid, no_dedup, recheck;
    enum existing existing;
    long long slots;
    double timeout_s;
    const struct config *cfg; /* --report's limits and engine */
};

/* What submit knows of each job of the file. */
struct plan {
    char **ids;              /* the job's id ("" until a stream entry id is known) */
    int *explicit_;          /* the file gave the id */
    int *checked;            /* the job carries expectations */
    int *reused;             /* --reuse: an existing result stands; not enqueued */
    int *valid;              /* the job parsed */
    size_t *rep;             /* dedup: i when job i runs, else the job whose run it shares */
    size_t *next;            /* dedup: a run's first copy, a copy's next one; NO_COPY ends */
    char **meta;             /* the job's meta as JSON text, or NULL */
    size_t runs, copies;     /* dedup's count: jobs run, jobs that share a run */
    size_t rechecked, flaky; /* --recheck-timeouts: jobs whose timeout ran again, and changed */
    size_t recheck_errors;   /* ... that ended internal_error */
    size_t recheck_pending;  /* ... whose recheck's result did not come back in time */
    int dedup, recheck;      /* the options were on */
    const char *dedup_off;   /* why dedup is off: "--no-dedup", or older workers */
    int live_off;            /* live jobs go without live (workers older than it) */
    size_t n;
};

static const char *jstr(const cJSON *o, const char *k, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* Job i's language: its lang, else (a session's later call) that of the
 * session's first call that names one, else "?". */
static const char *job_lang(const struct jobfile *jf, size_t i)
{
    const char *sess = jstr(jf->jobs[i], "session", NULL);

    if (jstr(jf->jobs[i], "lang", NULL) || !sess)
        return jstr(jf->jobs[i], "lang", "?");
    for (size_t k = 0; k < i; k++)
        if (strcmp(jstr(jf->jobs[k], "session", ""), sess) == 0 && jstr(jf->jobs[k], "lang", NULL))
            return jstr(jf->jobs[k], "lang", "?");
    return "?";
}

static void plan_release(struct plan *p)
{
    for (size_t i = 0; p->ids && i < p->n; i++)
        free(p->ids[i]);
    for (size_t i = 0; p->meta && i < p->n; i++)
        free(p->meta[i]);
    free(p->ids);
    free(p->explicit_);
    free(p->checked);
    free(p->reused);
    free(p->valid);
    free(p->rep);
    free(p->next);
    free(p->meta);
}

static int plan_init(struct plan *p, size_t n)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    p->ids = calloc(n ? n : 1, sizeof(*p->ids));
    p->explicit_ = calloc(n ? n : 1, sizeof(int));
    p->checked = calloc(n ? n : 1, sizeof(int));
    p->reused = calloc(n ? n : 1, sizeof(int));
    p->valid = calloc(n ? n : 1, sizeof(int));
    p->rep = calloc(n ? n : 1, sizeof(size_t));
    p->next = calloc(n ? n : 1, sizeof(size_t));
    p->meta = calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; p->rep && p->next && i < n; i++)
        p->rep[i] = i, p->next[i] = NO_COPY;
    p->runs = n;
    return p->ids && p->explicit_ && p->checked && p->reused && p->valid && p->rep && p->next &&
                   p->meta
               ? 0
               : -1;
}

/* ---- validation before anything is enqueued ------------------------------------ */

static void problem(size_t *count, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(size_t *count, const char *fmt, ...)
{
    va_list ap;
    if (*count < SHOW_MAX) {
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    (*count)++;
}

static const struct jobfile *sort_jf;
static const struct plan *sort_plan;

static int by_id(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, k = *(const size_t *)b;
    int c = strcmp(sort_plan->ids[i], sort_plan->ids[k]);
    return c ? c : (sort_jf->lines[i] < sort_jf->lines[k] ? -1 : 1);
}

/* The ids a file's own copies fields name (by hand: submit's dedup sets
 * none in the file): none may be a job's id too. */
struct hand_copies {
    struct {
        size_t job;
        char *id;
    } * v;
    size_t n;
};

static void hand_copy_add(struct hand_copies *hc, size_t job, const char *id)
{
    void *nv = realloc(hc->v, (hc->n + 1) * sizeof(*hc->v));
    char *d = strdup(id);
    if (!nv || !d) {
        free(d);
        if (nv)
            hc->v = nv;
        return;
    }
    hc->v = nv;
    hc->v[hc->n].job = job;
    hc->v[hc->n++].id = d;
}

/* bsearch over the sorted order of ids: key is an id. */
static int id_at(const void *key, const void *elt)
{
    return strcmp(key, sort_plan->ids[*(const size_t *)elt]);
}

/* Each job through the worker's own parser, then duplicate ids. *invalid
 * counts the jobs the parser refused; the return value every problem. */
static size_t validate(const struct config *cfg, const struct jobfile *jf, struct plan *p,
                       size_t *invalid)
{
    size_t bad = 0, *order = calloc(jf->n ? jf->n : 1, sizeof(size_t)), nids = 0;
    struct hand_copies hc = {0};

    for (size_t i = 0; i < jf->n; i++) {
        struct llmsb_err err = {0};
        struct fields f;
        struct job j;

        fields_init(&f, JOB_MAX_FIELDS);
        job_init(&j, cfg);
        if (jobfile_fields(jf->jobs[i], &f) != 0)
            problem(&bad, "%s:%zu: more than %d fields", jf->name, jf->lines[i], JOB_MAX_FIELDS);
        else if (job_from_fields(&j, cfg, &f, "", &err) != 0)
            problem(&bad, "%s:%zu: %s", jf->name, jf->lines[i], err.msg);
        else
            p->valid[i] = 1;
        *invalid = bad;
        p->meta[i] = j.meta ? strdup(j.meta) : NULL;
        p->ids[i] = strdup(j.id ? j.id : "");
        p->explicit_[i] = j.id && j.id[0];
        p->checked[i] = j.expect_stdout != NULL || j.has_expect_exit || j.ncases;
        if (p->explicit_[i] && order)
            order[nids++] = i;
        for (size_t c = 0; c < j.ncopies; c++) /* checked against the ids below */
            hand_copy_add(&hc, i, j.copies[c].id);
        job_release(&j);
        fields_release(&f);
    }
    sort_jf = jf;
    sort_plan = p;
    if (order)
        qsort(order, nids, sizeof(size_t), by_id);
    for (size_t k = 1; order && k < nids; k++)
        if (strcmp(p->ids[order[k]], p->ids[order[k - 1]]) == 0) {
            char shown[160];
            llmsb_escape(shown, sizeof(shown), p->ids[order[k]], strlen(p->ids[order[k]]));
            problem(&bad, "%s:%zu: id \"%s\" is also the id of the job at line %zu", jf->name,
                    jf->lines[order[k]], shown, jf->lines[order[k - 1]]);
        }
    for (size_t k = 0; order && k < hc.n; k++) {
        size_t *at = bsearch(hc.v[k].id, order, nids, sizeof(size_t), id_at);
        char shown[160];
        if (!at)
            continue;
        llmsb_escape(shown, sizeof(shown), hc.v[k].id, strlen(hc.v[k].id));
        problem(&bad,
                "%s:%zu: copies: id \"%s\" is also the id of the job at line %zu (it would get "
                "two results)",
                jf->name, jf->lines[hc.v[k].job], shown, jf->lines[*at]);
    }
    for (size_t k = 0; k < hc.n; k++)
        free(hc.v[k].id);
    free(hc.v);
    free(order);
    if (bad > SHOW_MAX)
        fprintf(stderr, "... and %zu more\n", bad - SHOW_MAX);
    return bad;
}

/* Ids of the file that already have a result: refused by default, run
 * again (--rerun: the old result deleted first) or kept (--reuse). */
static int check_existing(struct queue *q, const struct jobfile *jf, struct plan *p,
                          enum existing mode)
{
    size_t found = 0, refused = 0;

    for (size_t i = 0; i < jf->n; i++) {
        struct llmsb_err err = {0};
        char shown[160], status[32];
        int rc;

        if (!p->explicit_[i])
            continue;
        rc = queue_result_status(q, p->ids[i], status, sizeof(status), &err);
        if (rc < 0) {
            cli_error("%s", err.msg);
            return -1;
        }
        if (rc == 0)
            continue;
        llmsb_escape(shown, sizeof(shown), p->ids[i], strlen(p->ids[i]));
        if (mode == EXISTING_REUSE) {
            p->reused[i] = 1;
        } else if (strcmp(status, status_name(STATUS_RUNNING)) == 0) {
            problem(&refused, "%s:%zu: id \"%s\" is running now; wait for it or cancel it first",
                    jf->name, jf->lines[i], shown);
            continue;
        } else if (mode == EXISTING_RERUN) {
            if (queue_result_delete(q, p->ids[i], &err) != 0) {
                cli_error("%s", err.msg);
                return -1;
            }
        } else {
            problem(&refused, "%s:%zu: id \"%s\" already has a result (%s)", jf->name, jf->lines[i],
                    shown, status);
        }
        found++;
    }
    if (refused) {
        if (refused > SHOW_MAX)
            fprintf(stderr, "... and %zu more\n", refused - SHOW_MAX);
        if (mode == EXISTING_REFUSE)
            fprintf(stderr, "submit: nothing was enqueued; --rerun runs such jobs again (their old "
                            "results are deleted first), --reuse keeps their results\n");
        else
            fprintf(stderr, "submit: nothing was enqueued\n");
        return -1;
    }
    if (found)
        fprintf(stderr, "submit: %zu id(s) already had a result: %s\n", found,
                mode == EXISTING_REUSE ? "kept (--reuse), not enqueued again"
                                       : "deleted and enqueued again (--rerun)");
    return 0;
}

/* ---- dedup: identical programs run once ----------------------------------------- */

/* 1 when job i must run on its own whatever its form: it did not parse,
 * an existing result stands (--reuse), it carries submit's own fields, or
 * (through Redis) it has no id (its result goes under the stream entry id
 * it gets, unknown to its copies' writes). */
static int runs_alone(const struct jobfile *jf, const struct plan *p, size_t i, int redis)
{
    return !p->valid[i] || p->reused[i] || (redis && !p->explicit_[i]) ||
           cJSON_GetObjectItemCaseSensitive(jf->jobs[i], "copies") ||
           cJSON_GetObjectItemCaseSensitive(jf->jobs[i], "recheck");
}

/* The copies field a run carries stays under this many bytes (ids and
 * metas as text), well under the worker's cap on a field (JOB_MAX_STDIN):
 * a copy that would pass it starts a run of its own, as past
 * JOB_MAX_COPIES.  It also bounds what one Lua script writes. */
#define COPIES_MAX_BYTES ((size_t)4 << 20)

/* At most what copy c adds to its run's copies field, {"id": ID, "meta": META},
 * an id escaped at worst (\u00XX), meta as cJSON prints it again. */
static size_t copy_bytes(const struct plan *p, size_t c)
{
    return strlen(p->ids[c]) * 6 + (p->meta[c] ? strlen(p->meta[c]) : 0) + 24;
}

/* Links each run to its copies (p->next), at most JOB_MAX_COPIES and
 * COPIES_MAX_BYTES a run: the copy past that starts a run of its own for
 * the rest.  -1: no memory. */
static int link_copies(struct plan *p)
{
    size_t *last = calloc(p->n ? p->n : 1, sizeof(size_t)), *count, *head, *bytes;
    int rc = 0;

    count = calloc(p->n ? p->n : 1, sizeof(size_t));
    head = calloc(p->n ? p->n : 1, sizeof(size_t));
    bytes = calloc(p->n ? p->n : 1, sizeof(size_t));
    if (!last || !count || !head || !bytes)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < p->n; i++) {
        size_t r = p->rep[i], b = r == i ? 0 : copy_bytes(p, i);
        if (r == i) {
            last[i] = head[i] = i;
            continue;
        }
        if (count[head[r]] == JOB_MAX_COPIES || bytes[head[r]] + b > COPIES_MAX_BYTES) {
            p->rep[i] = i; /* i runs; the next copies are its */
            head[r] = last[r] = i;
            continue;
        }
        p->rep[i] = head[r];
        p->next[last[r]] = i;
        last[r] = i;
        count[head[r]]++;
        bytes[head[r]] += b;
    }
    free(last);
    free(count);
    free(head);
    free(bytes);
    return rc;
}

/* Groups the jobs by their dedup form (job/dedup.h): rep, next, runs and
 * copies of p.  Returns 0 or -1 (out of memory, said). */
static int plan_dedup(const struct jobfile *jf, struct plan *p, int redis)
{
    struct buf *forms = calloc(jf->n ? jf->n : 1, sizeof(*forms));
    int *alone = calloc(jf->n ? jf->n : 1, sizeof(int)), rc = 0;
    long runs;

    for (size_t i = 0; forms && alone && i < jf->n && rc == 0; i++) {
        struct fields f;
        buf_init(&forms[i], JOBFILE_MAX_BYTES);
        if ((alone[i] = runs_alone(jf, p, i, redis)))
            continue;
        fields_init(&f, JOB_MAX_FIELDS);
        if (jobfile_fields(jf->jobs[i], &f) != 0 || (rc = job_dedup_form(&f, &forms[i])) > 0)
            alone[i] = 1, rc = 0;
        fields_release(&f);
    }
    if (!forms || !alone || rc < 0 || (runs = job_dedup_group(forms, alone, jf->n, p->rep)) < 0 ||
        link_copies(p) != 0) {
        cli_error("submit: dedup: out of memory");
        rc = -1;
    } else {
        p->runs = p->copies = 0;
        for (size_t i = 0; i < jf->n; i++)
            if (p->rep[i] != i)
                p->copies++;
            else if (!p->reused[i])
                p->runs++;
    }
    for (size_t i = 0; forms && i < jf->n; i++)
        buf_release(&forms[i]);
    free(forms);
    free(alone);
    return rc;
}

/* The copies field of run r: [{"id": ID, "meta": META}, ...] as text
 * (owned), or NULL when it has none. */
static char *copies_field(const struct plan *p, size_t r)
{
    cJSON *a = cJSON_CreateArray();
    char *text = NULL;

    for (size_t c = p->next[r]; a && c != NO_COPY; c = p->next[c]) {
        cJSON *o = cJSON_CreateObject(), *m = p->meta[c] ? cJSON_Parse(p->meta[c]) : NULL;
        cJSON_AddStringToObject(o, "id", p->ids[c]);
        if (m)
            cJSON_AddItemToObject(o, "meta", m);
        cJSON_AddItemToArray(a, o);
    }
    if (cJSON_GetArraySize(a) > 0)
        text = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return text;
}

/* results[c] for each copy c of a run whose result is there (--local). */
static void fill_copies(const struct plan *p, cJSON **results)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->rep[i] != i && results[p->rep[i]]) {
            cJSON_Delete(results[i]);
            results[i] =
                result_json_copy(results[p->rep[i]], p->ids[i], p->meta[i], p->ids[p->rep[i]]);
        }
}

static int is_timeout(const cJSON *r)
{
    return r && strcmp(jstr(r, "status", ""), status_name(STATUS_TIMEOUT)) == 0;
}

/* 1 when job i's result is a timeout that --recheck-timeouts runs again:
 * a run (copies follow it), not an existing result (--reuse). */
static int recheckable(const struct plan *p, size_t i, cJSON **results)
{
    return p->rep[i] == i && !p->reused[i] && is_timeout(results[i]);
}

/* After a recheck, over the jobs (runs and copies) it ran again for
 * (rechecked[i]): those whose timeout became another final verdict
 * (flaky), an internal error, or got no recheck's result (the wait ended
 * first: their first result stands). */
static void count_flaky(struct plan *p, const int *rechecked, cJSON **results)
{
    for (size_t i = 0; i < p->n; i++) {
        if (!rechecked[i])
            continue;
        p->rechecked++;
        if (!results[i] || !cJSON_IsTrue(cJSON_GetObjectItem(results[i], "rechecked")))
            p->recheck_pending++;
        else if (strcmp(jstr(results[i], "status", ""), status_name(STATUS_INTERNAL_ERROR)) == 0)
            p->recheck_errors++;
        else
            p->flaky += !is_timeout(results[i]);
    }
}

/* ---- outcomes ------------------------------------------------------------------ */

/* The line of a program's output that says what went wrong: the last one
 * naming an error, exception, panic or failure (stderr: a traceback's last
 * line, Java's "Exception in thread", node's "Error: ..." before its
 * version trailer) or the first (stdout: go test's "--- FAIL: TestX"),
 * else the last non-blank one; "" when every line is blank. */
static const char *telling_line(const char *s, int first)
{
    static const char *const words[] = {"Error", "error", "Exception", "panic", "FAIL", NULL};
    const char *last = "", *named = NULL;

    for (const char *p = s; *p; p = *p ? p + 1 : p) {
        size_t len = strcspn(p, "\n");
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)len, p);
        if (len && strspn(line, " \t") < len)
            last = p;
        for (int i = 0; words[i] && len; i++)
            if (strstr(line, words[i]) && !(first && named))
                named = p;
        p += len;
    }
    return named ? named : last;
}

/* A compiler's first line, past the "# package" headers go prints. */
static const char *compile_line(const char *s)
{
    while (s[0] == '#' && s[1] == ' ' && strchr(s, '\n'))
        s = strchr(s, '\n') + 1;
    return s;
}

/* 1 when job i did not end well: no final result, a status other than ok,
 * or expectations not met. why gets the first line of the reason. */
static int job_failed(const cJSON *r, int checked, char *why, size_t wsz)
{
    const char *status = r ? jstr(r, "status", "?") : NULL, *text;
    const cJSON *passed = r ? cJSON_GetObjectItem(r, "passed") : NULL;

    if (!r) {
        snprintf(why, wsz, "not finished");
        return 1;
    }
    /* passed whatever the status: a job may expect a non-zero exit */
    if (checked ? cJSON_IsTrue(passed) : strcmp(status, status_name(STATUS_OK)) == 0)
        return 0;
    if (cJSON_GetArraySize(cJSON_GetObjectItem(r, "cases")) > 0) { /* some case ran */
        snprintf(why, wsz, "%s: %d of %d cases passed", status,
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "cases_passed")),
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "cases_total")));
        return 1;
    }
    if (strcmp(status, status_name(STATUS_OK)) == 0) {
        snprintf(why, wsz, "ok but not passed: output or exit code differs from the expectation");
        return 1;
    }
    text = jstr(r, "error", "");
    if (!*text)
        text = compile_line(jstr(r, "compile_output", ""));
    if (!*text)
        text = telling_line(jstr(r, "stderr", ""), 0);
    if (!*text) /* go test reports on stdout */
        text = telling_line(jstr(r, "stdout", ""), 1);
    text += strspn(text, " \t");
    snprintf(why, wsz, "%s%s%.*s", status, *text ? ": " : "", (int)strcspn(text, "\n"), text);
    return 1;
}

struct tally {
    char key[32];
    int jobs, ok, checked, passed;
};

static struct tally *tally_of(struct tally *t, int *n, const char *key)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(t[i].key, key) == 0)
            return &t[i];
    if (*n >= 32)
        return &t[31];
    snprintf(t[*n].key, sizeof(t[0].key), "%s", key);
    return &t[(*n)++];
}

static void print_rates(FILE *out, struct tally *lg, int nlg, struct tally *total)
{
    fprintf(out, "\n%-12s %6s %6s %8s %8s %9s\n", "language", "jobs", "ok", "checked", "passed",
            "pass rate");
    for (int i = 0; i <= nlg; i++) {
        struct tally *t = i < nlg ? &lg[i] : total;
        char rate[16] = "-";
        if (t->checked)
            snprintf(rate, sizeof(rate), "%.1f%%", 100.0 * t->passed / t->checked);
        fprintf(out, "%-12s %6d %6d %8d %8d %9s\n", t->key, t->jobs, t->ok, t->checked, t->passed,
                rate);
    }
}

/* What dedup saved and what a recheck found. */
static void runs_summary(const struct plan *p, FILE *out)
{
    if (p->dedup)
        fprintf(out, "\ndedup: %zu jobs, %zu distinct programs run, %zu copies (runs saved: %zu)\n",
                p->n, p->runs, p->copies, p->copies);
    else
        fprintf(out, "\ndedup: off (%s): %zu jobs, %zu runs\n", p->dedup_off, p->n, p->runs);
    if (p->recheck) {
        fprintf(out, "recheck: %zu timeout(s) run again alone, %zu changed (flaky)", p->rechecked,
                p->flaky);
        if (p->recheck_errors)
            fprintf(out, ", %zu internal error(s)", p->recheck_errors);
        if (p->recheck_pending)
            fprintf(out, ", %zu not back in time (the first result stands)", p->recheck_pending);
        fputc('\n', out);
    }
}

/* The summary: by status, by language (the pass rate over every job that
 * carries expectations, run or not), then the failing ids. Returns the
 * number of jobs that did not end well. */
static size_t summary(const struct jobfile *jf, const struct plan *p, cJSON **results, FILE *out)
{
    struct tally st[32], lg[32], total = {"total", 0, 0, 0, 0};
    int nst = 0, nlg = 0;
    size_t failed = 0, shown = 0;
    char why[200];

    memset(st, 0, sizeof(st));
    memset(lg, 0, sizeof(lg));
    for (size_t i = 0; i < jf->n; i++) {
        const char *status = results[i] ? jstr(results[i], "status", "unknown") : "not_finished";
        struct tally *l = tally_of(lg, &nlg, job_lang(jf, i));
        tally_of(st, &nst, status)->jobs++;
        l->jobs++, total.jobs++;
        if (strcmp(status, status_name(STATUS_OK)) == 0)
            l->ok++, total.ok++;
        if (p->checked[i]) {
            l->checked++, total.checked++;
            if (results[i] && cJSON_IsTrue(cJSON_GetObjectItem(results[i], "passed")))
                l->passed++, total.passed++;
        }
    }
    fprintf(out, "\n%-16s %6s\n", "status", "jobs");
    for (int i = 0; i < nst; i++)
        fprintf(out, "%-16s %6d\n", st[i].key, st[i].jobs);
    print_rates(out, lg, nlg, &total);
    if (total.checked)
        fprintf(out, "(pass rate: passed / jobs with expect_stdout, expect_exit or cases, whatever "
                     "their status)\n");
    runs_summary(p, out);
    for (size_t i = 0; i < jf->n; i++) {
        if (!job_failed(results[i], p->checked[i], why, sizeof(why)))
            continue;
        if (failed++ == 0)
            fprintf(out, "\nnot passed:\n");
        if (shown++ < SHOW_MAX) /* ids were checked: printable UTF-8 */
            fprintf(out, "  %s (%s:%zu): %s\n", p->ids[i], jf->name, jf->lines[i], why);
    }
    if (shown > SHOW_MAX)
        fprintf(out, "  ... and %zu more (all in --out)\n", shown - SHOW_MAX);
    return failed;
}

static int write_out(const char *path, cJSON **results, const struct plan *p)
{
    FILE *f = fopen(path, "we");
    if (!f) {
        cli_error("--out: cannot write \"%s\"", path);
        return -1;
    }
    for (size_t i = 0; i < p->n; i++) {
        char *t = NULL;
        if (results[i]) {
            t = cJSON_PrintUnformatted(results[i]);
        } else {
            cJSON *nf = cJSON_CreateObject();
            cJSON_AddStringToObject(nf, "id", p->ids[i]);
            cJSON_AddStringToObject(nf, "status", "not_finished");
            cJSON_AddNullToObject(nf, "exit_code"); /* it never ran (to an end) */
            t = cJSON_PrintUnformatted(nf);
            cJSON_Delete(nf);
        }
        fprintf(f, "%s\n", t ? t : "{}");
        free(t);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- progress ----------------------------------------------------------------- */

struct progress {
    int tty;
    size_t last_shown, failed;
    int64_t started_ms, last_ms;
};

static void show_progress(struct progress *p, size_t done, size_t total)
{
    int64_t now = clock_mono_ms(), elapsed = now - p->started_ms;
    char eta[32] = "";

    if (done > 0 && done < total) {
        long long left = (long long)(elapsed * (int64_t)(total - done) / (int64_t)done / 1000);
        snprintf(eta, sizeof(eta), ", ETA %lldm%02llds", left / 60, left % 60);
    }
    if (p->tty) {
        int width = 30, fill = total ? (int)(width * done / total) : width;
        fprintf(stderr, "\r[%.*s%.*s] %zu/%zu, %zu failed%s   ", fill,
                "##############################", width - fill, "..............................",
                done, total, p->failed, eta);
        if (done == total)
            fputc('\n', stderr);
    } else if (done == total || done - p->last_shown >= (total + 9) / 10 ||
               now - p->last_ms >= 5000) {
        fprintf(stderr, "progress: %zu/%zu done, %zu failed%s\n", done, total, p->failed, eta);
        p->last_shown = done;
        p->last_ms = now;
    }
}

static void local_progress(void *ud, size_t done, size_t total, const cJSON *r)
{
    struct progress *p = ud;
    char why[8];
    /* r's job is not known here; a result has "passed" when it was checked */
    p->failed += job_failed(r, cJSON_GetObjectItem(r, "passed") != NULL, why, sizeof(why));
    show_progress(p, done, total);
}

/* ---- options -------------------------------------------------------------------- */

static int parse_submit(struct cli_globals *g, int argc, char **argv, struct submit_opts *o)
{
    for (int i = 1; i < argc; i++) {
        int rc = cli_global_opt(g, argc, argv, &i);
        if (rc < 0)
            return -1;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "--wait") == 0)
            o->wait = 1;
        else if (strcmp(argv[i], "--local") == 0)
            o->local = 1;
        else if (strcmp(argv[i], "--allow-invalid") == 0)
            o->allow_invalid = 1;
        else if (strcmp(argv[i], "--no-dedup") == 0)
            o->no_dedup = 1;
        else if (strcmp(argv[i], "--recheck-timeouts") == 0)
            o->recheck = 1;
        else if (strcmp(argv[i], "--rerun") == 0)
            o->existing = EXISTING_RERUN;
        else if (strcmp(argv[i], "--reuse") == 0)
            o->existing = EXISTING_REUSE;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            o->out = argv[++i];
        else if (strcmp(argv[i], "--artifacts") == 0 && i + 1 < argc)
            o->artifacts = argv[++i];
        else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc)
            o->report = argv[++i];
        else if (strcmp(argv[i], "--group-by") == 0 && i + 1 < argc) {
            o->group_by = argv[++i];
            if (strcmp(o->group_by, "id") != 0 &&
                (strncmp(o->group_by, "meta.", 5) != 0 || !o->group_by[5])) {
                cli_error("--group-by must be id or meta.FIELD (got \"%s\")", o->group_by);
                return -1;
            }
        } else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc) {
            if (parse_ll(argv[++i], 1, 256, &o->slots) != 0) {
                cli_error("--slots must be between 1 and 256 (got \"%s\")", argv[i]);
                return -1;
            }
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            if (parse_double(argv[++i], 0.1, 1e7, &o->timeout_s) != 0) {
                cli_error("--timeout must be a number of seconds (got \"%s\")", argv[i]);
                return -1;
            }
        } else if (strcmp(argv[i], "--help") == 0) {
            puts(
                "usage: llm-sandbox submit JOBFILE [--wait] [--out results.jsonl] [--local]\n"
                "                          [--rerun | --reuse] [--allow-invalid] [--artifacts DIR]\n"
                "                          [--slots N] [--timeout S] [--group-by KEY] [--report FILE]\n"
                "                          [--no-dedup] [--recheck-timeouts]\n\n"
                "Checks every job of a YAML or JSON Lines job file (nothing is enqueued when\n"
                "one is bad or two share an id; --allow-invalid submits bad jobs anyway, as\n"
                "invalid results), then enqueues them. An id that already has\n"
                "a result is refused unless --rerun (run it again) or --reuse (keep it).\n"
                "--wait shows progress and a summary and exits 1 unless every job ended ok\n"
                "and passed its expectations; --out writes one JSON result per job, in input\n"
                "order; --artifacts saves each job's plots and files under DIR/<id>/;\n"
                "--local runs the file in this process with no Redis. --timeout S ends the\n"
                "wait (with --local, the run) after S seconds, exit 124; Ctrl-C or SIGTERM,\n"
                "exit 130; either way the summary is printed and --out written, unfinished\n"
                "jobs as not_finished (--local stops them). Jobs with expectations\n"
                "are grouped into tasks (--group-by meta.FIELD or id; by default meta.task_id,\n"
                "else the id less a trailing #N) for pass@1/10/100; --report FILE writes them\n"
                "as JSON to FILE and as Markdown to FILE.md, with p50/p95/p99 of each phase\n"
                "per language and the machine, engine, image ids and limits.  Jobs identical\n"
                "in everything but id and meta run once, each getting its own result marked\n"
                "copy_of (--no-dedup runs every job).  --recheck-timeouts runs each timeout\n"
                "once more, alone, and keeps that result (rechecked, first_status).");
            exit(0);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("submit: unknown option \"%s\"", argv[i]);
            return -1;
        } else if (o->file) {
            cli_error("submit: one job file at a time (got \"%s\" and \"%s\")", o->file, argv[i]);
            return -1;
        } else {
            o->file = argv[i];
        }
    }
    if (!o->file) {
        cli_error("submit: no job file (usage: llm-sandbox submit JOBFILE [--wait])");
        return -1;
    }
    if ((o->out || o->artifacts || o->report || o->recheck) && !o->wait && !o->local) {
        cli_error("submit: %s needs --wait or --local", o->out         ? "--out"
                                                        : o->artifacts ? "--artifacts"
                                                        : o->report    ? "--report"
                                                                       : "--recheck-timeouts");
        return -1;
    }
    return 0;
}

/* The task of job i for pass@k, as text (owned): --group-by meta.FIELD or
 * id; by default meta.task_id when the job has one, else the id less a
 * trailing "#N".  A job without the meta field counts under its id. */
static char *task_key(const cJSON *job, const char *id, const char *group_by)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(job, "meta"), *v = NULL;
    cJSON *parsed = cJSON_IsString(meta) ? cJSON_Parse(meta->valuestring) : NULL;
    const char *field = !group_by                            ? "task_id"
                        : strncmp(group_by, "meta.", 5) == 0 ? group_by + 5
                                                             : NULL;
    char *out = NULL, num[64];

    if (parsed)
        meta = parsed;
    if (field && cJSON_IsObject(meta))
        v = cJSON_GetObjectItemCaseSensitive(meta, field);
    if (cJSON_IsString(v))
        out = strdup(v->valuestring);
    else if (cJSON_IsNumber(v) && snprintf(num, sizeof(num), "%.17g", v->valuedouble) > 0)
        out = strdup(num);
    else if (!group_by)
        out = strndup(id, passk_task_len(id));
    else
        out = strdup(id);
    cJSON_Delete(parsed);
    return out;
}

/* --report's per-phase rows (every job with a result) and provenance;
 * NULL without --report.  Free with free(tm->t), free(tm->env), free(tm). */
static struct report_timings *report_timings_of(const struct submit_opts *o,
                                                const struct jobfile *jf, cJSON **results)
{
    struct report_timings *tm;
    struct report_env *env;

    if (!o->report || !(tm = calloc(1, sizeof(*tm))))
        return NULL;
    tm->t = calloc(jf->n ? jf->n : 1, sizeof(*tm->t));
    tm->env = env = malloc(sizeof(*env));
    if (!tm->t || !env) {
        free(tm->t);
        free(env);
        free(tm);
        return NULL;
    }
    for (size_t i = 0; i < jf->n; i++) /* the runs: a copy's timings are its run's */
        if (results[i] && !cJSON_GetObjectItem(results[i], "copy_of"))
            cli_timing_of(results[i], job_lang(jf, i), &tm->t[tm->n++]);
    cli_provenance(o->cfg, jf, results, o->local, env);
    return tm;
}

/* pass@k over the jobs with expectations, and with --report the phases
 * and provenance; -1 on a write error. */
static int passk_summary(const struct submit_opts *o, const struct jobfile *jf,
                         const struct plan *p, cJSON **results)
{
    struct report_row *rows = calloc(jf->n ? jf->n : 1, sizeof(*rows));
    struct report_timings *tm = report_timings_of(o, jf, results);
    struct llmsb_err err = {0};
    size_t n = 0;
    int rc = 0;

    if (!rows || (o->report && !tm)) {
        free(rows);
        return -1;
    }
    for (size_t i = 0; i < jf->n; i++) {
        if (!p->checked[i])
            continue;
        rows[n].lang = job_lang(jf, i);
        rows[n].passed = results[i] && cJSON_IsTrue(cJSON_GetObjectItem(results[i], "passed"));
        if (!(rows[n].key = task_key(jf->jobs[i], p->ids[i], o->group_by))) {
            rc = -1;
            break;
        }
        n++;
    }
    if (rc == 0 && report_passk(stdout, rows, n,
                                o->group_by ? o->group_by : "meta.task_id, else the id less \"#N\"",
                                o->report, tm, &err) != 0) {
        cli_error("--report: %s", err.msg);
        rc = -1;
    }
    if (rc == 0 && o->report) {
        struct report_runs runs = {jf->n,      p->runs,      p->copies, p->dedup,
                                   p->recheck, p->rechecked, p->flaky};
        if (report_runs(o->report, &runs, &err) != 0) {
            cli_error("--report: %s", err.msg);
            rc = -1;
        }
    }
    for (size_t i = 0; i < n; i++)
        free((char *)rows[i].key);
    free(rows);
    if (tm) {
        free(tm->t);
        free((void *)tm->env);
        free(tm);
    }
    return rc;
}

/* Summary, --out, --artifacts. Returns the exit code: 0 when every job
 * ended ok and passed, 1 when one did not, EXIT_INTERNAL on a write error. */
static int finish_submit(const struct submit_opts *o, const struct jobfile *jf,
                         const struct plan *p, cJSON **results)
{
    size_t failed = summary(jf, p, results, stdout);
    int rc = failed ? 1 : 0;

    if (passk_summary(o, jf, p, results) != 0)
        rc = EXIT_INTERNAL;
    if (o->out && write_out(o->out, results, p) != 0)
        rc = EXIT_INTERNAL;
    if (o->artifacts) {
        int saved = 0;
        for (size_t i = 0; i < jf->n; i++)
            if (results[i] && cli_save_result_artifacts(o->artifacts, results[i], &saved) != 0)
                rc = EXIT_INTERNAL;
        fprintf(stderr, "llm-sandbox: %d artifact(s) saved under %s/<id>/\n", saved, o->artifacts);
    }
    return rc;
}

/* A wait cut short (wrc: EXIT_INTERRUPTED or EXIT_WAIT_TIMEOUT): what
 * happens to the unfinished jobs, then the summary and --out as always.
 * Returns the exit code: wrc, or EXIT_INTERNAL on a write error. */
static int finish_early(const struct submit_opts *o, const struct jobfile *jf, const struct plan *p,
                        cJSON **results, int wrc, const char *fate)
{
    size_t left = 0;
    int rc;

    for (size_t i = 0; i < jf->n; i++)
        left += results[i] == NULL;
    fprintf(stderr, "\nsubmit: %s with %zu of %zu jobs unfinished; %s\n",
            wrc == EXIT_INTERRUPTED ? "interrupted" : "--timeout reached", left, jf->n, fate);
    rc = finish_submit(o, jf, p, results);
    return rc == EXIT_INTERNAL ? rc : wrc;
}

/* Runs the jobs i with pick(p, i, results) in-process, slots at a time,
 * each under its id (job-N when the file gave none) and with recheck set
 * when given; their results replace results[i].  Returns an enum batch_end
 * or a negative code (said). */
static int local_batch(struct cli_globals *g, const struct plan *p, const struct jobfile *jf,
                       struct batch_opts *bo, int (*pick)(const struct plan *, size_t, cJSON **),
                       const char *recheck, cJSON **results)
{
    cJSON **jobs = calloc(jf->n ? jf->n : 1, sizeof(*jobs)), **out = NULL;
    size_t *idx = calloc(jf->n ? jf->n : 1, sizeof(*idx)), m = 0;
    struct llmsb_err err = {0};
    int rc = LLMSB_ERR_NOMEM;

    for (size_t i = 0; jobs && idx && i < jf->n; i++) {
        if (!pick(p, i, results))
            continue;
        if (!(jobs[m] = cJSON_Duplicate(jf->jobs[i], 1)))
            goto out;
        if (!p->explicit_[i])
            cJSON_AddStringToObject(jobs[m], "id", p->ids[i]);
        if (recheck)
            cJSON_AddStringToObject(jobs[m], "recheck", recheck);
        idx[m++] = i;
    }
    if (jobs && idx && (out = calloc(m ? m : 1, sizeof(*out))))
        rc = m ? batch_run(&g->cfg, bo, jobs, m, out, &err) : BATCH_DONE;
    if (rc < 0)
        cli_error("%s", err.msg[0] ? err.msg : "submit --local: out of memory");
    for (size_t k = 0; out && k < m; k++)
        if (out[k]) { /* a recheck stopped before its end leaves the first result */
            cJSON_Delete(results[idx[k]]);
            results[idx[k]] = out[k];
        }
out:
    for (size_t k = 0; jobs && k < m; k++)
        cJSON_Delete(jobs[k]);
    free(jobs);
    free(idx);
    free(out);
    return rc;
}

static int pick_run(const struct plan *p, size_t i, cJSON **results)
{
    (void)results;
    return p->rep[i] == i;
}

static int submit_local(struct cli_globals *g, const struct submit_opts *o, struct jobfile *jf,
                        struct plan *p)
{
    cJSON **results = calloc(jf->n ? jf->n : 1, sizeof(*results));
    int *rechecked = calloc(jf->n ? jf->n : 1, sizeof(int));
    struct progress c = {isatty(STDERR_FILENO), 0, 0, clock_mono_ms(), 0};
    struct batch_opts bo = {o->slots ? (int)o->slots : (int)g->cfg.slots,
                            o->timeout_s > 0 ? c.started_ms + (int64_t)(o->timeout_s * 1000) : 0,
                            local_progress, &c};
    int rc = EXIT_INTERNAL;

    if (!results || !rechecked || (p->dedup && plan_dedup(jf, p, 0) != 0))
        goto out;
    for (size_t i = 0; i < jf->n; i++) /* default ids: job-N */
        if (!p->explicit_[i]) {
            free(p->ids[i]);
            if (asprintf(&p->ids[i], "job-%zu", i + 1) < 0)
                p->ids[i] = NULL;
            if (!p->ids[i])
                goto out;
        }
    cli_signals(); /* Ctrl-C and SIGTERM stop the run; the summary follows */
    if ((rc = local_batch(g, p, jf, &bo, pick_run, NULL, results)) < 0) {
        rc = EXIT_INTERNAL;
        goto out;
    }
    if (rc == BATCH_DONE && o->recheck) {
        for (size_t i = 0; i < jf->n; i++) /* a run and its copies (filled from it) */
            rechecked[i] = recheckable(p, p->rep[i], results);
        bo.slots = 1; /* alone: one slot, nothing else running */
        c = (struct progress){isatty(STDERR_FILENO), 0, 0, clock_mono_ms(), 0};
        if ((rc = local_batch(g, p, jf, &bo, recheckable, status_name(STATUS_TIMEOUT), results)) <
            0) {
            rc = EXIT_INTERNAL;
            goto out;
        }
    }
    fill_copies(p, results);
    if (o->recheck)
        count_flaky(p, rechecked, results);
    if (rc == BATCH_DONE)
        rc = finish_submit(o, jf, p, results);
    else
        rc = finish_early(o, jf, p, results,
                          rc == BATCH_STOPPED ? EXIT_INTERRUPTED : EXIT_WAIT_TIMEOUT,
                          "they were stopped and their containers removed");
out:
    for (size_t i = 0; results && i < jf->n; i++)
        cJSON_Delete(results[i]);
    free(results);
    free(rechecked);
    return rc;
}

/* ---- through Redis ---------------------------------------------------------------- */

static void count_worker(void *ud, const char *name, const struct fields *f)
{
    (void)name, (void)f;
    (*(int *)ud)++;
}

static void warn_if_no_worker(struct queue *q)
{
    struct queue_stats st;
    struct llmsb_err err = {0};
    int alive = 0;

    if (queue_stats(q, &st, count_worker, &alive, &err) == 0 && alive == 0)
        fprintf(stderr,
                "warning: no worker is alive on %s (no heartbeat): the jobs wait in the queue "
                "until one starts (llm-sandbox worker)\n",
                q->prefix);
}

/* 1 when r ends job i: final, and a recheck's when i was sent again. */
static int result_ends(const cJSON *r, const int *rechecked, size_t i)
{
    return cli_result_final(r) &&
           (!rechecked || !rechecked[i] || cJSON_IsTrue(cJSON_GetObjectItem(r, "rechecked")));
}

/* Waits until every id without a result in results has a final result
 * (one of a recheck for those rechecked[i] marks; NULL: none), the timeout,
 * or Ctrl-C.  Returns 0, EXIT_WAIT_TIMEOUT or EXIT_INTERRUPTED. */
static int wait_results(struct queue *q, const struct plan *p, char *last, double timeout_s,
                        const int *rechecked, cJSON **results)
{
    struct progress pr = {isatty(STDERR_FILENO), 0, 0, clock_mono_ms(), 0};
    struct llmsb_err err = {0};
    size_t done = 0, need = 0;
    int64_t deadline = timeout_s > 0 ? clock_mono_ms() + (int64_t)(timeout_s * 1000) : 0;
    int64_t next_sweep = 0;
    char why[8];

    for (size_t i = 0; i < p->n; i++)
        need += results[i] == NULL;
    while (done < need) {
        struct queue_entry *e;
        size_t ne;
        if (llmsb_interrupted)
            return EXIT_INTERRUPTED;
        if (deadline && clock_mono_ms() > deadline)
            return EXIT_WAIT_TIMEOUT;
        if (queue_results_read(q, last, 64, 1000, &e, &ne, &err) != 0) {
            if (llmsb_interrupted)
                return EXIT_INTERRUPTED;
            fprintf(stderr, "submit: %s; reconnecting\n", err.msg);
            sleep(1);
            queue_reconnect(q, &err);
            next_sweep = 0;
            continue;
        }
        queue_entries_free(e, ne);
        /* a sweep over unfinished ids: cheap, and covers ids whose result
         * was there before this submit (--reuse) */
        if (ne || clock_mono_ms() >= next_sweep) {
            for (size_t i = 0; i < p->n; i++) {
                if (results[i])
                    continue;
                cJSON *r = cli_fetch_result(q, p->ids[i]);
                if (result_ends(r, rechecked, i)) {
                    results[i] = r;
                    done++;
                    pr.failed += job_failed(r, p->checked[i], why, sizeof(why));
                } else {
                    cJSON_Delete(r);
                }
            }
            next_sweep = clock_mono_ms() + 3000;
            show_progress(&pr, done, need);
        }
    }
    return 0;
}

/* Enqueues job i with its copies (and recheck: the status it rechecks, or
 * NULL); a job without an id gets its entry id (a recheck: the first
 * one's, as its id).  Returns 0 or a negative
 * code with err. */
static int enqueue_one(struct queue *q, const struct jobfile *jf, struct plan *p, size_t i,
                       const char *recheck, struct llmsb_err *err)
{
    char entry[QUEUE_ENTRY_ID_MAX], *copies = copies_field(p, i);
    cJSON *job = NULL;
    struct fields f;
    int rc;

    fields_init(&f, QUEUE_MAX_FIELDS);
    if (p->live_off && cJSON_GetObjectItemCaseSensitive(jf->jobs[i], "live") &&
        (job = cJSON_Duplicate(jf->jobs[i], 1))) /* an older worker would call it invalid */
        cJSON_DeleteItemFromObjectCaseSensitive(job, "live");
    rc = jobfile_fields(job ? job : jf->jobs[i], &f);
    cJSON_Delete(job);
    if (rc == 0 && copies)
        rc = fields_adds(&f, "copies", copies);
    if (rc == 0 && recheck)
        rc = fields_adds(&f, "recheck", recheck);
    if (rc == 0 && recheck && !p->explicit_[i]) /* its result replaces the first */
        rc = fields_adds(&f, "id", p->ids[i]);
    if (rc != 0)
        llmsb_err_set(err, rc, "more than %d fields", QUEUE_MAX_FIELDS);
    else
        rc = queue_enqueue(q, &f, entry, sizeof(entry), err);
    fields_release(&f);
    free(copies);
    if (rc == 0 && !p->explicit_[i] && !recheck) {
        free(p->ids[i]);
        p->ids[i] = strdup(entry);
    }
    return rc;
}

/* Enqueues the jobs not reused, a copy riding on the job whose run it
 * shares. Returns 0, -1 on an error (said), or 1 when Ctrl-C or SIGTERM
 * stopped it: the ids of those enqueued (they will run) are printed and
 * the rest are not sent. */
static int enqueue_all(struct queue *q, const struct jobfile *jf, struct plan *p)
{
    struct llmsb_err err = {0};
    size_t sent = 0;

    for (size_t i = 0; i < jf->n; i++) {
        int rc;

        if (llmsb_interrupted) {
            cli_error("interrupted: %zu of %zu jobs were enqueued and will run; their ids follow",
                      sent, jf->n);
            for (size_t k = 0; k < jf->n; k++) /* the runs sent, and copies riding on them */
                if (!p->reused[k] && p->rep[k] < i)
                    printf("%s\n", p->ids[k]);
            return 1;
        }
        if (p->reused[i] || p->rep[i] != i)
            continue;
        if ((rc = enqueue_one(q, jf, p, i, NULL, &err)) != 0) {
            cli_error("%s:%zu: enqueue: %s (%zu of %zu jobs were enqueued)", jf->name, jf->lines[i],
                      err.msg, sent, jf->n);
            return -1;
        }
        sent++;
    }
    fprintf(stderr, "submitted %zu job(s) to %s:jobs", sent, q->prefix);
    if (p->copies)
        fprintf(stderr, ", carrying %zu copies (identical jobs: one run each)", p->copies);
    fputc('\n', stderr);
    return 0;
}

/* --recheck-timeouts through Redis: each run whose result is a timeout is
 * sent again with recheck (a worker runs it with its other slots idle; its
 * result replaces the first, and that of each copy whose result is a
 * timeout too: a copy cancelled keeps its own), then waited for.  When the
 * wait ends first, the first results stand.  Returns what wait_results
 * does, or EXIT_INTERNAL (said). */
static int recheck_redis(struct queue *q, const struct jobfile *jf, struct plan *p, char *last,
                         double timeout_s, cJSON **results)
{
    int *again = calloc(jf->n ? jf->n : 1, sizeof(int)), rc = 0;
    cJSON **first = calloc(jf->n ? jf->n : 1, sizeof(*first));
    struct llmsb_err err = {0};
    size_t n = 0;

    if (!again || !first) {
        free(again);
        free(first);
        return EXIT_INTERNAL;
    }
    for (size_t i = 0; i < jf->n && rc == 0; i++) {
        if (!recheckable(p, i, results))
            continue;
        if (enqueue_one(q, jf, p, i, status_name(STATUS_TIMEOUT), &err) != 0) {
            cli_error("%s:%zu: recheck: %s", jf->name, jf->lines[i], err.msg);
            rc = EXIT_INTERNAL;
        }
        for (size_t c = i; c != NO_COPY; c = p->next[c])
            if (is_timeout(results[c])) {
                again[c] = 1;
                first[c] = results[c];
                results[c] = NULL;
            }
        n++;
    }
    if (n)
        fprintf(stderr, "submit: %zu timeout(s) sent again, each to run alone on a worker\n", n);
    if (rc == 0)
        rc = wait_results(q, p, last, timeout_s, again, results);
    for (size_t i = 0; i < jf->n; i++)
        if (again[i] && !results[i])
            results[i] = first[i];
        else
            cJSON_Delete(first[i]);
    if (rc != EXIT_INTERNAL)
        count_flaky(p, again, results);
    free(again);
    free(first);
    return rc;
}

/* ---- workers older than a feature (docs/operations.md, rolling upgrades) ------------ */

/* 1 when a live worker lacks feature (said: which workers, and what submit
 * does instead), 0 when none does (or none is alive), -1 when the
 * heartbeats could not be read (said). */
static int workers_lack(struct queue *q, enum llmsb_feature feature, const char *instead)
{
    const struct feature_info *fi = feature_info(feature);
    struct queue_workers_check c;
    struct llmsb_err err = {0};

    if (queue_workers_check(q, fi->name, &c, &err) != 0) {
        cli_error("submit: the workers' heartbeats: %s", err.msg);
        return -1;
    }
    if (!c.lacking)
        return 0;
    fprintf(stderr, "submit: %d of %d live worker(s) are older than %s: %s; %s\n", c.lacking,
            c.alive, fi->what, c.lacking_names, instead);
    return 1;
}

/* Before anything is sent (a --rerun deletes results): --recheck-timeouts
 * is refused when a live worker would call a recheck invalid, and live
 * jobs go without live when one would call them so.  Returns 0,
 * EXIT_USAGE (refused) or EXIT_INTERNAL, said. */
static int check_workers(struct queue *q, const struct submit_opts *o, const struct jobfile *jf,
                         struct plan *p)
{
    char instead[200];
    size_t live = 0;
    int lack;

    if (o->recheck &&
        (lack = workers_lack(
             q, FEATURE_RECHECK,
             "upgrade them, or submit without --recheck-timeouts (nothing was enqueued)")) != 0)
        return lack < 0 ? EXIT_INTERNAL : EXIT_USAGE;
    for (size_t i = 0; i < jf->n; i++)
        live += cJSON_GetObjectItemCaseSensitive(jf->jobs[i], "live") != NULL;
    snprintf(instead, sizeof(instead),
             "the %zu job(s) with live are sent without it (no live output: they run as "
             "before, and result --follow prints their output when they end)",
             live);
    if (live && (lack = workers_lack(q, FEATURE_LIVE, instead)) != 0) {
        if (lack < 0)
            return EXIT_INTERNAL;
        p->live_off = 1;
    }
    return 0;
}

/* Dedup undone: every job its own run (workers older than it). */
static void plan_undedup(struct plan *p, const char *why)
{
    p->dedup = 0;
    p->dedup_off = why;
    p->copies = p->runs = 0;
    for (size_t i = 0; i < p->n; i++) {
        p->rep[i] = i, p->next[i] = NO_COPY;
        p->runs += !p->reused[i];
    }
}

static int submit_redis(struct cli_globals *g, const struct submit_opts *o, struct jobfile *jf,
                        struct plan *p)
{
    struct queue q;
    struct llmsb_err err = {0};
    char last[64];
    cJSON **results = calloc(jf->n ? jf->n : 1, sizeof(*results));
    int rc = 0, wrc;

    if (!results || queue_open(&q, g->cfg.redis_url, g->cfg.redis_prefix, NULL, 10000, &err) != 0 ||
        queue_group_ensure(&q, &err) != 0 || queue_results_last_id(&q, last, sizeof(last), &err)) {
        cli_error("%s (is redis-server running at %s?)", err.msg, g->cfg.redis_url);
        free(results);
        return EXIT_INTERNAL;
    }
    if ((rc = check_workers(&q, o, jf, p)) != 0)
        goto out;
    if (check_existing(&q, jf, p, o->existing) != 0) {
        rc = EXIT_USAGE;
        goto out;
    }
    if (p->dedup && plan_dedup(jf, p, 1) != 0) {
        rc = EXIT_INTERNAL;
        goto out;
    }
    if (p->copies &&
        (wrc = workers_lack(&q, FEATURE_DEDUP, "dedup is off: every job runs on its own")) != 0) {
        if (wrc < 0) {
            rc = EXIT_INTERNAL;
            goto out;
        }
        plan_undedup(p, "workers older than dedup");
    }
    cli_signals(); /* from here Ctrl-C and SIGTERM are answered, not fatal */
    if ((wrc = enqueue_all(&q, jf, p)) != 0) {
        rc = wrc > 0 ? EXIT_INTERRUPTED : EXIT_INTERNAL;
        goto out;
    }
    warn_if_no_worker(&q);
    if (!o->wait) {
        for (size_t i = 0; i < jf->n; i++)
            printf("%s\n", p->ids[i]);
        goto out;
    }
    wrc = wait_results(&q, p, last, o->timeout_s, NULL, results);
    if (wrc == 0 && o->recheck &&
        (wrc = recheck_redis(&q, jf, p, last, o->timeout_s, results)) == EXIT_INTERNAL) {
        rc = wrc;
        goto out;
    }
    if (wrc != 0)
        rc = finish_early(o, jf, p, results, wrc,
                          "they stay queued and keep running (llm-sandbox result ID, or "
                          "cancel them)");
    else
        rc = finish_submit(o, jf, p, results);
out:
    for (size_t i = 0; i < jf->n; i++)
        cJSON_Delete(results[i]);
    free(results);
    queue_close(&q);
    return rc;
}

int cmd_submit(struct cli_globals *g, int argc, char **argv)
{
    struct submit_opts o = {0};
    struct jobfile jf;
    struct llmsb_err err = {0};
    struct plan p;
    size_t bad, invalid = 0;
    int rc;

    if (parse_submit(g, argc, argv, &o) != 0 || cli_config_finish(g) != 0)
        return EXIT_USAGE;
    o.cfg = &g->cfg;
    if (jobfile_load(&jf, o.file, &err) != 0) {
        cli_error("%s", err.msg);
        return EXIT_USAGE;
    }
    if (plan_init(&p, jf.n) != 0) {
        jobfile_release(&jf);
        return EXIT_INTERNAL;
    }
    p.dedup = !o.no_dedup;
    p.dedup_off = "--no-dedup";
    p.recheck = o.recheck;
    bad = validate(&g->cfg, &jf, &p, &invalid);
    if (bad && !(o.allow_invalid && bad == invalid)) {
        fprintf(stderr, "submit: %zu problem(s) in %s; nothing was %s%s\n", bad, jf.name,
                o.local ? "run" : "enqueued",
                bad == invalid ? " (--allow-invalid submits such jobs as invalid results)" : "");
        rc = EXIT_USAGE;
    } else {
        if (bad)
            fprintf(stderr, "submit: %zu invalid job(s) submitted anyway (--allow-invalid)\n", bad);
        rc = o.local ? submit_local(g, &o, &jf, &p) : submit_redis(g, &o, &jf, &p);
    }
    plan_release(&p);
    jobfile_release(&jf);
    return rc;
}
