/* mapp-crm: the command line of the batched-CRM mini-app (its own flags and
 * its config); the driver (mapp_app_main) and the run's hooks (crm_app.c)
 * do the rest. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "crm.h"

/* The command line's values: the grid and counts not given take the
 * preset's (preset_field); the physics' defaults live in crm_config. Every
 * flag that shapes the problem is a custom size, as the columns differ. */
static struct {
  long nx, nz, instances, crm_steps;
  double dx, dz, dt, wind;
  const char *input, *perturb, *forcing, *sounding, *cycle_group, *chunk, *sypd_at, *alloc, *memory;
  double host_work_us;
  long sampled_ranks, dycore_exchanges;
  bool sync;
} args = {.forcing = "on", .cycle_group = "all", .chunk = "variant", .sypd_at = "ne30/64", .alloc = "pool",
          .memory = "device"};

static const mapp_option options[] = {
    {.name = "nx", .kind = MAPP_OPT_LONG, .dest = &args.nx, .min = 4, .max = 1L << 30,
     .default_text = "from --size", .help = "CRM columns (even, >= 4)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(crm_preset, nx)},
    {.name = "nz", .kind = MAPP_OPT_LONG, .dest = &args.nz, .min = 3, .max = 1L << 30,
     .default_text = "from --size", .help = "CRM levels (>= 3)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(crm_preset, nz)},
    {.name = "instances", .kind = MAPP_OPT_LONG, .dest = &args.instances, .min = 0, .max = 1L << 40,
     .default_text = "from --size", .help = "CRMs (per rank with --scaling weak)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(crm_preset, instances)},
    {.name = "crm-steps", .kind = MAPP_OPT_LONG, .dest = &args.crm_steps, .min = 1, .max = 1L << 30,
     .default_text = "from --size", .help = "CRM steps per global step",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(crm_preset, crm_steps)},
    {.name = "dt", .kind = MAPP_OPT_DOUBLE, .dest = &args.dt, .dmin = 1e-6, .dmax = 3600,
     .default_text = "10", .help = "CRM time step (s)", .changes = MAPP_CHANGES_SIZE},
    {.name = "dx", .kind = MAPP_OPT_DOUBLE, .dest = &args.dx, .dmin = 1e-3, .dmax = 1e6,
     .default_text = "2000", .help = "CRM column width (m)", .changes = MAPP_CHANGES_SIZE},
    {.name = "dz", .kind = MAPP_OPT_DOUBLE, .dest = &args.dz, .dmin = 1e-3, .dmax = 1e5,
     .default_text = "20000 / nz", .help = "CRM level depth (m)", .changes = MAPP_CHANGES_SIZE},
    {.name = "input", .kind = MAPP_OPT_STRING, .dest = &args.input,
     .default_text = "synthesised in memory", .help = "columns file from mapp-crm-columns",
     .changes = MAPP_CHANGES_SIZE},
    {.name = "sounding", .kind = MAPP_OPT_CHOICE, .dest = &args.sounding, .default_text = "tropical",
     .choices = "tropical|dry-stable|dry-neutral", .help = "synthetic columns without --input",
     .changes = MAPP_CHANGES_SIZE},
    {.name = "wind", .kind = MAPP_OPT_DOUBLE, .dest = &args.wind, .dmin = -1e4, .dmax = 1e4,
     .help = "wind (m/s) added to synthetic columns", .changes = MAPP_CHANGES_SIZE},
    {.name = "perturb", .kind = MAPP_OPT_CHOICE, .dest = &args.perturb, .choices = "noise|bubble|none",
     .default_text = "from --size",
     .help = "initial CRM perturbation: low-level noise, a warm bubble, or none", .changes = MAPP_CHANGES_SIZE},
    {.name = "forcing", .kind = MAPP_OPT_CHOICE, .dest = &args.forcing, .choices = "on|off",
     .help = "large-scale forcing and nudging toward the column", .changes = MAPP_CHANGES_SIZE},
    {.name = "cycle-group", .kind = MAPP_OPT_CHOICE, .dest = &args.cycle_group, .choices = "all|task",
     .help = "CRMs whose worst sets the sub-cycles: all ranks (answers independent of the rank "
             "count) or this task's (the report's choice)"},
    {.name = "sync", .kind = MAPP_OPT_FLAG, .dest = &args.sync,
     .help = "cuda: synchronise after every kernel launch (to measure what asynchrony buys)"},
    {.name = "chunk", .kind = MAPP_OPT_STRING, .dest = &args.chunk, .default_text = "1 percrm, all batched",
     .help = "batched: CRMs one launch covers (E3SM's PCOLS; a count or 'all'); answers do not change"},
    {.name = "sypd-at", .kind = MAPP_OPT_STRING, .dest = &args.sypd_at, .default_text = "ne30/64",
     .help = "the record's SYPD at neN/NODES columns a node (ne30/64 and ne120/1024: 759 each)"},
    {.name = "host-work-us", .kind = MAPP_OPT_DOUBLE, .dest = &args.host_work_us, .dmin = 0, .dmax = 1e7,
     .default_text = "0",
     .help = "CPU time (us) per column per global step for the rest of the model, on the rank's thread"},
    {.name = "dycore-exchanges", .kind = MAPP_OPT_LONG, .dest = &args.dycore_exchanges, .min = 0, .max = 100000,
     .default_text = "0",
     .help = "dycore halo exchanges per global step (8 neighbours, a node's patch of the --sypd-at grid)"},
    {.name = "sampled-ranks", .kind = MAPP_OPT_LONG, .dest = &args.sampled_ranks, .min = 0, .max = 1L << 20,
     .default_text = "0: every rank computes",
     .help = "simulated build, weak, --cycle-group task: only these ranks compute (the answer is their weak "
             "problem); every rank is charged their measured bursts"},
    {.name = "alloc", .kind = MAPP_OPT_CHOICE, .dest = &args.alloc, .choices = "pool|per-phase",
     .help = "cuda: scratch from one pool, or allocated and freed by each phase"},
    {.name = "memory", .kind = MAPP_OPT_CHOICE, .dest = &args.memory, .choices = "device|managed",
     .help = "cuda: the state in device memory or in managed memory"},
    MAPP_OPTION_END,
};

static crm_perturb perturb_kind(const char *name) {
  return !strcmp(name, "bubble") ? CRM_PERTURB_BUBBLE : !strcmp(name, "none") ? CRM_PERTURB_NONE : CRM_PERTURB_NOISE;
}

static crm_sounding sounding_kind(const char *name) {
  return !name                          ? CRM_SOUNDING_TROPICAL
         : !strcmp(name, "dry-stable")  ? CRM_SOUNDING_DRY_STABLE
         : !strcmp(name, "dry-neutral") ? CRM_SOUNDING_DRY_NEUTRAL
                                        : CRM_SOUNDING_TROPICAL;
}

/* --chunk: a CRM count, 'all', or (not given) the variant's own. */
static int parse_chunk(const mapp_run *run, long *chunk) {
  *chunk = 0;
  if (!mapp_run_given(run, "chunk")) return MAPP_OK;
  char *end = NULL;
  long n = strcmp(args.chunk, "all") ? strtol(args.chunk, &end, 10) : 0;
  /* digits only: strtol would take ' 16' and '+16' */
  if (end && (!isdigit((unsigned char)args.chunk[0]) || *end || n < 1 || n > (1L << 40)))
    return mapp_fail(MAPP_ERR_INPUT, "--chunk: '%s' is not a CRM count >= 1 or 'all'", args.chunk);
  if (run->variant->kind == CRM_VARIANT_PERCRM && n != 1)
    return mapp_fail(MAPP_ERR_INPUT, "--chunk %s: percrm runs one CRM a launch; chunks are the batched variant's",
                     args.chunk);
  *chunk = n;
  return MAPP_OK;
}

/* --sampled-ranks charges the other ranks' compute on a simulated
 * cluster: the simulated build only; their CRMs are not computed, so no
 * group may span them (task), and the answer is the sampled ranks' weak
 * problem (weak). */
static int check_sampling(mapp_run *run) {
  if (args.sampled_ranks <= 0) return MAPP_OK;
  if (!crm_sim_available())
    return mapp_fail(MAPP_ERR_INPUT, "--sampled-ranks charges compute on a simulated cluster: the simulated build "
                                     "only (cmake --preset simgrid); here every rank computes");
  if (strcmp(run->common.scaling, "weak"))
    return mapp_fail(MAPP_ERR_INPUT, "--sampled-ranks needs --scaling weak (the answer is the sampled ranks' weak problem)");
  if (strcmp(args.cycle_group, "task"))
    return mapp_fail(MAPP_ERR_INPUT, "--sampled-ranks needs --cycle-group task: a group across ranks would include "
                                     "ranks whose CRMs are charged, not computed");
  int weak_ranks = mapp_run_weak_ranks(run);
  run->answer_ranks = args.sampled_ranks < weak_ranks ? (int)args.sampled_ranks : weak_ranks;
  return MAPP_OK;
}

/* Flags that would be ignored are refused instead. */
static int check_combinations(const mapp_run *run) {
  static const char *const cuda_only[] = {"sync", "alloc", "memory"};
  for (size_t i = 0; i < sizeof cuda_only / sizeof cuda_only[0]; ++i)
    if (mapp_run_given(run, cuda_only[i]) && run->backend != MAPP_BACKEND_CUDA)
      return mapp_fail(MAPP_ERR_INPUT, "--%s applies to the cuda backend only, not '%s'", cuda_only[i],
                       run->common.backend);
  if (args.input && (args.sounding || args.wind))
    return mapp_fail(MAPP_ERR_INPUT, "--%s shapes synthetic columns and cannot be used with --input",
                     args.sounding ? "sounding" : "wind");
  return MAPP_OK;
}

static int build_config(mapp_run *run, crm_config *cfg) {
  crm_config_from_preset(run->preset, cfg);
  cfg->nx = args.nx;
  cfg->dz *= (double)cfg->nz / (double)args.nz; /* the same top */
  cfg->nz = args.nz;
  cfg->instances = args.instances;
  cfg->crm_steps = args.crm_steps;
  cfg->steps = run->common.steps;
  if (mapp_run_given(run, "dt")) cfg->dt = args.dt;
  if (mapp_run_given(run, "dx")) cfg->dx = args.dx;
  if (mapp_run_given(run, "dz")) cfg->dz = args.dz;
  if (args.perturb) cfg->perturb = perturb_kind(args.perturb);
  cfg->forcing = !strcmp(args.forcing, "on");
  MAPP_TRY(crm_config_check(cfg));
  cfg->instances = mapp_run_scaled(run, cfg->instances); /* CRMs per rank stay fixed under weak scaling */
  if (cfg->instances < run->mpi.nranks)
    return mapp_fail(MAPP_ERR_INPUT, "%d ranks for %ld CRMs: every rank needs at least one CRM", run->mpi.nranks,
                     cfg->instances);
  return MAPP_OK;
}

/* This rank's columns: read from --input or synthesised (none on a rank
 * whose CRMs are charged, not computed). */
static int load_columns(const mapp_run *run, const crm_config *cfg, crm_columns *cols) {
  mapp_range mine = mapp_split_even(cfg->instances, run->mpi.nranks, run->mpi.rank);
  if (args.sampled_ranks > 0 && run->mpi.rank >= args.sampled_ranks) {
    *cols = (crm_columns){.nz = cfg->nz, .first = mine.first};
    return MAPP_OK;
  }
  MAPP_TRY(crm_columns_alloc(cols, mine.count, cfg->nz, mine.first));
  if (args.input) return crm_columns_read(run->mpi.comm, args.input, cfg->instances, cfg->nz, cols);
  return crm_columns_synthesize(cols, sounding_kind(args.sounding), cfg->dz, args.wind);
}

static int setup(mapp_run *run, void **state) {
  crm_config cfg;
  crm_columns cols = {0};
  crm_run_options opt = {.exec = {.sync = args.sync, .host_work_us = args.host_work_us,
                                  .alloc = strcmp(args.alloc, "per-phase") ? CRM_ALLOC_POOL : CRM_ALLOC_PER_PHASE,
                                  .memory = strcmp(args.memory, "managed") ? CRM_MEMORY_DEVICE : CRM_MEMORY_MANAGED},
                         .cycle_group_all = !strcmp(args.cycle_group, "all"),
                         .sampled_ranks = args.sampled_ranks,
                         .dycore_exchanges = args.dycore_exchanges};
  MAPP_TRY(check_combinations(run));
  MAPP_TRY(check_sampling(run));
  MAPP_TRY(parse_chunk(run, &opt.exec.chunk));
  MAPP_TRY(crm_sypd_parse(args.sypd_at, &opt.sypd_at));
  MAPP_TRY(build_config(run, &cfg));
  int status = load_columns(run, &cfg, &cols);
  if (status == MAPP_OK) status = crm_run_create(run, &cfg, &cols, &opt, state);
  crm_columns_free(&cols);
  return status;
}

int main(int argc, char **argv) {
  mapp_app app = crm_app_hooks;
  app.summary = "Batched cloud-resolving models (the E3SM-MMF CAAR seed): one small 2-D anelastic CRM per\n"
                "global-model column, spread over MPI ranks; per global step each CRM runs a fixed number of\n"
                "CRM steps forced by its column and returns tendencies and surface rain.";
  app.options = options;
  app.presets = crm_presets;
  app.preset_steps = MAPP_PRESET_LONG(crm_preset, steps);
  app.setup = setup;
  return mapp_app_main(&app, argc, argv);
}
