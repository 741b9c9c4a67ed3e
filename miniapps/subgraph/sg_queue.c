/* The ready queues (a shared one for eager ops, one per worker for
 * subgraph items) and the wake-up of idle workers after a push. */
#include <stdlib.h>

#include "mapp_error.h"
#include "sg_runtime_internal.h"

int sg_queue_init(sg_queue *q) {
  q->cap = 256;
  q->head = q->count = 0;
  atomic_init(&q->approx, 0);
  atomic_init(&q->behind, 0);
  q->max_seq = 0;
  q->ring = malloc(q->cap * sizeof *q->ring);
  if (!q->ring) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating a ready queue");
  atomic_init(&q->lock.held, false);
  return MAPP_OK;
}

void sg_queue_free(sg_queue *q) { free(q->ring); }

static void queue_push(sg_queue *q, sg_work *w) {
  sg_spin_lock(&q->lock);
  if (q->count == q->cap) { /* grow, unrolling the ring */
    sg_work **bigger = malloc(2 * q->cap * sizeof *bigger);
    if (!bigger) abort(); /* no way to report from here; out of memory for a pointer ring */
    for (size_t i = 0; i < q->count; ++i) bigger[i] = q->ring[(q->head + i) % q->cap];
    free(q->ring);
    q->ring = bigger, q->head = 0, q->cap *= 2;
  }
  q->ring[(q->head + q->count) % q->cap] = w;
  q->count++;
  w->behind = w->kind == SG_WORK_ITEM && w->seq < q->max_seq; /* eager ops: the shared queue's count says it */
  if (w->behind) atomic_fetch_add_explicit(&q->behind, 1, memory_order_relaxed);
  else q->max_seq = w->seq;
  atomic_store_explicit(&q->approx, q->count, memory_order_relaxed);
  sg_spin_unlock(&q->lock);
}

sg_work *sg_queue_pop(sg_queue *q) {
  if (atomic_load_explicit(&q->approx, memory_order_relaxed) == 0) return NULL;
  sg_work *w = NULL;
  sg_spin_lock(&q->lock);
  if (q->count) {
    w = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    if (w->behind) atomic_fetch_sub_explicit(&q->behind, 1, memory_order_relaxed);
    atomic_store_explicit(&q->approx, q->count, memory_order_relaxed);
  }
  sg_spin_unlock(&q->lock);
  return w;
}

static bool queue_holds_older(sg_queue *q, uint64_t seq) {
  if (atomic_load_explicit(&q->behind, memory_order_relaxed) == 0) return false;
  bool older = false;
  sg_spin_lock(&q->lock);
  for (size_t i = 0; i < q->count && !older; ++i) {
    const sg_work *w = q->ring[(q->head + i) % q->cap];
    older = w->kind == SG_WORK_OP || w->seq < seq;
  }
  sg_spin_unlock(&q->lock);
  return older;
}

bool sg_older_work_queued(sg_runtime *rt, int worker, uint64_t seq) {
  return atomic_load_explicit(&rt->shared.approx, memory_order_relaxed) || queue_holds_older(&rt->own[worker], seq);
}

/* Wake sleeping workers after a push (Dekker with the sleeper: it counts
 * itself then re-reads the epoch; we bump the epoch then read the count). */
void sg_wake_workers(sg_runtime *rt) {
  atomic_fetch_add(&rt->epoch, 1);
  if (atomic_load(&rt->sleepers) > 0) sg_unpark_all(&rt->epoch);
}

void sg_push_shared(sg_runtime *rt, sg_work *w) {
  queue_push(&rt->shared, w);
  sg_wake_workers(rt);
}

void sg_push_worker(sg_runtime *rt, int worker, sg_work *w) {
  queue_push(&rt->own[worker], w);
  sg_wake_workers(rt);
}
