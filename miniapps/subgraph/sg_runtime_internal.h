/* What the runtime's files share among themselves: sg_runtime.c (create,
 * destroy, the clock, sleeping and waking), sg_queue.c (ready queues),
 * sg_event.c (events), sg_eager.c (the eager path, barriers) and
 * sg_worker.c (the workers' loop, the host's waits). Not part of the API;
 * what they share with the subgraph path is in sg_internal.h. */
#ifndef SG_RUNTIME_INTERNAL_H
#define SG_RUNTIME_INTERNAL_H

#include "sg_internal.h"

#define cpu_relax sg_cpu_relax

/* sg_runtime.c: sleeping and waking on one 32-bit word. */
void sg_park_on(_Atomic uint32_t *word, uint32_t expected);
void sg_unpark_all(_Atomic uint32_t *word);

/* sg_queue.c */
int sg_queue_init(sg_queue *q);
void sg_queue_free(sg_queue *q);
sg_work *sg_queue_pop(sg_queue *q);
/* Wake sleeping workers after a push. */
void sg_wake_workers(sg_runtime *rt);
/* Queue an eager op for any worker. */
void sg_push_shared(sg_runtime *rt, sg_work *w);

/* sg_eager.c: runs an eager op (SG_WORK_OP) on worker, then completes it. */
void sg_eager_run(sg_runtime *rt, sg_work *w, int worker);

/* sg_worker.c */
typedef struct {
  sg_runtime *rt;
  int id;
} sg_worker_arg;
/* A worker thread's loop (frees its malloc'ed sg_worker_arg). */
void *sg_worker_main(void *p);
/* Runs worker 0's queue dry (at the end of a host_runs runtime). */
void sg_host_drain(sg_runtime *rt);

#endif
