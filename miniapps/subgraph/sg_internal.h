/* What the runtime (sg_runtime.c, sg_queue.c, sg_event.c, sg_eager.c,
 * sg_worker.c: workers, events, the eager path) and the subgraph path
 * (sg_graph.c, sg_graph_compile.c) share; not part of the API. What the
 * runtime's files share among themselves is in sg_runtime_internal.h. */
#ifndef SG_INTERNAL_H
#define SG_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "sg.h"

/* Something a worker runs: an eager op or one worker's share of a
 * subgraph instantiation. */
typedef enum { SG_WORK_OP, SG_WORK_ITEM } sg_work_kind;
typedef struct {
  sg_work_kind kind;
  uint64_t seq;   /* items: their instantiation's number (in order of instantiation); ops: 0 */
  bool behind;    /* queued behind a later instantiation's item (counted in sg_queue.behind) */
} sg_work;

static inline void sg_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* The lock of the ready queues and the event table: their critical
 * sections are a few stores, taken by the host and the workers in turn.
 * A mutex put them to sleep in the kernel over those stores (1.8 futex
 * calls a step at graph-steps 1 with 2 workers, docs/subgraph-performance.md).
 * Test and test-and-set; a holder descheduled by an oversubscribed machine
 * is waited for with sched_yield, not a burnt time slice. */
typedef struct {
  atomic_bool held;
} sg_spinlock;

static inline void sg_spin_lock(sg_spinlock *l) {
  for (unsigned i = 0;; ++i) {
    if (!atomic_load_explicit(&l->held, memory_order_relaxed) &&
        !atomic_exchange_explicit(&l->held, true, memory_order_acquire))
      return;
    if (i < 256) sg_cpu_relax();
    else sched_yield();
  }
}

static inline void sg_spin_unlock(sg_spinlock *l) { atomic_store_explicit(&l->held, false, memory_order_release); }

/* A FIFO of work (the eager path is a dynamic runtime: its shared ready
 * queue is contended, as Realm's are). */
typedef struct {
  sg_spinlock lock;
  sg_work **ring;
  size_t cap, head, count;
  atomic_size_t approx; /* count, readable without the lock for idle checks */
  /* Items queued after an item of a later instantiation (re-queued parked
   * items, mostly): only these can be older than an item a worker spins
   * on, so with none queued the spin need not scan the queue. */
  uint64_t max_seq;
  atomic_size_t behind;
} sg_queue;

/* One event slot; a handle is (slot + 1) << 32 | generation. */
typedef struct {
  atomic_flag lock;
  _Atomic uint32_t triggered_gen; /* the last generation that triggered */
  uint32_t gen;                   /* the generation handed out last */
  bool reserved;                  /* kept by its owner across generations: a trigger does not free it */
  sg_waiter *waiters;
  uint32_t next_free;
} sg_event_slot;

/* A device token: recorded by the host when it enqueues the record (the
 * generation of the op's replay), done when the stream reaches it. A wait
 * checks `recorded` when it is enqueued: a wait on a token never recorded
 * is an error, where CUDA's is silently nothing. */
typedef struct {
  _Atomic uint64_t recorded, done;
  void *event; /* a CUDA device's: the cudaEvent_t (done is then the event's) */
} sg_token;

typedef struct sg_cuda_stream sg_cuda_stream;

#define SG_EV_CHUNK_BITS 12
#define SG_EV_CHUNK (1u << SG_EV_CHUNK_BITS)
#define SG_EV_MAX_CHUNKS 4096

struct sg_runtime {
  int nworkers;
  bool host_runs; /* the host thread is worker 0 (sg_config.host_runs) */
  bool host_pinned; /* the host thread bound to cpus[0] until destroy, which restores host_mask */
  cpu_set_t host_mask;
  long spin_ns;
  long host_spin_ns; /* host waits: no spinning when the workers already fill the cores */
  /* Each worker's current spin budget, in [SG_MIN_SPIN_NS, spin_ns]:
   * halved after a spin that found nothing (the partner it waits for is
   * likely descheduled: the machine is oversubscribed), doubled after one
   * that paid off. */
  struct {
    _Alignas(64) long ns;
  } spin_budget[SG_MAX_WORKERS];
  pthread_t threads[SG_MAX_WORKERS];
  int started;
  /* events */
  sg_event_slot *chunks[SG_EV_MAX_CHUNKS];
  uint32_t nslots, free_head; /* free_head: slot + 1, 0 when empty */
  sg_spinlock ev_lock;
  /* eager ops' blocks of SG_OP_BLOCK bytes, recycled: the host allocates
   * them and the workers free them, which in malloc met in its arena lock
   * (0.65 futex calls a task at graph-steps 1 with 2 workers). Freed
   * blocks are pushed on freed_ops (lock-free); launching threads take
   * the whole stack at once into op_cache, under op_lock, so the two
   * sides meet once a batch, not once an op. */
  _Atomic(void *) freed_ops;
  sg_spinlock op_lock;
  void *op_cache;
  /* work */
  sg_queue shared;                  /* eager ops: any worker */
  sg_queue own[SG_MAX_WORKERS];     /* subgraph items: their worker only */
  _Atomic uint32_t epoch;           /* bumped on every push (idle workers watch it, and sleep on it) */
  _Atomic uint64_t next_seq;        /* numbers instantiations: an input never comes from a later one */
  atomic_int sleepers;
  atomic_bool shutdown;
  /* the device (sg_device.c): a stream per worker */
  sg_device_kind device;
  long device_poll_ns;
  bool skip_device_waits, plant_early_issue;
  sg_stream *streams[SG_MAX_WORKERS];
  int nstreams;
  atomic_int live_streams; /* stream threads not yet ended (a subgraph's, freed from its own, is not joined) */
  /* a CUDA device (sg_cuda_device.c): its streams, and the poller that
   * learns their ops' completions */
  sg_spinlock cuda_lock;
  sg_cuda_stream *cuda_streams;
  pthread_t poller;
  bool poller_started;
  atomic_bool poller_stop;
  _Atomic uint32_t poll_word;
  atomic_int poller_sleeping;
  atomic_long cuda_pending;
  /* the device's figures: what the streams flush once per batch of items
   * (not once per item: a line shared by every device thread), and each
   * worker's issue time on a line of its own (written per device op) */
  struct {
    atomic_long kernels, kernel_ns, notifications, max_runahead;
  } dev_stats;
  struct {
    _Alignas(64) atomic_long ops, ns;
  } issue_stats[SG_MAX_WORKERS];
  /* the first contract violation */
  pthread_mutex_t violation_lock;
  atomic_int violated;
  char violation[256];
};

/* Set on a worker while it runs a subgraph op: the contract check reads it. */
typedef struct {
  const char *op, *subgraph;
} sg_running_op;
extern _Thread_local const sg_running_op *sg_tls_running;

/* Fails a call made inside a subgraph op: records the violation once and
 * returns MAPP_ERR_VERIFY. */
int sg_contract_violation(sg_runtime *rt, const char *call);
/* A device op issued with a wait on a token its producer never recorded
 * in this instantiation: recorded once, as a contract violation is. */
void sg_device_violation(sg_runtime *rt, const char *consumer, const char *producer, const char *subgraph);
/* A failure inside a replay with no caller to return to (a CUDA call):
 * recorded once, as a violation is, for sg_runtime_status. */
void sg_record_failure(sg_runtime *rt, const char *text);

#define SG_MIN_SPIN_NS 1000L

/* After a spin: adapt the worker's budget (see spin_budget). */
static inline void sg_spin_feedback(sg_runtime *rt, int worker, bool paid_off) {
  long *b = &rt->spin_budget[worker].ns;
  if (paid_off) *b = *b * 2 > rt->spin_ns ? rt->spin_ns : *b * 2;
  else *b = *b / 2 < SG_MIN_SPIN_NS ? SG_MIN_SPIN_NS : *b / 2;
}

sg_event sg_event_alloc(sg_runtime *rt);
/* A slot kept by its owner (a subgraph's instantiation block) across
 * generations: re-armed without the slot table's lock, freed by unreserve.
 * Re-arm and unreserve only a handle that has triggered. */
sg_event sg_event_reserve(sg_runtime *rt);
sg_event sg_event_rearm(sg_runtime *rt, sg_event triggered);
void sg_event_unreserve(sg_runtime *rt, sg_event triggered);
/* Whether this worker's queue, or the shared one, holds work that an item
 * of instantiation seq may be waiting for: an eager op, or an item of an
 * earlier instantiation (a later one cannot produce its inputs). */
bool sg_older_work_queued(sg_runtime *rt, int worker, uint64_t seq);
void sg_push_worker(sg_runtime *rt, int worker, sg_work *w);
void sg_item_run(sg_runtime *rt, sg_work *w, int worker); /* sg_graph.c */
/* sg_device.c: the streams' lives, and what the runtime enqueues besides
 * kernels. Record sets t->recorded to gen at once and t->done to gen when
 * the stream reaches it; wait holds the stream until t->done >= gen;
 * notify calls fn(arg) on the device's thread device_poll_ns after the
 * stream reaches it. */
int sg_devices_start(sg_runtime *rt);
/* A stream of its own (a subgraph's copy stream); destroy drains it first,
 * and may be called from a notification it delivers (the stream's thread
 * then frees it on its way out). */
int sg_stream_create(sg_runtime *rt, int index, sg_stream **out);
void sg_stream_destroy(sg_stream *s);
void sg_devices_stop(sg_runtime *rt); /* drains every stream and delivers every notification first */
static inline sg_stream *sg_worker_stream(sg_runtime *rt, int worker) {
  return rt->nstreams ? rt->streams[worker] : NULL;
}
void sg_stream_record(sg_stream *s, sg_token *t, uint64_t gen);
/* A copy as device work on s (a device copy op). */
void sg_stream_copy(sg_stream *s, const sg_copy_desc *c);
/* A token's device handle, on a CUDA device (none on an emulated one). */
int sg_token_init(sg_runtime *rt, sg_token *t);
void sg_token_free(sg_runtime *rt, sg_token *t);

/* sg_cuda_device.c: the CUDA device behind sg_stream. */
int sg_cuda_start(sg_runtime *rt); /* the device checked, the poller started */
void sg_cuda_stop(sg_runtime *rt); /* every note delivered, the poller joined */
int sg_cuda_stream_create(sg_runtime *rt, sg_cuda_stream **out);
void sg_cuda_stream_destroy(sg_cuda_stream *s);
void *sg_cuda_stream_native(sg_cuda_stream *s);
void sg_cuda_stream_record(sg_cuda_stream *s, sg_token *t);
void sg_cuda_stream_wait(sg_cuda_stream *s, sg_token *t);
void sg_cuda_stream_copy(sg_cuda_stream *s, const sg_copy_desc *c);
void sg_cuda_stream_notify(sg_cuda_stream *s, void (*fn)(void *arg), void *arg);
int sg_cuda_token_init(sg_token *t);
void sg_cuda_token_free(sg_token *t);
void sg_stream_wait(sg_stream *s, sg_token *t, uint64_t gen);
void sg_stream_notify(sg_stream *s, void (*fn)(void *arg), void *arg);
/* Host time of a device op's function, for sg_device_stats. */
static inline void sg_count_issue(sg_runtime *rt, int worker, long ns) {
  atomic_long *ops = &rt->issue_stats[worker].ops, *sum = &rt->issue_stats[worker].ns; /* the issuing thread's own */
  atomic_store_explicit(ops, atomic_load_explicit(ops, memory_order_relaxed) + 1, memory_order_relaxed);
  atomic_store_explicit(sum, atomic_load_explicit(sum, memory_order_relaxed) + ns, memory_order_relaxed);
}

/* Shared by both paths: the arrival that completes the count triggers. */
void sg_barrier_arrive_now(sg_runtime *rt, sg_barrier *b);

#endif
