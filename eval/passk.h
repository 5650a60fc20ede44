/* passk.h - pass@k, the unbiased estimator of the HumanEval paper (Chen et
 * al. 2021, "Evaluating Large Language Models Trained on Code"): with n
 * samples of a task of which c passed, 1 - C(n-c, k) / C(n, k). */
#ifndef LLMSB_PASSK_H
#define LLMSB_PASSK_H

#include <stddef.h>

/* pass@k of one task; -1 when n < k (not defined). */
double passk(int n, int c, int k);
/* How much of id names its task by default: all but a trailing "#N"
 * sample suffix ("HumanEval/0#3" -> "HumanEval/0"; "/N" is kept). */
size_t passk_task_len(const char *id);

#endif
