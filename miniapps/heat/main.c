/* mapp-heat: the command line of the heat mini-app. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heat.h"
#include "heat_animate.h"
#include "heat_nam.h"

static const char *const prog = "mapp-heat";
static const char *const summary =
    "Blocked Gauss-Seidel heat diffusion over MPI (the NAM heat seed): consecutive rows of\n"
    "blocks per rank, halos exchanged with the ranks above and below every timestep.";

static const mapp_variant_info variants[] = {
    {"mpi", MAPP_BACKEND_BIT(MAPP_BACKEND_SERIAL), "blocks in sequence, blocking halo exchange"},
    {"forkjoin", MAPP_BACKEND_BIT(MAPP_BACKEND_OMP),
     "anti-diagonals of blocks in parallel regions, halo exchange between them"},
    {"tasks", MAPP_BACKEND_BIT(MAPP_BACKEND_OMP),
     "a task per block and per halo message, request-bound completion, snapshots as tasks"},
    {NULL, 0, NULL},
};
#define VARIANT_CHOICES "mpi|forkjoin|tasks"
/* The solver of variants[k]. */
static const heat_solver solvers[] = {heat_solve_mpi, heat_solve_forkjoin, heat_solve_tasks};
_Static_assert(sizeof solvers / sizeof solvers[0] == sizeof variants / sizeof variants[0] - 1,
               "one solver per variant");

static heat_solver solver_of(const char *variant) {
  size_t k = 0;
  while (strcmp(variants[k].name, variant) != 0) ++k; /* mapp_select_backend checked the name */
  return solvers[k];
}

/* MPI is initialised before the command line is parsed (every rank parses,
 * rank 0 speaks), but its thread level depends on the variant: the tasks
 * variant starts MPI operations on any thread (MPI_THREAD_MULTIPLE); the
 * others call MPI from the main thread only, and ask no more, since a
 * higher level costs locks and narrows Open MPI's RMA components. */
static int required_thread_level(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--variant=tasks") || (!strcmp(argv[i], "--variant") && i + 1 < argc &&
                                                !strcmp(argv[i + 1], "tasks")))
      return MPI_THREAD_MULTIPLE;
  return MPI_THREAD_FUNNELED;
}

/* What the command line may override in the preset; 0 means "keep". */
typedef struct {
  mapp_common_args common;
  long rows, cols, block_rows, block_cols;
  int nsources;
  heat_source sources[HEAT_MAX_SOURCES];
  long snapshot_every; /* 0: no snapshots */
  const char *nam;     /* the NAM region file */
  const char *gif;     /* the animation made from it after the run */
} heat_args;

/* --source ROW,COL,RANGE,TEMPERATURE (repeatable; replaces the defaults). */
static int parse_source(const char *value, void *dest) {
  heat_args *a = dest;
  heat_source s;
  int used = 0;
  if (sscanf(value, "%lf,%lf,%lf,%lf%n", &s.row, &s.col, &s.range, &s.temperature, &used) != 4 ||
      value[used] != '\0' || s.row < 0 || s.row > 1 || s.col < 0 || s.col > 1 || !(s.range > 0))
    return MAPP_ERR_INPUT;
  if (a->nsources == HEAT_MAX_SOURCES) return MAPP_ERR_INPUT;
  a->sources[a->nsources++] = s;
  return MAPP_OK;
}

static int parse_args(int argc, char **argv, void *args, bool *done) {
  heat_args *a = args;
  memset(a, 0, sizeof *a);
  mapp_common_defaults(&a->common, "mpi");
  const mapp_option opts[] = {
      MAPP_COMMON_OPTIONS(&a->common, VARIANT_CHOICES),
      {.name = "rows", .kind = MAPP_OPT_LONG, .dest = &a->rows, .min = 1, .max = 1L << 40,
       .default_text = "from --size", .help = "interior rows (per rank with --scaling weak)"},
      {.name = "cols", .kind = MAPP_OPT_LONG, .dest = &a->cols, .min = 1, .max = 1L << 40,
       .default_text = "from --size", .help = "interior columns"},
      {.name = "block-rows", .kind = MAPP_OPT_LONG, .dest = &a->block_rows, .min = 1, .max = 1L << 40,
       .default_text = "from --size", .help = "rows per block"},
      {.name = "block-cols", .kind = MAPP_OPT_LONG, .dest = &a->block_cols, .min = 1, .max = 1L << 40,
       .default_text = "from --size", .help = "columns per block"},
      {.name = "snapshot-every", .kind = MAPP_OPT_LONG, .dest = &a->snapshot_every, .min = 1,
       .max = 1000000000L, .default_text = "none",
       .help = "save the matrix into the NAM region after every N timesteps (needs --nam)"},
      {.name = "nam", .kind = MAPP_OPT_STRING, .dest = &a->nam, .default_text = "none",
       .help = "NAM region file the snapshots go to (created; read it with mapp-heat-animate)"},
      {.name = "gif", .kind = MAPP_OPT_STRING, .dest = &a->gif, .default_text = "none",
       .help = "after the run, write the NAM region as a GIF animation to this file (needs --nam); "
               "the result record lists it under app_data.artifacts"},
      {.name = "source", .kind = MAPP_OPT_CALLBACK, .dest = a, .parse = parse_source,
       .choices = "ROW,COL,RANGE,TEMP", .default_text = "0,0.5,0.6,100 and 0.75,0,0.4,60",
       .help = "heat source: position (fractions 0..1), radius (fraction), temperature; repeatable"},
      MAPP_OPTION_END,
  };
  mapp_cli_result cli;
  int status = mapp_cli_parse(prog, summary, opts, false, argc, argv, &cli);
  *done = cli.help_shown;
  mapp_cli_free(&cli);
  return status;
}

/* The baseline case this run answers: the preset's name when nothing but
 * block sizes (which do not change the answer) was overridden. */
static const char *case_name(const heat_args *a, const heat_config *preset, int nranks, char *buf, size_t len) {
  bool custom = a->rows || a->cols || a->nsources || (a->common.steps && a->common.steps != preset->steps);
  if (custom) return NULL;
  if (!strcmp(a->common.scaling, "weak") && nranks > 1) {
    snprintf(buf, len, "%s-weak%d", a->common.size, nranks);
    return buf;
  }
  return a->common.size;
}

static int build_config(const heat_args *a, int nranks, heat_config *cfg) {
  MAPP_TRY(heat_config_preset(a->common.size, cfg));
  if (a->rows) cfg->rows = a->rows;
  if (a->cols) cfg->cols = a->cols;
  if (a->block_rows) cfg->block_rows = a->block_rows;
  if (a->block_cols) cfg->block_cols = a->block_cols;
  if (a->common.steps) cfg->steps = a->common.steps;
  if (a->nsources) {
    cfg->nsources = a->nsources;
    memcpy(cfg->sources, a->sources, sizeof a->sources);
  }
  if (!strcmp(a->common.scaling, "weak")) cfg->rows *= nranks; /* rows per rank stay fixed */
  return MAPP_OK;
}

static void fill_record(mapp_record *rec, const heat_args *a, const heat_domain *d, const char *case_id,
                        int threads, double solve_s) {
  long per_rank_rows = mapp_split_even(d->blocking.nbr, d->nranks, 0).count * d->cfg.block_rows;
  double cell_updates = (double)d->cfg.rows * (double)d->cfg.cols * (double)d->cfg.steps;
  *rec = (mapp_record){
      .app = "heat", .variant = a->common.variant, .backend = a->common.backend,
      .size = (a->rows || a->cols) ? "custom" : a->common.size, .scaling = a->common.scaling,
      .case_name = case_id, .ranks = d->nranks, .threads = threads, .gpus = 0, .steps = d->cfg.steps,
      .ndims = 2,
      .dims = {{"rows", d->cfg.rows, per_rank_rows < d->cfg.rows ? per_rank_rows : d->cfg.rows},
               {"cols", d->cfg.cols, d->cfg.cols}},
      .fom_name = "cell-updates/s", .fom = solve_s > 0 ? cell_updates / solve_s : 0.0,
      /* read and write each cell once per sweep: the streaming bound */
      .bytes_moved = 16.0 * cell_updates, .output = a->common.output};
}

static int check_snapshot_args(const heat_args *a) {
  if (a->snapshot_every && !a->nam) return mapp_fail(MAPP_ERR_INPUT, "--snapshot-every needs --nam PATH");
  if (a->nam && !a->snapshot_every) return mapp_fail(MAPP_ERR_INPUT, "--nam needs --snapshot-every N");
  if (a->gif && !a->nam)
    return mapp_fail(MAPP_ERR_INPUT, "--gif needs --nam PATH and --snapshot-every N (the animation is of the snapshots)");
  return MAPP_OK;
}

/* Solve with the variant; with --nam, into a region created here and
 * published (its snapshot count written) only when the solve succeeded. */
static int solve(const heat_args *a, heat_domain *d, mapp_timers *timers, double *solve_s) {
  heat_nam *nam = NULL;
  /* Creating the region (allocating and pre-faulting it) is setup. */
  mapp_timer_start(timers, MAPP_PHASE_SETUP);
  int created = a->nam ? heat_nam_create(a->nam, d, a->snapshot_every, &nam) : MAPP_OK;
  mapp_timer_stop(timers, MAPP_PHASE_SETUP);
  MAPP_TRY(mapp_agree(d->comm, prog, created));
  MPI_Barrier(d->comm);
  double solve_start = mapp_now();
  int status = solver_of(a->common.variant)(d, nam, timers);
  *solve_s = mapp_now() - solve_start;
  status = mapp_agree(d->comm, prog, status);
  if (status == MAPP_OK && nam) {
    mapp_timer_start(timers, MAPP_PHASE_IO);
    status = mapp_agree(d->comm, prog, heat_nam_finish(nam));
    mapp_timer_stop(timers, MAPP_PHASE_IO);
  }
  heat_nam_free(nam);
  return status;
}

/* --gif: rank 0 animates the region the run published (the same code as
 * mapp-heat-animate), as I/O of the run. */
static int write_animation(const heat_args *a, const heat_domain *d, mapp_timers *timers) {
  if (!a->gif) return MAPP_OK;
  mapp_timer_start(timers, MAPP_PHASE_IO);
  heat_animate_options opt = {.gif = a->gif, .delay = HEAT_ANIMATE_DEFAULT_DELAY};
  int status = d->rank == 0 ? heat_animate_region(a->nam, &opt) : MAPP_OK;
  mapp_timer_stop(timers, MAPP_PHASE_IO);
  return mapp_agree(d->comm, prog, status);
}

/* app_data of the record: the files the run made besides its answer, for
 * `mapp report` to show; *extra stays NULL when there are none. */
static int record_artifacts(const heat_args *a, json_t **extra) {
  *extra = NULL;
  if (!a->gif) return MAPP_OK;
  *extra = json_pack("{s:[{s:s, s:s}]}", "artifacts", "kind", "animation", "path", a->gif);
  return *extra ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory building the record's artifacts");
}

static int run(const mapp_mpi *mpi, const void *args, int argc, char **argv, int *verdict) {
  const heat_args *a = args;
  mapp_timers timers;
  mapp_timers_init(&timers);
  double start = mapp_now();
  mapp_timer_start(&timers, MAPP_PHASE_SETUP);
  mapp_backend backend;
  heat_config cfg, preset;
  char case_buf[64];
  int status = mapp_select_backend("heat", variants, a->common.variant, a->common.backend, &backend);
  if (status == MAPP_OK) status = check_snapshot_args(a);
  if (status == MAPP_OK) status = heat_config_preset(a->common.size, &preset);
  if (status == MAPP_OK) status = build_config(a, mpi->nranks, &cfg);
  heat_domain d = {0};
  if (status == MAPP_OK) status = heat_domain_create(mpi->comm, &cfg, &d);
  MAPP_TRY(mapp_agree(mpi->comm, prog, status));
  int threads = mapp_set_threads(a->common.threads);
  if (backend == MAPP_BACKEND_SERIAL) threads = 1;
  heat_domain_init(&d);
  mapp_timer_stop(&timers, MAPP_PHASE_SETUP);

  double solve_s = 0.0, solve_max;
  status = solve(a, &d, &timers, &solve_s);
  MPI_Allreduce(&solve_s, &solve_max, 1, MPI_DOUBLE, MPI_MAX, mpi->comm);
  if (status == MAPP_OK) status = write_animation(a, &d, &timers);

  mapp_record rec;
  fill_record(&rec, a, &d, case_name(a, &preset, mpi->nranks, case_buf, sizeof case_buf), threads, solve_max);
  rec.argc = argc;
  rec.argv = argv;
  if (status == MAPP_OK) {
    status = heat_check_answer(&d, &rec.checks[0], &rec.checks[1]);
    rec.nchecks = 2;
  }
  if (status == MAPP_OK && a->common.output) {
    mapp_timer_start(&timers, MAPP_PHASE_IO);
    status = mapp_agree(mpi->comm, prog, heat_write_output(&d, a->common.output, &rec));
    mapp_timer_stop(&timers, MAPP_PHASE_IO);
  }
  heat_domain_free(&d);
  MAPP_TRY(status);
  MAPP_TRY(mapp_timers_reduce(&timers, mpi->comm, rec.phases));
  double wall = mapp_now() - start;
  MPI_Allreduce(&wall, &rec.wall_s, 1, MPI_DOUBLE, MPI_MAX, mpi->comm);
  if (mpi->rank == 0) {
    status = record_artifacts(a, &rec.extra);
    if (status == MAPP_OK && a->common.result) status = mapp_record_write(&rec, a->common.result);
    if (status == MAPP_OK && !a->common.quiet) mapp_record_summary(&rec, stdout);
    json_decref(rec.extra);
  }
  *verdict = strcmp(mapp_record_verdict(&rec), "fail") == 0 ? MAPP_ERR_VERIFY : MAPP_OK;
  return mapp_agree(mpi->comm, prog, status);
}

int main(int argc, char **argv) {
  heat_args args;
  const mapp_app app = {.name = "heat", .prog = prog, .variants = variants, .args = &args,
                        .common_offset = offsetof(heat_args, common), .thread_level = required_thread_level, .parse = parse_args, .run = run};
  return mapp_app_main(&app, argc, argv);
}
