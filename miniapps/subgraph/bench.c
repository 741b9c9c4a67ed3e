/* mapp-subgraph-bench: what a task costs on each path of the runtime.
 *
 *   replay/VARIANT/PATTERN[/interp]  ns per task (counter ns_per_task) of
 *       Task Bench at width 16, graph-steps 64, K = 0, one worker: every
 *       row of the variant table, no_comm and stencil_1d, and the subgraph
 *       with the base timestep patched into every op per instantiation;
 *       replay/body_only/PATTERN: the same task bodies called in a loop, no
 *       runtime (what a variant adds is its overhead);
 *   eager_cost/...  the eager path itemised: event create + trigger, one
 *       precondition registered on an untriggered event, the ready-queue
 *       trip (launch with no preconditions, run, trigger), a launch with
 *       three preconditions, and the merge that closes a chunk;
 *   in_flight/.../inflight:N  stencil_1d width 2, 1 and 2 workers, K near
 *       their METG, N instantiations in flight (1: one at a time);
 *   handoff/spin_us:S  one task launched and waited for by the host: the
 *       round trip through a sleeping (S = 0: futex) or a
 *       spinning worker;
 *   launch/empty/{serial,workers:N}  a one-op subgraph (an empty task)
 *       instantiated and waited for, one at a time: ns per launch, launch
 *       to finish; serial: the host runs it; workers:N: the threads
 *       backend, the host worker 0 by the app's rule (--host-worker auto)
 *       and the op on the last worker, a thread (the hand-off measured);
 *   launch/stencil_1d_w2_gs1/{serial,workers:N}  Task Bench stencil_1d, width 2,
 *       K = 0, one timestep per instantiation (what an application that
 *       replays one iteration per launch pays), 64 in flight (the app's
 *       default at graph-steps 1): ns per instantiation;
 *   launch/eager_chunk/{serial,workers:N}  the eager variant at the same shape: ns
 *       per chunk (its launches, the merge that closes it, the host's wait);
 *   copy/{memcpy,planned,eager}/bytes:B  ns per copy of B bytes (0, 1 KiB,
 *       64 KiB), 256 copies from one source to distinct destinations:
 *       memcpy in a loop, a replayed subgraph of 256 copy ops planned at
 *       compile, 256 sg_launch_copy; copy/task_op: the same subgraph with
 *       empty tasks for ops (what a copy op costs over a task op);
 *   async/chain/{eager,replay-none,replay-all}/K:{50,3000}  a chain of
 *       device tasks on the emulated device (no_comm, one point, one
 *       worker, graph-steps 64, --device-poll-us at its default): ns per
 *       task, and the device's figures: h_us and d_us (host issue and
 *       device time per op), bound_ns_per_task (max(h, d) plus one
 *       notification a replay), notifications_per_replay, max_runahead;
 *   replay/cuda/VARIANT/PATTERN  the CUDA variants at the replay rows'
 *       shape: ns_per_task from the device run alone (no setup, no
 *       capture), launch_us the host's cost of launching one replay
 *       (cudaGraphLaunch) or one task (eager: its waits, launch and
 *       record), update_us the replay's parameter update (the base
 *       timestep, one device word, set by a one-thread kernel), prepare_ms the capture and
 *       instantiation; only where a device is.
 * And the anchors: machine/core_round_trip (what a hand-off between
 * workers, or between the host and a worker, is bound by) and stream/triad
 * (what the large copies are bound by).
 * Timings are wall clock; compare ratios from one run. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_backend.h"
#include "mapp_bench.h"
#include "mapp_latency.h"
#include "mapp_stream.h"
#include "subgraph.h"

/* ---------------------------------------------------------- replay */

typedef struct {
  char name[96];
  tb_variant variant;
  tb_pattern pattern;
  long width, graph_steps, iterations, steps;
  int workers, in_flight;
  bool interpolate;
  long spin_us;
  tb_host_worker host_worker; /* auto (0) unless set: the app's default */
  tb_device device;           /* the runtime's rows on the GPU: cuda; the async rows: emulated */
  tb_stream_ordered stream_ordered;
} replay_case;

/* tasks/s and ns per task of a run of cfg (or its error). */
static void report_tasks(mapp_bench_state *bs, int status, const tb_config *cfg) {
  if (status != MAPP_OK) {
    mapp_bench_skip_with_error(bs, mapp_error_message());
    return;
  }
  double tasks = (double)mapp_bench_iterations(bs) * (double)(cfg->width * cfg->steps);
  mapp_bench_set_items_processed(bs, (int64_t)tasks);
  /* seconds per task, scaled to ns: a rate counter inverted */
  mapp_bench_set_counter(bs, "ns_per_task", tasks * 1e-9, MAPP_BENCH_COUNTER_RATE | MAPP_BENCH_COUNTER_INVERT);
}

static void bm_replay(mapp_bench_state *bs, void *arg) {
  const replay_case *rc = arg;
  tb_config cfg = {.pattern = rc->pattern, .width = rc->width, .steps = rc->steps, .radix = 3,
                   .iterations = rc->iterations, .kernel = TB_KERNEL_COMPUTE, .scratch_bytes = 64,
                   .workers = rc->workers, .spin_us = rc->spin_us, .graph_steps = rc->graph_steps,
                   .in_flight = rc->in_flight, .interpolate = rc->interpolate, .device = rc->device};
  tb_state *st = NULL;
  int status = tb_state_create(&cfg, MPI_COMM_WORLD, &st);
  if (status == MAPP_OK && rc->variant == TB_VARIANT_SUBGRAPH) status = tb_subgraph_prepare(st); /* untimed */
  while (status == MAPP_OK && mapp_bench_keep_running(bs))
    status = rc->variant == TB_VARIANT_EAGER ? tb_run_eager(st) : tb_run_subgraph(st);
  report_tasks(bs, status, &cfg);
  if (st) tb_subgraph_release(st);
  tb_state_destroy(st);
}

/* ---------------------------------------------------------- async */

/* The device's figures of the benchmark's runs, per op and per task: the
 * host's issue time h, the device's time d, and the bound a replay with
 * runahead is held to, max(h, d) per op plus one notification a replay. */
static void report_device(mapp_bench_state *bs, const tb_config *cfg, const sg_device_stats *d) {
  double h_us = d->issued_ops ? (double)d->issue_ns * 1e-3 / (double)d->issued_ops : 0.0;
  double d_us = d->kernels ? (double)d->kernel_ns * 1e-3 / (double)d->kernels : 0.0;
  double replays = (double)mapp_bench_iterations(bs) * (double)(cfg->steps / cfg->graph_steps);
  double ops_per_replay = (double)(cfg->width * cfg->graph_steps) / (double)cfg->workers;
  double bound_us = (h_us > d_us ? h_us : d_us) + (double)cfg->device_poll_ns * 1e-3 / ops_per_replay;
  mapp_bench_set_counter(bs, "h_us", h_us, MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_counter(bs, "d_us", d_us, MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_counter(bs, "bound_ns_per_task", bound_us * 1e3, MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_counter(bs, "notifications_per_replay", replays ? (double)d->notifications / replays : 0.0,
                         MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_counter(bs, "max_runahead", (double)d->max_runahead, MAPP_BENCH_COUNTER_DEFAULT);
}

/* A chain on the emulated device (no_comm, one point, one worker), as the
 * async sweep's: eager, the replay without runahead (stream order promised
 * by none) and with it (by all). */
static void bm_async(mapp_bench_state *bs, void *arg) {
  const replay_case *rc = arg;
  tb_config cfg = {.pattern = rc->pattern, .width = rc->width, .steps = rc->steps, .radix = 3,
                   .iterations = rc->iterations, .kernel = TB_KERNEL_COMPUTE, .scratch_bytes = 64,
                   .workers = rc->workers, .spin_us = rc->spin_us, .graph_steps = rc->graph_steps,
                   .in_flight = rc->in_flight, .device = TB_DEVICE_EMULATED, .stream_ordered = rc->stream_ordered,
                   .device_poll_ns = (long)(TB_DEVICE_POLL_US * 1e3)};
  tb_state *st = NULL;
  sg_device_stats d = {0};
  int status = tb_state_create(&cfg, MPI_COMM_WORLD, &st);
  if (status == MAPP_OK && rc->variant == TB_VARIANT_SUBGRAPH) status = tb_subgraph_prepare(st); /* untimed */
  if (status == MAPP_OK) sg_runtime_device_stats_reset(st->rt);
  while (status == MAPP_OK && mapp_bench_keep_running(bs))
    status = rc->variant == TB_VARIANT_EAGER ? tb_run_eager(st) : tb_run_subgraph(st);
  if (status == MAPP_OK) sg_runtime_device_stats(st->rt, &d);
  report_tasks(bs, status, &cfg);
  if (status == MAPP_OK) report_device(bs, &cfg, &d);
  if (st) tb_subgraph_release(st);
  tb_state_destroy(st);
}

static int register_async(replay_case *cases, int *n, const mapp_bench_options *opt) {
  static const long kernel_lengths[2] = {50, 3000}; /* h about d; d about 20 h */
  static const struct {
    const char *name;
    tb_variant variant;
    tb_stream_ordered ordered;
  } modes[3] = {{"eager", TB_VARIANT_EAGER, TB_STREAM_ORDERED_ALL},
                {"replay-none", TB_VARIANT_SUBGRAPH, TB_STREAM_ORDERED_NONE},
                {"replay-all", TB_VARIANT_SUBGRAPH, TB_STREAM_ORDERED_ALL}};
  for (int k = 0; k < 2; ++k)
    for (int m = 0; m < 3; ++m) {
      replay_case *c = &cases[(*n)++];
      *c = (replay_case){.variant = modes[m].variant, .pattern = TB_NO_COMM, .width = 1, .graph_steps = 64,
                         .iterations = kernel_lengths[k], .steps = 1024, .workers = 1, .in_flight = 4,
                         .spin_us = 100, .stream_ordered = modes[m].ordered};
      snprintf(c->name, sizeof c->name, "async/chain/%s/K:%ld", modes[m].name, kernel_lengths[k]);
      MAPP_TRY(mapp_bench_register(c->name, bm_async, c, opt));
    }
  return MAPP_OK;
}

/* ---------------------------------------------------------- cuda */

/* One CUDA run of rc, its times added to *sum; a wrong tag is an error. */
static int cuda_run(const replay_case *rc, double *values, tb_cuda_times *sum) {
  tb_config cfg = {.pattern = rc->pattern, .width = rc->width, .steps = rc->steps, .radix = 3,
                   .iterations = rc->iterations, .kernel = TB_KERNEL_COMPUTE, .graph_steps = rc->graph_steps};
  tb_cuda_times t;
  long bad = 0;
  MAPP_TRY(tb_cuda_run_timed(&cfg, rc->variant == TB_VARIANT_CUDA_GRAPH, &t, &bad, values));
  if (bad) return mapp_fail(MAPP_ERR_VERIFY, "%s: %ld wrong input tags on the device", rc->name, bad);
  sum->run_s += t.run_s, sum->launch_s += t.launch_s, sum->update_s += t.update_s, sum->prepare_s += t.prepare_s;
  sum->launches += t.launches;
  return MAPP_OK;
}

/* The benchmark's own time includes each run's device setup; the counters
 * are the device run's alone, which is what the variants differ in. */
static void bm_cuda(mapp_bench_state *bs, void *arg) {
  const replay_case *rc = arg;
  double *values = calloc((size_t)rc->width, sizeof *values);
  tb_cuda_times warm = {0}, sum = {0};
  int status = values ? cuda_run(rc, values, &warm) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  while (status == MAPP_OK && mapp_bench_keep_running(bs)) status = cuda_run(rc, values, &sum);
  free(values);
  if (status != MAPP_OK) {
    mapp_bench_skip_with_error(bs, mapp_error_message());
    return;
  }
  double runs = (double)mapp_bench_iterations(bs), tasks = runs * (double)(rc->width * rc->steps);
  mapp_bench_set_items_processed(bs, (int64_t)tasks);
  mapp_bench_set_counter(bs, "ns_per_task", sum.run_s / tasks * 1e9, MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_counter(bs, "launch_us", sum.launches ? sum.launch_s / (double)sum.launches * 1e6 : 0,
                         MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_counter(bs, "update_us", sum.launches ? sum.update_s / (double)sum.launches * 1e6 : 0,
                         MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_counter(bs, "prepare_ms", sum.prepare_s / runs * 1e3, MAPP_BENCH_COUNTER_DEFAULT);
}

/* The GPU at the replay rows' shape; registered only where a device is
 * present (a row that cannot run would fail the bench): without the
 * runtime, every task a kernel on its point's stream (streams) and the
 * captured graph (cuda-graph); through the runtime's CUDA streams, eager
 * and the replay (runtime-eager, runtime-subgraph). */
static int register_cuda(replay_case *cases, int *n, const tb_pattern *patterns, const mapp_bench_options *opt) {
  if (!mapp_backend_built(MAPP_BACKEND_CUDA) || mapp_cuda_device_count() == 0) return MAPP_OK;
  static const struct {
    const char *name;
    tb_variant variant;
    bool runtime;
  } rows[] = {{"streams", TB_VARIANT_EAGER, false},
              {"cuda-graph", TB_VARIANT_CUDA_GRAPH, false},
              {"runtime-eager", TB_VARIANT_EAGER, true},
              {"runtime-subgraph", TB_VARIANT_SUBGRAPH, true}};
  for (int p = 0; p < 2; ++p)
    for (int r = 0; r < 4; ++r) {
      replay_case *c = &cases[(*n)++];
      *c = (replay_case){.variant = rows[r].variant, .pattern = patterns[p], .width = 16, .graph_steps = 64,
                         .iterations = 0, .steps = 1024, .workers = 1, .in_flight = 4, .spin_us = 100,
                         .device = rows[r].runtime ? TB_DEVICE_CUDA : TB_DEVICE_NONE};
      snprintf(c->name, sizeof c->name, "replay/cuda/%s/%s", rows[r].name, tb_pattern_name(patterns[p]));
      MAPP_TRY(mapp_bench_register(c->name, rows[r].runtime ? bm_replay : bm_cuda, c, opt));
    }
  return MAPP_OK;
}

/* The task bodies alone, in timestep order on this thread: the floor both
 * variants stand on (the runtime's overhead is what they add to it). */
static void bm_body_only(mapp_bench_state *bs, void *arg) {
  const replay_case *rc = arg;
  tb_config cfg = {.pattern = rc->pattern, .width = rc->width, .steps = rc->steps, .radix = 3, .iterations = 0,
                   .kernel = TB_KERNEL_COMPUTE, .scratch_bytes = 64, .workers = 1, .graph_steps = rc->graph_steps,
                   .in_flight = rc->in_flight};
  tb_state *st = NULL;
  int status = tb_state_create(&cfg, MPI_COMM_WORLD, &st);
  while (status == MAPP_OK && mapp_bench_keep_running(bs)) {
    for (long t = 0; t < cfg.steps; ++t)
      for (long p = 0; p < cfg.width; ++p) tb_run_task(st, t, p, 0);
    status = tb_state_status(st);
  }
  report_tasks(bs, status, &cfg);
  tb_state_destroy(st);
}

/* ---------------------------------------------------------- eager costs */

typedef enum { COST_EVENT, COST_WAITER, COST_QUEUE, COST_LAUNCH3, COST_MERGE } cost_kind;

typedef struct {
  char name[64];
  cost_kind kind;
} cost_case;

static void nothing(const void *a, size_t n, const sg_task_ctx *c) { (void)a, (void)n, (void)c; }
static void count_waiter(sg_waiter *w, sg_runtime *rt) { (void)w, (void)rt; }

#define BATCH 1024

static int cost_batch(sg_runtime *rt, cost_kind kind, sg_event *evs, sg_waiter *nodes) {
  sg_event gate, done;
  switch (kind) {
  case COST_EVENT: /* allocate + trigger (slot recycled) */
    for (int i = 0; i < BATCH; ++i) {
      MAPP_TRY(sg_event_create(rt, &evs[i]));
      sg_event_trigger(rt, evs[i]);
    }
    return MAPP_OK;
  case COST_WAITER: /* register on an untriggered event, then fire them all */
    MAPP_TRY(sg_event_create(rt, &gate));
    for (int i = 0; i < BATCH; ++i) nodes[i].fn = count_waiter, sg_event_add_waiter(rt, gate, &nodes[i]);
    sg_event_trigger(rt, gate);
    return MAPP_OK;
  case COST_QUEUE: /* op alloc, event, queue push/pop, run, trigger, free */
    for (int i = 0; i < BATCH; ++i) MAPP_TRY(sg_launch_task(rt, "t", nothing, NULL, 0, NULL, 0, &evs[i]));
    MAPP_TRY(sg_event_merge(rt, evs, BATCH, &done));
    return sg_event_wait(rt, done);
  case COST_LAUNCH3: /* a stencil-like launch: three preconditions on earlier tasks */
    for (int i = 0; i < BATCH; ++i) {
      sg_event pre[3] = {evs[i > 0 ? i - 1 : 0], evs[i], evs[i + 1 < BATCH ? i + 1 : i]};
      MAPP_TRY(sg_launch_task(rt, "t", nothing, NULL, 0, pre, i ? 3 : 0, &evs[i]));
    }
    MAPP_TRY(sg_event_merge(rt, evs, BATCH, &done));
    return sg_event_wait(rt, done);
  case COST_MERGE: /* a merge of already-triggered events (the chunk close) */
    MAPP_TRY(sg_event_merge(rt, evs, BATCH, &done));
    return sg_event_wait(rt, done);
  }
  return MAPP_OK;
}

static void bm_eager_cost(mapp_bench_state *bs, void *arg) {
  const cost_case *cc = arg;
  sg_runtime *rt = NULL;
  sg_config cfg = {.workers = 1, .spin_us = 100};
  static sg_event evs[BATCH];
  static sg_waiter nodes[BATCH];
  memset(evs, 0, sizeof evs);
  int status = sg_runtime_create(&cfg, &rt);
  while (status == MAPP_OK && mapp_bench_keep_running(bs)) status = cost_batch(rt, cc->kind, evs, nodes);
  if (status != MAPP_OK) mapp_bench_skip_with_error(bs, mapp_error_message());
  else {
    double items = (double)mapp_bench_iterations(bs) * BATCH;
    mapp_bench_set_items_processed(bs, (int64_t)items);
    mapp_bench_set_counter(bs, "ns_per_item", items * 1e-9, MAPP_BENCH_COUNTER_RATE | MAPP_BENCH_COUNTER_INVERT);
  }
  sg_runtime_destroy(rt);
}

/* ---------------------------------------------------------- hand-off */

static void bm_handoff(mapp_bench_state *bs, void *arg) {
  long spin_us = *(const long *)arg;
  sg_runtime *rt = NULL;
  sg_config cfg = {.workers = 1, .spin_us = spin_us};
  int status = sg_runtime_create(&cfg, &rt);
  sg_event done;
  while (status == MAPP_OK && mapp_bench_keep_running(bs)) {
    status = sg_launch_task(rt, "t", nothing, NULL, 0, NULL, 0, &done);
    if (status == MAPP_OK) status = sg_event_wait(rt, done);
  }
  if (status != MAPP_OK) mapp_bench_skip_with_error(bs, mapp_error_message());
  sg_runtime_destroy(rt);
}

/* ---------------------------------------------------------- launch */

/* A backend of the launch rows: serial (the host is the one worker) or
 * threads (the host is worker 0 by the app's rule: when the workers take
 * every CPU). */
typedef struct {
  const char *backend;
  int workers;
  tb_host_worker host_worker;
  char name[48];
} launch_case;

static bool host_runs_of(const launch_case *lc) {
  cpu_set_t allowed;
  int cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : lc->workers + 1;
  return tb_host_runs(lc->host_worker, cpus, lc->workers);
}

/* Launch to finish of a one-op subgraph, one instantiation at a time. */
static void bm_launch_empty(mapp_bench_state *bs, void *arg) {
  const launch_case *lc = arg;
  sg_runtime *rt = NULL;
  sg_subgraph *sg = NULL;
  static const int cpus[2] = {1, 0}; /* the workers on their own CPUs, as the app pins them */
  bool host_runs = host_runs_of(lc);
  sg_config cfg = {.workers = lc->workers, .spin_us = 100, .cpus = lc->workers > 1 || !host_runs ? cpus : NULL,
                   .host_runs = host_runs, .host_cpu = !host_runs && lc->workers == 1 ? &cpus[1] : NULL};
  /* on the last worker: a thread wherever there is one (the hand-off is what is measured) */
  sg_op_def op = {.name = "empty", .kind = SG_OP_TASK, .affinity = lc->workers - 1, .fn = nothing};
  sg_graph_def def = {.name = "launch", .ops = &op, .nops = 1};
  int status = sg_runtime_create(&cfg, &rt);
  if (status == MAPP_OK) status = sg_subgraph_create(rt, &def, &sg);
  if (status == MAPP_OK) status = sg_subgraph_compile(sg);
  sg_event finish;
  while (status == MAPP_OK && mapp_bench_keep_running(bs)) {
    status = sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &finish);
    if (status == MAPP_OK) status = sg_event_wait(rt, finish);
  }
  if (status != MAPP_OK) mapp_bench_skip_with_error(bs, mapp_error_message());
  else
    mapp_bench_set_counter(bs, "ns_per_launch", (double)mapp_bench_iterations(bs) * 1e-9,
                           MAPP_BENCH_COUNTER_RATE | MAPP_BENCH_COUNTER_INVERT);
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
}

/* A Task Bench run whose counter is ns per launch (instantiation or chunk). */
static void bm_launch_steps(mapp_bench_state *bs, void *arg) {
  const replay_case *rc = arg;
  tb_config cfg = {.pattern = rc->pattern, .width = rc->width, .steps = rc->steps, .radix = 3,
                   .iterations = rc->iterations, .kernel = TB_KERNEL_COMPUTE, .scratch_bytes = 64,
                   .workers = rc->workers, .spin_us = rc->spin_us, .graph_steps = rc->graph_steps,
                   .in_flight = rc->in_flight, .pin = true, .host_worker = rc->host_worker};
  tb_state *st = NULL;
  int status = tb_state_create(&cfg, MPI_COMM_WORLD, &st);
  if (status == MAPP_OK && rc->variant == TB_VARIANT_SUBGRAPH) status = tb_subgraph_prepare(st);
  while (status == MAPP_OK && mapp_bench_keep_running(bs))
    status = rc->variant == TB_VARIANT_EAGER ? tb_run_eager(st) : tb_run_subgraph(st);
  if (status != MAPP_OK) mapp_bench_skip_with_error(bs, mapp_error_message());
  else {
    double launches = (double)mapp_bench_iterations(bs) * (double)(cfg.steps / cfg.graph_steps);
    mapp_bench_set_counter(bs, "ns_per_launch", launches * 1e-9, MAPP_BENCH_COUNTER_RATE | MAPP_BENCH_COUNTER_INVERT);
    report_tasks(bs, status, &cfg);
  }
  if (st) tb_subgraph_release(st);
  tb_state_destroy(st);
}

/* ---------------------------------------------------------- copies */

#define COPIES 256

typedef enum { COPY_MEMCPY, COPY_PLANNED, COPY_EAGER, COPY_TASK_OP } copy_path;

typedef struct {
  char name[64];
  copy_path path;
  long bytes;
} copy_case;

/* One pass of COPIES copies of bytes, from src to dst + i * bytes, on the path. */
static int copy_pass(sg_runtime *rt, sg_subgraph *sg, copy_path path, const sg_copy_desc *descs, sg_event *evs) {
  sg_event done;
  switch (path) {
  case COPY_MEMCPY:
    for (int i = 0; i < COPIES; ++i) memcpy(descs[i].dst, descs[i].src, descs[i].row_bytes);
    return MAPP_OK;
  case COPY_EAGER:
    for (int i = 0; i < COPIES; ++i) MAPP_TRY(sg_launch_copy(rt, &descs[i], NULL, 0, &evs[i]));
    MAPP_TRY(sg_event_merge(rt, evs, COPIES, &done));
    return sg_event_wait(rt, done);
  case COPY_PLANNED:
  case COPY_TASK_OP:
    MAPP_TRY(sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &done));
    return sg_event_wait(rt, done);
  }
  return MAPP_OK;
}

/* The subgraph of COPIES copy ops (or empty task ops), no edges, one worker. */
static int copy_graph(sg_runtime *rt, copy_path path, const sg_copy_desc *descs, sg_subgraph **out) {
  static sg_op_def ops[COPIES];
  for (int i = 0; i < COPIES; ++i)
    ops[i] = path == COPY_TASK_OP ? (sg_op_def){.name = "task", .kind = SG_OP_TASK, .affinity = 0, .fn = nothing}
                                  : (sg_op_def){.name = "copy", .kind = SG_OP_COPY, .affinity = 0, .copy = descs[i]};
  sg_graph_def def = {.name = "copies", .ops = ops, .nops = COPIES};
  MAPP_TRY(sg_subgraph_create(rt, &def, out));
  return sg_subgraph_compile(*out);
}

static void bm_copy(mapp_bench_state *bs, void *arg) {
  const copy_case *cc = arg;
  size_t bytes = (size_t)cc->bytes;
  unsigned char *src = malloc(bytes + 1), *dst = malloc(bytes * COPIES + 1);
  static sg_copy_desc descs[COPIES];
  static sg_event evs[COPIES];
  sg_runtime *rt = NULL;
  sg_subgraph *sg = NULL;
  sg_config cfg = {.workers = 1, .spin_us = 100};
  int status = src && dst ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory for the copy buffers");
  if (status == MAPP_OK) {
    memset(src, 1, bytes + 1), memset(dst, 0, bytes * COPIES + 1); /* touched before timing */
    for (int i = 0; i < COPIES; ++i)
      descs[i] = (sg_copy_desc){.dst = dst + (size_t)i * bytes, .src = src, .row_bytes = bytes, .rows = 1};
    status = sg_runtime_create(&cfg, &rt);
  }
  if (status == MAPP_OK && (cc->path == COPY_PLANNED || cc->path == COPY_TASK_OP))
    status = copy_graph(rt, cc->path, descs, &sg);
  while (status == MAPP_OK && mapp_bench_keep_running(bs)) status = copy_pass(rt, sg, cc->path, descs, evs);
  if (status != MAPP_OK) mapp_bench_skip_with_error(bs, mapp_error_message());
  else {
    double copies = (double)mapp_bench_iterations(bs) * COPIES;
    mapp_bench_set_counter(bs, "ns_per_copy", copies * 1e-9, MAPP_BENCH_COUNTER_RATE | MAPP_BENCH_COUNTER_INVERT);
    mapp_bench_set_bytes_processed(bs, (int64_t)(copies * (double)bytes));
  }
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
  free(src), free(dst);
}

static int register_launch_and_copies(replay_case *cases, int *n, const mapp_bench_options *opt) {
  /* serial: the host runs the op; workers:N: the threads backend */
  static launch_case backends[3] = {
      {.backend = "serial", .workers = 1, .host_worker = TB_HOST_WORKER_YES},
      {.backend = "workers:1", .workers = 1},
      {.backend = "workers:2", .workers = 2}};
  static launch_case empty[3];
  for (int b = 0; b < 3; ++b) {
    empty[b] = backends[b];
    snprintf(empty[b].name, sizeof empty[b].name, "launch/empty/%s", backends[b].backend);
    MAPP_TRY(mapp_bench_register(empty[b].name, bm_launch_empty, &empty[b], opt));
  }
  for (int b = 0; b < 3; ++b)
    for (int v = TB_VARIANT_SUBGRAPH; v >= TB_VARIANT_EAGER; --v) {
      replay_case *c = &cases[(*n)++];
      *c = (replay_case){.variant = (tb_variant)v, .pattern = TB_STENCIL_1D, .width = 2, .graph_steps = 1,
                         .iterations = 0, .steps = 2048, .workers = backends[b].workers, .in_flight = 64,
                         .spin_us = 100, .host_worker = backends[b].host_worker};
      snprintf(c->name, sizeof c->name, "launch/%s/%s", v == TB_VARIANT_SUBGRAPH ? "stencil_1d_w2_gs1" : "eager_chunk",
               backends[b].backend);
      MAPP_TRY(mapp_bench_register(c->name, bm_launch_steps, c, opt));
    }
  static copy_case copies[10];
  static const char *path_names[] = {"memcpy", "planned", "eager"};
  static const long sizes[3] = {0, 1024, 65536};
  int nc = 0;
  for (int b = 0; b < 3; ++b)
    for (int path = COPY_MEMCPY; path <= COPY_EAGER; ++path) {
      copy_case *c = &copies[nc++];
      *c = (copy_case){.path = (copy_path)path, .bytes = sizes[b]};
      snprintf(c->name, sizeof c->name, "copy/%s/bytes:%ld", path_names[path], sizes[b]);
      MAPP_TRY(mapp_bench_register(c->name, bm_copy, c, opt));
    }
  copies[nc] = (copy_case){.path = COPY_TASK_OP, .bytes = 0};
  snprintf(copies[nc].name, sizeof copies[nc].name, "copy/task_op");
  return mapp_bench_register(copies[nc].name, bm_copy, &copies[nc], opt);
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  static replay_case cases[64];
  static cost_case costs[5] = {{"eager_cost/event_create_trigger", COST_EVENT},
                               {"eager_cost/precondition_register_fire", COST_WAITER},
                               {"eager_cost/launch_queue_run_trigger", COST_QUEUE},
                               {"eager_cost/launch_3_preconditions", COST_LAUNCH3},
                               {"eager_cost/merge_triggered", COST_MERGE}};
  static long spins[2] = {0, 100};
  static char spin_names[2][48];
  const mapp_bench_options opt = {.use_real_time = true, .unit = MAPP_BENCH_MICROSECOND};
  int n = 0, status = MAPP_OK;
  static const tb_pattern patterns[2] = {TB_NO_COMM, TB_STENCIL_1D};
  /* Every row of the variant table, and the subgraph once more with
   * interpolation, after the bodies alone. */
  for (int p = 0; p < 2; ++p) {
    replay_case *c = &cases[n++];
    *c = (replay_case){.pattern = patterns[p], .width = 16, .graph_steps = 64, .steps = 1024, .in_flight = 4};
    snprintf(c->name, sizeof c->name, "replay/body_only/%s", tb_pattern_name(patterns[p]));
    status = mapp_bench_register(c->name, bm_body_only, c, &opt);
  }
  for (int p = 0; p < 2; ++p)
    for (const mapp_variant_info *v = subgraph_variants; v->name && status == MAPP_OK; ++v)
      for (int interp = 0; interp <= (v->kind == TB_VARIANT_SUBGRAPH) && v->kind != TB_VARIANT_CUDA_GRAPH; ++interp) {
        replay_case *c = &cases[n++];
        *c = (replay_case){.variant = (tb_variant)v->kind, .pattern = patterns[p], .width = 16, .graph_steps = 64,
                           .iterations = 0, .steps = 1024, .workers = 1, .in_flight = 4, .interpolate = interp,
                           .spin_us = 100};
        snprintf(c->name, sizeof c->name, "replay/%s/%s%s", v->name, tb_pattern_name(patterns[p]),
                 interp ? "/interp" : "");
        status = mapp_bench_register(c->name, bm_replay, c, &opt);
      }
  /* Run-ahead: stencil_1d width 2, K about the METG of 1 and of 2 workers. */
  for (int workers = 1; workers <= 2; ++workers)
    for (int inflight = 1; inflight <= 4 && status == MAPP_OK; inflight *= 4) {
      replay_case *c = &cases[n++];
      long k = workers == 1 ? 16 : 200;
      *c = (replay_case){.variant = TB_VARIANT_SUBGRAPH, .pattern = TB_STENCIL_1D, .width = 2, .graph_steps = 16,
                         .iterations = k, .steps = 1024, .workers = workers, .in_flight = inflight, .spin_us = 100};
      snprintf(c->name, sizeof c->name, "in_flight/stencil_1d/w2/workers:%d/K%ld/inflight:%d", workers, k, inflight);
      status = mapp_bench_register(c->name, bm_replay, c, &opt);
    }
  for (int i = 0; i < 5 && status == MAPP_OK; ++i) status = mapp_bench_register(costs[i].name, bm_eager_cost, &costs[i], &opt);
  for (int i = 0; i < 2 && status == MAPP_OK; ++i) {
    snprintf(spin_names[i], sizeof spin_names[i], "handoff/spin_us:%ld", spins[i]);
    status = mapp_bench_register(spin_names[i], bm_handoff, &spins[i], &opt);
  }
  if (status == MAPP_OK) status = register_launch_and_copies(cases, &n, &opt);
  if (status == MAPP_OK) status = register_async(cases, &n, &opt);
  if (status == MAPP_OK) status = register_cuda(cases, &n, patterns, &opt);
  if (status == MAPP_OK) status = mapp_latency_register(); /* what the replay's hand-offs are bound by */
  if (status == MAPP_OK) status = mapp_stream_register(0); /* what the 64 KiB copies are bound by */
  if (status == MAPP_OK) status = mapp_bench_main(argc, argv);
  status = mapp_report_error("mapp-subgraph-bench", status);
  MPI_Finalize();
  return status;
}
