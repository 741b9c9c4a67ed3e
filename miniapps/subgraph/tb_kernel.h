/* What the host variants and the CUDA variants share, written once: the
 * configuration, the tag, Task Bench's dependence patterns and its compute
 * kernel (host and device functions under nvcc). No MPI, no atomics: the
 * .cu includes it. */
#ifndef TB_KERNEL_H
#define TB_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TB_HD __host__ __device__
#else
#define TB_HD
#endif

typedef enum {
  TB_TRIVIAL,
  TB_NO_COMM,
  TB_STENCIL_1D,
  TB_STENCIL_1D_PERIODIC,
  TB_DOM,
  TB_TREE,
  TB_FFT,
  TB_ALL_TO_ALL,
  TB_NEAREST,
  TB_SPREAD,
  TB_RANDOM_NEAREST,
  TB_PATTERN_COUNT
} tb_pattern;

#define TB_PATTERN_NAMES                                                                                          \
  "trivial|no_comm|stencil_1d|stencil_1d_periodic|dom|tree|fft|all_to_all|nearest|spread|random_nearest"

typedef enum { TB_KERNEL_COMPUTE, TB_KERNEL_MEMORY } tb_kernel;

typedef enum { TB_VARIANT_EAGER, TB_VARIANT_SUBGRAPH, TB_VARIANT_CUDA_GRAPH } tb_variant;

/* auto: when the rank's share of the node has no CPU to spare beside the
 * workers (a host thread of its own would take a worker's core); yes: the
 * serial backend's one worker is the host, always. */
typedef enum { TB_HOST_WORKER_AUTO, TB_HOST_WORKER_YES, TB_HOST_WORKER_NO } tb_host_worker;

/* Is the host worker 0, given how many CPUs the rank has (its share)? */
static inline bool tb_host_runs(tb_host_worker h, int share, int workers) {
  return h == TB_HOST_WORKER_AUTO ? share <= workers : h == TB_HOST_WORKER_YES;
}

/* --device-poll-us's default: the latency of a CUDA completion reaching
 * the host (subgraph README, "asynchronous effects"). */
#define TB_DEVICE_POLL_US 5.0

/* --device: where a task's work runs (the serial and threads backends:
 * none or emulated; the cuda backend's eager and subgraph variants: cuda). */
typedef enum { TB_DEVICE_NONE, TB_DEVICE_EMULATED, TB_DEVICE_CUDA } tb_device;

/* --stream-ordered: which device tasks promise stream order (all, none),
 * or every other timestep's tasks host tasks (alternate). */
typedef enum { TB_STREAM_ORDERED_ALL, TB_STREAM_ORDERED_NONE, TB_STREAM_ORDERED_ALTERNATE } tb_stream_ordered;

/* Test only: a bug planted in the asynchronous effects, which a check must
 * catch (--plant). */
typedef enum { TB_PLANT_NONE, TB_PLANT_NO_DEVICE_WAIT, TB_PLANT_HOST_RUNAHEAD, TB_PLANT_EARLY_ISSUE } tb_plant;

typedef struct {
  tb_pattern pattern;
  long width, steps, radix; /* radix: nearest, spread, random_nearest */
  long iterations;          /* kernel work per task (K) */
  tb_kernel kernel;
  long scratch_bytes;       /* memory kernel: bytes per worker */
  int workers;
  long spin_us;
  bool pin;                 /* bind workers to distinct CPUs of this rank's share of the node */
  tb_host_worker host_worker; /* is the host thread worker 0 (sg_config.host_runs)? */
  long graph_steps;         /* timesteps per recorded graph (and per eager chunk) */
  int in_flight;            /* chunks in flight (1: one at a time) */
  bool interpolate;         /* subgraph: patch the base timestep into every op (else read the instance args) */
  bool chain_finish;        /* subgraph: chain instantiations by the finish event (else by ports, per point) */
  bool break_dependence;    /* test only: reverse one edge so its consumer runs first */
  long copy_bytes;          /* > 0: every dependence on another point of this rank is a copy op of this many bytes */
  tb_device device;         /* a device: a task's work runs on its worker's stream */
  long device_poll_ns;      /* the device's completion notification latency */
  tb_stream_ordered stream_ordered;
  bool check_peek;          /* host tasks check that the device has written what they read */
  tb_plant plant;
  double watchdog_s;        /* no task done for this long: one line naming what is pending, exit 1; 0: none */
} tb_config;

/* A task's output: its (timestep, point) tag and a value computed from its
 * inputs' values, so the answer depends on every dependence. */
typedef struct {
  int64_t t, p;
  double v;
} tb_tag;

/* The value of (t, p) from the sum of its n inputs' values, added in
 * dependence order: bit for bit the same on every path and rank count. */
TB_HD static inline double tb_value(long t, long p, long width, double sum, int n) {
  double own = (double)(p + 1) / (double)width;
  return n ? 0.5 * (sum / n) + 0.25 * own + 1e-3 * (double)(t % 7) : own;
}

TB_HD static inline uint64_t tb_mix64(uint64_t x) { /* splitmix64's finaliser */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

TB_HD static inline int tb_range_deps(long lo, long hi, long width, long *out) {
  if (lo < 0) lo = 0;
  if (hi > width - 1) hi = width - 1;
  int n = 0;
  for (long q = lo; q <= hi; ++q) out[n++] = q;
  return n;
}

TB_HD static inline int tb_log2_ceil(long w) {
  int l = 0;
  while ((1L << l) < w) ++l;
  return l;
}

/* Timestep 0 has no inputs. Every point is active at every timestep
 * (Task Bench grows dom and tree over the first steps; here they keep
 * their dependence shape from the start). */
TB_HD static inline int tb_deps_of(const tb_config *cfg, long t, long p, long *out) {
  long W = cfg->width, R = cfg->radix;
  if (t <= 0) return 0;
  switch (cfg->pattern) {
  case TB_TRIVIAL: return 0;
  case TB_NO_COMM: out[0] = p; return 1;
  case TB_STENCIL_1D: return tb_range_deps(p - 1, p + 1, W, out);
  case TB_STENCIL_1D_PERIODIC: {
    if (W < 3) return tb_range_deps(0, W - 1, W, out);
    long a = (p - 1 + W) % W, b = p, c = (p + 1) % W, v[3] = {a, b, c};
    for (int i = 1; i < 3; ++i) /* sort three */
      for (int j = i; j > 0 && v[j] < v[j - 1]; --j) {
        long x = v[j];
        v[j] = v[j - 1], v[j - 1] = x;
      }
    out[0] = v[0], out[1] = v[1], out[2] = v[2];
    return 3;
  }
  case TB_DOM: return tb_range_deps(p - 1, p, W, out);
  case TB_TREE: out[0] = p / 2; return 1;
  case TB_FFT: {
    int levels = tb_log2_ceil(W);
    if (levels == 0) return tb_range_deps(p, p, W, out);
    long partner = p ^ (1L << ((t - 1) % levels));
    if (partner >= W) return tb_range_deps(p, p, W, out);
    out[0] = partner < p ? partner : p, out[1] = partner < p ? p : partner;
    return 2;
  }
  case TB_ALL_TO_ALL: return tb_range_deps(0, W - 1, W, out);
  case TB_NEAREST: return tb_range_deps(p - (R - 1) / 2, p + R / 2, W, out);
  case TB_SPREAD: {
    long stride = W / R > 0 ? W / R : 1;
    int n = 0;
    for (long i = 0; i < R; ++i) out[n++] = (p + i * stride) % W;
    for (int i = 1; i < n; ++i) /* ascending (distinct: i * stride < W) */
      for (int j = i; j > 0 && out[j] < out[j - 1]; --j) {
        long x = out[j];
        out[j] = out[j - 1], out[j - 1] = x;
      }
    return n;
  }
  case TB_RANDOM_NEAREST: { /* the nearest window, each neighbour kept with probability 1/2 */
    long lo = p - (R - 1) / 2, hi = p + R / 2;
    if (lo < 0) lo = 0;
    if (hi > W - 1) hi = W - 1;
    int n = 0;
    for (long q = lo; q <= hi; ++q)
      if (q == p || (tb_mix64((uint64_t)t * 0x10001ull * (uint64_t)W + (uint64_t)p * (uint64_t)W + (uint64_t)q) & 1))
        out[n++] = q;
    return n;
  }
  default: return 0;
  }
}

/* --copy-bytes: the bytes (t, p) writes to its output buffer, a word per
 * 8 bytes derived from its tag, so a copy that is missing, late, stale or
 * from the wrong buffer is seen by the reader's check (host and device). */
TB_HD static inline uint64_t tb_copy_word(long t, long p, size_t j) {
  return tb_mix64(((uint64_t)t << 24) ^ (uint64_t)p) + (uint64_t)j * 0x9e3779b97f4a7c15ull;
}

TB_HD static inline void tb_copy_pattern_fill(unsigned char *buf, size_t bytes, long t, long p) {
  size_t j = 0;
  for (; (j + 1) * 8 <= bytes; ++j) {
    uint64_t w = tb_copy_word(t, p, j);
    memcpy(buf + j * 8, &w, 8);
  }
  uint64_t tail = tb_copy_word(t, p, j);
  memcpy(buf + j * 8, &tail, bytes - j * 8);
}

/* The offset of the first byte that is not (t, p)'s pattern, or -1. */
TB_HD static inline long tb_copy_pattern_mismatch(const unsigned char *buf, size_t bytes, long t, long p) {
  size_t j = 0;
  for (; (j + 1) * 8 <= bytes; ++j) {
    uint64_t w = tb_copy_word(t, p, j), got;
    memcpy(&got, buf + j * 8, 8);
    if (got != w) return (long)(j * 8);
  }
  uint64_t tail = tb_copy_word(t, p, j);
  const unsigned char *want = (const unsigned char *)&tail;
  for (size_t b = 0; b < bytes - j * 8; ++b)
    if (buf[j * 8 + b] != want[b]) return (long)(j * 8);
  return -1;
}

/* Task Bench's compute kernel: a dependent multiply-add chain, K long. */
TB_HD static inline double tb_compute_kernel(long k, double x) {
  double a = 1.0 + x * 1e-9, b = 0.999999;
  for (long i = 0; i < k; ++i) a = a * b + 1e-9;
  return a;
}

/* What a task on a CUDA device reads and writes (tb_cuda_task.cu): the
 * run's managed buffers, one rank's dense tag ring (the cuda backend runs
 * one rank, whose ring holds every point). */
typedef struct {
  tb_config cfg;
  tb_tag *ring;
  long ring_steps, ring_width, ring_lo, first, count;
  unsigned char *copy_in, *copy_out; /* --copy-bytes: as tb_state's */
  const long *copy_lo, *copy_at;
  unsigned long long *errors; /* wrong tags and copied bytes seen on the device */
  double *sink;               /* per point: keeps the kernels' results alive */
} tb_task_view;

#ifdef __cplusplus
extern "C" {
#endif
/* Memory the host and the device both reach (cudaMallocManaged), zeroed. */
int tb_cuda_managed_alloc(void **p, size_t bytes, const char *what);
void tb_cuda_managed_free(void *p);
/* Task (t, p) launched on stream (a cudaStream_t): its inputs' tags and
 * copies checked, its kernel, its copy pattern and its tag written, as
 * tb_run_task does on the host. */
int tb_cuda_launch_task(void *stream, const tb_task_view *view, long t, long p);
#ifdef __cplusplus
}
#endif

/* The CUDA variants (subgraph_cuda.cu): an input error without a device.
 * last_values: the width values of the last timestep; seconds: from the
 * first launch (or capture) to the answer on the host. */
#ifdef __cplusplus
extern "C" {
#endif
int tb_cuda_run(const tb_config *cfg, bool graph, double *seconds, long *bad_tags, double *last_values);

/* Where a CUDA run's time went, for the bench. */
typedef struct {
  double total_s;   /* what tb_cuda_run reports */
  double prepare_s; /* subgraph: capture, instantiate and the node table (0 for eager) */
  double run_s;     /* total_s less prepare_s: the timesteps alone */
  double launch_s;  /* host time issuing work: every replay's cudaGraphLaunch (subgraph), every task's
                       waits, launch and record (eager) */
  double update_s;  /* subgraph: host time setting the base timestep (one device word) before each replay */
  long launches;    /* replays (subgraph) or tasks (eager) that launch_s covers */
} tb_cuda_times;
int tb_cuda_run_timed(const tb_config *cfg, bool graph, tb_cuda_times *times, long *bad_tags, double *last_values);
#ifdef __cplusplus
}
#endif

#endif
