/* stats.h - percentiles for the benchmarks. */
#ifndef LLMSB_BENCH_STATS_H
#define LLMSB_BENCH_STATS_H

#include <stdlib.h>

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The p-th percentile (0..1) of v[0..n); sorts v. */
static inline double bench_pct(double *v, int n, double p)
{
    int i = (int)(p * (n - 1) + 0.5);
    qsort(v, (size_t)n, sizeof(*v), bench_cmp);
    return v[i < n ? i : n - 1];
}

#endif
