/* The eager path: every op launched one by one (its event allocated, its
 * preconditions registered, queued once they have triggered, its
 * completion triggering its successors), copies, and barriers. */
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "sg_runtime_internal.h"

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
  bool device;             /* a device task: done when its stream has run what it enqueued */
  sg_runtime *rt;          /* a device task's, for its notification */
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
  else sg_push_shared(rt, &op->hdr);
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

int sg_launch_device_task(sg_runtime *rt, const char *name, sg_task_fn fn, const void *args, size_t size,
                          const sg_event *pre, int npre, sg_event *done) {
  if (rt->device == SG_DEVICE_NONE)
    return mapp_fail(MAPP_ERR_INPUT, "device task '%s' launched on a runtime without a device", name ? name : "task");
  eager_op proto = {.kind = EAGER_TASK, .name = name ? name : "task", .fn = fn, .arg_size = size, .device = true};
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

static void eager_device_done(void *arg) {
  eager_op *op = arg;
  eager_complete(op->rt, op);
}

/* A device task's host side: it enqueues its work on the worker's stream;
 * the op completes when the stream's notification arrives. */
static void eager_run_device(sg_runtime *rt, eager_op *op, int worker) {
  sg_stream *stream = sg_worker_stream(rt, worker);
  sg_task_ctx ctx = {.rt = rt, .worker = worker, .instance_args = NULL, .stream = stream};
  long t0 = sg_now_ns();
  op->fn(op->args, op->arg_size, &ctx);
  op->rt = rt;
  sg_stream_notify(stream, eager_device_done, op);
  sg_count_issue(rt, worker, sg_now_ns() - t0);
}

/* Runs an eager op taken from a queue by worker, then completes it. */
void sg_eager_run(sg_runtime *rt, sg_work *w, int worker) {
  eager_op *op = (eager_op *)w;
  if (op->device) {
    eager_run_device(rt, op, worker);
    return;
  }
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
void sg_barrier_arrive_now(sg_runtime *rt, sg_barrier *b) {
  if (atomic_fetch_sub_explicit(&b->remaining, 1, memory_order_acq_rel) == 1) sg_event_trigger(rt, b->event);
}
