/* status.h - the one table of job statuses (docs/statuses.md): name, the exit
 * code of `run`, whether it is final, and whose fault it is.  Statuses that
 * arrive as text (from the agent, from Redis, from a user) are parsed
 * against this table; nothing else in the tree spells a status. */
#ifndef LLMSB_STATUS_H
#define LLMSB_STATUS_H

#include <stddef.h>

enum job_status {
    STATUS_NONE = 0, /* not decided yet */
    STATUS_RUNNING,
    STATUS_OK,
    STATUS_RUNTIME_ERROR,
    STATUS_COMPILE_ERROR,
    STATUS_INSTALL_ERROR,
    STATUS_TIMEOUT,
    STATUS_MEMORY_LIMIT,
    STATUS_OUTPUT_LIMIT,
    STATUS_BLOCKED,
    STATUS_INVALID,
    STATUS_CANCELLED,
    STATUS_INTERNAL_ERROR,
    STATUS_SESSION_LOST,
    STATUS_COUNT
};

enum status_fault {
    FAULT_NONE = 0, /* nothing went wrong (ok, cancelled, running) */
    FAULT_USER,     /* the program or the job itself: a result, never a retry */
    FAULT_INFRA     /* ours: retried, then dead-lettered */
};

/* `run` exits with the program's own code for these */
#define STATUS_EXIT_PROGRAM (-1)

struct status_info {
    const char *name; /* as written in results: "memory_limit" */
    int run_exit;     /* exit code of `run`, or STATUS_EXIT_PROGRAM */
    int final;        /* a job ends with it */
    int ran;          /* the program ran to an exit (passed may be true) */
    int has_exit;     /* exit_code is the program's: it ran (to an exit, or killed by a
                         limit); else the result's exit_code is null */
    int from_agent;   /* an agent may report it in a RESULT */
    enum status_fault fault;
    const char *meaning; /* one line for summaries and docs */
};

const struct status_info *status_info(enum job_status s);
/* The name; "" for STATUS_NONE or an out-of-range value. */
const char *status_name(enum job_status s);
/* Parses a status name of n bytes. Returns 0, or LLMSB_ERR_INVALID when it
 * is not a status (STATUS_NONE's "" included). */
int status_parse(const char *s, size_t n, enum job_status *out);
/* A final status? (running and none are not) */
int status_final(enum job_status s);

#endif
