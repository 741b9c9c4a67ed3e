/* The emulated device: per worker an in-order queue of device work (a
 * stream) served by a thread of its own. Its items are those a CUDA stream
 * takes from Realm's GPU worker: run a kernel, record a token, wait for a
 * token (of another stream), notify the host. A notification reaches the
 * runtime device_poll_ns after the stream reaches it, as Realm's worker
 * learns of a completion by polling its events; the device thread delivers
 * it (between items, or spinning when it has nothing else to do), so the
 * stream itself is not held by the latency. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "sg_runtime_internal.h"

typedef enum { DEV_KERNEL, DEV_RECORD, DEV_WAIT, DEV_NOTIFY } dev_kind;

typedef struct {
  dev_kind kind;
  sg_kernel_fn fn;
  size_t size;
  sg_token *token;
  uint64_t gen;
  void (*notify)(void *arg);
  void *arg;
  _Alignas(16) unsigned char args[SG_KERNEL_ARGS];
} dev_item;

typedef struct {
  void (*fn)(void *arg);
  void *arg;
  long due_ns;
} pending_note;

/* Items a device thread takes from its queue under one lock: the lock's
 * line crosses cores once a batch, not once an item. */
#define SG_STREAM_BATCH 16

struct sg_stream {
  sg_runtime *rt;
  int index; /* the worker's */
  /* the queue: producers and the device thread under the lock */
  sg_spinlock lock;
  dev_item *ring;
  size_t cap, head, count;
  long enqueued_kernels;    /* under lock: the runahead is enqueued less run */
  _Atomic uint32_t word;    /* bumped on every push: the thread sleeps on it */
  atomic_int sleeping;
  atomic_bool stop;
  pthread_t thread;
  bool started;
  atomic_bool free_on_exit; /* destroyed from its own thread: the thread frees it */
  sg_cuda_stream *cuda;     /* a CUDA device's stream: no queue, no thread (sg_cuda_device.c) */
  /* the device thread's own, on lines of their own: notifications reached
   * (in order of due time) and its figures, flushed to the runtime's once
   * a batch */
  _Alignas(64) pending_note *notes;
  size_t notes_cap, notes_head, notes_count;
  long kernels, kernel_ns, notifications, max_runahead, flushed[3];
};

/* ------------------------------------------------------------ the host's side */

static void stream_push(sg_stream *s, const dev_item *item) {
  sg_spin_lock(&s->lock);
  if (s->count == s->cap) { /* grow, unrolling the ring */
    size_t cap = s->cap ? 2 * s->cap : 256;
    dev_item *bigger = malloc(cap * sizeof *bigger);
    if (!bigger) abort(); /* as the ready queues: no way to report from a replay */
    for (size_t i = 0; i < s->count; ++i) bigger[i] = s->ring[(s->head + i) % s->cap];
    free(s->ring);
    s->ring = bigger, s->head = 0, s->cap = cap;
  }
  s->ring[(s->head + s->count++) % s->cap] = *item;
  s->enqueued_kernels += item->kind == DEV_KERNEL;
  sg_spin_unlock(&s->lock);
  atomic_fetch_add_explicit(&s->word, 1, memory_order_release);
  if (atomic_load(&s->sleeping)) sg_unpark_all(&s->word);
}

int sg_stream_launch(sg_stream *s, sg_kernel_fn fn, const void *args, size_t size) {
  if (!s) return mapp_fail(MAPP_ERR_INPUT, "a kernel launched without a stream (the op is not a device op)");
  if (s->cuda)
    return mapp_fail(MAPP_ERR_INPUT, "sg_stream_launch on a CUDA stream: launch the kernel on sg_stream_native");
  if (size > SG_KERNEL_ARGS)
    return mapp_fail(MAPP_ERR_INPUT, "a kernel's %zu-byte argument block is over the %d bytes a stream item holds",
                     size, SG_KERNEL_ARGS);
  dev_item item = {.kind = DEV_KERNEL, .fn = fn, .size = size};
  if (size) memcpy(item.args, args, size);
  stream_push(s, &item);
  return MAPP_OK;
}

void *sg_stream_native(sg_stream *s) { return s && s->cuda ? sg_cuda_stream_native(s->cuda) : NULL; }

void sg_stream_record(sg_stream *s, sg_token *t, uint64_t gen) {
  if (s->cuda) sg_cuda_stream_record(s->cuda, t); /* before recorded: a reader of recorded may wait on it */
  atomic_store_explicit(&t->recorded, gen, memory_order_release);
  if (!s->cuda) stream_push(s, &(dev_item){.kind = DEV_RECORD, .token = t, .gen = gen});
}

void sg_stream_wait(sg_stream *s, sg_token *t, uint64_t gen) {
  if (s->cuda) sg_cuda_stream_wait(s->cuda, t);
  else stream_push(s, &(dev_item){.kind = DEV_WAIT, .token = t, .gen = gen});
}

void sg_stream_notify(sg_stream *s, void (*fn)(void *arg), void *arg) {
  if (s->cuda) sg_cuda_stream_notify(s->cuda, fn, arg);
  else stream_push(s, &(dev_item){.kind = DEV_NOTIFY, .notify = fn, .arg = arg});
}

/* An emulated device's copy: the descriptor, copied into the item. */
static void copy_kernel(const void *args, size_t size, int device_worker) {
  (void)size, (void)device_worker;
  sg_copy_run((const sg_copy_desc *)args);
}

void sg_stream_copy(sg_stream *s, const sg_copy_desc *c) {
  _Static_assert(sizeof(sg_copy_desc) <= SG_KERNEL_ARGS, "a copy's descriptor is a copy kernel's argument block");
  if (s->cuda) sg_cuda_stream_copy(s->cuda, c);
  else (void)sg_stream_launch(s, copy_kernel, c, sizeof *c); /* fits: asserted */
}

int sg_token_init(sg_runtime *rt, sg_token *t) {
  atomic_init(&t->recorded, 0), atomic_init(&t->done, 0);
  t->event = NULL;
  return rt->device == SG_DEVICE_CUDA ? sg_cuda_token_init(t) : MAPP_OK;
}

void sg_token_free(sg_runtime *rt, sg_token *t) {
  if (rt->device == SG_DEVICE_CUDA) sg_cuda_token_free(t);
}

/* ------------------------------------------------------------ the device's thread */

static void note_add(sg_stream *s, void (*fn)(void *), void *arg) {
  if (s->notes_count == s->notes_cap) {
    size_t cap = s->notes_cap ? 2 * s->notes_cap : 64;
    pending_note *bigger = malloc(cap * sizeof *bigger);
    if (!bigger) abort();
    for (size_t i = 0; i < s->notes_count; ++i) bigger[i] = s->notes[(s->notes_head + i) % s->notes_cap];
    free(s->notes);
    s->notes = bigger, s->notes_head = 0, s->notes_cap = cap;
  }
  s->notes[(s->notes_head + s->notes_count++) % s->notes_cap] =
      (pending_note){.fn = fn, .arg = arg, .due_ns = sg_now_ns() + s->rt->device_poll_ns};
}

/* The batch's figures into the runtime's (one line every device thread shares). */
static void flush_stats(sg_stream *s) {
  sg_runtime *rt = s->rt;
  long *f = s->flushed, add[3] = {s->kernels - f[0], s->kernel_ns - f[1], s->notifications - f[2]};
  if (add[0]) atomic_fetch_add_explicit(&rt->dev_stats.kernels, add[0], memory_order_relaxed);
  if (add[1]) atomic_fetch_add_explicit(&rt->dev_stats.kernel_ns, add[1], memory_order_relaxed);
  if (add[2]) atomic_fetch_add_explicit(&rt->dev_stats.notifications, add[2], memory_order_relaxed);
  f[0] = s->kernels, f[1] = s->kernel_ns, f[2] = s->notifications;
  atomic_long *max = &rt->dev_stats.max_runahead;
  for (long seen = atomic_load_explicit(max, memory_order_relaxed);
       s->max_runahead > seen && !atomic_compare_exchange_weak(max, &seen, s->max_runahead);)
    ;
}

/* Delivers the notifications that are due (a constant latency keeps them
 * in order). */
static void deliver_due(sg_stream *s) {
  if (!s->notes_count) return;
  long now = sg_now_ns();
  while (s->notes_count && s->notes[s->notes_head].due_ns <= now) {
    pending_note n = s->notes[s->notes_head];
    s->notes_head = (s->notes_head + 1) % s->notes_cap, s->notes_count--;
    s->notifications++;
    flush_stats(s); /* before the host can learn the work is done and read them */
    n.fn(n.arg);
  }
}

/* Takes up to SG_STREAM_BATCH items; how many. The kernels enqueued and
 * not yet run, seen here once a batch, are the stream's runahead. */
static int stream_pop_batch(sg_stream *s, dev_item *out) {
  sg_spin_lock(&s->lock);
  int n = 0;
  long queued = s->enqueued_kernels - s->kernels;
  if (queued > s->max_runahead) s->max_runahead = queued;
  for (; n < SG_STREAM_BATCH && s->count; ++n) {
    out[n] = s->ring[s->head];
    s->head = (s->head + 1) % s->cap, s->count--;
  }
  sg_spin_unlock(&s->lock);
  return n;
}


/* The stream waits for another's token, delivering its own notifications
 * meanwhile; the producer is a thread of its own, so yield to it after a
 * short spin (the machine may have fewer cores than threads). */
static void wait_token(sg_stream *s, const sg_token *t, uint64_t gen) {
  for (unsigned i = 0; atomic_load_explicit(&t->done, memory_order_acquire) < gen; ++i) {
    deliver_due(s);
    if (i < 256) sg_cpu_relax();
    else sched_yield();
  }
}

static void run_item(sg_stream *s, dev_item *item) {
  sg_runtime *rt = s->rt;
  switch (item->kind) {
  case DEV_KERNEL: {
    long t0 = sg_now_ns();
    item->fn(item->args, item->size, rt->nworkers + s->index);
    s->kernel_ns += sg_now_ns() - t0;
    s->kernels++;
    break;
  }
  case DEV_RECORD: atomic_store_explicit(&item->token->done, item->gen, memory_order_release); break;
  case DEV_WAIT: wait_token(s, item->token, item->gen); break;
  case DEV_NOTIFY: note_add(s, item->notify, item->arg); break;
  }
}

/* Nothing queued: deliver what is pending (spinning until it is due), else
 * spin for work up to the runtime's spin time, then sleep on the word. */
static void stream_idle(sg_stream *s, uint32_t seen) {
  sg_runtime *rt = s->rt;
  long deadline = sg_now_ns() + rt->spin_ns;
  for (unsigned i = 1;; ++i) {
    if (atomic_load_explicit(&s->word, memory_order_acquire) != seen) return;
    deliver_due(s);
    if (s->notes_count) {
      sg_cpu_relax();
      continue;
    }
    if (atomic_load(&s->stop)) return;
    if ((i & 63) == 0 && sg_now_ns() > deadline) break;
    sg_cpu_relax();
  }
  atomic_store(&s->sleeping, 1);
  while (atomic_load(&s->word) == seen && !atomic_load(&s->stop)) sg_park_on(&s->word, seen);
  atomic_store(&s->sleeping, 0);
}

/* The device thread: batches of items in order, the notifications that
 * are due between them; the word is read only when the queue looks empty
 * (and the queue checked again after it, so no push is missed). */
static void *stream_main(void *p) {
  sg_stream *s = p;
  dev_item batch[SG_STREAM_BATCH];
  for (;;) {
    int n = stream_pop_batch(s, batch);
    for (int i = 0; i < n; ++i) {
      run_item(s, &batch[i]);
      deliver_due(s);
    }
    if (n) {
      flush_stats(s);
      continue;
    }
    uint32_t seen = atomic_load_explicit(&s->word, memory_order_acquire);
    sg_spin_lock(&s->lock);
    bool empty = s->count == 0;
    sg_spin_unlock(&s->lock);
    if (!empty) continue;
    deliver_due(s);
    flush_stats(s);
    if (atomic_load(&s->stop) && !s->notes_count) break;
    stream_idle(s, seen);
  }
  sg_runtime *rt = s->rt;
  if (atomic_load(&s->free_on_exit)) {
    pthread_detach(pthread_self());
    free(s->ring), free(s->notes), free(s);
  }
  atomic_fetch_sub(&rt->live_streams, 1); /* the last touch of the runtime: destroy waits for it */
  return NULL;
}

/* ------------------------------------------------------------ life */

int sg_stream_create(sg_runtime *rt, int index, sg_stream **out) {
  sg_stream *s;
  *out = NULL;
  MAPP_TRY(mapp_calloc((void **)&s, 1, sizeof *s, "a device stream"));
  s->rt = rt, s->index = index;
  if (rt->device == SG_DEVICE_CUDA) {
    int status = sg_cuda_stream_create(rt, &s->cuda);
    if (status != MAPP_OK) free(s);
    else *out = s;
    return status;
  }
  /* Not on the host's CPU: a thread inherits its creator's binding, and
   * the host may be bound to worker 0's. The device threads run where the
   * process may (they are the run's helper threads). */
  pthread_attr_t attr;
  int err = pthread_attr_init(&attr);
  if (!err && rt->host_pinned) err = pthread_attr_setaffinity_np(&attr, sizeof rt->host_mask, &rt->host_mask);
  atomic_fetch_add(&rt->live_streams, 1);
  if (!err) err = pthread_create(&s->thread, &attr, stream_main, s);
  pthread_attr_destroy(&attr);
  if (err) {
    atomic_fetch_sub(&rt->live_streams, 1);
    free(s);
    return mapp_fail(MAPP_ERR_SYSTEM, "starting the thread of device stream %d failed: %s", index, strerror(err));
  }
  s->started = true;
  *out = s;
  return MAPP_OK;
}

static void stream_stop(sg_stream *s) {
  atomic_store(&s->stop, true);
  atomic_fetch_add(&s->word, 1);
  sg_unpark_all(&s->word);
}

void sg_stream_destroy(sg_stream *s) {
  if (!s) return;
  if (s->cuda) {
    sg_cuda_stream_destroy(s->cuda);
    free(s);
    return;
  }
  if (s->started && pthread_equal(pthread_self(), s->thread)) { /* from a notification it delivers */
    atomic_store(&s->free_on_exit, true);
    stream_stop(s);
    return;
  }
  stream_stop(s);
  if (s->started) pthread_join(s->thread, NULL);
  free(s->ring), free(s->notes), free(s);
}

int sg_devices_start(sg_runtime *rt) {
  if (rt->device == SG_DEVICE_NONE) return MAPP_OK;
  if (rt->device == SG_DEVICE_CUDA) MAPP_TRY(sg_cuda_start(rt));
  for (int w = 0; w < rt->nworkers; ++w) {
    MAPP_TRY(sg_stream_create(rt, w, &rt->streams[w]));
    rt->nstreams = w + 1;
  }
  return MAPP_OK;
}

void sg_devices_stop(sg_runtime *rt) {
  for (int w = 0; w < rt->nstreams; ++w)
    if (!rt->streams[w]->cuda) stream_stop(rt->streams[w]); /* all drain at once */
  for (int w = 0; w < rt->nstreams; ++w) {
    sg_stream_destroy(rt->streams[w]);
    rt->streams[w] = NULL;
  }
  rt->nstreams = 0;
  /* A subgraph freed by its copy stream's last notification ends that
   * thread itself, unjoined: wait for it before the runtime goes. */
  while (atomic_load(&rt->live_streams) > 0) sched_yield();
  sg_cuda_stop(rt);
}

void sg_runtime_device_stats(sg_runtime *rt, sg_device_stats *out) {
  *out = (sg_device_stats){
      .kernels = atomic_load(&rt->dev_stats.kernels), .kernel_ns = atomic_load(&rt->dev_stats.kernel_ns),
      .notifications = atomic_load(&rt->dev_stats.notifications),
      .max_runahead = atomic_load(&rt->dev_stats.max_runahead)};
  for (int w = 0; w < rt->nworkers; ++w)
    out->issued_ops += atomic_load(&rt->issue_stats[w].ops), out->issue_ns += atomic_load(&rt->issue_stats[w].ns);
}

/* Between runs (nothing in flight): the streams' flushed figures are all
 * in the runtime's, and a stream's own maximum starts again with it. */
void sg_runtime_device_stats_reset(sg_runtime *rt) {
  atomic_store(&rt->dev_stats.kernels, 0), atomic_store(&rt->dev_stats.kernel_ns, 0);
  atomic_store(&rt->dev_stats.notifications, 0), atomic_store(&rt->dev_stats.max_runahead, 0);
  for (int w = 0; w < rt->nworkers; ++w) atomic_store(&rt->issue_stats[w].ops, 0), atomic_store(&rt->issue_stats[w].ns, 0);
  for (int w = 0; w < rt->nstreams; ++w) {
    sg_stream *s = rt->streams[w];
    if (s->cuda) continue;
    sg_spin_lock(&s->lock);
    s->max_runahead = 0; /* the thread's, but it is idle between runs; the lock publishes it */
    sg_spin_unlock(&s->lock);
  }
}
