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
  const char *poller, *tampi, *nam_mode, *nam_checksum;
} args = {.poller = "task", .tampi = "nonblocking", .nam_mode = "file", .nam_checksum = "crc32",
          .snapshots.tasks = HEAT_TASKS_DEFAULTS};

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
    {.name = "nam-mode", .kind = MAPP_OPT_CHOICE, .dest = &args.nam_mode, .choices = "file|rank",
     .help = "where the NAM region lives: a file each rank maps its part of, or one more MPI rank (the last: "
             "mpirun -np N+1) that holds it as window memory and writes it to --nam at the end (with --gif G "
             "and no --nam, beside G: G's name with .nam)"},
    {.name = "nam-checksum", .kind = MAPP_OPT_CHOICE, .dest = &args.nam_checksum, .choices = "crc32|none",
     .default_text = "crc32 (file), none (rank)",
     .help = "whether each put computes its block's CRC-32 on the compute rank; with none the file mode "
             "checksums the region when publishing, the memory rank what it received (with crc32 it also "
             "checks the two agree)"},
    {.name = "gif", .kind = MAPP_OPT_STRING, .dest = &args.snapshots.gif, .default_text = "none",
     .help = "after the run, write the NAM region as a GIF animation to this file (needs --nam); "
             "the result record lists it under app_data.artifacts"},
    /* The tasks variant's runtime, TAMPI's choices: how, not what, it computes. */
    {.name = "poller", .kind = MAPP_OPT_CHOICE, .dest = &args.poller, .choices = "task|thread",
     .help = "tasks: who tests the MPI requests: a polling task the OpenMP runtime runs on its workers "
             "(TAMPI's polling instance), or the thread that creates the tasks (one more busy thread)"},
    {.name = "tampi", .kind = MAPP_OPT_CHOICE, .dest = &args.tampi, .choices = "nonblocking|blocking",
     .help = "tasks: TAMPI's mode: nonblocking binds a task's completion to its request (TAMPI_Iwait, the "
             "seed's); blocking waits for the request inside the task (test and taskyield)"},
    {.name = "poll-us", .kind = MAPP_OPT_DOUBLE, .dest = &args.snapshots.tasks.poll_us, .dmin = 1.0, .dmax = 1e6,
     .help = "tasks: the polling task's period in microseconds while its worker has other tasks to run "
             "(TAMPI_POLLING_PERIOD's default); an idle worker tests at every run"},
    {.name = "watchdog-s", .kind = MAPP_OPT_DOUBLE, .dest = &args.snapshots.tasks.watchdog_s, .dmin = 0.0,
     .dmax = 1e6, .help = "a tasks graph that makes no progress this long, or a memory rank (--nam-mode rank) "
                          "that does not answer this long after the run, ends the run with one line, exit 3 "
                          "(0: wait for ever)"},
    {.name = "source", .kind = MAPP_OPT_CALLBACK, .dest = &args, .parse = parse_source,
     .choices = "ROW,COL,RANGE,TEMP", .default_text = "0,0.5,0.6,100 and 0.75,0,0.4,60", .changes = MAPP_CHANGES_ANSWER,
     .help = "heat source: position (fractions 0..1), radius (fraction), temperature; repeatable"},
    {.name = "sources-file", .kind = MAPP_OPT_STRING, .dest = &args.sources_file, .default_text = "none",
     .changes = MAPP_CHANGES_ANSWER,
     .help = "heat sources in the original BSC Heat's file format (a count, then 'row col range "
             "temperature' per line); replaces the defaults"},
    MAPP_OPTION_END,
};

/* --nam-mode rank --gif G without --nam: the region is the memory rank's,
 * and the file it writes at the end goes beside the animation made from
 * it (G with .nam for its extension). */
static int region_beside_gif(void) {
  static char path[4096];
  const char *gif = args.snapshots.gif, *dot = strrchr(gif, '.'), *slash = strrchr(gif, '/');
  size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - gif) : strlen(gif);
  if (stem + sizeof ".nam" > sizeof path) return mapp_fail(MAPP_ERR_INPUT, "--gif: the path is too long");
  snprintf(path, sizeof path, "%.*s.nam", (int)stem, gif);
  args.snapshots.nam = path;
  return MAPP_OK;
}

/* The most ranks a simulated run with --nam takes: 64 compute ranks and a
 * memory rank. */
enum { HEAT_SIMULATED_NAM_RANKS = 65 };

static int check_snapshot_args(const mapp_run *run) {
  if (!args.snapshots.nam && args.snapshots.gif && strcmp(args.nam_mode, "rank") == 0) MAPP_TRY(region_beside_gif());
  const heat_run_options *s = &args.snapshots;
  /* The NAM region is an MPI RMA window: under SimGrid SMPI creating one took
   * minutes across 128 or more ranks, and every rank's region is memory of
   * the one simulating process. */
  if (MAPP_SIMULATED && s->nam && run->mpi.nranks > HEAT_SIMULATED_NAM_RANKS)
    return mapp_fail(MAPP_ERR_INPUT,
                     "--nam runs simulated on at most %d ranks, got %d (SMPI takes minutes to create its RMA "
                     "window across 128 or more)", HEAT_SIMULATED_NAM_RANKS, run->mpi.nranks);
  /* A region records one run's snapshots (its count published at the end). */
  if (s->nam && run->common.min_time > 0)
    return mapp_fail(MAPP_ERR_INPUT, "--min-time cannot repeat a run that snapshots into a NAM region (--nam)");
  if (s->snapshot_every && !s->nam) return mapp_fail(MAPP_ERR_INPUT, "--snapshot-every needs --nam PATH");
  if (s->nam && !s->snapshot_every) return mapp_fail(MAPP_ERR_INPUT, "--nam needs --snapshot-every N");
  if (s->gif && !s->nam)
    return mapp_fail(MAPP_ERR_INPUT, "--gif needs --nam PATH and --snapshot-every N (the animation is of the snapshots)");
  if (!s->nam && (mapp_run_given(run, "nam-mode") || mapp_run_given(run, "nam-checksum")))
    return mapp_fail(MAPP_ERR_INPUT, "--%s needs --nam PATH and --snapshot-every N",
                     mapp_run_given(run, "nam-mode") ? "nam-mode" : "nam-checksum");
  args.snapshots.nam_rank = strcmp(args.nam_mode, "rank") == 0;
  args.snapshots.nam_checksum = mapp_run_given(run, "nam-checksum") ? strcmp(args.nam_checksum, "crc32") == 0
                                                                     : !args.snapshots.nam_rank;
  return MAPP_OK;
}

/* The tasks variant's options, refused elsewhere rather than ignored. */
static int check_tasks_args(const mapp_run *run) {
  static const char *const names[] = {"poller", "tampi", "poll-us"};
  bool tasks = strcmp(run->variant->name, "tasks") == 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !tasks; ++i)
    if (mapp_run_given(run, names[i]))
      return mapp_fail(MAPP_ERR_INPUT, "--%s applies to the tasks variant only, not '%s'", names[i],
                       run->variant->name);
  heat_tasks_options *o = &args.snapshots.tasks;
  o->poller = strcmp(args.poller, "thread") == 0 ? MAPP_TAMPI_POLL_THREAD : MAPP_TAMPI_POLL_TASK;
  o->mode = strcmp(args.tampi, "blocking") == 0 ? MAPP_TAMPI_BLOCKING : MAPP_TAMPI_NONBLOCKING;
  if (o->mode == MAPP_TAMPI_BLOCKING && mapp_run_given(run, "poller"))
    return mapp_fail(MAPP_ERR_INPUT, "--poller: blocking mode (--tampi blocking) has no poller: each task tests "
                                     "its own request");
  return MAPP_OK;
}

/* The preset with the command line's values. */
static int setup(mapp_run *run, void **state) {
  MAPP_TRY(check_snapshot_args(run));
  MAPP_TRY(check_tasks_args(run));
  MAPP_TRY(heat_split_memory_rank(run, &args.snapshots));
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
