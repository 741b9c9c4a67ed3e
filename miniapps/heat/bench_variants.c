/* mapp-heat-bench: each variant's timestep on one rank, so the cost of the
 * parallelisation (wavefront barriers, task graph, polling) is seen against
 * the same kernel. One iteration is STEPS timesteps through the variant's
 * solver (tasks overlap timesteps, so one step alone would hide that). MPI
 * is started on first use at MPI_THREAD_MULTIPLE (tasks needs it) on a
 * single process; run the tasks rows with OMP_WAIT_POLICY=passive:
 *
 *   OMP_WAIT_POLICY=passive mapp-heat-bench --benchmark_filter=heat/step \
 *       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_variants.h"
#include "heat.h"
#include "mapp_bench.h"

enum { STEPS = 10 };

static const char *const arg_names[] = {"n", "block", "threads"};
static const long instances[] = {1024, 128, 1, 1024, 128, 2, 2048, 128, 1, 2048, 128, 2};

static void finalize_mpi(void) { MPI_Finalize(); }

static int ensure_mpi(void) {
  int started, provided;
  MAPP_MPI(MPI_Initialized(&started));
  if (started) return MAPP_OK;
  MAPP_MPI(MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided));
  atexit(finalize_mpi);
  if (provided < MPI_THREAD_MULTIPLE)
    return mapp_fail(MAPP_ERR_SYSTEM, "MPI provides thread level %d, the tasks variant needs %d", provided,
                     MPI_THREAD_MULTIPLE);
  return MAPP_OK;
}

/* An n x n domain on one rank with the tiny preset's sources, its interior
 * at 1.0 so no subnormal values slow any iteration. */
static int make_domain(long n, long block, heat_domain *d) {
  heat_config cfg;
  MAPP_TRY(heat_config_preset("tiny", &cfg));
  cfg.rows = cfg.cols = n;
  cfg.block_rows = cfg.block_cols = block;
  cfg.steps = STEPS;
  MAPP_TRY(heat_domain_create(MPI_COMM_SELF, &cfg, d));
  heat_domain_init(d);
  for (long r = 1; r <= d->local_rows; ++r)
    for (long c = 1; c <= n; ++c) d->grid[r * d->stride + c] = 1.0;
  return MAPP_OK;
}

static void bm_step(mapp_bench_state *st, void *arg) {
  const mapp_variant_info *v = arg;
  heat_solver solve = heat_variant_solver(v);
  long n = mapp_bench_range(st, 0), block = mapp_bench_range(st, 1);
  omp_set_num_threads((int)mapp_bench_range(st, 2));
  heat_domain d = {0};
  mapp_timers timers;
  mapp_timers_init(&timers);
  int status = ensure_mpi();
  if (status == MAPP_OK) status = make_domain(n, block, &d);
  heat_solve_context ctx = {.timers = &timers, .tasks = HEAT_TASKS_DEFAULTS};
  if (status == MAPP_OK) status = solve(&d, NULL, &ctx); /* warm-up */
  while (status == MAPP_OK && mapp_bench_keep_running(st)) status = solve(&d, NULL, &ctx);
  heat_domain_free(&d);
  if (status != MAPP_OK) {
    mapp_bench_skip_with_error(st, mapp_error_message());
    return;
  }
  mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * (int64_t)STEPS * n * n);
}

int heat_bench_register_variants(void) {
  mapp_bench_options opt = {.nargs = 3, .arg_names = arg_names,
                            .ninstances = (int)(sizeof instances / sizeof instances[0] / 3),
                            .args = instances, .use_real_time = true, .unit = MAPP_BENCH_MILLISECOND};
  /* One benchmark per row of the variant table: a new variant is timed here
   * without a line of this file changing. */
  for (const mapp_variant_info *v = heat_variants; v->name; ++v) {
    char name[64];
    snprintf(name, sizeof name, "heat/step/%s", v->name);
    MAPP_TRY(mapp_bench_register(name, bm_step, (void *)v, &opt));
  }
  return MAPP_OK;
}
