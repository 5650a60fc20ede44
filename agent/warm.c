/* warm.c - the table of warm helpers and the loops over it.
 *
 * A helper keeps its own state (what runs, what the last job asked for,
 * its failures in a row) in its file; the agent tells each the same
 * moments of a sandbox's life through this table: a job comes, the worker
 * says PRESTART, the sandbox is clean and idle, a process was reaped, the
 * agent ends.  A new helper is a file of its own and one row here.  What
 * a helper does inside a step (the zygote forks the run, the process
 * started ahead is handed over, the warm javac serves the compile) is the
 * step's to ask for by name: those are no life-cycle. */
#include "warm.h"

#include "javac.h"
#include "prespawn.h"
#include "zygote.h"

static const struct warm_helper helpers[] = {
    {zygote_for_job, zygote_prestart, zygote_idle, zygote_reaped, zygote_stop},
    {prespawn_for_job, prespawn_prestart, prespawn_idle, prespawn_reaped, prespawn_stop},
    {javac_for_job, javac_prestart, javac_idle, javac_reaped, javac_stop},
};
#define NHELPERS (sizeof(helpers) / sizeof(helpers[0]))

void warm_for_job(const struct agent_conf *conf, const struct proto_job *job)
{
    for (size_t i = 0; i < NHELPERS; i++)
        helpers[i].for_job(conf, job);
}

void warm_prestart(const struct agent_conf *conf, const struct proto_job *job)
{
    for (size_t i = 0; i < NHELPERS; i++)
        helpers[i].prestart(conf, job);
}

void warm_idle(const struct agent_conf *conf)
{
    for (size_t i = 0; i < NHELPERS; i++)
        helpers[i].idle(conf);
}

void warm_reaped(pid_t pid)
{
    for (size_t i = 0; i < NHELPERS; i++)
        helpers[i].reaped(pid);
}

void warm_stop(void)
{
    for (size_t i = 0; i < NHELPERS; i++)
        helpers[i].stop();
}
