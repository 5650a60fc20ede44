/* decide.c - the scheduler's decisions: pure functions of their
 * arguments, so every rule can be tested alone (tests/unit/test_scheduler.c)
 * and the Redis worker and `submit --local` follow the same ones. */
#include "decide.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int64_t scheduler_backoff_ms(long long attempt, const struct sched_backoff *b)
{
    long long shift = attempt <= 1 ? 0 : attempt - 1;
    int64_t d;

    if (shift > SCHED_BACKOFF_DOUBLINGS)
        shift = SCHED_BACKOFF_DOUBLINGS;
    d = b->base_ms << shift;
    if (b->max_ms > 0 && d > b->max_ms)
        d = b->max_ms;
    return d < 0 ? 0 : d;
}

struct sched_decision scheduler_decide(enum sched_outcome o, long long attempt, int max_attempts,
                                       const struct sched_backoff *b)
{
    struct sched_decision d = {SCHED_FINISH, 0};

    switch (o) {
    case SCHED_OUT_FINAL:
    case SCHED_OUT_CANCELLED:
        break; /* user-code failures are results, never retries */
    case SCHED_OUT_ABORTED:
        d.action = SCHED_GIVE_BACK;
        break;
    case SCHED_OUT_UNAVAILABLE:
        d.action = SCHED_PAUSE;
        break;
    case SCHED_OUT_ELSEWHERE:
        d.action = SCHED_HAND_OVER;
        break;
    case SCHED_OUT_FAILED:
        if (attempt >= max_attempts) {
            d.action = SCHED_DEAD_LETTER;
        } else {
            d.action = SCHED_RETRY;
            d.delay_ms = scheduler_backoff_ms(attempt, b);
        }
        break;
    }
    return d;
}

enum sched_admit scheduler_admit(long long deliveries, int max_attempts, int already_final,
                                 int another_runs, int cancel_requested)
{
    if (already_final)
        return SCHED_ADMIT_ACK;
    if (another_runs) /* no attempt of its own yet: its count and a cancel wait too */
        return SCHED_ADMIT_WAIT;
    if (deliveries > max_attempts)
        return SCHED_ADMIT_DEAD_LETTER;
    if (cancel_requested)
        return SCHED_ADMIT_CANCEL;
    return SCHED_ADMIT_RUN;
}

int64_t scheduler_backstop_ms(int64_t run_ms, int64_t compile_ms, int64_t install_ms,
                              int64_t grace_ms)
{
    return run_ms + compile_ms + install_ms + grace_ms;
}

int scheduler_claim_budget(int slots, int busy, int held)
{
    int free_slots = slots - busy - held;
    return free_slots > 0 ? free_slots : 0;
}

int sched_timer_due(struct sched_timer *t, int64_t now)
{
    if (now < t->next_ms)
        return 0;
    t->next_ms = now + t->every_ms;
    return 1;
}

/* ---- picking a lane ----------------------------------------------------------- */

int sched_pick_init(struct sched_pick *p, const char *weights, struct llmsb_err *err)
{
    memset(p, 0, sizeof(*p));
    return lane_weights_parse(weights, p->weight, &p->strict, err);
}

/* The classes present in lanes, by credit plus weight (strict: by
 * class), into cls. */
static int pick_classes(const struct sched_pick *p, const struct lane *lanes, size_t n,
                        int cls[LANE_CLASSES])
{
    int present[LANE_CLASSES] = {0}, k = 0;
    long long tent[LANE_CLASSES];

    for (size_t i = 0; i < n; i++)
        present[lanes[i].cls] = 1;
    for (int c = 0; c < LANE_CLASSES; c++) {
        tent[c] = p->credit[c] + p->weight[c];
        if (!present[c])
            continue;
        int at = k++;
        /* insertion by credit, the higher class first on a tie */
        while (at > 0 && !p->strict && tent[cls[at - 1]] < tent[c]) {
            cls[at] = cls[at - 1];
            at--;
        }
        cls[at] = c;
    }
    return k;
}

void sched_pick_order(const struct sched_pick *p, const struct lane *lanes, size_t n, size_t *order)
{
    int cls[LANE_CLASSES], k = pick_classes(p, lanes, n, cls);
    size_t at = 0;

    for (int ci = 0; ci < k; ci++) {
        int c = cls[ci];
        size_t first = n, start = n;
        for (size_t i = 0; i < n; i++) {
            if (lanes[i].cls != (enum lane_class)c)
                continue;
            if (first == n)
                first = i;
            if (start == n && strcmp(lanes[i].tenant, p->last[c]) > 0)
                start = i;
        }
        if (start == n)
            start = first;
        /* from start to the class's last lane, then from its first */
        for (size_t i = start; i < n; i++)
            if (lanes[i].cls == (enum lane_class)c)
                order[at++] = i;
        for (size_t i = first; i < start; i++)
            if (lanes[i].cls == (enum lane_class)c)
                order[at++] = i;
    }
}

void sched_pick_done(struct sched_pick *p, const struct lane *lanes, const size_t *order, size_t n,
                     size_t pos)
{
    int empty[LANE_CLASSES] = {0}, present[LANE_CLASSES] = {0};
    long long total = 0;
    enum lane_class d;

    if (pos >= n)
        return;
    d = lanes[order[pos]].cls;
    snprintf(p->last[d], sizeof(p->last[d]), "%s", lanes[order[pos]].tenant);
    if (p->strict)
        return;
    for (size_t i = 0; i < n; i++) {
        present[lanes[order[i]].cls] = 1;
        if (i < pos && lanes[order[i]].cls != d)
            empty[lanes[order[i]].cls] = 1;
    }
    /* deltas on the credits as they are now, not values computed at
     * order time: picks of several slots between one order and its done
     * each count, and a class another slot found empty keeps its debt */
    for (int c = 0; c < LANE_CLASSES; c++) {
        if (present[c] && !empty[c]) {
            p->credit[c] += p->weight[c];
            total += p->weight[c];
        } else if (p->credit[c] > 0) {
            p->credit[c] = 0;
        }
    }
    p->credit[d] -= total;
}
