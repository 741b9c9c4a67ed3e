/* mapp-heat: the command line of the heat mini-app (its own flags and its
 * config); the driver (mapp_app_main) and the run's hooks (heat_app.c) do
 * the rest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "heat.h"

/* The command line's values; those not given take the preset's (the
 * options' preset_field). */
static struct {
  long rows, cols, block_rows, block_cols;
  int nsources;
  heat_source sources[HEAT_MAX_SOURCES];
  const char *sources_file;
  heat_run_options snapshots;
} args;

/* --source ROW,COL,RANGE,TEMPERATURE (repeatable; replaces the defaults). */
static int parse_source(const char *value, void *dest) {
  (void)dest;
  heat_source s;
  int used = 0;
  if (sscanf(value, "%lf,%lf,%lf,%lf%n", &s.row, &s.col, &s.range, &s.temperature, &used) != 4 ||
      value[used] != '\0' || s.row < 0 || s.row > 1 || s.col < 0 || s.col > 1 || !(s.range > 0) ||
      !isfinite(s.range) || !isfinite(s.temperature))
    return MAPP_ERR_INPUT;
  if (args.nsources == HEAT_MAX_SOURCES) return MAPP_ERR_INPUT;
  args.sources[args.nsources++] = s;
  return MAPP_OK;
}

static const mapp_option options[] = {
    {.name = "rows", .kind = MAPP_OPT_LONG, .dest = &args.rows, .min = 1, .max = 1L << 40,
     .default_text = "from --size", .help = "interior rows (per rank with --scaling weak)",
     .changes = MAPP_CHANGES_SIZE, .preset_field = MAPP_PRESET_LONG(heat_preset, rows)},
    {.name = "cols", .kind = MAPP_OPT_LONG, .dest = &args.cols, .min = 1, .max = 1L << 40,
     .default_text = "from --size", .help = "interior columns", .changes = MAPP_CHANGES_SIZE,
     .preset_field = MAPP_PRESET_LONG(heat_preset, cols)},
    /* Blocks change the order of work, not the answer. */
    {.name = "block-rows", .kind = MAPP_OPT_LONG, .dest = &args.block_rows, .min = 1, .max = 1L << 40,
     .default_text = "from --size", .help = "rows per block",
     .preset_field = MAPP_PRESET_LONG(heat_preset, block_rows)},
    {.name = "block-cols", .kind = MAPP_OPT_LONG, .dest = &args.block_cols, .min = 1, .max = 1L << 40,
     .default_text = "from --size", .help = "columns per block",
     .preset_field = MAPP_PRESET_LONG(heat_preset, block_cols)},
    {.name = "snapshot-every", .kind = MAPP_OPT_LONG, .dest = &args.snapshots.snapshot_every, .min = 1,
     .max = 1000000000L, .default_text = "none",
     .help = "save the matrix into the NAM region after every N timesteps (needs --nam)"},
    {.name = "nam", .kind = MAPP_OPT_STRING, .dest = &args.snapshots.nam, .default_text = "none",
     .help = "NAM region file the snapshots go to (created; read it with mapp-heat-animate)"},
    {.name = "gif", .kind = MAPP_OPT_STRING, .dest = &args.snapshots.gif, .default_text = "none",
     .help = "after the run, write the NAM region as a GIF animation to this file (needs --nam); "
             "the result record lists it under app_data.artifacts"},
    {.name = "source", .kind = MAPP_OPT_CALLBACK, .dest = &args, .parse = parse_source,
     .choices = "ROW,COL,RANGE,TEMP", .default_text = "0,0.5,0.6,100 and 0.75,0,0.4,60", .changes = MAPP_CHANGES_ANSWER,
     .help = "heat source: position (fractions 0..1), radius (fraction), temperature; repeatable"},
    {.name = "sources-file", .kind = MAPP_OPT_STRING, .dest = &args.sources_file, .default_text = "none",
     .changes = MAPP_CHANGES_ANSWER,
     .help = "heat sources in the original BSC Heat's file format (a count, then 'row col range "
             "temperature' per line); replaces the defaults"},
    MAPP_OPTION_END,
};

static int check_snapshot_args(const mapp_run *run) {
  const heat_run_options *s = &args.snapshots;
  /* The NAM region is an MPI RMA window (MPI_Win_allocate): under SimGrid
   * SMPI creating one took minutes across 128 or more ranks. */
  if (MAPP_SIMULATED && s->nam)
    return mapp_fail(MAPP_ERR_INPUT, "--nam cannot run simulated (its MPI RMA window, MPI_Win_allocate, takes "
                                     "minutes to create across 128 or more simulated ranks)");
  /* A region records one run's snapshots (its count published at the end). */
  if (s->nam && run->common.min_time > 0)
    return mapp_fail(MAPP_ERR_INPUT, "--min-time cannot repeat a run that snapshots into a NAM region (--nam)");
  if (s->snapshot_every && !s->nam) return mapp_fail(MAPP_ERR_INPUT, "--snapshot-every needs --nam PATH");
  if (s->nam && !s->snapshot_every) return mapp_fail(MAPP_ERR_INPUT, "--nam needs --snapshot-every N");
  if (s->gif && !s->nam)
    return mapp_fail(MAPP_ERR_INPUT, "--gif needs --nam PATH and --snapshot-every N (the animation is of the snapshots)");
  return MAPP_OK;
}

/* The preset with the command line's values. */
static int setup(mapp_run *run, void **state) {
  MAPP_TRY(check_snapshot_args(run));
  heat_config cfg;
  heat_config_from_preset(run->preset, &cfg);
  cfg.rows = args.rows;
  cfg.cols = args.cols;
  cfg.block_rows = args.block_rows;
  cfg.block_cols = args.block_cols;
  cfg.steps = run->common.steps;
  if (args.nsources && args.sources_file)
    return mapp_fail(MAPP_ERR_INPUT, "give heat sources with --source or --sources-file, not both");
  if (args.sources_file) MAPP_TRY(heat_read_sources_file(args.sources_file, args.sources, &args.nsources));
  if (args.nsources) {
    cfg.nsources = args.nsources;
    memcpy(cfg.sources, args.sources, sizeof args.sources);
  }
  cfg.rows = mapp_run_scaled(run, cfg.rows); /* rows per rank stay fixed under weak scaling */
  return heat_run_create(run, &cfg, &args.snapshots, state);
}

int main(int argc, char **argv) {
  mapp_app app = heat_app_hooks;
  app.summary = "Blocked Gauss-Seidel heat diffusion over MPI (the NAM heat seed): consecutive rows of\n"
                "blocks per rank, halos exchanged with the ranks above and below every timestep.\n"
                "The boundary follows the original BSC Heat. --size bsc is the original's default\n"
                "problem (8192 x 8192, blocks of 1024, sources 0,0,1,2.5 and 1,0.5,1,2.5; 10 steps:\n"
                "give --steps to match the original's -t). Every sweep is counted: no untimed warm-up.";
  app.options = options;
  app.presets = heat_presets;
  app.preset_steps = MAPP_PRESET_LONG(heat_preset, steps);
  app.setup = setup;
  return mapp_app_main(&app, argc, argv);
}
