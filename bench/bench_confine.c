/* bench_confine.c - what the agent's namespace filter (agent/confine.c)
 * costs the programs it covers: each kind of system call a job makes,
 * timed in a child without the filter and in a child with it, in turns
 * (ROUNDS of each, short ones: about 70 ms a side on gVisor, so that the
 * machine's other work meets both sides of a round alike): the medians,
 * and the median of the rounds' ratios.  Static, like the agent:
 * bench/bench_gvisor.sh runs it in a container on runc and on gVisor,
 * where every system call of a filtered process also runs the filter in
 * gVisor's own kernel.
 *   usage: bench_confine [SCALE]   (SCALE multiplies the loop counts) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/confine.h"
#include "bench/stats.h"

#define ROUNDS 41

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *thread_fn(void *arg)
{
    return arg;
}

/* One operation each; 0 or -1. */
static int op_getppid(void)
{
    return getppid() > 0 ? 0 : -1;
}

static int op_file(void)
{
    char b[64];
    int fd = open("/tmp/bench-confine", O_RDWR | O_CREAT | O_TRUNC, 0600);
    int rc = fd >= 0 && write(fd, "x", 1) == 1 && pread(fd, b, 1, 0) == 1 ? 0 : -1;

    if (fd >= 0)
        close(fd);
    return rc;
}

static int op_fork(void)
{
    int st = 0;
    pid_t pid = fork();

    if (pid == 0)
        _exit(0);
    return pid > 0 && waitpid(pid, &st, 0) == pid ? 0 : -1;
}

static int op_thread(void)
{
    pthread_t t;
    return pthread_create(&t, NULL, thread_fn, NULL) == 0 && pthread_join(t, NULL) == 0 ? 0 : -1;
}

static const struct {
    const char *name;
    int (*fn)(void);
    int count; /* per round, times SCALE */
} ops[] = {
    {"getppid", op_getppid, 2000},
    {"open+write+pread+close", op_file, 200},
    {"fork+exit+wait", op_fork, 20},
    {"thread create+join", op_thread, 40},
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* In a child (filtered or not): ns per operation of each op, written to
 * fd as NOPS doubles.  Exits 0, or 1 when an op failed. */
static void __attribute__((noreturn)) measure(int filtered, int scale, int fd)
{
    double per[NOPS];

    if (filtered && agent_confine_ns_filter() != 0) {
        fprintf(stderr, "bench_confine: install the filter: %s\n", strerror(errno));
        _exit(1);
    }
    for (size_t i = 0; i < NOPS; i++) {
        int n = ops[i].count * scale;
        double t0 = now_ns();
        for (int k = 0; k < n; k++)
            if (ops[i].fn() != 0)
                _exit(1);
        per[i] = (now_ns() - t0) / n;
    }
    _exit(write(fd, per, sizeof(per)) == (ssize_t)sizeof(per) ? 0 : 1);
}

/* One round of one side: its ns per op into per[].  Returns 0 or -1. */
static int round_of(int filtered, int scale, double per[NOPS])
{
    int p[2], st = 0;
    pid_t pid;
    ssize_t got;

    if (pipe(p) != 0 || (pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        measure(filtered, scale, p[1]);
    }
    close(p[1]);
    got = read(p[0], per, sizeof(double) * NOPS);
    close(p[0]);
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
                   got == (ssize_t)(sizeof(double) * NOPS)
               ? 0
               : -1;
}

int main(int argc, char **argv)
{
    double plain[NOPS][ROUNDS], filtered[NOPS][ROUNDS], ratio[NOPS][ROUNDS], per[NOPS];
    long long scale = 1;

    if (argc > 1 && parse_ll(argv[1], 1, 1000, &scale) != 0) {
        fprintf(stderr, "bench_confine: SCALE must be 1..1000 (got \"%s\")\n", argv[1]);
        return 2;
    }
    for (int r = 0; r < ROUNDS; r++) {
        if (round_of(0, (int)scale, per) != 0)
            return 1;
        for (size_t i = 0; i < NOPS; i++)
            plain[i][r] = per[i];
        if (round_of(1, (int)scale, per) != 0)
            return 1;
        for (size_t i = 0; i < NOPS; i++) {
            filtered[i][r] = per[i];
            ratio[i][r] = per[i] / plain[i][r];
        }
    }
    printf("%-24s %14s %14s %8s\n", "per operation (median)", "plain ns", "filtered ns", "ratio");
    for (size_t i = 0; i < NOPS; i++)
        printf("%-24s %14.0f %14.0f %7.2fx\n", ops[i].name, bench_pct(plain[i], ROUNDS, 0.5),
               bench_pct(filtered[i], ROUNDS, 0.5), bench_pct(ratio[i], ROUNDS, 0.5));
    unlink("/tmp/bench-confine");
    return 0;
}
