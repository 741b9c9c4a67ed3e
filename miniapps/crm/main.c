/* mapp-crm: the command line of the batched-CRM mini-app. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crm.h"

static const char *const prog = "mapp-crm";
static const char *const summary =
    "Batched cloud-resolving models (the E3SM-MMF CAAR seed): one small 2-D anelastic CRM per\n"
    "global-model column, spread over MPI ranks; per global step each CRM runs a fixed number of\n"
    "CRM steps forced by its column and returns tendencies and surface rain.";

#define ALL_BACKENDS                                                                               \
  (MAPP_BACKEND_BIT(MAPP_BACKEND_SERIAL) | MAPP_BACKEND_BIT(MAPP_BACKEND_OMP) |                    \
   MAPP_BACKEND_BIT(MAPP_BACKEND_CUDA))
static const mapp_variant_info variants[] = {
    {"percrm", ALL_BACKENDS, "each loop nest (kernel) run once per CRM instance"},
    {"batched", ALL_BACKENDS, "instance index inside every collapsed loop nest (kernel)"},
    {NULL, 0, NULL},
};

/* What the command line may override in the preset; 0 or NULL keeps it. */
typedef struct {
  mapp_common_args common;
  long nx, nz, instances, crm_steps;
  double dx, dz, dt, wind;
  const char *input, *perturb, *forcing, *sounding, *cycle_group;
  bool sync;
} crm_args;

static int parse_args(int argc, char **argv, void *args, bool *done) {
  crm_args *a = args;
  memset(a, 0, sizeof *a);
  mapp_common_defaults(&a->common, "batched");
  a->instances = -1;
  a->perturb = "noise";
  a->forcing = "on";
  a->sounding = "tropical";
  a->cycle_group = "all";
  const mapp_option opts[] = {
      MAPP_COMMON_OPTIONS(&a->common, "percrm|batched"),
      {.name = "nx", .kind = MAPP_OPT_LONG, .dest = &a->nx, .min = 0, .max = 1L << 30,
       .default_text = "from --size", .help = "CRM columns (even, >= 4)"},
      {.name = "nz", .kind = MAPP_OPT_LONG, .dest = &a->nz, .min = 0, .max = 1L << 30,
       .default_text = "from --size", .help = "CRM levels (>= 3)"},
      {.name = "instances", .kind = MAPP_OPT_LONG, .dest = &a->instances, .min = 0, .max = 1L << 40,
       .default_text = "from --size", .help = "CRMs (per rank with --scaling weak)"},
      {.name = "crm-steps", .kind = MAPP_OPT_LONG, .dest = &a->crm_steps, .min = 0, .max = 1L << 30,
       .default_text = "from --size", .help = "CRM steps per global step"},
      {.name = "dt", .kind = MAPP_OPT_DOUBLE, .dest = &a->dt, .dmin = 0, .dmax = 3600,
       .default_text = "10", .help = "CRM time step (s)"},
      {.name = "dx", .kind = MAPP_OPT_DOUBLE, .dest = &a->dx, .dmin = 0, .dmax = 1e6,
       .default_text = "2000", .help = "CRM column width (m)"},
      {.name = "dz", .kind = MAPP_OPT_DOUBLE, .dest = &a->dz, .dmin = 0, .dmax = 1e5,
       .default_text = "20000 / nz", .help = "CRM level depth (m)"},
      {.name = "input", .kind = MAPP_OPT_STRING, .dest = &a->input,
       .default_text = "synthesised in memory", .help = "columns file from mapp-crm-columns"},
      {.name = "sounding", .kind = MAPP_OPT_CHOICE, .dest = &a->sounding,
       .choices = "tropical|dry-stable|dry-neutral", .help = "synthetic columns without --input"},
      {.name = "wind", .kind = MAPP_OPT_DOUBLE, .dest = &a->wind, .dmin = -1e4, .dmax = 1e4,
       .help = "wind (m/s) added to synthetic columns"},
      {.name = "perturb", .kind = MAPP_OPT_CHOICE, .dest = &a->perturb, .choices = "noise|bubble|none",
       .help = "initial CRM perturbation: low-level noise, a warm bubble, or none"},
      {.name = "forcing", .kind = MAPP_OPT_CHOICE, .dest = &a->forcing, .choices = "on|off",
       .help = "large-scale forcing and nudging toward the column"},
      {.name = "cycle-group", .kind = MAPP_OPT_CHOICE, .dest = &a->cycle_group, .choices = "all|task",
       .help = "CRMs whose worst sets the sub-cycles: all ranks (answers independent of the rank "
               "count) or this task's (the report's choice)"},
      {.name = "sync", .kind = MAPP_OPT_FLAG, .dest = &a->sync,
       .help = "cuda: synchronise after every kernel launch (to measure what asynchrony buys)"},
      MAPP_OPTION_END,
  };
  mapp_cli_result cli;
  int status = mapp_cli_parse(prog, summary, opts, false, argc, argv, &cli);
  *done = cli.help_shown;
  mapp_cli_free(&cli);
  return status;
}

static bool is_custom(const crm_args *a) {
  return a->nx || a->nz || a->instances >= 0 || a->crm_steps || a->dt || a->dx || a->dz || a->input ||
         a->wind || strcmp(a->perturb, "noise") || strcmp(a->forcing, "on") || strcmp(a->sounding, "tropical");
}

/* The baseline case this run answers, or NULL for a custom problem. */
static const char *case_name(const crm_args *a, const crm_config *preset, int nranks, char *buf, size_t len) {
  if (is_custom(a) || (a->common.steps && a->common.steps != preset->steps)) return NULL;
  if (!strcmp(a->common.scaling, "weak") && nranks > 1) {
    snprintf(buf, len, "%s-weak%d", a->common.size, nranks);
    return buf;
  }
  return a->common.size;
}

static crm_perturb perturb_kind(const char *name) {
  return !strcmp(name, "bubble") ? CRM_PERTURB_BUBBLE : !strcmp(name, "none") ? CRM_PERTURB_NONE : CRM_PERTURB_NOISE;
}

static crm_sounding sounding_kind(const char *name) {
  return !strcmp(name, "dry-stable")    ? CRM_SOUNDING_DRY_STABLE
         : !strcmp(name, "dry-neutral") ? CRM_SOUNDING_DRY_NEUTRAL
                                        : CRM_SOUNDING_TROPICAL;
}

static int build_config(const crm_args *a, int nranks, crm_config *cfg) {
  MAPP_TRY(crm_config_preset(a->common.size, cfg));
  if (a->nx) cfg->nx = a->nx;
  if (a->nz) cfg->nz = a->nz, cfg->dz = crm_default_dz(a->nz);
  if (a->instances >= 0) cfg->instances = a->instances;
  if (a->crm_steps) cfg->crm_steps = a->crm_steps;
  if (a->common.steps) cfg->steps = a->common.steps;
  if (a->dt) cfg->dt = a->dt;
  if (a->dx) cfg->dx = a->dx;
  if (a->dz) cfg->dz = a->dz;
  cfg->perturb = perturb_kind(a->perturb);
  cfg->forcing = !strcmp(a->forcing, "on");
  MAPP_TRY(crm_config_check(cfg));
  if (!strcmp(a->common.scaling, "weak")) cfg->instances *= nranks; /* CRMs per rank stay fixed */
  if (cfg->instances < nranks)
    return mapp_fail(MAPP_ERR_INPUT, "%d ranks for %ld CRMs: every rank needs at least one CRM", nranks,
                     cfg->instances);
  return MAPP_OK;
}

static int load_columns(const mapp_mpi *mpi, const crm_args *a, const crm_config *cfg, crm_columns *cols) {
  mapp_range mine = mapp_split_even(cfg->instances, mpi->nranks, mpi->rank);
  MAPP_TRY(crm_columns_alloc(cols, mine.count, cfg->nz, mine.first));
  if (a->input) return crm_columns_read(mpi->comm, a->input, cfg->instances, cfg->nz, cols);
  return crm_columns_synthesize(cols, sounding_kind(a->sounding), cfg->dz, a->wind);
}

static int allreduce_max(void *ctx, double *values, int n) {
  MAPP_MPI(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_MAX, *(MPI_Comm *)ctx));
  return MAPP_OK;
}

/* ------------------------------------------------------------------ run */

typedef struct {
  crm_state s;
  double *water0, *tend, *rain; /* budget at the start; last global step's answer */
} crm_run;

static void run_free(crm_run *run) {
  crm_state_free(&run->s);
  free(run->water0);
  free(run->tend);
  free(run->rain);
}

static int run_setup(const mapp_mpi *mpi, const crm_args *a, const crm_config *cfg, mapp_backend backend,
                     crm_run *run) {
  crm_columns cols;
  int status = load_columns(mpi, a, cfg, &cols);
  crm_variant variant = !strcmp(a->common.variant, "percrm") ? CRM_VARIANT_PERCRM : CRM_VARIANT_BATCHED;
  if (status == MAPP_OK) status = crm_state_create(cfg, &cols, variant, backend, a->sync, &run->s);
  crm_columns_free(&cols);
  MAPP_TRY(status);
  if (!strcmp(a->cycle_group, "all")) {
    run->s.group_max = allreduce_max;
    run->s.group_ctx = (void *)&mpi->comm;
  }
  long n = run->s.g.ninst, M = n * run->s.g.rows;
  MAPP_TRY(mapp_calloc((void **)&run->water0, (size_t)n, sizeof(double), "the water budget"));
  MAPP_TRY(mapp_calloc((void **)&run->tend, 3 * (size_t)M, sizeof(double), "the tendencies"));
  MAPP_TRY(mapp_calloc((void **)&run->rain, (size_t)n, sizeof(double), "the surface rain"));
  crm_water_budget(&run->s, run->water0);
  return MAPP_OK;
}

static int run_steps(const mapp_mpi *mpi, crm_run *run) {
  int status = MAPP_OK;
  for (long step = 0; status == MAPP_OK && step < run->s.cfg.steps; ++step)
    status = mapp_agree(mpi->comm, prog, crm_global_step(&run->s, run->tend, run->rain));
  if (status == MAPP_OK) status = mapp_agree(mpi->comm, prog, run->s.ops->to_host(&run->s, CRM_SYNC_ALL));
  return status;
}

/* Invariants: the water budget closes per CRM to round-off; the last
 * projection left a divergence at round-off. */
static int run_checks(const mapp_mpi *mpi, crm_run *run, mapp_record *rec) {
  long n = run->s.g.ninst;
  double *water;
  MAPP_TRY(mapp_alloc((void **)&water, sizeof(double) * (size_t)n, "the water budget"));
  crm_water_budget(&run->s, water);
  double local[2] = {0.0, crm_relative_divergence(&run->s)}, global[2];
  for (long c = 0; c < n; ++c) local[0] = fmax(local[0], fabs(water[c] - run->water0[c]) / run->water0[c]);
  free(water);
  MAPP_MPI(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, mpi->comm));
  rec->checks[rec->nchecks++] = (mapp_check){"finite", 1, 0.0, 0.0};
  rec->checks[rec->nchecks++] = (mapp_check){"water-budget", global[0] <= 1e-10, global[0], 1e-10};
  rec->checks[rec->nchecks++] = (mapp_check){"divergence", global[1] <= 1e-10, global[1], 1e-10};
  return MAPP_OK;
}

static void fill_record(mapp_record *rec, const crm_args *a, const crm_state *s, int nranks, int threads,
                        const char *case_id, double compute_s) {
  long per_rank = mapp_split_even(s->cfg.instances, nranks, 0).count;
  double column_steps = (double)s->cfg.instances * (double)s->cfg.nx * (double)s->cfg.steps * (double)s->cfg.crm_steps;
  *rec = (mapp_record){
      .app = "crm", .variant = a->common.variant, .backend = a->common.backend,
      .size = is_custom(a) ? "custom" : a->common.size, .scaling = a->common.scaling, .case_name = case_id,
      .ranks = nranks, .threads = threads, .gpus = !strcmp(a->common.backend, "cuda"), .steps = s->cfg.steps,
      .ndims = 4,
      .dims = {{"instances", s->cfg.instances, per_rank}, {"nx", s->cfg.nx, s->cfg.nx},
               {"nz", s->cfg.nz, s->cfg.nz}, {"crm_steps", s->cfg.crm_steps, s->cfg.crm_steps}},
      .fom_name = "crm-column-steps/s", .fom = compute_s > 0 ? column_steps / compute_s : 0.0,
      .bytes_moved = -1.0, .output = a->common.output};
}

static int finish(const mapp_mpi *mpi, const crm_args *a, crm_run *run, mapp_record *rec, mapp_timers *timers,
                  double start) {
  if (a->common.output) {
    mapp_timer_start(timers, MAPP_PHASE_IO);
    MAPP_TRY(mapp_agree(mpi->comm, prog,
                        crm_write_output(&run->s, mpi->comm, a->common.output, run->tend, run->rain, rec)));
    mapp_timer_stop(timers, MAPP_PHASE_IO);
  }
  MAPP_TRY(mapp_timers_reduce(timers, mpi->comm, rec->phases));
  double wall = mapp_now() - start;
  MAPP_MPI(MPI_Allreduce(&wall, &rec->wall_s, 1, MPI_DOUBLE, MPI_MAX, mpi->comm));
  int cycles[2] = {run->s.max_cycles, run->s.max_fall_cycles}, worst[2];
  MAPP_MPI(MPI_Allreduce(cycles, worst, 2, MPI_INT, MPI_MAX, mpi->comm));
  rec->extra = json_pack("{s:i,s:i,s:s,s:b}", "max_sub_cycles", worst[0], "max_fall_sub_cycles", worst[1],
                         "cycle_group", a->cycle_group, "sync", a->sync);
  int status = MAPP_OK;
  if (mpi->rank == 0) {
    if (a->common.result) status = mapp_record_write(rec, a->common.result);
    if (!a->common.quiet) mapp_record_summary(rec, stdout);
  }
  json_decref(rec->extra);
  return mapp_agree(mpi->comm, prog, status);
}

static int run(const mapp_mpi *mpi, const void *args, int argc, char **argv, int *verdict) {
  const crm_args *a = args;
  mapp_timers timers;
  mapp_timers_init(&timers);
  double start = mapp_now();
  mapp_timer_start(&timers, MAPP_PHASE_SETUP);
  mapp_backend backend;
  crm_config cfg, preset;
  char case_buf[64];
  crm_run state = {0};
  int status = mapp_select_backend("crm", variants, a->common.variant, a->common.backend, &backend);
  /* before set-up: FFTW plans for the thread count in force */
  int threads = status == MAPP_OK && backend == MAPP_BACKEND_OMP ? mapp_set_threads(a->common.threads) : 1;
  if (status == MAPP_OK) status = crm_config_preset(a->common.size, &preset);
  if (status == MAPP_OK) status = build_config(a, mpi->nranks, &cfg);
  if (status == MAPP_OK) status = run_setup(mpi, a, &cfg, backend, &state);
  status = mapp_agree(mpi->comm, prog, status);
  mapp_timer_stop(&timers, MAPP_PHASE_SETUP);
  if (status == MAPP_OK) {
    MPI_Barrier(mpi->comm);
    mapp_timer_start(&timers, MAPP_PHASE_COMPUTE);
    status = run_steps(mpi, &state);
    mapp_timer_stop(&timers, MAPP_PHASE_COMPUTE);
  }
  mapp_record rec;
  double compute = timers.total[MAPP_PHASE_COMPUTE], compute_max;
  MPI_Allreduce(&compute, &compute_max, 1, MPI_DOUBLE, MPI_MAX, mpi->comm);
  if (status == MAPP_OK) {
    fill_record(&rec, a, &state.s, mpi->nranks, threads, case_name(a, &preset, mpi->nranks, case_buf, sizeof case_buf),
                compute_max);
    rec.argc = argc;
    rec.argv = argv;
    status = mapp_agree(mpi->comm, prog, run_checks(mpi, &state, &rec));
  }
  if (status == MAPP_OK) status = finish(mpi, a, &state, &rec, &timers, start);
  if (status == MAPP_OK) *verdict = strcmp(mapp_record_verdict(&rec), "fail") == 0 ? MAPP_ERR_VERIFY : MAPP_OK;
  run_free(&state);
  return status;
}

int main(int argc, char **argv) {
  crm_args args;
  const mapp_app app = {.name = "crm", .prog = prog, .variants = variants, .args = &args,
                        .common_offset = offsetof(crm_args, common), .parse = parse_args, .run = run};
  return mapp_app_main(&app, argc, argv);
}
