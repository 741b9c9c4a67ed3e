/* heat as a mapp app: its variant table, its size presets and the run's
 * hooks (mapp_app.h). main.c adds the command line and the config. */
#include <stdlib.h>
#include <string.h>

#include "heat.h"
#include "heat_animate.h"
#include "heat_nam.h"

const mapp_variant_info heat_variants[] = {
    {.name = "mpi", .backends = MAPP_BACKEND_BIT(SERIAL), .kind = HEAT_VARIANT_MPI,
     .description = "blocks in sequence, blocking halo exchange"},
    {.name = "forkjoin", .backends = MAPP_BACKEND_BIT(OMP), .kind = HEAT_VARIANT_FORKJOIN,
     .description = "anti-diagonals of blocks in parallel regions, halo exchange between them"},
    /* Its tasks start MPI operations on any thread. */
    {.name = "tasks", .backends = MAPP_BACKEND_BIT(OMP), .mpi_threads = MAPP_MPI_MULTIPLE,
     .kind = HEAT_VARIANT_TASKS,
     .description = "a task per block and per halo message, request-bound completion, snapshots as tasks"},
    {0},
};

heat_solver heat_variant_solver(const mapp_variant_info *row) {
  switch ((heat_variant)row->kind) {
  case HEAT_VARIANT_MPI: return heat_solve_mpi;
  case HEAT_VARIANT_FORKJOIN: return heat_solve_forkjoin;
  case HEAT_VARIANT_TASKS: return heat_solve_tasks;
  }
  return NULL; /* not reached: kind comes from heat_variants */
}

/* The original BSC Heat's default sources: (row, col, range, temperature). */
static const heat_source bsc_sources[] = {{0.0, 0.0, 1.0, 2.5}, {1.0, 0.5, 1.0, 2.5}};

/* tiny and small leave remainder blocks on purpose (100 = 6*16 + 4); bsc is
 * the original BSC Heat's default problem (its timesteps are its -t flag:
 * give --steps to match). */
static const heat_preset presets[] = {
    {"tiny", 100, 120, 16, 16, 20, NULL, 0},
    {"small", 256, 320, 32, 32, 50, NULL, 0},
    {"medium", 2048, 2048, 128, 128, 100, NULL, 0},
    {"large", 8192, 8192, 256, 256, 200, NULL, 0},
    {"bsc", 8192, 8192, 1024, 1024, 10, bsc_sources, 2},
};
const mapp_presets heat_presets = {presets, sizeof presets / sizeof presets[0], sizeof presets[0]};

/* Solve with the run's variant; with a NAM region, publish it (its
 * snapshot count written) only when the solve succeeded, then animate. */
static int heat_compute(mapp_run *run, void *state) {
  heat_run *h = state;
  heat_solver solve = heat_variant_solver(run->variant);
  heat_solve_context ctx = {.timers = &run->timers, .tasks = h->tasks};
  double start = mapp_now();
  int status = solve(&h->d, h->nam, &ctx);
  h->solve_s = mapp_now() - start;
  h->stats = ctx.stats;
  status = mapp_agree(h->d.comm, "mapp-heat", status);
  /* Rank mode hands even a failed run's end to the memory rank. */
  if (h->nam) {
    mapp_timer_start(&run->timers, MAPP_PHASE_IO);
    status = mapp_agree(h->d.comm, "mapp-heat", heat_nam_finish(h->nam, status));
    mapp_timer_stop(&run->timers, MAPP_PHASE_IO);
  }
  /* --gif: rank 0 animates the region the run published (the same code as
   * mapp-heat-animate), as I/O of the run. */
  if (status == MAPP_OK && h->gif) {
    mapp_timer_start(&run->timers, MAPP_PHASE_IO);
    heat_animate_options opt = {.gif = h->gif, .delay = HEAT_ANIMATE_DEFAULT_DELAY};
    status = h->d.rank == 0 ? heat_animate_region(h->nam_path, &opt) : MAPP_OK;
    mapp_timer_stop(&run->timers, MAPP_PHASE_IO);
  }
  return status;
}

/* --min-time: the grid back to its initial state (setup refuses a NAM
 * region, which records one run). */
static int heat_reset(mapp_run *run, void *state) {
  (void)run;
  heat_domain_init(&((heat_run *)state)->d);
  return MAPP_OK;
}

/* The answer: this rank's rows of the grid (the halo rows are copies). */
static int heat_digest(mapp_run *run, void *state, uint64_t *digest) {
  (void)run;
  const heat_domain *d = &((heat_run *)state)->d;
  mapp_digest_add(digest, d->grid + d->stride, sizeof(double) * (size_t)(d->local_rows * d->stride));
  return MAPP_OK;
}

static int heat_verify(mapp_run *run, void *state) {
  heat_run *h = state;
  mapp_check finite, bounded;
  MAPP_TRY(heat_check_answer(&h->d, &finite, &bounded));
  mapp_run_check(run, finite.name, finite.passed, finite.value, finite.bound);
  mapp_run_check(run, bounded.name, bounded.passed, bounded.value, bounded.bound);
  return MAPP_OK;
}

/* app_data of a tasks run: TAMPI's mode, who polled and how often. */
static int describe_tasks(mapp_run *run, const heat_run *h) {
  const heat_tasks_options *o = &h->tasks;
  bool blocking = o->mode == MAPP_TAMPI_BLOCKING;
  MAPP_TRY(mapp_run_set(run, "tampi", json_string(blocking ? "blocking" : "nonblocking")));
  MAPP_TRY(mapp_run_set(run, "poller", blocking ? json_string("none")
                                                : json_string(o->poller == MAPP_TAMPI_POLL_TASK ? "task" : "thread")));
  MAPP_TRY(mapp_run_set(run, "poll_us", json_real(o->poll_us)));
  MAPP_TRY(mapp_run_set(run, "request_tests", json_integer(h->stats.request_tests)));
  MAPP_TRY(mapp_run_set(run, "polling_task_runs", json_integer(h->stats.polling_task_runs)));
  MAPP_TRY(mapp_run_set(run, "submitter_runs", json_integer(h->stats.submitter_runs)));
  /* Threads in the team: the workers, blocking mode's spare threads (at
   * most `threads` of all run tasks at once) and the thread poller's
   * polling thread. */
  return mapp_run_set(run, "team_threads", json_integer(h->stats.team_threads));
}

static int heat_describe(mapp_run *run, void *state) {
  heat_run *h = state;
  const heat_domain *d = &h->d;
  /* The solve alone: a NAM run's compute also publishes and animates the
   * region, which --min-time never repeats; otherwise the driver's fastest of
   * the timed iterations. */
  double solve_max = run->compute_s;
  if (h->nam) MAPP_MPI(MPI_Allreduce(&h->solve_s, &solve_max, 1, MPI_DOUBLE, MPI_MAX, d->comm));
  long per_rank_rows = mapp_split_even(d->blocking.nbr, d->nranks, 0).count * d->cfg.block_rows;
  double cell_updates = (double)d->cfg.rows * (double)d->cfg.cols * (double)d->cfg.steps;
  mapp_run_dim(run, "rows", d->cfg.rows, per_rank_rows < d->cfg.rows ? per_rank_rows : d->cfg.rows);
  mapp_run_dim(run, "cols", d->cfg.cols, d->cfg.cols);
  run->rec.steps = d->cfg.steps;
  bool tasks = (heat_variant)run->variant->kind == HEAT_VARIANT_TASKS;
  /* The tasks variant's team is its workers, and with the thread poller
   * one polling thread more, busy whenever it polls. */
  run->rec.helper_threads = tasks && h->tasks.poller == MAPP_TAMPI_POLL_THREAD && h->tasks.mode == MAPP_TAMPI_NONBLOCKING;
  if (tasks) MAPP_TRY(describe_tasks(run, h));
  if (h->nam) {
    MAPP_TRY(mapp_run_set(run, "nam_mode", json_string(h->nam_options.mode == HEAT_NAM_RANK ? "rank" : "file")));
    MAPP_TRY(mapp_run_set(run, "nam_checksum", json_string(h->nam_options.checksum ? "crc32" : "none")));
  }
  run->rec.fom = solve_max > 0 ? cell_updates / solve_max : 0.0;
  run->rec.bytes_moved = 16.0 * cell_updates; /* read and write each cell once per sweep */
  /* app_data: the files the run made besides its answer, for `mapp report`. */
  if (h->gif && d->rank == 0)
    return mapp_run_set(run, "artifacts", json_pack("[{s:s, s:s}]", "kind", "animation", "path", h->gif));
  return MAPP_OK;
}

static int heat_write(mapp_run *run, void *state, const char *path) {
  return heat_write_output(&((heat_run *)state)->d, path, &run->rec);
}

static void heat_destroy(void *state) {
  heat_run *h = state;
  if (!h) return;
  heat_nam_free(h->nam);
  heat_domain_free(&h->d);
  free(h);
}

int heat_split_memory_rank(mapp_run *run, heat_run_options *opt) {
  opt->world = MPI_COMM_NULL;
  if (!opt->nam_rank) return MAPP_OK;
  if (run->mpi.nranks < 2)
    return mapp_fail(MAPP_ERR_INPUT, "--nam-mode rank needs the compute ranks and one more, the memory rank "
                                     "(mpirun -np N+1); this run has %d rank", run->mpi.nranks);
  opt->world = run->mpi.comm;
  bool memory = run->mpi.rank == run->mpi.nranks - 1;
  MPI_Comm part;
  MAPP_MPI(MPI_Comm_split(opt->world, memory, run->mpi.rank, &part));
  run->mpi.comm = part;
  MAPP_MPI(MPI_Comm_rank(part, &run->mpi.rank));
  MAPP_MPI(MPI_Comm_size(part, &run->mpi.nranks));
  run->service_rank = memory;
  return MAPP_OK;
}

static heat_nam_options nam_options(const heat_run_options *opt) {
  return (heat_nam_options){.every = opt->snapshot_every, .mode = opt->nam_rank ? HEAT_NAM_RANK : HEAT_NAM_FILE,
                            .checksum = opt->nam_checksum, .answer_s = opt->tasks.watchdog_s};
}

int heat_run_create(mapp_run *run, const heat_config *cfg, const heat_run_options *opt, void **state) {
  heat_run *h;
  int status = mapp_calloc((void **)&h, 1, sizeof *h, "the heat run");
  heat_nam_options nam = nam_options(opt);
  if (status == MAPP_OK) {
    *state = h;
    h->gif = opt->gif;
    h->nam_path = opt->nam;
    h->tasks = opt->tasks;
    h->nam_options = nam;
  }
  if (run->service_rank) return status == MAPP_OK ? heat_nam_serve(opt->nam, opt->world, &nam) : status;
  if (status == MAPP_OK) status = heat_domain_create(run->mpi.comm, cfg, &h->d);
  /* Every rank learns of a failed allocation before the collective below. */
  status = mapp_agree(run->mpi.comm, "mapp-heat", status);
  /* The memory rank waits for the region's layout whatever happened. */
  if (status != MAPP_OK && opt->nam_rank) heat_nam_cancel(run->mpi.comm, opt->world, status);
  MAPP_TRY(status);
  heat_domain_init(&h->d);
  /* Creating the region (allocating and pre-faulting it) is setup. */
  if (opt->nam) MAPP_TRY(heat_nam_create(opt->nam, &h->d, opt->world, &nam, &h->nam));
  return MAPP_OK;
}

/* The report's headline (mapp_headline): tasks overlap one rank's blocks
 * with its neighbours' halo messages (the wavefront across ranks), which
 * one rank does not have: from 2 ranks on. */
static const mapp_headline heat_headline = {
    .technique = "tasks over MPI-only",
    .variant = "tasks", .backend = "omp",
    .ref_variant = "mpi", .ref_backend = "serial",
    .min_ranks = 2,
};

const mapp_app heat_app_hooks = {
    .name = "heat",
    .variants = heat_variants,
    .bitwise_variants = true,
    .bitwise_ranks = true,
    .fom_name = "cell-updates/s",
    .headline = &heat_headline,
    .compute = heat_compute,
    .reset = heat_reset,
    .digest = heat_digest,
    .verify = heat_verify,
    .describe = heat_describe,
    .write = heat_write,
    .destroy = heat_destroy,
};
