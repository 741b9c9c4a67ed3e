/* mapp-heat-bench: the Gauss-Seidel block update (heat_kernel.h) under
 * Google Benchmark, one timestep (every block once) per iteration.
 *
 * Reports cell-updates/s (items_per_second) and triad_fraction: the
 * update's memory traffic, 16 bytes per cell (read 8 and write 8: in place,
 * so no write-allocate), as a fraction of the STREAM triad measured in the
 * same process. The kernel is serial, so the triad runs on one thread too;
 * pin the process for stable figures:
 *
 *   taskset -c 0 mapp-heat-bench --benchmark_repetitions=5 \
 *       --benchmark_report_aggregates_only=true
 *
 * Instances are n:<interior side>/block:<block side>: 256 (0.5 MiB, in L2),
 * 1024 (8 MiB, in L3), 4096 (128 MiB, 4x the 32 MiB L3) as one block, and
 * 4096 in the 256-blocks of the large preset. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#include "bench_variants.h"
#include "heat_kernel.h"
#include "mapp_bench.h"
#include "mapp_error.h"
#include "mapp_stream.h"

enum { HEAT_BYTES_PER_CELL = 16 };

typedef void (*heat_kernel_fn)(double *restrict g, long stride, long r0, long nr, long c0, long nc);

typedef struct {
  const char *name;
  heat_kernel_fn kernel;
} heat_variant;

/* The skew depth must be a compile-time constant for the band to live in
 * registers, hence one function per depth. */
HEAT_DEFINE_SKEWED_AT(skewed2, 2)
HEAT_DEFINE_SKEWED_AT(skewed4, 4)
HEAT_DEFINE_SKEWED_AT(skewed8, 8)

static const heat_variant variants[] = {
    {"heat/rowwise", heat_block_rowwise}, {"heat/skewed2", skewed2}, {"heat/skewed4", skewed4},
    {"heat/skewed8", skewed8},            {"heat/update", heat_block_update},
};

static const char *const arg_names[] = {"n", "block"};
static const long instances[] = {256, 256, 1024, 1024, 4096, 4096, 4096, 256};

/* Uniform in [1, 2): the averages stay in that range whatever the number
 * of sweeps, so no subnormal values (slow on some cores) ever appear and
 * every iteration costs the same. splitmix64, so runs are reproducible. */
static void fill_random(double *g, size_t count) {
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < count; ++i) {
    uint64_t z = (x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    g[i] = 1.0 + (double)(z >> 11) * 0x1.0p-53;
  }
}

/* One timestep: every bs x bs block (remainders at the edges) in order. */
static void sweep(heat_kernel_fn kernel, double *g, long n, long bs) {
  for (long r = 1; r <= n; r += bs)
    for (long c = 1; c <= n; c += bs)
      kernel(g, n + 2, r, bs < n + 1 - r ? bs : n + 1 - r, c, bs < n + 1 - c ? bs : n + 1 - c);
}

static void bm_heat(mapp_bench_state *st, void *arg) {
  const heat_variant *v = arg;
  long n = mapp_bench_range(st, 0), bs = mapp_bench_range(st, 1);
  size_t count = (size_t)(n + 2) * (size_t)(n + 2);
  double *g;
  if (mapp_alloc((void **)&g, count * sizeof *g, "the heat grid") != MAPP_OK) {
    mapp_bench_skip_with_error(st, mapp_error_message());
    return;
  }
  fill_random(g, count);
  sweep(v->kernel, g, n, bs); /* warm-up: pages touched, caches as in steady state */
  while (mapp_bench_keep_running(st)) sweep(v->kernel, g, n, bs);
  free(g);
  int64_t cells = (int64_t)n * n;
  mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * cells);
  mapp_bench_set_triad_fraction(st, (double)(HEAT_BYTES_PER_CELL * cells));
}

int main(int argc, char **argv) {
  omp_set_num_threads(1); /* the kernel is serial: compare with one thread's triad */
  int status = mapp_stream_register(0);
  mapp_bench_options opt = {.nargs = 2,
                            .arg_names = arg_names,
                            .ninstances = (int)(sizeof instances / sizeof instances[0] / 2),
                            .args = instances,
                            .use_real_time = true,
                            .unit = MAPP_BENCH_MILLISECOND};
  for (size_t i = 0; status == MAPP_OK && i < sizeof variants / sizeof variants[0]; ++i)
    status = mapp_bench_register(variants[i].name, bm_heat, (void *)&variants[i], &opt);
  if (status == MAPP_OK) status = heat_bench_register_variants(); /* each variant's timestep */
  if (status == MAPP_OK) status = mapp_bench_main(argc, argv);
  return mapp_report_error("mapp-heat-bench", status);
}
