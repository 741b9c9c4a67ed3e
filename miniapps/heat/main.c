/* mapp-heat: the command line of the heat mini-app. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heat.h"

static const char *const prog = "mapp-heat";
static const char *const summary =
    "Blocked Gauss-Seidel heat diffusion over MPI (the NAM heat seed): consecutive rows of\n"
    "blocks per rank, halos exchanged with the ranks above and below every timestep.";

static const mapp_variant_info variants[] = {
    {"mpi", MAPP_BACKEND_BIT(MAPP_BACKEND_SERIAL), "blocks in sequence, blocking halo exchange"},
    {NULL, 0, NULL},
};

/* What the command line may override in the preset; 0 means "keep". */
typedef struct {
  mapp_common_args common;
  long rows, cols, block_rows, block_cols;
  int nsources;
  heat_source sources[HEAT_MAX_SOURCES];
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

static int parse_args(int argc, char **argv, heat_args *a, bool *done) {
  memset(a, 0, sizeof *a);
  mapp_common_defaults(&a->common, "mpi");
  const mapp_option opts[] = {
      MAPP_COMMON_OPTIONS(&a->common, "mpi"),
      {.name = "rows", .kind = MAPP_OPT_LONG, .dest = &a->rows, .min = 1, .max = 1L << 40,
       .default_text = "from --size", .help = "interior rows (per rank with --scaling weak)"},
      {.name = "cols", .kind = MAPP_OPT_LONG, .dest = &a->cols, .min = 1, .max = 1L << 40,
       .default_text = "from --size", .help = "interior columns"},
      {.name = "block-rows", .kind = MAPP_OPT_LONG, .dest = &a->block_rows, .min = 1, .max = 1L << 40,
       .default_text = "from --size", .help = "rows per block"},
      {.name = "block-cols", .kind = MAPP_OPT_LONG, .dest = &a->block_cols, .min = 1, .max = 1L << 40,
       .default_text = "from --size", .help = "columns per block"},
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

static int run(const mapp_mpi *mpi, const heat_args *a, int argc, char **argv, int *verdict) {
  mapp_timers timers;
  mapp_timers_init(&timers);
  double start = mapp_now();
  mapp_timer_start(&timers, MAPP_PHASE_SETUP);
  mapp_backend backend;
  heat_config cfg, preset;
  char case_buf[64];
  int status = mapp_select_backend("heat", variants, a->common.variant, a->common.backend, &backend);
  if (status == MAPP_OK) status = heat_config_preset(a->common.size, &preset);
  if (status == MAPP_OK) status = build_config(a, mpi->nranks, &cfg);
  heat_domain d = {0};
  if (status == MAPP_OK) status = heat_domain_create(mpi->comm, &cfg, &d);
  MAPP_TRY(mapp_agree(mpi->comm, prog, status));
  int threads = mapp_set_threads(a->common.threads);
  if (backend == MAPP_BACKEND_SERIAL) threads = 1;
  heat_domain_init(&d);
  mapp_timer_stop(&timers, MAPP_PHASE_SETUP);

  MPI_Barrier(mpi->comm);
  double solve_start = mapp_now();
  status = mapp_agree(mpi->comm, prog, heat_solve_mpi(&d, &timers));
  double solve_s = mapp_now() - solve_start, solve_max;
  MPI_Allreduce(&solve_s, &solve_max, 1, MPI_DOUBLE, MPI_MAX, mpi->comm);

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
    if (a->common.result) status = mapp_record_write(&rec, a->common.result);
    if (!a->common.quiet) mapp_record_summary(&rec, stdout);
  }
  *verdict = strcmp(mapp_record_verdict(&rec), "fail") == 0 ? MAPP_ERR_VERIFY : MAPP_OK;
  return mapp_agree(mpi->comm, prog, status);
}

int main(int argc, char **argv) {
  mapp_mpi mpi;
  int status = mapp_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, &mpi);
  heat_args args;
  bool help = false;
  if (status == MAPP_OK) status = parse_args(argc, argv, &args, &help);
  /* Every rank parsed the same line; only rank 0 speaks. */
  if (mpi.rank != 0) mapp_error_clear();
  status = mapp_agree(mpi.comm, prog, status);
  int verdict = MAPP_OK;
  if (status == MAPP_OK && !help) {
    if (args.common.list) {
      if (mpi.rank == 0) mapp_print_variants_json("heat", variants, stdout);
    } else {
      status = run(&mpi, &args, argc, argv, &verdict);
    }
  }
  MPI_Finalize();
  return status != MAPP_OK ? status : verdict;
}
