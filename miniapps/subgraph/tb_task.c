/* Task Bench's patterns, its kernels and the task every variant runs:
 * check each input's (timestep, point) tag, run the kernel, write the tag. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subgraph.h"

static const char *const pattern_names[TB_PATTERN_COUNT] = {
    "trivial", "no_comm", "stencil_1d", "stencil_1d_periodic", "dom",           "tree",
    "fft",     "all_to_all", "nearest", "spread",              "random_nearest"};

int tb_pattern_from_name(const char *name) {
  for (int i = 0; i < TB_PATTERN_COUNT; ++i)
    if (!strcmp(name, pattern_names[i])) return i;
  return -1;
}

const char *tb_pattern_name(tb_pattern p) { return pattern_names[p]; }

bool tb_pattern_takes_radix(tb_pattern p) { return p == TB_NEAREST || p == TB_SPREAD || p == TB_RANDOM_NEAREST; }

int tb_config_check(const tb_config *cfg, int nranks) {
  if (cfg->width < 1) return mapp_fail(MAPP_ERR_INPUT, "--width: %ld is outside [1, 2^24]", cfg->width);
  if (cfg->steps < 1) return mapp_fail(MAPP_ERR_INPUT, "--steps: %ld is outside [1, 2^40]", cfg->steps);
  if (cfg->iterations < 0) return mapp_fail(MAPP_ERR_INPUT, "--iterations: %ld is negative", cfg->iterations);
  if (cfg->workers < 1 || cfg->workers > SG_MAX_WORKERS)
    return mapp_fail(MAPP_ERR_INPUT, "--workers: %d is outside [1, %d]", cfg->workers, SG_MAX_WORKERS);
  if (cfg->spin_us < 0) return mapp_fail(MAPP_ERR_INPUT, "--spin-us: %ld is negative", cfg->spin_us);
  if (tb_pattern_takes_radix(cfg->pattern) && (cfg->radix < 1 || cfg->radix > cfg->width))
    return mapp_fail(MAPP_ERR_INPUT, "--radix: %ld is outside [1, width %ld] for pattern %s", cfg->radix, cfg->width,
                     tb_pattern_name(cfg->pattern));
  if (cfg->graph_steps < 1) return mapp_fail(MAPP_ERR_INPUT, "--graph-steps: %ld is below 1", cfg->graph_steps);
  if (cfg->steps % cfg->graph_steps)
    return mapp_fail(MAPP_ERR_INPUT, "--steps %ld is not a multiple of --graph-steps %ld", cfg->steps,
                     cfg->graph_steps);
  if (cfg->in_flight < 1) return mapp_fail(MAPP_ERR_INPUT, "--in-flight: %d is below 1", cfg->in_flight);
  if (cfg->copy_bytes < 0) return mapp_fail(MAPP_ERR_INPUT, "--copy-bytes: %ld is negative", cfg->copy_bytes);
  if (cfg->device_poll_ns < 0)
    return mapp_fail(MAPP_ERR_INPUT, "--device-poll-us: %g is negative", (double)cfg->device_poll_ns * 1e-3);
  if (cfg->check_peek && cfg->device != TB_DEVICE_EMULATED)
    return mapp_fail(MAPP_ERR_INPUT, "--check-peek checks host reads of device outputs: it needs --device emulated");
  if (cfg->plant != TB_PLANT_NONE && cfg->device != TB_DEVICE_EMULATED)
    return mapp_fail(MAPP_ERR_INPUT, "--plant plants a bug in the asynchronous effects: it needs --device emulated");
  if (cfg->width < nranks)
    return mapp_fail(MAPP_ERR_INPUT, "--width %ld is less than the %d ranks: every rank needs a point", cfg->width,
                     nranks);
  return MAPP_OK;
}

long tb_max_deps(const tb_config *cfg) {
  switch (cfg->pattern) {
  case TB_ALL_TO_ALL: return cfg->width;
  case TB_NEAREST:
  case TB_SPREAD:
  case TB_RANDOM_NEAREST: return cfg->radix + 1;
  default: return 3;
  }
}

/* ------------------------------------------------------------ state */

int tb_owner(const tb_state *st, long p) {
  long n = st->cfg.width, parts = st->nranks, q = n / parts, r = n % parts;
  return p < r * (q + 1) ? (int)(p / (q + 1)) : (int)(r + (p - r * (q + 1)) / q);
}

void tb_state_reset(tb_state *st) {
  long n = st->ring_steps * st->ring_width;
  for (long i = 0; i < n; ++i) st->ring[i] = (tb_tag){-1, -1, 0.0};
  atomic_store(&st->errors, 0);
  if (st->view.errors) { /* nothing runs on the device between runs */
    *st->view.errors = 0;
    st->view.cfg = st->cfg; /* a METG sweep changes the kernel's length between runs */
  }
  atomic_store(&st->error_claimed, 0);
  st->first_error[0] = 0;
  st->instantiations = 0;
  /* a copy left by the previous run would pass a reader whose copy op never ran */
  size_t count = (size_t)st->count, bytes = (size_t)st->cfg.copy_bytes;
  if (st->copy_in) memset(st->copy_in, 0, (size_t)st->copy_at[count] * bytes);
  if (st->copy_out) memset(st->copy_out, 0, count * 2 * bytes);
}

/* Workers pinned to distinct CPUs: this rank's share of the CPUs it may
 * run on, split evenly among the ranks on its node. When the share is
 * smaller than the workers (mpirun bound the rank to fewer cores, or the
 * node is oversubscribed), the workers stay unpinned. */
static int choose_cpus(tb_state *st) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return MAPP_OK; /* unknown: leave them free */
  int local_rank, local_size;
  MAPP_TRY(mapp_node_ranks(st->comm, &local_rank, &local_size));
  int count = CPU_COUNT(&allowed), share = count / local_size, first = local_rank * share, seen = 0;
  st->host_runs = tb_host_runs(st->cfg.host_worker, share, st->cfg.workers);
  if (!st->cfg.pin || share < st->cfg.workers) return MAPP_OK;
  int w = 0, wanted = st->cfg.workers + (!st->host_runs && share > st->cfg.workers); /* the host's own, if any */
  for (int cpu = 0; cpu < CPU_SETSIZE && w < wanted; ++cpu)
    if (CPU_ISSET(cpu, &allowed) && seen++ >= first) {
      if (w < st->cfg.workers) st->cpus[w] = cpu;
      else st->host_cpu = cpu;
      ++w;
    }
  st->pinned = true;
  return MAPP_OK;
}

long tb_wait_batch(const tb_state *st, long natural) { return st->host_runs ? 1 : natural; }

/* A buffer the tasks read and write: on a CUDA device managed memory, so
 * the host's reset, checks and answer read what the device wrote. */
static int task_buffer(const tb_state *st, void **p, size_t bytes, const char *what) {
  if (st->cfg.device == TB_DEVICE_CUDA) return tb_cuda_managed_alloc(p, bytes, what);
  return mapp_alloc(p, bytes ? bytes : 1, what);
}

static void task_buffer_free(const tb_state *st, void *p) {
  if (st->cfg.device == TB_DEVICE_CUDA) tb_cuda_managed_free(p);
  else free(p);
}

/* --copy-bytes: per own point and timestep parity, an output buffer and an
 * input buffer of one slot per point of its copy window (tb_halo.c). */
static int alloc_copy_buffers(tb_state *st) {
  size_t in_bytes, out_bytes, count = (size_t)st->count, bytes = (size_t)st->cfg.copy_bytes;
  size_t slots = (size_t)st->copy_at[count] + 1; /* + 1: a rank that copies nothing still allocates */
  MAPP_TRY(mapp_size_mul(slots, bytes, &in_bytes, "--copy-bytes: the input buffers"));
  MAPP_TRY(mapp_size_mul(count * 2, bytes, &out_bytes, "--copy-bytes: the output buffers"));
  MAPP_TRY(task_buffer(st, (void **)&st->copy_in, in_bytes, "--copy-bytes: the input buffers"));
  MAPP_TRY(task_buffer(st, (void **)&st->copy_out, out_bytes, "--copy-bytes: the output buffers"));
  /* zeroed, so touched once before the first timesteps, by tb_state_reset */
  return MAPP_OK;
}

/* On a CUDA device: what a task there reads (tb_task_view), the arrays
 * that are not task buffers copied to managed memory. One rank's ring is
 * dense (its points are all the points). */
static int make_device_view(tb_state *st) {
  size_t count = (size_t)st->count;
  long *copy_lo = NULL, *copy_at = NULL;
  if (st->copy_at) {
    MAPP_TRY(tb_cuda_managed_alloc((void **)&copy_lo, sizeof(long) * count, "the copy windows"));
    st->view_arrays[0] = copy_lo;
    MAPP_TRY(tb_cuda_managed_alloc((void **)&copy_at, sizeof(long) * (count + 1), "the copy windows"));
    st->view_arrays[1] = copy_at;
    memcpy(copy_lo, st->copy_lo, sizeof(long) * count);
    memcpy(copy_at, st->copy_at, sizeof(long) * (count + 1));
  }
  MAPP_TRY(tb_cuda_managed_alloc((void **)&st->view.errors, sizeof *st->view.errors, "the device's error count"));
  MAPP_TRY(tb_cuda_managed_alloc((void **)&st->view.sink, sizeof(double) * count, "the device's kernel sinks"));
  st->view = (tb_task_view){.cfg = st->cfg, .ring = st->ring, .ring_steps = st->ring_steps, .ring_width = st->ring_width,
                            .ring_lo = st->ring_lo, .first = st->first, .count = st->count, .copy_in = st->copy_in,
                            .copy_out = st->copy_out, .copy_lo = copy_lo, .copy_at = copy_at,
                            .errors = st->view.errors, .sink = st->view.sink};
  return MAPP_OK;
}

static int check_device_config(const tb_state *st) {
  if (st->cfg.device != TB_DEVICE_CUDA) return MAPP_OK;
  if (st->nranks > 1 || !st->ring_dense)
    return mapp_fail(MAPP_ERR_INPUT, "--backend cuda runs on one rank (one device), not %d", st->nranks);
  if (st->cfg.kernel != TB_KERNEL_COMPUTE)
    return mapp_fail(MAPP_ERR_INPUT, "--kernel memory: the CUDA device's tasks run the compute kernel");
  if (st->max_deps > TB_CUDA_MAX_DEPS)
    return mapp_fail(MAPP_ERR_INPUT, "--backend cuda: a task reads at most %d inputs on the device, this pattern %ld",
                     TB_CUDA_MAX_DEPS, st->max_deps);
  return MAPP_OK;
}

unsigned char *tb_copy_out(const tb_state *st, long t, long p) {
  return st->copy_out + (size_t)((p - st->first) * 2 + (t & 1)) * (size_t)st->cfg.copy_bytes;
}

unsigned char *tb_copy_in(const tb_state *st, long t, long p, long q) {
  long pl = p - st->first, span = (st->copy_at[pl + 1] - st->copy_at[pl]) / 2;
  long slot = st->copy_at[pl] + (t & 1) * span + (q - st->copy_lo[pl]);
  return st->copy_in + (size_t)slot * (size_t)st->cfg.copy_bytes;
}

int tb_state_create(const tb_config *cfg, MPI_Comm comm, tb_state **out) {
  tb_state *st;
  *out = NULL;
  MAPP_TRY(mapp_calloc((void **)&st, 1, sizeof *st, "the task bench state"));
  *out = st;
  st->cfg = *cfg;
  st->comm = comm;
  MAPP_MPI(MPI_Comm_rank(comm, &st->rank));
  MAPP_MPI(MPI_Comm_size(comm, &st->nranks));
  mapp_range mine = mapp_split_even(cfg->width, st->nranks, st->rank);
  st->first = mine.first, st->count = mine.count;
  /* --in-flight chunks, each reading the step before it */
  st->ring_steps = 1; /* a power of two: slots by mask in the task */
  while (st->ring_steps < (cfg->in_flight + 1) * cfg->graph_steps + 2) st->ring_steps *= 2;
  st->max_deps = tb_max_deps(cfg);
  size_t slots = (size_t)tb_buffer_slots(cfg->workers);
  MAPP_TRY(mapp_calloc((void **)&st->dep_buf, slots, sizeof(long) * (size_t)tb_max_deps(cfg), "dependence buffers"));
  MAPP_TRY(tb_halo_create(st)); /* the ring's width: the own points and the halo */
  MAPP_TRY(check_device_config(st));
  size_t ring_bytes;
  MAPP_TRY(mapp_size_mul((size_t)st->ring_steps, sizeof(tb_tag) * (size_t)st->ring_width, &ring_bytes, "the tag ring"));
  MAPP_TRY(task_buffer(st, (void **)&st->ring, ring_bytes, "the tag ring"));
  if (cfg->kernel == TB_KERNEL_MEMORY)
    MAPP_TRY(mapp_calloc((void **)&st->scratch, slots, (size_t)cfg->scratch_bytes, "scratch"));
  MAPP_TRY(mapp_calloc((void **)&st->sink, slots * 8, sizeof(double), "kernel sinks"));
  MAPP_TRY(mapp_calloc((void **)&st->tasks_done, slots * 8, sizeof(atomic_long), "task counts"));
  if (cfg->copy_bytes) MAPP_TRY(alloc_copy_buffers(st));
  if (cfg->device == TB_DEVICE_CUDA) MAPP_TRY(make_device_view(st));
  tb_state_reset(st);
  st->host_runs = cfg->host_worker == TB_HOST_WORKER_YES;
  st->host_cpu = -1;
  MAPP_TRY(choose_cpus(st));
  sg_config rc = {.workers = cfg->workers, .spin_us = cfg->spin_us, .cpus = st->pinned ? st->cpus : NULL,
                  .host_runs = st->host_runs, .host_cpu = st->host_cpu >= 0 ? &st->host_cpu : NULL,
                  .device = cfg->device == TB_DEVICE_CUDA       ? SG_DEVICE_CUDA
                            : cfg->device == TB_DEVICE_EMULATED ? SG_DEVICE_EMULATED
                                                                : SG_DEVICE_NONE,
                  .device_poll_ns = cfg->device_poll_ns,
                  .skip_device_waits = cfg->plant == TB_PLANT_NO_DEVICE_WAIT,
                  .plant_early_issue = cfg->plant == TB_PLANT_EARLY_ISSUE};
  MAPP_TRY(sg_runtime_create(&rc, &st->rt));
  if (st->nranks > 1) MAPP_TRY(tb_comm_create(st, &st->comm_state));
  return MAPP_OK;
}

void tb_state_destroy(tb_state *st) {
  if (!st) return;
  tb_comm_destroy(st->comm_state);
  sg_runtime_destroy(st->rt);
  task_buffer_free(st, st->ring);
  task_buffer_free(st, st->copy_in);
  task_buffer_free(st, st->copy_out);
  tb_cuda_managed_free(st->view.errors), tb_cuda_managed_free(st->view.sink);
  tb_cuda_managed_free(st->view_arrays[0]), tb_cuda_managed_free(st->view_arrays[1]);
  free(st->scratch);
  free(st->dep_buf);
  free(st->sink);
  free(st->tasks_done);
  free(st->copy_lo);
  free(st->copy_at);
  free(st->halo);
  free(st->readers_first);
  free(st->readers);
  free(st);
}

int tb_state_status(tb_state *st) {
  MAPP_TRY(sg_runtime_status(st->rt));
  long errors = atomic_load(&st->errors);
  if (errors) return mapp_fail(MAPP_ERR_VERIFY, "%ld tasks read a wrong input tag; first: %s", errors, st->first_error);
  if (st->view.errors && *st->view.errors)
    return mapp_fail(MAPP_ERR_VERIFY, "%llu inputs read by tasks on the CUDA device had a wrong input tag or copy",
                     *st->view.errors);
  return MAPP_OK;
}

int tb_host_wait(tb_state *st, sg_event ev) {
  return st->comm_state ? tb_comm_wait(st->comm_state, ev) : sg_event_wait(st->rt, ev);
}

/* ------------------------------------------------------------ the task */

static void record_error(tb_state *st, long t, long p, long q, const tb_tag *got) {
  atomic_fetch_add(&st->errors, 1);
  if (atomic_exchange(&st->error_claimed, 1)) return;
  snprintf(st->first_error, sizeof st->first_error,
           "task (t=%ld, p=%ld) found tag (t=%lld, p=%lld) in its input from point %ld, expected (t=%ld, p=%ld)", t, p,
           (long long)got->t, (long long)got->p, q, t - 1, q);
}

static void record_copy_error(tb_state *st, long t, long p, long q, long offset) {
  atomic_fetch_add(&st->errors, 1);
  if (atomic_exchange(&st->error_claimed, 1)) return;
  snprintf(st->first_error, sizeof st->first_error,
           "task (t=%ld, p=%ld) found bytes other than (t=%ld, p=%ld)'s at offset %ld of its copy from point %ld", t, p,
           t - 1, q, offset, q);
}

static void check_copies(tb_state *st, long t, long p, const long *deps, int n) {
  size_t bytes = (size_t)st->cfg.copy_bytes;
  for (int i = 0; i < n; ++i) {
    if (!tb_copies_from(st, p, deps[i])) continue;
    long offset = tb_copy_pattern_mismatch(tb_copy_in(st, t, p, deps[i]), bytes, t - 1, deps[i]);
    if (offset >= 0) record_copy_error(st, t, p, deps[i], offset);
  }
}

/* Task Bench's memory kernel: K passes over the worker's scratch buffer. */
static inline double memory_kernel(long k, unsigned char *buf, long bytes) {
  double *d = (double *)buf;
  long n = bytes / (long)sizeof(double);
  double s = 0;
  for (long pass = 0; pass < k; ++pass)
    for (long i = 0; i < n; ++i) d[i] = d[i] * 0.5 + 1.0, s += d[i];
  return s;
}

void tb_kernel_run(tb_state *st, int worker) {
  const tb_config *cfg = &st->cfg;
  if (!cfg->iterations) return;
  double r = cfg->kernel == TB_KERNEL_COMPUTE
                 ? tb_compute_kernel(cfg->iterations, st->sink[worker * 8])
                 : memory_kernel(cfg->iterations, st->scratch + (size_t)worker * (size_t)cfg->scratch_bytes,
                                 cfg->scratch_bytes);
  st->sink[worker * 8] += r; /* per worker, a cache line apart */
}

/* Input q of (t, p) found at in: its tag checked, its value added. */
static inline void take_input(tb_state *st, long t, long p, long q, const tb_tag *in, double *sum) {
  if (in->t != t - 1 || in->p != q) record_error(st, t, p, q, in);
  *sum += in->v;
}

/* The sum of (t - 1, deps[0..n))'s values, each input's tag checked. A
 * dense ring row is indexed by the point itself (from the row's start less
 * ring_lo), so the layout costs a task nothing where it is dense; else an
 * own point is one compare away and a halo point a search. A point outside
 * the halo reads as never delivered, so its tag check fails. */
static double sum_inputs(tb_state *st, long t, long p, const long *deps, int n) {
  static const tb_tag unread = {-1, -1, 0.0};
  const tb_tag *ring = st->ring;
  long at = ((t - 1) & (st->ring_steps - 1)) * st->ring_width - st->ring_lo; /* ring[at + q]: q's entry */
  double sum = 0.0;
  if (st->ring_dense) {
    for (int i = 0; i < n; ++i) take_input(st, t, p, deps[i], &ring[at + deps[i]], &sum);
    return sum;
  }
  unsigned long first = (unsigned long)st->first, count = (unsigned long)st->count;
  for (int i = 0; i < n; ++i) {
    long h = (unsigned long)deps[i] - first < count ? -2 : tb_halo_index(st, deps[i]); /* below first wraps */
    const tb_tag *in = h == -2 ? &ring[at + deps[i]] : h >= 0 ? &ring[at + st->first + st->count + h] : &unread;
    take_input(st, t, p, deps[i], in, &sum);
  }
  return sum;
}

/* --check-peek: a host task about to read (t - 1, q) on the host finds
 * the generation the device stamped there (the tag's timestep); an older
 * one means it reads before the device has written: the op promised
 * stream order (so it was given no wait for the device side) yet reads on
 * the host. */
static void check_peek(tb_state *st, long t, long p, int worker) {
  if (t == 0) return;
  long *d = st->dep_buf + (long)worker * st->max_deps; /* the worker's: its task reads them again next */
  int n = tb_deps(&st->cfg, t, p, d);
  for (int i = 0; i < n; ++i) {
    const tb_tag *in = tb_tag_at(st, t - 1, d[i]);
    if (tb_slot(st, d[i]) < 0 || in->t >= t - 1) continue;
    atomic_fetch_add(&st->errors, 1);
    if (atomic_exchange(&st->error_claimed, 1)) return;
    snprintf(st->first_error, sizeof st->first_error,
             "peek: op 'task' (t=%ld, p=%ld) on worker %d read its input from point %ld on the host before the "
             "device wrote it (generation %lld there, %ld expected): a host task given runahead",
             t, p, worker, d[i], (long long)in->t, t - 1);
    return;
  }
}

typedef struct {
  tb_state *st;
  int64_t t, p;
} device_task_args;

static void device_task(const void *args, size_t size, int device_worker) {
  (void)size;
  const device_task_args *a = args;
  tb_run_task(a->st, a->t, a->p, device_worker + 1); /* device threads' slots follow the host's */
}

void tb_task_body(tb_state *st, long t, long p, const sg_task_ctx *ctx) {
  if (!ctx->stream) {
    if (st->cfg.check_peek) check_peek(st, t, p, ctx->worker);
    tb_run_task(st, t, p, ctx->worker);
    return;
  }
  void *native = sg_stream_native(ctx->stream);
  if (native ? tb_cuda_launch_task(native, &st->view, t, p) == MAPP_OK
             : sg_stream_launch(ctx->stream, device_task, &(device_task_args){st, t, p}, sizeof(device_task_args)) == MAPP_OK)
    return;
  atomic_fetch_add(&st->errors, 1);
  if (!atomic_exchange(&st->error_claimed, 1))
    snprintf(st->first_error, sizeof st->first_error, "task (t=%ld, p=%ld) could not enqueue its kernel", t, p);
}

void tb_run_task(tb_state *st, long t, long p, int worker) {
  const tb_config *cfg = &st->cfg;
  long W = cfg->width, *deps = st->dep_buf + (long)worker * st->max_deps, mask = st->ring_steps - 1;
  int n = tb_deps(cfg, t, p, deps);
  double sum = sum_inputs(st, t, p, deps, n);
  if (cfg->copy_bytes) check_copies(st, t, p, deps, n);
  tb_kernel_run(st, worker);
  if (cfg->copy_bytes) tb_copy_pattern_fill(tb_copy_out(st, t, p), (size_t)cfg->copy_bytes, t, p);
  st->ring[(t & mask) * st->ring_width + (p - st->ring_lo)] = (tb_tag){t, p, tb_value(t, p, W, sum, n)};
  atomic_long *done = &st->tasks_done[worker * 8]; /* this thread's line: a plain increment, read by the watchdog */
  atomic_store_explicit(done, atomic_load_explicit(done, memory_order_relaxed) + 1, memory_order_relaxed);
}

long tb_tasks_done(const tb_state *st) {
  long sum = 0;
  for (long slot = 0; slot < tb_buffer_slots(st->cfg.workers); ++slot)
    sum += atomic_load_explicit(&st->tasks_done[slot * 8], memory_order_relaxed);
  return sum;
}
