/* gate.c - a recheck (job recheck) runs alone: while it waits and runs no
 * other slot of this worker claims or runs a job, so its timings are its
 * own.  Slots pass the gate around each claim; the worker's drain opens it. */
#include <pthread.h>

#include "common/clock.h"
#include "worker_int.h"

#define GATE_POLL_MS 200

static void gate_wait(struct worker *w)
{
    clock_cond_wait_ms(&w->gate_cv, &w->gate_mu, GATE_POLL_MS);
}

/* A slot about to claim a job: waits while a recheck waits or runs. */
void gate_enter(struct worker *w)
{
    pthread_mutex_lock(&w->gate_mu);
    while ((w->gate_waiting || w->gate_alone) && !atomic_load(&worker_stop))
        gate_wait(w);
    w->gate_active++;
    pthread_mutex_unlock(&w->gate_mu);
}

void gate_leave(struct worker *w)
{
    pthread_mutex_lock(&w->gate_mu);
    w->gate_active--;
    pthread_cond_broadcast(&w->gate_cv);
    pthread_mutex_unlock(&w->gate_mu);
}

/* A recheck (job recheck): waits until no other slot claims or runs a job,
 * then holds them off until gate_alone_end.  0, or -1 when the worker
 * drains meanwhile (the entry goes back). */
int gate_alone_begin(struct worker *w)
{
    int rc = 0;

    pthread_mutex_lock(&w->gate_mu);
    w->gate_active--; /* this slot's own claim */
    w->gate_waiting++;
    while ((w->gate_active > 0 || w->gate_alone) && !(rc = -atomic_load(&worker_stop)))
        gate_wait(w);
    w->gate_waiting--;
    if (rc == 0)
        w->gate_alone = 1;
    w->gate_active++;
    pthread_cond_broadcast(&w->gate_cv);
    pthread_mutex_unlock(&w->gate_mu);
    return rc ? -1 : 0;
}

void gate_alone_end(struct worker *w)
{
    pthread_mutex_lock(&w->gate_mu);
    w->gate_alone = 0;
    pthread_cond_broadcast(&w->gate_cv);
    pthread_mutex_unlock(&w->gate_mu);
}
