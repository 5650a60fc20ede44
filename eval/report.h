/* report.h - pass@k of a batch of checked jobs: grouped into tasks,
 * averaged per language and over all, printed as a table and written as a
 * JSON report and its Markdown twin. */
#ifndef LLMSB_EVAL_REPORT_H
#define LLMSB_EVAL_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "common/common.h"

/* One checked job of a batch for pass@k: its language, its task key. */
struct report_row {
    const char *lang, *key;
    int passed;
};
/* Groups rows into tasks (rows are sorted here), prints pass@1/10/100 per
 * language and in total to out when some task has several samples or path
 * is given, and writes path (JSON) and path.md (Markdown).  On an error
 * returns a negative code with err naming the file it could not write. */
int report_passk(FILE *out, struct report_row *rows, size_t n, const char *group_by,
                 const char *path, struct llmsb_err *err);

/* What a submission ran (submit's dedup and --recheck-timeouts). */
struct report_runs {
    size_t jobs, runs, copies; /* copies: jobs that shared an identical job's run */
    int dedup;                 /* 0: --no-dedup */
    int recheck;               /* --recheck-timeouts was on */
    size_t rechecked, flaky;   /* timeouts run again; of those, how many changed */
};
/* Adds a "runs" object to the JSON report at path and a "Runs" section to
 * path.md (both written by report_passk).  On an error returns a negative
 * code with err naming the file. */
int report_runs(const char *path, const struct report_runs *r, struct llmsb_err *err);

#endif
