/* sg: a small task runtime with two ways to run the same operations (the
 * seed: Realm's dynamic path versus its compiled subgraphs, PR #391).
 *
 *   eager     every op is launched one by one: an event is allocated for
 *             it, its preconditions are registered, it is queued when they
 *             have triggered and it triggers its successors on completion.
 *   subgraph  a definition (ops, edges, external pre/postcondition ports,
 *             interpolations) is compiled once to static per-worker
 *             schedules with atomic countdown counters only on cross-worker
 *             edges and one finish counter, then instantiated many times.
 *
 * Operations: a task (function + argument block), a copy (1-D or 2-D
 * strided) and a barrier arrival. Workers are pthreads that spin for
 * `spin_us` looking for work before sleeping on a futex (the seed's
 * sg_sched_spin); with host_runs the host thread is worker 0 and runs its
 * share while it waits (the serial backend: the host alone).
 *
 * Contract: an op running inside a subgraph must not launch operations or
 * wait on events. Such a call fails at once (no deadlock), the runtime
 * records "op 'X' of subgraph 'Y' ..." and sg_runtime_status() returns
 * MAPP_ERR_VERIFY with that message.
 *
 * Every function that can fail returns a mapp status (mapp_error.h). */
#ifndef SG_H
#define SG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SG_MAX_WORKERS 64

typedef struct sg_runtime sg_runtime;
typedef struct sg_subgraph sg_subgraph;
typedef struct sg_barrier sg_barrier;

/* An event handle: slot and generation (Realm's scheme), so a handle whose
 * slot has been recycled still reads as triggered. 0 never waits. */
typedef uint64_t sg_event;
#define SG_NO_EVENT ((sg_event)0)

/* A device: per worker an in-order queue (a stream) of device work.
 *   none      no device: an op is done when its function returns.
 *   emulated  each stream is served by a thread of its own (a helper
 *             thread of the run), which runs kernels, records and waits
 *             for tokens and delivers completion notifications to the
 *             runtime device_poll_ns after it reaches them, as Realm's GPU
 *             worker polls its events (sg_device.c).
 *   cuda      each stream is a cudaStream_t; a task launches its own
 *             kernels on sg_stream_native; tokens are CUDA events, and a
 *             thread of the runtime polls the events recorded after ops
 *             to learn their completion (sg_cuda_device.c). */
typedef enum { SG_DEVICE_NONE, SG_DEVICE_EMULATED, SG_DEVICE_CUDA } sg_device_kind;

typedef struct sg_stream sg_stream;

/* Device work: runs on the stream's device after everything enqueued on
 * the stream before it. device_worker is the device's own index
 * (workers..2*workers-1), for per-thread scratch. */
typedef void (*sg_kernel_fn)(const void *args, size_t size, int device_worker);
#define SG_KERNEL_ARGS 64
/* Enqueues fn (args copied, at most SG_KERNEL_ARGS bytes) on s (an
 * emulated device's stream; a CUDA stream refuses: the task launches its
 * own kernels on sg_stream_native). */
int sg_stream_launch(sg_stream *s, sg_kernel_fn fn, const void *args, size_t size);
/* The CUDA stream (a cudaStream_t) behind s; NULL on an emulated device. */
void *sg_stream_native(sg_stream *s);

/* What a task sees of the runtime. */
typedef struct {
  sg_runtime *rt;
  int worker;                  /* 0..workers-1 */
  const void *instance_args;   /* subgraph: the instantiation's argument block; eager: NULL */
  /* A device op (sg_op_def.device, sg_launch_device_task): the stream its
   * device work goes to, in its worker's order; else NULL. */
  sg_stream *stream;
} sg_task_ctx;

typedef void (*sg_task_fn)(const void *args, size_t size, const sg_task_ctx *ctx);

/* A 1-D (rows = 1) or 2-D strided copy: rows x row_bytes, each row from
 * src + r * src_stride to dst + r * dst_stride. */
typedef struct {
  void *dst;
  const void *src;
  size_t row_bytes, rows, dst_stride, src_stride;
} sg_copy_desc;

typedef struct {
  int workers;  /* 1..SG_MAX_WORKERS */
  /* The host thread is worker 0: it runs worker 0's work (and eager ops)
   * inside sg_event_wait, sg_runtime_help and sg_runtime_destroy, and
   * workers - 1 threads run the rest. With workers = 1 no thread starts:
   * a launch is run by the thread that waits for it, with no hand-off
   * between cores (the serial backend). Worker 0's work runs only while
   * the host waits or helps. With cpus, the host thread is bound to
   * cpus[0] from create to destroy (see host_cpu). */
  bool host_runs;
  long spin_us; /* spin this long for work (and in host waits) before sleeping; 0: sleep at once */
  /* Worker i runs on CPU cpus[i]; NULL: unpinned. Spinning workers that
   * the scheduler leaves on one CPU take turns at their spins: pinning
   * them apart is what Realm's core reservation does. */
  const int *cpus;
  /* Where the host thread runs from create to destroy (which must then be
   * called from the same thread), where it is not worker 0: a CPU of its
   * own beside the workers'; NULL: left as it is. A host left free shared
   * a CPU with a spinning worker for milliseconds at a time. */
  const int *host_cpu;
  sg_device_kind device;
  long device_poll_ns; /* emulated: a completion reaches the runtime this long after the device does */
  /* Test only: a consumer that respects its producer's asynchronous
   * effects issues without its stream's wait on the producer's token
   * (the bug the tag check must catch). */
  bool skip_device_waits;
  /* Test only: ops fed by precondition ports are issued at once, their
   * streams waiting on a token that the port's trigger records on the
   * first consumer's stream, behind them: CUDA's false dependence, a cycle
   * the watchdog must name. */
  bool plant_early_issue;
} sg_config;

int sg_runtime_create(const sg_config *cfg, sg_runtime **out);
/* Waits for the queues to drain, joins the workers and frees everything.
 * Subgraphs still alive are freed when their last instantiation ends. */
void sg_runtime_destroy(sg_runtime *rt);
int sg_runtime_workers(const sg_runtime *rt);
/* In a host_runs runtime, called by the host: runs one unit of queued work
 * (worker 0's, or an eager op) and returns true; false when none is
 * queued, from inside an op, or when the runtime has no host worker. For
 * hosts that wait in their own loop (polling MPI) rather than in
 * sg_event_wait. */
bool sg_runtime_help(sg_runtime *rt);
/* MAPP_OK, or MAPP_ERR_VERIFY with the first contract violation recorded
 * (mapp_fail) as "op 'X' of subgraph 'Y' ...". Call from the host thread. */
int sg_runtime_status(sg_runtime *rt);

/* ---- events ---- */

/* A user event, triggered by sg_event_trigger. */
int sg_event_create(sg_runtime *rt, sg_event *out);
void sg_event_trigger(sg_runtime *rt, sg_event ev);
bool sg_event_has_triggered(sg_runtime *rt, sg_event ev);
/* Blocks the calling host thread (spin, then sleep) until ev triggers.
 * Inside a subgraph op: a contract violation, returns MAPP_ERR_VERIFY at once. */
int sg_event_wait(sg_runtime *rt, sg_event ev);
/* An event that triggers when all n have (Realm's merge_events). */
int sg_event_merge(sg_runtime *rt, const sg_event *evs, int n, sg_event *out);

/* A callback run once when an event triggers (on the triggering thread, or
 * at once when it already has), the waiters of one event in the order they
 * were added. The node must stay valid until it runs; it must not block. */
typedef struct sg_waiter {
  struct sg_waiter *next;
  void (*fn)(struct sg_waiter *self, sg_runtime *rt);
} sg_waiter;
void sg_event_add_waiter(sg_runtime *rt, sg_event ev, sg_waiter *w);

/* ---- the eager path ---- */

/* Each launch copies its argument block, registers its npre preconditions
 * and returns in *done the event its completion triggers. */
int sg_launch_task(sg_runtime *rt, const char *name, sg_task_fn fn, const void *args, size_t size,
                   const sg_event *pre, int npre, sg_event *done);
int sg_launch_copy(sg_runtime *rt, const sg_copy_desc *copy, const sg_event *pre, int npre, sg_event *done);
/* A task with device work: fn enqueues it on ctx->stream; *done triggers
 * when the device has done it (the eager path has no runahead: a
 * successor starts after both sides). Needs a runtime with a device. */
int sg_launch_device_task(sg_runtime *rt, const char *name, sg_task_fn fn, const void *args, size_t size,
                          const sg_event *pre, int npre, sg_event *done);
int sg_launch_arrive(sg_runtime *rt, sg_barrier *barrier, const sg_event *pre, int npre, sg_event *done);

/* A barrier: its event triggers after `count` arrivals; sg_barrier_rearm
 * (once triggered) makes it count again with a fresh event. */
int sg_barrier_create(sg_runtime *rt, int count, sg_barrier **out);
sg_event sg_barrier_event(const sg_barrier *b);
int sg_barrier_rearm(sg_barrier *b);
void sg_barrier_destroy(sg_barrier *b);

/* ---- the subgraph path ---- */

typedef enum { SG_OP_TASK, SG_OP_COPY, SG_OP_ARRIVE } sg_op_kind;

/* One op of a definition. Its payload is what interpolations patch: the
 * task's argument block, the copy's sg_copy_desc, the arrival's
 * sg_barrier pointer. */
typedef struct {
  const char *name;
  sg_op_kind kind;
  int affinity; /* preferred worker (taken modulo the workers), or -1: round robin */
  sg_task_fn fn;
  const void *args;
  size_t arg_size;
  sg_copy_desc copy;
  sg_barrier *barrier;
  /* Its place in the schedules: among ops whose predecessors are placed,
   * the lowest phase goes first, then the lowest index (0 everywhere: the
   * definition's order, where the edges allow). An op waiting on a
   * precondition port parks its worker's whole schedule, so ops that feed
   * other ranks must not sit behind it: give every op its (global)
   * timestep, and each rank's schedules wait only on earlier timesteps. */
  int phase;
  /* A task with device work (asynchronous effects): fn enqueues it on
   * ctx->stream and its control side is done when fn returns, its device
   * side when the device has done it. A copy with device set is device
   * work on the subgraph's own copy stream (not a pool shared with other
   * copies), done on the host once enqueued; it always respects its
   * producers' effects. Needs a runtime with a device. */
  bool device;
  /* The promise (Realm's stream-ordered task): the op touches its inputs
   * only through work on its stream, never on the host. A consumer that
   * promises it respects its producers' asynchronous effects: it is issued
   * after their control side, its stream waiting on their tokens (the
   * runahead); one that does not also waits for their device side. */
  bool stream_ordered;
} sg_op_def;

typedef struct {
  int src, dst; /* op indices: dst runs after src */
} sg_edge_def;

/* A port edge: precondition port -> consuming op, or producing op ->
 * postcondition port (exactly one producer per postcondition port). */
typedef struct {
  int port, op;
} sg_port_edge;

/* Per instantiation, arg block bytes [arg_offset, +size) are patched into
 * op `op`'s payload at op_offset. */
typedef struct {
  size_t arg_offset, size;
  int op;
  size_t op_offset;
} sg_interp_def;

typedef struct {
  const char *name;
  const sg_op_def *ops;
  int nops;
  const sg_edge_def *edges;
  int nedges;
  int npre_ports;
  const sg_port_edge *pre_edges;
  int npre_edges;
  int npost_ports;
  const sg_port_edge *post_edges;
  int npost_edges;
  size_t arg_size; /* the instantiation's argument block */
  const sg_interp_def *interps;
  int ninterps;
} sg_graph_def;

/* Copies the definition (names, argument blocks). */
int sg_subgraph_create(sg_runtime *rt, const sg_graph_def *def, sg_subgraph **out);
/* Topological analysis, worker assignment, per-worker schedules, counters
 * on cross-worker edges, copy plans, the finish counter. Rejects (input
 * error naming the culprit) cycles, edges naming missing ops, dangling
 * ports and interpolations outside the argument block or the payload. */
int sg_subgraph_compile(sg_subgraph *sg);
/* Runs the compiled graph once, after `start` and the npre_ports events in
 * pre (NULL when there are none), with args (arg_size bytes, copied).
 * post (NULL when none) receives one event per postcondition port, *finish
 * one event for the whole instantiation. Returns without waiting, so
 * instantiations run ahead of each other, chained by events. */
int sg_subgraph_instantiate(sg_subgraph *sg, const void *args, size_t size, sg_event start, const sg_event *pre,
                            sg_event *post, sg_event *finish);
/* Safe while instantiations are in flight: they finish, then the graph is freed. */
void sg_subgraph_destroy(sg_subgraph *sg);

/* Compile statistics, for tests and the record. */
typedef struct {
  int workers_used;
  int counters;      /* ops with a countdown counter (cross-worker or port edges) */
  int cross_edges;   /* edges whose ends are on different workers */
  int local_edges;   /* edges kept implicit by the per-worker schedule order */
  int patched_ops;   /* ops whose payload is copied and patched per instantiation */
  /* Asynchronous effects: every edge is a control edge; an edge from a
   * device op whose consumer does not respect its effects is also an async
   * edge (the consumer waits for the device side), one whose consumer does
   * is a device wait (on another stream: its stream waits on the token;
   * on the same stream, the stream's order is enough). */
  int control_edges, async_edges, device_waits, stream_order_edges;
  int tokens;        /* device ops whose token another stream waits on */
  int notifications; /* device completions reported to the host per replay */
} sg_subgraph_stats;
void sg_subgraph_get_stats(const sg_subgraph *sg, sg_subgraph_stats *out);
/* What the instantiations in flight still wait for, for a watchdog's line:
 * per instantiation, each worker's op it is parked at and the inputs it
 * lacks, and the device completions outstanding. Racy reads of a run that
 * has stalled; "none in flight" when none is. */
void sg_subgraph_pending(const sg_subgraph *sg, char *buf, size_t len);

/* What the device did since the runtime was created (zero without one). */
typedef struct {
  long kernels, kernel_ns;  /* device work run, and its time on the device */
  long issued_ops, issue_ns; /* device ops' host sides (waits enqueued, function, record, notification) and their time */
  long notifications;       /* completions delivered to the host */
  long max_runahead;        /* the most kernels enqueued on one stream and not yet run */
} sg_device_stats;
void sg_runtime_device_stats(sg_runtime *rt, sg_device_stats *out);
void sg_runtime_device_stats_reset(sg_runtime *rt);

/* Monotonic nanoseconds (for the variants' phase timings). */
long sg_now_ns(void);

/* The copy kernel both paths run (a plan: contiguous runs collapse to one memcpy). */
void sg_copy_run(const sg_copy_desc *c);
/* Plans a copy in place: a strided copy whose rows are adjacent on both
 * sides becomes one run. Compile plans every copy op once; an
 * instantiation plans again only the copies its interpolations patched,
 * from their unplanned descriptors (a plan made for other addresses or
 * strides would be wrong). */
void sg_copy_plan(sg_copy_desc *c);

#endif
