/* mapp-stencil-bench: the shallow-water step, eager against orchestrated
 * (the generated, cached, loaded program), on each CPU backend, at Pace's
 * production size per rank (48 x 48) and a large one (1024 x 1024); the
 * vertical program (stencil_step/vertical/...) at 40 levels, 48 x 48 and
 * 256 x 256.
 *
 * Per step benchmark: items_per_second = cell-updates/s (the figure of
 * merit); traffic_MB = the mode's compulsory traffic per step (every field
 * a loop reads or writes, once per loop: eager per stencil, orchestrated per
 * fused loop, demoted temporaries never), and triad_fraction = that traffic
 * moved at the measured speed over the STREAM triad of this process.
 * Also: eager's per-call overhead and the loaded program's per-step call
 * overhead (a 3 x 3 domain, where the work is small, and a generated step
 * with no stencil: the call through the loaded symbol alone), the cold
 * build of one class, and the warm start of `run` (key check, dlopen,
 * symbols).
 *
 * Where a GPU is present: build-and-run on cuda at 48 and 1024, with
 * copy_fraction = the step's traffic moved at the measured speed over a
 * device-to-device copy measured in this run (eager has no CUDA mode: its
 * rows above are the reference). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapp_bench.h"
#include "mapp_latency.h"
#include "mapp_stream.h"
#include "stencil.h"

static char cache_dir[512];
/* The generated programs' toolchain, as the environment changes it (read
 * once, in main, as mapp-stencil reads it once per run). */
static stencil_toolchain toolchain;
/* The device-to-device copy bandwidth (read plus write) measured once in
 * this run where a GPU is present: the CUDA rows' traffic floor. */
static double copy_bandwidth;

typedef struct {
  const char *program;
  long n, nz; /* n x n cells, nz levels (a 3-D program) */
  stencil_mode mode;
  mapp_backend backend;
  char name[96];
} step_case;

static int make_state(const char *program, long n, long nz, stencil_mode mode, mapp_backend backend,
                      stencil_state **s) {
  stencil_config c;
  stencil_config_defaults(&c);
  c.program = program;
  c.nx = c.ny = n;
  c.nz = nz;
  c.mode = mode;
  c.backend = backend;
  c.cache_dir = cache_dir;
  c.drop = NULL; /* the benchmark times the whole step: MAPP_STENCIL_DROP is a fault for the app's tests */
  omp_set_num_threads(backend == MAPP_BACKEND_OMP ? 2 : 1);
  MAPP_TRY(stencil_state_create(MPI_COMM_WORLD, &c, s));
  return stencil_prepare(*s);
}

static double traffic(const stencil_state *s) {
  if (s->cfg.mode == STENCIL_MODE_EAGER) return st_traffic_eager(&s->program, s->args.lx, s->args.ly, s->args.nz);
  return st_traffic_plan(&s->program, &s->plan, s->args.lx, s->args.ly, s->args.nz);
}

static void bm_step(mapp_bench_state *st, void *arg) {
  const step_case *bc = arg;
  stencil_state *s = NULL;
  int status = make_state(bc->program, bc->n, bc->nz, bc->mode, bc->backend, &s);
  if (status == MAPP_OK) status = stencil_step(s); /* warm-up, untimed */
  while (status == MAPP_OK && mapp_bench_keep_running(st)) status = stencil_step(s);
  if (status != MAPP_OK) {
    mapp_bench_skip_with_error(st, mapp_error_message());
  } else {
    long calls = s->program.ncalls;
    mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * bc->n * bc->n * s->args.nz);
    if (bc->backend == MAPP_BACKEND_CUDA)
      mapp_bench_set_counter(st, "copy_fraction", traffic(s) * (double)mapp_bench_iterations(st) / copy_bandwidth,
                             MAPP_BENCH_COUNTER_RATE);
    else
      mapp_bench_set_triad_fraction(st, traffic(s));
    mapp_bench_set_counter(st, "traffic_MB", traffic(s) / 1e6, MAPP_BENCH_COUNTER_DEFAULT);
    /* per stencil call (eager) or per step (orchestrated: one call) */
    double per = bc->mode == STENCIL_MODE_EAGER ? (double)calls : 1.0;
    mapp_bench_set_counter(st, "us_per_call", (double)mapp_bench_iterations(st) * per * 1e-6,
                           MAPP_BENCH_COUNTER_RATE | MAPP_BENCH_COUNTER_INVERT);
  }
  stencil_state_destroy(s);
}

/* The generated OpenMP source of the south-west corner class. */
static int corner_source(st_program *p, st_plan *plan, char **src) {
  stencil_debug d = {0};
  MAPP_TRY(st_program_make(p, "shallow-water", NULL));
  MAPP_TRY(st_plan_make(p, ST_EDGE_W | ST_EDGE_S, ST_PLAN_FUSED, plan));
  return stencil_generate(p, plan, MAPP_BACKEND_OMP, &d, src);
}

/* The cache entry of src in dir, built when `build` and missing, loaded into *l. */
static int cache_entry(const char *dir, const st_program *p, const char *src, int cls, mapp_backend backend, bool build,
                       stencil_loaded *l) {
  stencil_key key;
  stencil_cache_stats stats;
  MAPP_TRY(stencil_key_make(&toolchain, p, src, cls, backend, "none", &key));
  return stencil_cache_get(dir, &key, src, build, true, l, &stats);
}

/* Cold build of one class: generation, the compiler, the manifest. */
static void bm_build_cold(mapp_bench_state *st, void *arg) {
  (void)arg;
  static st_program p;
  st_plan plan;
  char *src = NULL, dir[600];
  int status = corner_source(&p, &plan, &src);
  static long builds = 0; /* a fresh folder for every build, across repetitions */
  while (status == MAPP_OK && mapp_bench_keep_running(st)) {
    snprintf(dir, sizeof dir, "%s/cold-%ld-%ld", cache_dir, (long)getpid(), builds++);
    stencil_loaded l = {0};
    status = cache_entry(dir, &p, src, plan.cls, MAPP_BACKEND_OMP, true, &l);
    stencil_loaded_close(&l);
  }
  if (status != MAPP_OK) mapp_bench_skip_with_error(st, mapp_error_message());
  free(src);
}

/* Warm start of `run`: compiler identity, key, manifest and object checks,
 * dlopen and the symbols. */
static void bm_load_warm(mapp_bench_state *st, void *arg) {
  (void)arg;
  static st_program p;
  st_plan plan;
  char *src = NULL;
  stencil_loaded l = {0};
  int status = corner_source(&p, &plan, &src);
  if (status == MAPP_OK) status = cache_entry(cache_dir, &p, src, plan.cls, MAPP_BACKEND_OMP, true, &l);
  stencil_loaded_close(&l);
  while (status == MAPP_OK && mapp_bench_keep_running(st)) {
    status = cache_entry(cache_dir, &p, src, plan.cls, MAPP_BACKEND_OMP, false, &l);
    stencil_loaded_close(&l);
  }
  if (status != MAPP_OK) mapp_bench_skip_with_error(st, mapp_error_message());
  free(src);
}

/* The call through the loaded symbol alone (what the seed's "fast path"
 * of a cached program comes down to): a generated program with no stencil in it, built into
 * the cache and loaded like any other, called in a loop. */
static void bm_loaded_call(mapp_bench_state *st, void *arg) {
  (void)arg;
  st_program empty = {.name = "empty", .bodies = "stencil_kernels.h"};
  st_plan plan;
  stencil_debug d = {0};
  char *src = NULL;
  stencil_loaded l = {0};
  int status = st_plan_make(&empty, 0, ST_PLAN_ROWS, &plan);
  if (status == MAPP_OK) status = stencil_generate(&empty, &plan, MAPP_BACKEND_SERIAL, &d, &src);
  if (status == MAPP_OK) status = cache_entry(cache_dir, &empty, src, 0, MAPP_BACKEND_SERIAL, true, &l);
  stencil_args a = {0};
  double *fields[ST_MAX_FIELDS] = {NULL};
  stencil_hooks hooks = {0};
  while (status == MAPP_OK && mapp_bench_keep_running(st)) status = l.step(&a, fields, &hooks);
  if (status != MAPP_OK) mapp_bench_skip_with_error(st, mapp_error_message());
  stencil_loaded_close(&l);
  free(src);
}

/* The vertical program (3-D, vertical solves) at 40 levels: eager and
 * build-and-run on each built CPU backend, at Pace's 48 x 48 per rank and
 * at 256 x 256 (each field 21 MB: beyond the caches). */
static int register_vertical(step_case *cases, int *n, const mapp_bench_options *opt) {
  static const long sizes[] = {48, 256};
  static const stencil_mode modes[] = {STENCIL_MODE_EAGER, STENCIL_MODE_BUILD_AND_RUN};
  static const mapp_backend backends[] = {MAPP_BACKEND_SERIAL, MAPP_BACKEND_OMP};
  for (int z = 0; z < 2; ++z)
    for (int b = 0; b < 2; ++b)
      for (int m = 0; m < 2; ++m) {
        if (!mapp_backend_built(backends[b])) continue;
        step_case *c = &cases[(*n)++];
        *c = (step_case){.program = "vertical", .n = sizes[z], .nz = 40, .mode = modes[m], .backend = backends[b]};
        snprintf(c->name, sizeof c->name, "stencil_step/vertical/%s/%s/n:%ld/nz:40", stencil_variants[modes[m]].name,
                 mapp_backend_name(backends[b]), sizes[z]);
        MAPP_TRY(mapp_bench_register(c->name, bm_step, c, opt));
      }
  return MAPP_OK;
}

/* The orchestrated step on the GPU (the generated CUDA program, built into
 * the cache untimed), registered only where a device is present: a row
 * that cannot run would fail the bench. */
static int register_cuda(step_case *cases, int *n, const mapp_bench_options *opt) {
  static const long sizes[] = {48, 1024};
  if (!mapp_backend_built(MAPP_BACKEND_CUDA) || mapp_cuda_device_count() == 0) return MAPP_OK;
  copy_bandwidth = mapp_cuda_copy_bandwidth((size_t)1 << 28, 10);
  if (copy_bandwidth <= 0) return mapp_fail(MAPP_ERR_SYSTEM, "the device-to-device copy bandwidth could not be measured");
  for (int z = 0; z < 2; ++z) {
    step_case *c = &cases[(*n)++];
    *c = (step_case){.program = "shallow-water", .n = sizes[z], .nz = 1, .mode = STENCIL_MODE_BUILD_AND_RUN,
                     .backend = MAPP_BACKEND_CUDA};
    snprintf(c->name, sizeof c->name, "stencil_step/build-and-run/cuda/n:%ld", sizes[z]);
    MAPP_TRY(mapp_bench_register(c->name, bm_step, c, opt));
  }
  return MAPP_OK;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  snprintf(cache_dir, sizeof cache_dir, "%s/mapp-stencil-bench-%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (long)getpid());
  stencil_config defaults;
  stencil_config_defaults(&defaults);
  toolchain = defaults.toolchain;
  static step_case cases[48];
  static const long sizes[] = {3, 48, 1024};
  const mapp_bench_options opt = {.use_real_time = true, .unit = MAPP_BENCH_MICROSECOND};
  int n = 0, status = MAPP_OK;
  /* Every variant that runs steps (eager; build-and-run, whose program run
   * also loads) on each built CPU backend. */
  for (int z = 0; z < 3; ++z)
    for (int b = 0; b < MAPP_BACKEND_COUNT; ++b)
      for (const mapp_variant_info *v = stencil_variants; v->name && status == MAPP_OK; ++v) {
        if (v->kind != STENCIL_MODE_EAGER && v->kind != STENCIL_MODE_BUILD_AND_RUN) continue;
        if (!(v->backends & (1u << b)) || !mapp_backend_is_cpu((mapp_backend)b) || !mapp_backend_built((mapp_backend)b))
          continue;
        cases[n] = (step_case){.program = "shallow-water", .n = sizes[z], .nz = 1, .mode = (stencil_mode)v->kind,
                               .backend = (mapp_backend)b};
        snprintf(cases[n].name, sizeof cases[n].name, "stencil_step/%s/%s/n:%ld", v->name,
                 mapp_backend_name((mapp_backend)b), sizes[z]);
        status = mapp_bench_register(cases[n].name, bm_step, &cases[n], &opt);
        ++n;
      }
  if (status == MAPP_OK) status = register_vertical(cases, &n, &opt);
  if (status == MAPP_OK) status = register_cuda(cases, &n, &opt);
  const mapp_bench_options build_opt = {.use_real_time = true, .unit = MAPP_BENCH_MILLISECOND, .min_time = 2.0};
  if (status == MAPP_OK) status = mapp_bench_register("stencil_build/cold", bm_build_cold, NULL, &build_opt);
  if (status == MAPP_OK) status = mapp_bench_register("stencil_build/warm_load", bm_load_warm, NULL, &build_opt);
  const mapp_bench_options call_opt = {.use_real_time = true, .unit = MAPP_BENCH_NANOSECOND};
  if (status == MAPP_OK) status = mapp_bench_register("stencil_call/loaded_empty_step", bm_loaded_call, NULL, &call_opt);
  if (status == MAPP_OK) status = mapp_stream_register(0);
  if (status == MAPP_OK) status = mapp_latency_register(); /* what the OpenMP loops' forks and barriers are bound by */
  if (status == MAPP_OK) status = mapp_bench_main(argc, argv);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0) fprintf(stderr, "mapp-stencil-bench: could not remove %s\n", cache_dir);
  status = mapp_report_error("mapp-stencil-bench", status);
  MPI_Finalize();
  return status;
}
