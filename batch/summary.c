/* summary.c - a batch's outcomes: whether a job ended well and the line
 * that says why not, the tallies by status and by language (the pass rate
 * over every job that carries expectations, run or not), what dedup saved
 * and a recheck found, and the results one a line with the jobs that
 * never finished among them, so that none is left out of the numbers. */
#include "batch/batch_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/status.h"

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

int batch_job_failed(const cJSON *r, int checked, char *why, size_t wsz)
{
    const char *status = r ? batch__str(r, "status", "?") : NULL, *text;
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
    text = batch__str(r, "error", "");
    if (!*text)
        text = compile_line(batch__str(r, "compile_output", ""));
    if (!*text)
        text = telling_line(batch__str(r, "stderr", ""), 0);
    if (!*text) /* go test reports on stdout */
        text = telling_line(batch__str(r, "stdout", ""), 1);
    text += strspn(text, " \t");
    snprintf(why, wsz, "%s%s%.*s", status, *text ? ": " : "", (int)strcspn(text, "\n"), text);
    return 1;
}

/* ---- tallies -------------------------------------------------------------------- */

#define TALLIES_MAX 32 /* statuses or languages told apart; the rest count in the last */

struct tally {
    char key[32];
    int jobs, ok, checked, passed;
};

static struct tally *tally_of(struct tally *t, int *n, const char *key)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(t[i].key, key) == 0)
            return &t[i];
    if (*n >= TALLIES_MAX)
        return &t[TALLIES_MAX - 1];
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
static void runs_summary(const struct batch *b, FILE *out)
{
    if (b->dedup)
        fprintf(out, "\ndedup: %zu jobs, %zu distinct programs run, %zu copies (runs saved: %zu)\n",
                b->n, b->runs, b->copies, b->copies);
    else
        fprintf(out, "\ndedup: off (%s): %zu jobs, %zu runs\n", b->dedup_off, b->n, b->runs);
    if (b->o.recheck) {
        fprintf(out, "recheck: %zu timeout(s) run again alone, %zu changed (flaky)", b->rechecked,
                b->flaky);
        if (b->recheck_errors)
            fprintf(out, ", %zu internal error(s)", b->recheck_errors);
        if (b->recheck_pending)
            fprintf(out, ", %zu not back in time (the first result stands)", b->recheck_pending);
        fputc('\n', out);
    }
}

/* The jobs that did not end well, BATCH_SHOW_MAX of them; returns how many. */
static size_t failures(const struct batch *b, FILE *out)
{
    size_t failed = 0;
    char why[200];

    for (size_t i = 0; i < b->n; i++) {
        if (!batch_job_failed(b->results[i], b->jobs[i].checked, why, sizeof(why)))
            continue;
        if (failed++ == 0)
            fprintf(out, "\nnot passed:\n");
        if (failed <= BATCH_SHOW_MAX) /* ids were checked: printable UTF-8 */
            fprintf(out, "  %s (%s:%zu): %s\n", b->jobs[i].id, b->jf->name, b->jf->lines[i], why);
    }
    if (failed > BATCH_SHOW_MAX)
        fprintf(out, "  ... and %zu more (all in %s)\n", failed - BATCH_SHOW_MAX,
                batch__name(b, BATCH_NAME_OUT));
    return failed;
}

size_t batch_summary(const struct batch *b, FILE *out)
{
    struct tally st[TALLIES_MAX], lg[TALLIES_MAX], total = {"total", 0, 0, 0, 0};
    int nst = 0, nlg = 0;

    memset(st, 0, sizeof(st));
    memset(lg, 0, sizeof(lg));
    for (size_t i = 0; i < b->n; i++) {
        const cJSON *r = b->results[i];
        const char *status = r ? batch__str(r, "status", "unknown") : "not_finished";
        struct tally *l = tally_of(lg, &nlg, batch_job_lang(b, i));
        tally_of(st, &nst, status)->jobs++;
        l->jobs++, total.jobs++;
        if (strcmp(status, status_name(STATUS_OK)) == 0)
            l->ok++, total.ok++;
        if (b->jobs[i].checked) {
            l->checked++, total.checked++;
            if (r && cJSON_IsTrue(cJSON_GetObjectItem(r, "passed")))
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
    runs_summary(b, out);
    return failures(b, out);
}

/* ---- results -------------------------------------------------------------------- */

cJSON *batch_job_result(const struct batch *b, size_t i)
{
    cJSON *nf;

    if (b->results[i])
        return cJSON_Duplicate(b->results[i], 1);
    nf = cJSON_CreateObject();
    cJSON_AddStringToObject(nf, "id", b->jobs[i].id);
    cJSON_AddStringToObject(nf, "status", "not_finished");
    cJSON_AddNullToObject(nf, "exit_code"); /* it never ran (to an end) */
    return nf;
}

int batch_results_write(const struct batch *b, FILE *out)
{
    for (size_t i = 0; i < b->n; i++) {
        char *t = NULL;
        if (b->results[i]) {
            t = cJSON_PrintUnformatted(b->results[i]);
        } else {
            cJSON *nf = batch_job_result(b, i);
            t = cJSON_PrintUnformatted(nf);
            cJSON_Delete(nf);
        }
        if (fprintf(out, "%s\n", t ? t : "{}") < 0) {
            free(t);
            return -1;
        }
        free(t);
    }
    return 0;
}
