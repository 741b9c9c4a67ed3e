/* mapp-crm-bench: one CRM step of the whole group, percrm against batched,
 * on each CPU backend, at small CRMs (32 columns x 48 levels, where too
 * little work per instance is the problem) and the production size
 * (64 x 50). items_per_second is the figure of merit, CRM column-steps/s;
 * compare variants as ratios from one run. triad_fraction models a step as
 * one read and one write of every array it works on (the pool's high-water
 * mark) against the STREAM triad measured in this process with all threads:
 * a floor on the traffic, so a fraction well below 1 means the step is
 * bound by something other than memory streaming (latency, launch-like
 * per-loop-nest overheads, the FFT). */
#include "mapp_stream.h"
#include <stdio.h>
#include <string.h>

#include "crm.h"
#include "mapp_bench.h"

typedef struct {
  const char *size;
  crm_variant variant;
  mapp_backend backend;
  bool sync;       /* cuda: synchronise after every launch */
  long instances;  /* > 0: overrides the preset's CRM count */
  long chunk;      /* --chunk: CRMs a block of every phase covers (0: the variant's) */
  bool cold;       /* no spin-up: the steps from the columns, as a sweep's run times them */
  char name[64];
} crm_bench_case;

/* The device-to-device copy bandwidth measured once in this run: the GPU
 * rows report their traffic floor as a fraction of it (copy_fraction). */
static double copy_bandwidth;

/* Spin up (untimed) to the preset's end state: small has rained by then,
 * so the timed steps run the microphysics and the rain fall, not a dry
 * atmosphere. */
static int spin_up(crm_state *s, bool cold) {
  int status = MAPP_OK;
  if (cold) return status;
  for (long step = 0; status == MAPP_OK && step < s->cfg.steps * s->cfg.crm_steps; ++step) status = crm_step(s);
  return status;
}

static int setup(const crm_bench_case *bc, crm_columns *cols, crm_state *s) {
  crm_config cfg;
  MAPP_TRY(crm_config_preset(bc->size, &cfg));
  if (bc->instances > 0) cfg.instances = bc->instances;
  MAPP_TRY(crm_columns_alloc(cols, cfg.instances, cfg.nz, 0));
  MAPP_TRY(crm_columns_synthesize(cols, CRM_SOUNDING_TROPICAL, cfg.dz, 0.0));
  crm_exec exec = {.variant = bc->variant, .backend = bc->backend, .sync = bc->sync, .chunk = bc->chunk};
  MAPP_TRY(crm_state_create(&cfg, cols, &exec, s));
  return spin_up(s, bc->cold);
}

/* Every iteration is one CRM step of the group. The model runs on for as
 * many steps as the preset's run, then starts again from its columns and
 * is spun up again, untimed: a fast row (thousands of iterations) would
 * otherwise integrate far past the runs the presets are made for, until
 * some CRM needs more sub-cycles than the model allows and the row fails. */
static void bm_crm_step(mapp_bench_state *st, void *arg) {
  const crm_bench_case *bc = arg;
  crm_columns cols = {0};
  crm_state s = {0};
  int status = setup(bc, &cols, &s);
  long run_steps = s.cfg.steps * s.cfg.crm_steps, since_start = 0;
  while (status == MAPP_OK && mapp_bench_keep_running(st)) {
    if (since_start == run_steps) {
      mapp_bench_pause_timing(st);
      status = crm_state_restart(&s, &cols);
      if (status == MAPP_OK) status = spin_up(&s, bc->cold);
      since_start = 0;
      mapp_bench_resume_timing(st);
      if (status != MAPP_OK) break;
    }
    status = crm_step(&s);
    ++since_start;
  }
  if (status != MAPP_OK) mapp_bench_skip_with_error(st, mapp_error_message());
  else {
    mapp_bench_set_items_processed(st, mapp_bench_iterations(st) * s.cfg.instances * s.cfg.nx);
    if (bc->backend != MAPP_BACKEND_CUDA) mapp_bench_set_triad_fraction(st, 2.0 * (double)s.pool.high_water);
    else
      mapp_bench_set_counter(st, "copy_fraction",
                             2.0 * (double)s.pool.high_water * (double)mapp_bench_iterations(st) / copy_bandwidth,
                             MAPP_BENCH_COUNTER_RATE);
  }
  mapp_bench_set_counter(st, "instances", (double)s.cfg.instances, MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_counter(st, "chunk", (double)s.chunk, MAPP_BENCH_COUNTER_DEFAULT);
  crm_state_free(&s);
  crm_columns_free(&cols);
}

/* The GPU rows: every variant, asynchronous and --sync, at the production
 * CRM (medium, 64 x 50) over CRMs per GPU (percrm stops at 4096: one launch
 * per CRM and loop nest takes seconds a step beyond). Registered only where
 * a device is present. */
static int register_cuda(crm_bench_case *cases, int *n, int max, const mapp_bench_options *opt) {
  static const long crms[] = {64, 512, 4096, 16384};
  if (!mapp_backend_built(MAPP_BACKEND_CUDA) || mapp_cuda_device_count() == 0) return MAPP_OK;
  copy_bandwidth = mapp_cuda_copy_bandwidth((size_t)1 << 28, 10);
  if (copy_bandwidth <= 0) return mapp_fail(MAPP_ERR_SYSTEM, "the device-to-device copy bandwidth could not be measured");
  for (const mapp_variant_info *v = crm_variants; v->name; ++v)
    for (int sync = 0; sync < 2; ++sync)
      for (size_t k = 0; k < sizeof crms / sizeof crms[0] && *n < max; ++k) {
        if (v->kind == CRM_VARIANT_PERCRM && crms[k] > 4096) continue;
        crm_bench_case *c = &cases[(*n)++];
        *c = (crm_bench_case){.size = "medium", .variant = (crm_variant)v->kind, .backend = MAPP_BACKEND_CUDA,
                              .sync = sync, .instances = crms[k]};
        snprintf(c->name, sizeof c->name, "crm_step/cuda/%s/%s/%ld", v->name, sync ? "sync" : "async", crms[k]);
        MAPP_TRY(mapp_bench_register(c->name, bm_crm_step, c, opt));
      }
  return MAPP_OK;
}

/* PCOLS, the CAAR report's chunk: the batched step at the production CRM
 * (64 x 50) over 133 CRMs (the report's ~800 a node over 6 GPUs) and
 * 4,096, in blocks of 16 (E3SM's default), 64, 256 and all, from the
 * columns without spin-up (as crm-chunks.yaml's runs); omp, and cuda
 * (asynchronous) where a device is. Rows of one process, so chunk sizes
 * compare as ratios of one run (--benchmark_enable_random_interleaving
 * spreads a busy machine's noise over all of them). */
static int register_chunks(crm_bench_case *cases, int *n, int max, const mapp_bench_options *opt) {
  static const long crms[] = {133, 4096}, chunks[] = {16, 64, 256, 0};
  const mapp_backend backends[] = {MAPP_BACKEND_OMP, MAPP_BACKEND_CUDA};
  for (int b = 0; b < 2; ++b) {
    if (!mapp_backend_built(backends[b]) || (backends[b] == MAPP_BACKEND_CUDA && mapp_cuda_device_count() == 0))
      continue;
    for (size_t k = 0; k < sizeof crms / sizeof crms[0]; ++k)
      for (size_t c = 0; c < sizeof chunks / sizeof chunks[0] && *n < max; ++c) {
        crm_bench_case *bc = &cases[(*n)++];
        *bc = (crm_bench_case){.size = "medium", .variant = CRM_VARIANT_BATCHED, .backend = backends[b],
                               .instances = crms[k], .chunk = chunks[c], .cold = true};
        char chunk[24] = "all";
        if (chunks[c] > 0) snprintf(chunk, sizeof chunk, "%ld", chunks[c]);
        snprintf(bc->name, sizeof bc->name, "crm_chunk/%s/%s/%ld", mapp_backend_name(backends[b]), chunk, crms[k]);
        MAPP_TRY(mapp_bench_register(bc->name, bm_crm_step, bc, opt));
      }
  }
  return MAPP_OK;
}

int main(int argc, char **argv) {
  enum { MAX_CASES = 48 };
  static crm_bench_case cases[MAX_CASES];
  static const char *const sizes[] = {"small", "medium"};
  const mapp_bench_options opt = {.use_real_time = true, .unit = MAPP_BENCH_MILLISECOND};
  int n = 0, status = MAPP_OK;
  /* Every row of the variant table on each of its built CPU backends. */
  for (int z = 0; z < 2; ++z)
    for (int b = 0; b < MAPP_BACKEND_COUNT; ++b)
      for (const mapp_variant_info *v = crm_variants; v->name && status == MAPP_OK; ++v) {
        if (!(v->backends & (1u << b)) || !mapp_backend_is_cpu((mapp_backend)b) || n == MAX_CASES) continue;
        cases[n] = (crm_bench_case){.size = sizes[z], .variant = (crm_variant)v->kind, .backend = (mapp_backend)b};
        snprintf(cases[n].name, sizeof cases[n].name, "crm_step/%s/%s/%s", sizes[z],
                 mapp_backend_name((mapp_backend)b), v->name);
        status = mapp_bench_register(cases[n].name, bm_crm_step, &cases[n], &opt);
        ++n;
      }
  if (status == MAPP_OK) status = register_cuda(cases, &n, MAX_CASES, &opt);
  if (status == MAPP_OK) status = register_chunks(cases, &n, MAX_CASES, &opt);
  if (status == MAPP_OK) status = mapp_stream_register(0);
  if (status == MAPP_OK) status = mapp_bench_main(argc, argv);
  return mapp_report_error("mapp-crm-bench", status);
}
