/* batch.h - a file of jobs as one batch, for every front end (`submit`,
 * MCP's submit_jobs, an HTTP front): checked whole before anything runs,
 * identical programs grouped to run once (dedup: the copies ride on the
 * job that runs and each gets its own result, copy_of), run in this
 * process over a runner or sent through Redis to the workers and waited
 * for, timeouts run again alone when asked (recheck), and summed up so
 * that a job that did not run or did not pass is never left out of the
 * numbers.  A front end parses its options, shows the lines the batch
 * says and prints what it wants of the results; the batch returns the
 * project's codes, installs no signal handler and never exits: it stops
 * when llmsb_interrupted or its cancel flag is set.
 *
 * The calls, in order: batch_init, batch_check; then in process
 * batch_local_plan and batch_local_run, or through Redis batch_queue_plan,
 * batch_queue_send and (to wait) batch_queue_wait; batch_summary, batch_report
 * and the results; batch_release.  A front end that installs signal handlers does
 * so after the plan: until then nothing has run or been sent. */
#ifndef LLMSB_BATCH_H
#define LLMSB_BATCH_H

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include "config/config.h"
#include "config/jobfile.h"

struct queue;
struct runner;
struct session_scope;

#define BATCH_SHOW_MAX 20          /* problems and failures listed before "... and N more" */
#define BATCH_NO_COPY ((size_t)-1) /* ends a run's list of copies */
#define BATCH_QUEUE_SWEEP_MS 3000  /* through Redis: every unfinished id is looked up this often */
#define BATCH_QUEUE_RECONNECT_MS 60000 /* an enqueue cut off by a failover: reconnect this long */

/* Through Redis, ids of the file that already have a result. */
enum batch_existing {
    BATCH_EXISTING_REFUSE = 0, /* refused: nothing is sent */
    BATCH_EXISTING_RERUN,      /* run again, the old result deleted first */
    BATCH_EXISTING_REUSE       /* the result stands; the job is not sent */
};

/* How a run or a wait ended; a negative code is an error (said). */
enum batch_end {
    BATCH_DONE = 0,     /* every job has a result */
    BATCH_STOPPED = 1,  /* llmsb_interrupted or the cancel flag */
    BATCH_TIMED_OUT = 2 /* timeout_s reached */
};

/* What a line the batch says is about, for the front end's prefix (the
 * CLI: nothing, "submit: ", "warning: ", "error: "). */
enum batch_say {
    BATCH_SAY_LINE = 0, /* as it is: a job's problem "FILE:LINE: ...", "... and N more" */
    BATCH_SAY_NOTE,     /* the batch as a whole */
    BATCH_SAY_WARNING,  /* it goes on, but the user should know */
    BATCH_SAY_ERROR     /* it could not do what it says */
};

/* The front end's names of the options a line may point to (the CLI's
 * flags, MCP's arguments), indexed by this. */
enum batch_name {
    BATCH_NAME_ALLOW_INVALID = 0, /* submit invalid jobs as invalid results */
    BATCH_NAME_RERUN,             /* existing: rerun */
    BATCH_NAME_REUSE,             /* existing: reuse */
    BATCH_NAME_NO_DEDUP,          /* dedup off */
    BATCH_NAME_RECHECK,           /* recheck on */
    BATCH_NAME_OUT,               /* where every result is, past the summary's list */
    BATCH_NAMES
};

/* Where a run or a wait stands (the progress callback's). */
struct batch_progress {
    size_t done, total, failed; /* of this phase's jobs: finished, all, not ended well */
    int recheck;                /* 0: the batch's runs; 1: the recheck of its timeouts */
    int64_t started_ms;         /* this phase's start (clock_mono_ms) */
};

struct batch_opts {
    int dedup;                    /* identical programs run once */
    int recheck;                  /* each timeout runs again, alone */
    int allow_invalid;            /* jobs the parser refuses become invalid results */
    int queue;                    /* through Redis (its messages say "enqueued", not "run") */
    enum batch_existing existing; /* through Redis: ids that already have a result */
    int slots;                    /* in process: jobs at a time (1 to 256) */
    double timeout_s;             /* > 0: in process the run's bound, through Redis each wait's */
    /* in process: the runner the jobs run on, its pool sized for at least
     * slots (NULL: the batch opens its own for each run and closes it
     * after: submit --local) */
    struct runner *runner;
    /* in process: whose names the jobs' sessions are in the runner's
     * table (exec/session.h: an MCP client's); NULL: the runner's own */
    const struct session_scope *session_scope;
    atomic_int *cancel;       /* a stop asked besides llmsb_interrupted (not SCHED_GO); NULL */
    const char *const *names; /* BATCH_NAMES strings: the front end's option names */
    /* Each line the batch says (no newline); NULL: none shown. */
    void (*say)(void *ud, enum batch_say kind, const char *line);
    /* As jobs finish (in process from the runner's threads, one at a
     * time); NULL: none. */
    void (*progress)(void *ud, const struct batch_progress *p);
    void *ud;
};

/* What the batch knows of each job of the file. */
struct batch_job {
    char *id;      /* the file's id; else in process job-N, through Redis its entry id once sent */
    char *meta;    /* its meta as JSON text, or NULL */
    int explicit_; /* the file gave the id */
    int checked;   /* it carries expectations (expect_stdout, expect_exit, cases) */
    int valid;     /* it parsed */
    int reused;    /* through Redis (reuse): an existing result stands; not sent */
    int sent;      /* through Redis: a run, enqueued */
    int rechecked; /* its timeout ran again (a run, or a copy of one) */
    size_t rep;    /* dedup: itself when it runs, else the job whose run it shares */
    size_t next;   /* dedup: a run's first copy, a copy's next one; BATCH_NO_COPY ends */
};

struct batch {
    const struct config *cfg; /* borrowed */
    const struct jobfile *jf; /* borrowed: must outlive the batch */
    struct batch_opts o;
    size_t n;
    struct batch_job *jobs;
    cJSON **results;          /* results[i]: job i's (owned), NULL while it has none */
    size_t problems, invalid; /* batch_check's: every problem; jobs the parser refused */
    size_t runs, copies;      /* jobs that run (reused ones not), jobs that share a run */
    size_t sent;              /* through Redis: runs enqueued */
    size_t rechecked, flaky;  /* jobs whose timeout ran again, and changed */
    size_t recheck_errors;    /* ... that ended internal_error */
    size_t recheck_pending;   /* ... whose recheck's result did not come back in time */
    int dedup;                /* dedup is on (older workers may turn it off) */
    const char *dedup_off;    /* why it is off: names[NO_DEDUP], or older workers */
    int live_off;             /* through Redis: live jobs go without live (older workers) */
    char last[64];            /* through Redis: the results stream's last entry before */
};

/* A batch of jf's jobs (jf and cfg must outlive it; o is copied).  Returns
 * 0 or LLMSB_ERR_NOMEM (err set); batch_release either way. */
int batch_init(struct batch *b, const struct config *cfg, const struct jobfile *jf,
               const struct batch_opts *o, struct llmsb_err *err);
void batch_release(struct batch *b);

/* Each job through the worker's own parser, then duplicate ids and copies
 * naming a job's id, each problem said with its file and line.  Returns
 * 0 to go on (no problem, or only invalid jobs and allow_invalid), else
 * LLMSB_ERR_INVALID: nothing may run or be sent (said, and in err). */
int batch_check(struct batch *b, struct llmsb_err *err);

/* In process: the dedup groups and each job's id (job-N where the file
 * gave none).  Returns 0 or LLMSB_ERR_NOMEM (said). */
int batch_local_plan(struct batch *b, struct llmsb_err *err);
/* In process: the runs (slots at a time), then with recheck the timeouts
 * again, one at a time (each on a runner of its own unless o.runner);
 * each copy gets its run's result.  A stop or the timeout stops every
 * running job, removes its container and leaves its result NULL.  Returns
 * an enum batch_end, or a negative code (said; the engine cannot be
 * reached). */
int batch_local_run(struct batch *b, struct llmsb_err *err);

/* Through Redis (q opened, its group made): the workers' heartbeats
 * (recheck refused beside a worker older than it, live jobs without live,
 * dedup off), the ids that already have a result (o.existing), the dedup
 * groups.  Returns 0, LLMSB_ERR_INVALID (refused: nothing was sent or
 * deleted but by rerun; said) or another negative code (said). */
int batch_queue_plan(struct batch *b, struct queue *q, struct llmsb_err *err);
/* Enqueues the runs, each copy riding on its run's entry; a job without an
 * id gets its entry's.  Returns BATCH_DONE, BATCH_STOPPED (a stop came:
 * the runs sent will run, the rest were not sent; batch_job_sent says
 * which jobs) or a negative code (said). */
int batch_queue_send(struct batch *b, struct queue *q, struct llmsb_err *err);
/* 1 when job i will get a result from what was sent: a run sent, or a copy
 * riding on one. */
int batch_job_sent(const struct batch *b, size_t i);
/* Waits for every job's final result (through a dropped connection), then
 * with recheck sends each run whose result is a timeout again (a worker
 * runs it alone) and waits for those.  Returns an enum batch_end (a wait
 * cut short leaves the jobs queued and running; a recheck not back keeps
 * the first result) or a negative code (said). */
int batch_queue_wait(struct batch *b, struct queue *q, struct llmsb_err *err);

/* Job id's result hash from Redis as a JSON object (result_fields_json's
 * form), or NULL when there is none (or Redis did not answer).  New;
 * caller deletes.  raw: NULL, or it gets the hash's fields as Redis holds
 * them (the output's own bytes; initialised either way, caller releases). */
cJSON *batch_result_get(struct queue *q, const char *id, struct fields *raw);

/* Job i's language: its lang, else (a session's later call) that of the
 * session's first call that names one, else "?".  Borrowed from the file. */
const char *batch_job_lang(const struct batch *b, size_t i);
/* 1 when result r (NULL: none) did not end well: no result, a status other
 * than ok or (checked) expectations not met; why gets the first line of
 * the reason. */
int batch_job_failed(const cJSON *r, int checked, char *why, size_t wsz);
/* Job i's result as --out writes it: its own, or {id, status
 * "not_finished", exit_code null}.  New; caller deletes. */
cJSON *batch_job_result(const struct batch *b, size_t i);
/* The summary: jobs by status, by language (the pass rate over every job
 * that carries expectations, run or not), what dedup saved and what a
 * recheck found, then the jobs that did not pass (BATCH_SHOW_MAX of them).
 * Returns how many did not end well. */
size_t batch_summary(const struct batch *b, FILE *out);
/* One result a line, in the file's order (batch_job_result).  Returns 0 or
 * -1 on a write error. */
int batch_results_write(const struct batch *b, FILE *out);

/* ---- figures (report.c) ---- */

/* What batch_report prints and writes. */
struct batch_report_opts {
    const char *verb;     /* the front end's name for the run, in the provenance ("submit") */
    const char *group_by; /* the task of a job: "id" or "meta.FIELD"; NULL: meta.task_id,
                             else the id less a trailing "#N" */
    const char *path;     /* the report: JSON to path, Markdown to path.md; NULL: none */
    int phases;           /* print the per-phase table and the provenance without a path too */
};
/* pass@k of the jobs with expectations (eval/report.h's report_passk), to
 * out when some task has several samples, a path or phases is given; with
 * a path or phases the per-phase percentiles of the results and the
 * provenance (this machine, the engine, the images' ids, the limits);
 * with a path the report and what ran (dedup, rechecks).  Returns 0, or a
 * negative code with err naming the file it could not write. */
int batch_report(const struct batch *b, FILE *out, const struct batch_report_opts *o,
                 struct llmsb_err *err);
/* 1 when result r (NULL: none) is a verdict on its program: a final status
 * that is not ours (internal_error), nor the job's (invalid), nor a stop
 * (cancelled, session_lost), and a "passed" (the job has expectations). */
int batch_job_graded(const cJSON *r);

#endif
