/* child.c - a job's process from fork to exec.
 *
 * Every step's process starts here, whoever asked for it: the step itself
 * (step.c) or the run step started ahead of the job (prespawn.c), so that
 * the two are the same process to the job.  In its own session, as the
 * sandbox uid, with the job's rlimits, no new privileges and a raised OOM
 * score so the kernel picks the job, not the agent; nothing of the
 * agent's open but what the step hands it. */
#include "child.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "job_limits.h"

extern char **environ;

void agent_child_exec(const struct agent_conf *conf, const struct agent_child *c, int in_fd,
                      int out_fd, int err_fd, const int *wait_fds)
{
    sigset_t none;

    setsid();
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        _exit(127);
    if (wait_fds &&
        (dup2(wait_fds[0], PRESPAWN_READY_FD) < 0 || dup2(wait_fds[1], PRESPAWN_GO_FD) < 0 ||
         close_range(3, PRESPAWN_READY_FD - 1, 0) != 0))
        _exit(127);
    if (wait_fds)
        closefrom(PRESPAWN_GO_FD + 1);
    else /* the hook's descriptors (the warm javac's connection): fd 3 on */
        closefrom(c->hook ? c->hook->fds(3) : 3);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    job_limits(c->job->fsize_limit, c->job->nofile, c->job->nproc);
    job_oom_first(); /* best effort: the cgroup limit still holds */
    if (agent_drop_privileges(conf) != 0) {
        dprintf(2, "llmsb-agent: cannot switch to uid %u: %s\n", (unsigned)conf->uid,
                strerror(errno));
        _exit(127);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (chdir(conf->work_dir) != 0)
        _exit(127);
    if (c->hook)
        c->hook->run(c->job, c->timeout_ms); /* returns when plain exec must run */
    environ = (char **)c->env;
    execvp(c->argv[0], c->argv);
    dprintf(2, "llmsb-agent: cannot run \"%s\": %s\n", c->argv[0], strerror(errno));
    _exit(127);
}

pid_t agent_child_spawn(const struct agent_conf *conf, const struct proto_job *job,
                        char *const *argv, char *const *env, const int fds[5])
{
    struct agent_child c = {argv, env, job, 0, NULL};
    pid_t pid;

    if ((pid = fork()) == 0)
        agent_child_exec(conf, &c, fds[0], fds[1], fds[2], fds + 3);
    return pid;
}
