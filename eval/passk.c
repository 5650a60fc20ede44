/* passk.c - the pass@k estimator (see passk.h). */
#include "passk.h"

#include <string.h>

double passk(int n, int c, int k)
{
    double miss = 1.0;

    if (k < 1 || n < k || c < 0 || c > n)
        return -1;
    if (n - c < k) /* every draw of k holds a passing sample */
        return 1.0;
    /* C(n-c, k) / C(n, k) as a product, stable for large n */
    for (int i = n - c + 1; i <= n; i++)
        miss *= 1.0 - (double)k / i;
    return 1.0 - miss;
}

size_t passk_task_len(const char *id)
{
    size_t n = strlen(id), d = n;

    while (d > 0 && id[d - 1] >= '0' && id[d - 1] <= '9')
        d--;
    return d < n && d > 1 && id[d - 1] == '#' ? d - 1 : n;
}
