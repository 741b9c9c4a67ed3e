/* The runtime's dynamic machinery: workers, events, ready queues and the
 * eager launch path (Realm's normal path, which subgraphs bypass). */
#define _GNU_SOURCE /* syscall (futex) */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#include "mapp_error.h"
#include "sg_internal.h"

_Thread_local const sg_running_op *sg_tls_running;

long sg_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

#define cpu_relax sg_cpu_relax

/* Sleeping and waking on one 32-bit word: a futex on Linux, so a wake
 * costs one system call and nothing when nobody sleeps (a mutex and a
 * condition variable cost two or three, and the waker may block on the
 * mutex). Elsewhere, a polling sleep. Both tolerate spurious returns:
 * callers re-check their condition. */
static void park_on(_Atomic uint32_t *word, uint32_t expected) {
#ifdef __linux__
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
#else
  if (atomic_load(word) == expected) nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
#endif
}

static void unpark_all(_Atomic uint32_t *word) {
#ifdef __linux__
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
  (void)word;
#endif
}

int sg_contract_violation(sg_runtime *rt, const char *call) {
  const sg_running_op *running = sg_tls_running;
  pthread_mutex_lock(&rt->violation_lock);
  if (!atomic_load(&rt->violated)) {
    snprintf(rt->violation, sizeof rt->violation,
             "op '%s' of subgraph '%s' called %s: ops inside a subgraph must not launch operations or wait on "
             "events (contract violation)",
             running->op, running->subgraph, call);
    atomic_store(&rt->violated, 1);
  }
  pthread_mutex_unlock(&rt->violation_lock);
  return MAPP_ERR_VERIFY;
}

int sg_runtime_status(sg_runtime *rt) {
  if (!atomic_load(&rt->violated)) return MAPP_OK;
  pthread_mutex_lock(&rt->violation_lock);
  int status = mapp_fail(MAPP_ERR_VERIFY, "%s", rt->violation);
  pthread_mutex_unlock(&rt->violation_lock);
  return status;
}

/* ------------------------------------------------------------ queues */

static int queue_init(sg_queue *q) {
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

static void queue_free(sg_queue *q) { free(q->ring); }

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

static sg_work *queue_pop(sg_queue *q) {
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
static void wake_workers(sg_runtime *rt) {
  atomic_fetch_add(&rt->epoch, 1);
  if (atomic_load(&rt->sleepers) > 0) unpark_all(&rt->epoch);
}

static void push_shared(sg_runtime *rt, sg_work *w) {
  queue_push(&rt->shared, w);
  wake_workers(rt);
}

void sg_push_worker(sg_runtime *rt, int worker, sg_work *w) {
  queue_push(&rt->own[worker], w);
  wake_workers(rt);
}

/* ------------------------------------------------------------ events */

static inline sg_event_slot *slot_of(sg_runtime *rt, uint32_t index) {
  return &rt->chunks[index >> SG_EV_CHUNK_BITS][index & (SG_EV_CHUNK - 1)];
}

static inline void slot_lock(sg_event_slot *s) {
  while (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire)) cpu_relax();
}
static inline void slot_unlock(sg_event_slot *s) { atomic_flag_clear_explicit(&s->lock, memory_order_release); }

/* A fresh event (SG_NO_EVENT only when the table is full, 16 M events live). */
sg_event sg_event_alloc(sg_runtime *rt) {
  sg_spin_lock(&rt->ev_lock);
  uint32_t index;
  if (rt->free_head) {
    index = rt->free_head - 1;
    rt->free_head = slot_of(rt, index)->next_free;
  } else {
    if ((rt->nslots & (SG_EV_CHUNK - 1)) == 0) {
      uint32_t c = rt->nslots >> SG_EV_CHUNK_BITS;
      if (c == SG_EV_MAX_CHUNKS || !(rt->chunks[c] = calloc(SG_EV_CHUNK, sizeof(sg_event_slot)))) {
        sg_spin_unlock(&rt->ev_lock);
        return SG_NO_EVENT;
      }
      for (uint32_t i = 0; i < SG_EV_CHUNK; ++i) atomic_flag_clear(&rt->chunks[c][i].lock);
    }
    index = rt->nslots++;
  }
  sg_event_slot *s = slot_of(rt, index);
  uint32_t gen = ++s->gen;
  sg_spin_unlock(&rt->ev_lock);
  return ((sg_event)(index + 1) << 32) | gen;
}

sg_event sg_event_reserve(sg_runtime *rt) {
  sg_event ev = sg_event_alloc(rt);
  if (ev) slot_of(rt, (uint32_t)(ev >> 32) - 1)->reserved = true;
  return ev;
}

sg_event sg_event_rearm(sg_runtime *rt, sg_event triggered) {
  uint32_t index = (uint32_t)(triggered >> 32) - 1;
  return ((sg_event)(index + 1) << 32) | ++slot_of(rt, index)->gen;
}

static void slot_free(sg_runtime *rt, uint32_t index) {
  sg_spin_lock(&rt->ev_lock);
  slot_of(rt, index)->next_free = rt->free_head;
  rt->free_head = index + 1;
  sg_spin_unlock(&rt->ev_lock);
}

void sg_event_unreserve(sg_runtime *rt, sg_event triggered) {
  if (!triggered) return;
  uint32_t index = (uint32_t)(triggered >> 32) - 1;
  slot_of(rt, index)->reserved = false;
  slot_free(rt, index);
}

int sg_event_create(sg_runtime *rt, sg_event *out) {
  *out = sg_event_alloc(rt);
  return *out ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of event slots (%u live)", rt->nslots);
}

bool sg_event_has_triggered(sg_runtime *rt, sg_event ev) {
  if (!ev) return true;
  sg_event_slot *s = slot_of(rt, (uint32_t)(ev >> 32) - 1);
  return atomic_load_explicit(&s->triggered_gen, memory_order_acquire) >= (uint32_t)ev;
}

void sg_event_trigger(sg_runtime *rt, sg_event ev) {
  if (!ev) return;
  uint32_t index = (uint32_t)(ev >> 32) - 1;
  sg_event_slot *s = slot_of(rt, index);
  slot_lock(s);
  atomic_store_explicit(&s->triggered_gen, (uint32_t)ev, memory_order_release);
  sg_waiter *w = s->waiters;
  s->waiters = NULL;
  bool reserved = s->reserved;
  slot_unlock(s);
  /* The slot is reusable now: its next generation is a new event. */
  if (!reserved) slot_free(rt, index);
  sg_waiter *fifo = NULL; /* pushed newest first: run them in registration order */
  while (w) {
    sg_waiter *next = w->next;
    w->next = fifo, fifo = w, w = next;
  }
  w = fifo;
  while (w) { /* next is read before fn: fn may free the node */
    sg_waiter *next = w->next;
    w->fn(w, rt);
    w = next;
  }
}

void sg_event_add_waiter(sg_runtime *rt, sg_event ev, sg_waiter *w) {
  if (ev) {
    sg_event_slot *s = slot_of(rt, (uint32_t)(ev >> 32) - 1);
    slot_lock(s);
    if (atomic_load_explicit(&s->triggered_gen, memory_order_relaxed) < (uint32_t)ev) {
      w->next = s->waiters;
      s->waiters = w;
      slot_unlock(s);
      return;
    }
    slot_unlock(s);
  }
  w->fn(w, rt);
}

/* A host thread waiting for an event: 0 pending, 1 fired, 2 the host sleeps. */
typedef struct {
  sg_waiter w;
  _Atomic uint32_t state;
} host_waiter;

/* Set on the host thread while it runs work as worker 0 (host_runs). */
static _Thread_local bool tls_hosting;

static void host_waiter_fire(sg_waiter *self, sg_runtime *rt) {
  host_waiter *h = (host_waiter *)self;
  /* The host may return, and its frame go, once state is 1: the wake's
   * address is then a dead stack word, which at worst wakes nobody. */
  if (rt->host_runs) {
    /* The host idles on the epoch, as the workers do; fired on the host
     * itself (the usual case: it ran the op), nobody needs waking. */
    atomic_store_explicit(&h->state, 1, memory_order_release);
    if (!tls_hosting) wake_workers(rt);
    return;
  }
  if (atomic_exchange(&h->state, 1) == 2) unpark_all(&h->state);
}

static int host_run_until(sg_runtime *rt, sg_event ev);

int sg_event_wait(sg_runtime *rt, sg_event ev) {
  if (sg_tls_running) return sg_contract_violation(rt, "sg_event_wait");
  if (sg_event_has_triggered(rt, ev)) return MAPP_OK;
  if (rt->host_runs) return host_run_until(rt, ev);
  if (rt->host_spin_ns > 0) {
    long deadline = sg_now_ns() + rt->host_spin_ns;
    for (unsigned i = 1;; ++i) {
      if (sg_event_has_triggered(rt, ev)) return MAPP_OK;
      if ((i & 63) == 0 && sg_now_ns() > deadline) break;
      cpu_relax();
    }
  }
  host_waiter h = {.w.fn = host_waiter_fire};
  atomic_init(&h.state, 0);
  sg_event_add_waiter(rt, ev, &h.w);
  uint32_t pending = 0;
  if (atomic_compare_exchange_strong(&h.state, &pending, 2))
    while (atomic_load(&h.state) != 1) park_on(&h.state, 2);
  return MAPP_OK;
}

/* ------------------------------------------------------------ eager ops */

typedef enum { EAGER_TASK, EAGER_COPY, EAGER_ARRIVE, EAGER_MERGE } eager_kind;

struct sg_barrier {
  sg_runtime *rt;
  int count;
  atomic_int remaining;
  sg_event event;
};

typedef struct eager_op eager_op;
typedef struct {
  sg_waiter w;
  eager_op *op;
} pre_node;

struct eager_op {
  sg_work hdr;
  atomic_int pending; /* unmet preconditions + 1 while launching */
  eager_kind kind;
  const char *name;
  sg_task_fn fn;
  sg_event done;
  sg_copy_desc copy;
  sg_barrier *barrier;
  size_t arg_size;
  pre_node *pre;           /* npre nodes, after the struct */
  unsigned char *args;     /* arg_size bytes, after the nodes */
  bool recycled;           /* a block of SG_OP_BLOCK bytes from rt->free_ops */
};

/* Most ops (a few preconditions, a small argument block) fit a recycled
 * block; larger ones are allocated on their own. */
#define SG_OP_BLOCK 512

static eager_op *op_alloc(sg_runtime *rt, size_t bytes) {
  if (bytes > SG_OP_BLOCK) {
    eager_op *op = malloc(bytes);
    if (op) op->recycled = false;
    return op;
  }
  sg_spin_lock(&rt->op_lock);
  if (!rt->op_cache) rt->op_cache = atomic_exchange_explicit(&rt->freed_ops, NULL, memory_order_acquire);
  void *block = rt->op_cache;
  if (block) rt->op_cache = *(void **)block;
  sg_spin_unlock(&rt->op_lock);
  eager_op *op = block ? block : malloc(SG_OP_BLOCK);
  if (op) op->recycled = true;
  return op;
}

static void op_free(sg_runtime *rt, eager_op *op) {
  if (!op->recycled) {
    free(op);
    return;
  }
  void *block = op, *head = atomic_load_explicit(&rt->freed_ops, memory_order_relaxed);
  do *(void **)block = head; /* push only, and taken whole: no ABA */
  while (!atomic_compare_exchange_weak_explicit(&rt->freed_ops, &head, block, memory_order_release,
                                                memory_order_relaxed));
}

static void eager_complete(sg_runtime *rt, eager_op *op) {
  sg_event done = op->done;
  op_free(rt, op);
  sg_event_trigger(rt, done);
}

static void eager_ready(sg_runtime *rt, eager_op *op) {
  if (op->kind == EAGER_MERGE) eager_complete(rt, op); /* nothing to run: no queue trip */
  else push_shared(rt, &op->hdr);
}

static void eager_pre_fired(sg_waiter *self, sg_runtime *rt) {
  eager_op *op = ((pre_node *)self)->op;
  if (atomic_fetch_sub_explicit(&op->pending, 1, memory_order_acq_rel) == 1) eager_ready(rt, op);
}

/* Allocate the op and its event, register its preconditions, queue it once
 * they have all triggered. */
static int eager_launch(sg_runtime *rt, eager_op *proto, const void *args, const sg_event *pre, int npre,
                        sg_event *done) {
  if (sg_tls_running) return sg_contract_violation(rt, "an sg_launch function");
  if (npre < 0 || (npre > 0 && !pre))
    return mapp_fail(MAPP_ERR_INPUT, "launch of '%s': %d preconditions without an array", proto->name, npre);
  size_t bytes = sizeof(eager_op) + (size_t)npre * sizeof(pre_node) + proto->arg_size;
  eager_op *op = op_alloc(rt, bytes);
  if (!op) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating an op of %zu bytes", bytes);
  bool recycled = op->recycled;
  *op = *proto;
  op->recycled = recycled;
  op->hdr.kind = SG_WORK_OP;
  op->pre = (pre_node *)(op + 1);
  op->args = (unsigned char *)(op->pre + npre);
  if (proto->arg_size && args) memcpy(op->args, args, proto->arg_size);
  op->done = sg_event_alloc(rt);
  if (!op->done) {
    op_free(rt, op);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of event slots launching '%s'", proto->name);
  }
  if (done) *done = op->done;
  atomic_init(&op->pending, npre + 1);
  for (int i = 0; i < npre; ++i) {
    op->pre[i].op = op;
    op->pre[i].w.fn = eager_pre_fired;
    sg_event_add_waiter(rt, pre[i], &op->pre[i].w);
  }
  if (atomic_fetch_sub_explicit(&op->pending, 1, memory_order_acq_rel) == 1) eager_ready(rt, op);
  return MAPP_OK;
}

int sg_launch_task(sg_runtime *rt, const char *name, sg_task_fn fn, const void *args, size_t size,
                   const sg_event *pre, int npre, sg_event *done) {
  eager_op proto = {.kind = EAGER_TASK, .name = name ? name : "task", .fn = fn, .arg_size = size};
  return eager_launch(rt, &proto, args, pre, npre, done);
}

int sg_launch_copy(sg_runtime *rt, const sg_copy_desc *copy, const sg_event *pre, int npre, sg_event *done) {
  eager_op proto = {.kind = EAGER_COPY, .name = "copy", .copy = *copy};
  return eager_launch(rt, &proto, NULL, pre, npre, done);
}

int sg_launch_arrive(sg_runtime *rt, sg_barrier *barrier, const sg_event *pre, int npre, sg_event *done) {
  eager_op proto = {.kind = EAGER_ARRIVE, .name = "arrive", .barrier = barrier};
  return eager_launch(rt, &proto, NULL, pre, npre, done);
}

int sg_event_merge(sg_runtime *rt, const sg_event *evs, int n, sg_event *out) {
  eager_op proto = {.kind = EAGER_MERGE, .name = "merge"};
  return eager_launch(rt, &proto, NULL, evs, n, out);
}

void sg_copy_plan(sg_copy_desc *c) {
  if (c->rows > 1 && c->dst_stride == c->row_bytes && c->src_stride == c->row_bytes)
    c->row_bytes *= c->rows, c->rows = 1, c->dst_stride = c->src_stride = c->row_bytes;
}

void sg_copy_run(const sg_copy_desc *c) {
  if (c->rows <= 1 || (c->dst_stride == c->row_bytes && c->src_stride == c->row_bytes)) {
    memcpy(c->dst, c->src, c->row_bytes * (c->rows ? c->rows : 1));
    return;
  }
  unsigned char *d = c->dst;
  const unsigned char *s = c->src;
  for (size_t r = 0; r < c->rows; ++r) memcpy(d + r * c->dst_stride, s + r * c->src_stride, c->row_bytes);
}

/* ------------------------------------------------------------ barriers */

int sg_barrier_create(sg_runtime *rt, int count, sg_barrier **out) {
  if (count < 1) return mapp_fail(MAPP_ERR_INPUT, "a barrier needs at least 1 arrival, got %d", count);
  sg_barrier *b;
  MAPP_TRY(mapp_calloc((void **)&b, 1, sizeof *b, "a barrier"));
  b->rt = rt, b->count = count;
  *out = b;
  return sg_barrier_rearm(b);
}

sg_event sg_barrier_event(const sg_barrier *b) { return b->event; }

int sg_barrier_rearm(sg_barrier *b) {
  atomic_store(&b->remaining, b->count);
  return sg_event_create(b->rt, &b->event);
}

void sg_barrier_destroy(sg_barrier *b) { free(b); }

/* Shared by both paths: the arrival that completes the count triggers. */
void sg_barrier_arrive_now(sg_runtime *rt, sg_barrier *b);
void sg_barrier_arrive_now(sg_runtime *rt, sg_barrier *b) {
  if (atomic_fetch_sub_explicit(&b->remaining, 1, memory_order_acq_rel) == 1) sg_event_trigger(rt, b->event);
}

/* ------------------------------------------------------------ workers */

typedef struct {
  sg_runtime *rt;
  int id;
} worker_arg;

static void eager_run(sg_runtime *rt, eager_op *op, int worker) {
  switch (op->kind) {
  case EAGER_TASK: {
    sg_task_ctx ctx = {.rt = rt, .worker = worker, .instance_args = NULL};
    op->fn(op->args, op->arg_size, &ctx);
    break;
  }
  case EAGER_COPY: sg_copy_run(&op->copy); break;
  case EAGER_ARRIVE: sg_barrier_arrive_now(rt, op->barrier); break;
  case EAGER_MERGE: break;
  }
  eager_complete(rt, op);
}

static sg_work *find_work(sg_runtime *rt, int id) {
  sg_work *w = queue_pop(&rt->own[id]);
  return w ? w : queue_pop(&rt->shared);
}

static bool has_work(sg_runtime *rt, int id) {
  return atomic_load_explicit(&rt->own[id].approx, memory_order_relaxed) ||
         atomic_load_explicit(&rt->shared.approx, memory_order_relaxed);
}

/* No work: spin (at most the worker's budget, at most spin_ns) watching the
 * epoch, then sleep until a push. */
static void idle(sg_runtime *rt, int id, unsigned epoch) {
  if (rt->spin_ns > 0) {
    long deadline = sg_now_ns() + rt->spin_budget[id].ns;
    for (unsigned i = 1;; ++i) {
      if (atomic_load_explicit(&rt->epoch, memory_order_acquire) != epoch || has_work(rt, id)) {
        sg_spin_feedback(rt, id, true);
        return;
      }
      if ((i & 63) == 0 && sg_now_ns() > deadline) break; /* pure spin, as the seed's knob */
      cpu_relax();
    }
    sg_spin_feedback(rt, id, false);
  }
  atomic_fetch_add(&rt->sleepers, 1);
  while (atomic_load(&rt->epoch) == epoch && !atomic_load(&rt->shutdown)) park_on(&rt->epoch, epoch);
  atomic_fetch_sub(&rt->sleepers, 1);
}

static void run_work(sg_runtime *rt, sg_work *w, int id) {
  if (w->kind == SG_WORK_OP) eager_run(rt, (eager_op *)w, id);
  else sg_item_run(rt, w, id);
}

static void *worker_main(void *p) {
  worker_arg *a = p;
  sg_runtime *rt = a->rt;
  int id = a->id;
  free(a);
  for (;;) {
    unsigned epoch = atomic_load(&rt->epoch);
    sg_work *w = find_work(rt, id);
    if (w) {
      run_work(rt, w, id);
      continue;
    }
    if (atomic_load(&rt->shutdown)) break;
    idle(rt, id, epoch);
  }
  return NULL;
}

/* ------------------------------------------------------------ the host as worker 0 */

/* The host, with nothing queued for it, spins (at most host_spin_ns)
 * until ev triggers or work arrives: reading the event's slot, with no
 * waiter to fire, is the cheapest hand-back from another worker. False
 * when the spin ran out (or is off: the threads fill the cores). */
static bool host_spin(sg_runtime *rt, sg_event ev) {
  if (rt->host_spin_ns <= 0) return false;
  long deadline = 0;
  for (unsigned i = 1;; ++i) {
    if (sg_event_has_triggered(rt, ev) || has_work(rt, 0)) return true;
    if (i == 64) deadline = sg_now_ns() + rt->host_spin_ns; /* no clock read in a short spin */
    if (i > 64 && (i & 63) == 0 && sg_now_ns() > deadline) return false;
    cpu_relax();
  }
}

/* Sleeps until ev triggers, running what is queued for worker 0 meanwhile:
 * a waiter bumps the epoch the host idles on. */
static void host_sleep_until(sg_runtime *rt, sg_event ev) {
  host_waiter h = {.w.fn = host_waiter_fire};
  atomic_init(&h.state, 0);
  sg_event_add_waiter(rt, ev, &h.w);
  for (;;) {
    unsigned epoch = atomic_load(&rt->epoch);
    if (atomic_load_explicit(&h.state, memory_order_acquire) == 1) return;
    sg_work *w = find_work(rt, 0);
    if (w) run_work(rt, w, 0);
    else idle(rt, 0, epoch);
  }
}

/* Runs what is queued for worker 0 until ev has triggered: the launch the
 * host just made is usually all there is, and it triggers ev on this
 * thread; else the host spins for ev or for more work, then sleeps. */
static int host_run_until(sg_runtime *rt, sg_event ev) {
  bool outer = !tls_hosting; /* an eager task may wait inside the host's loop */
  tls_hosting = true;
  for (;;) {
    sg_work *w;
    while (!sg_event_has_triggered(rt, ev) && (w = find_work(rt, 0))) run_work(rt, w, 0);
    if (sg_event_has_triggered(rt, ev)) break;
    if (host_spin(rt, ev)) continue;
    host_sleep_until(rt, ev);
    break;
  }
  if (outer) tls_hosting = false;
  return MAPP_OK;
}

bool sg_runtime_help(sg_runtime *rt) {
  if (!rt->host_runs || sg_tls_running) return false;
  sg_work *w = find_work(rt, 0);
  if (!w) return false;
  bool outer = !tls_hosting;
  tls_hosting = true;
  run_work(rt, w, 0);
  if (outer) tls_hosting = false;
  return true;
}

/* Runs worker 0's queue dry (at the end of a host_runs runtime). */
static void host_drain(sg_runtime *rt) {
  if (!rt->host_runs) return;
  tls_hosting = true;
  for (sg_work *w; (w = find_work(rt, 0));) run_work(rt, w, 0);
  tls_hosting = false;
}

/* A worker thread, bound to cpu from its first instruction when cpu >= 0. */
static int start_worker(pthread_t *thread, int cpu, worker_arg *a) {
  pthread_attr_t attr;
  int err = pthread_attr_init(&attr);
  if (err) return err;
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    err = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
  }
  if (!err) err = pthread_create(thread, &attr, worker_main, a);
  pthread_attr_destroy(&attr);
  return err;
}

/* Binds the calling (host) thread to cpu, keeping its mask for destroy. */
static int pin_host(sg_runtime *rt, int cpu) {
  int err = pthread_getaffinity_np(pthread_self(), sizeof rt->host_mask, &rt->host_mask);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (!err) err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (err) return mapp_fail(MAPP_ERR_SYSTEM, "binding the host thread (worker 0) to cpu %d failed: %s", cpu, strerror(err));
  rt->host_pinned = true;
  return MAPP_OK;
}

int sg_runtime_create(const sg_config *cfg, sg_runtime **out) {
  *out = NULL;
  if (cfg->workers < 1 || cfg->workers > SG_MAX_WORKERS)
    return mapp_fail(MAPP_ERR_INPUT, "--workers: %d is outside [1, %d]", cfg->workers, SG_MAX_WORKERS);
  if (cfg->spin_us < 0) return mapp_fail(MAPP_ERR_INPUT, "--spin-us: %ld is negative", cfg->spin_us);
  sg_runtime *rt;
  MAPP_TRY(mapp_calloc((void **)&rt, 1, sizeof *rt, "the runtime"));
  rt->nworkers = cfg->workers;
  rt->host_runs = cfg->host_runs;
  rt->spin_ns = cfg->spin_us * 1000;
  /* A host thread spinning beside as many spinning workers as cores steals
   * their time slices: it sleeps at once instead (a brief spin, 5 us, was
   * measured slower: 5.8-6.2 us against 2.8-3.4 us a one-op launch with
   * two workers, docs/subgraph-performance.md). */
  long cores = sysconf(_SC_NPROCESSORS_ONLN), threads = cfg->workers - (cfg->host_runs ? 1 : 0);
  rt->host_spin_ns = threads < cores ? rt->spin_ns : 0;
  for (int i = 0; i < SG_MAX_WORKERS; ++i) rt->spin_budget[i].ns = rt->spin_ns;
  pthread_mutex_init(&rt->violation_lock, NULL);
  int status = queue_init(&rt->shared);
  for (int i = 0; status == MAPP_OK && i < rt->nworkers; ++i) status = queue_init(&rt->own[i]);
  const int *host_cpu = rt->host_runs ? cfg->cpus : cfg->host_cpu; /* worker 0's CPU, or one of its own */
  if (status == MAPP_OK && host_cpu) status = pin_host(rt, *host_cpu);
  for (int i = rt->host_runs ? 1 : 0; status == MAPP_OK && i < rt->nworkers; ++i) {
    worker_arg *a = malloc(sizeof *a);
    if (!a) {
      status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory starting worker %d", i);
      break;
    }
    a->rt = rt, a->id = i;
    int err = start_worker(&rt->threads[rt->started], cfg->cpus ? cfg->cpus[i] : -1, a);
    if (err) {
      free(a);
      status = mapp_fail(MAPP_ERR_SYSTEM, "starting worker %d (cpu %d) failed: %s", i, cfg->cpus ? cfg->cpus[i] : -1,
                         strerror(err));
      break;
    }
    rt->started++;
  }
  *out = rt;
  if (status != MAPP_OK) {
    sg_runtime_destroy(rt);
    *out = NULL;
  }
  return status;
}

int sg_runtime_workers(const sg_runtime *rt) { return rt->nworkers; }

void sg_runtime_destroy(sg_runtime *rt) {
  if (!rt) return;
  host_drain(rt);
  atomic_store(&rt->shutdown, true);
  wake_workers(rt);
  for (int i = 0; i < rt->started; ++i) pthread_join(rt->threads[i], NULL);
  host_drain(rt); /* what the threads' last ops queued for worker 0 */
  if (rt->host_pinned) pthread_setaffinity_np(pthread_self(), sizeof rt->host_mask, &rt->host_mask);
  queue_free(&rt->shared);
  for (int i = 0; i < rt->nworkers; ++i)
    if (rt->own[i].ring) queue_free(&rt->own[i]);
  for (uint32_t c = 0; c < SG_EV_MAX_CHUNKS && rt->chunks[c]; ++c) free(rt->chunks[c]);
  for (int list = 0; list < 2; ++list)
    for (void *block = list ? rt->op_cache : atomic_load(&rt->freed_ops), *next; block; block = next) {
      next = *(void **)block;
      free(block);
    }
  pthread_mutex_destroy(&rt->violation_lock);
  free(rt);
}
