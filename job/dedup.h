/* dedup.h - which jobs of a submission are the same program (submit's
 * dedup, docs/jobs.md "copies"): a job's dedup form is its fields but the
 * few that cannot change the verdict, and jobs whose forms are equal byte
 * for byte share one run. */
#ifndef LLMSB_JOB_DEDUP_H
#define LLMSB_JOB_DEDUP_H

#include <stddef.h>
#include "common/common.h"
#include "common/fields.h"

/* The fields a job's dedup form leaves out: its name (id), its labels
 * (meta, copied to its result untouched), submit's own (copies, recheck)
 * and what it needs of a worker (needs: who runs it, not what it does).
 * Every other field is in, as given. */
extern const char *const job_dedup_ignored[];

/* Writes f's dedup form to out (reset first): every field but the ignored
 * ones, sorted by name, each as <name length>:<name><value length>:<value>,
 * so no two different lists share a form.  Returns 0, 1 when the job must
 * run on its own (a session's call or close, network: true (the world
 * outside is state), fields dropped or oversized), or a negative code. */
int job_dedup_form(const struct fields *f, struct buf *out);

/* Groups n jobs by form: rep[i] = i for a job that runs (the first of its
 * form, or one with alone[i] set), else the index of the job whose run it
 * shares.  Returns the number of runs, or a negative code (no memory). */
long job_dedup_group(const struct buf *forms, const int *alone, size_t n, size_t *rep);

#endif
