/* heat: blocked Gauss-Seidel over MPI (the NAM heat seed). This header is
 * the app's API; main.c is only the command line. */
#ifndef HEAT_H
#define HEAT_H

#include "mapp.h"
#include "mapp_tampi.h"

#define HEAT_MAX_SOURCES 16

/* A heat source on the boundary, in the unit square the grid is mapped to:
 * rows and columns are each scaled to [0, 1] on their own (not by the
 * larger side), so range is a distance in those scaled coordinates. The
 * rule that turns sources into boundary values is heat_boundary_value's
 * (heat_domain.c), the original BSC Heat's. */
typedef struct {
  double row, col;      /* position: 0 top/left edge, 1 bottom/right edge */
  double range;         /* radius of influence (scaled coordinates, > 0) */
  double temperature;   /* added at the source, falling linearly to 0 at range */
} heat_source;

typedef struct {
  long rows, cols;             /* interior cells of the whole grid */
  long block_rows, block_cols; /* block size */
  long steps;                  /* timesteps */
  int nsources;
  heat_source sources[HEAT_MAX_SOURCES];
} heat_config;

/* One rank's part: consecutive rows of blocks, stored with a ring of one
 * cell: row 0 is the boundary (rank 0) or the halo from the rank above,
 * row local_rows + 1 the boundary (last rank) or the halo from below;
 * columns 0 and cols + 1 are the fixed left/right boundary. */
typedef struct {
  heat_config cfg;
  mapp_blocking blocking;
  mapp_row_share share;
  MPI_Comm comm;
  int rank, nranks, above, below;
  long local_rows; /* interior rows of this rank */
  long stride;     /* cols + 2 */
  double *grid;    /* (local_rows + 2) x stride */
} heat_domain;

/* A size preset (the first member is its name, for mapp_preset_find). */
typedef struct {
  const char *name;
  long rows, cols, block_rows, block_cols, steps;
  const heat_source *sources; /* NULL: the default two */
  int nsources;
} heat_preset;
extern const mapp_presets heat_presets;
/* The preset's grid and blocks with the default sources. */
void heat_config_from_preset(const heat_preset *p, heat_config *cfg);
int heat_config_preset(const char *size, heat_config *cfg);
/* Sources from a file in the original's format: a count line, then
 * "row col range temperature" per source. A bad file is an input error
 * naming the line and what is wrong. */
int heat_read_sources_file(const char *path, heat_source sources[HEAT_MAX_SOURCES], int *count);
int heat_domain_create(MPI_Comm comm, const heat_config *cfg, heat_domain *d);
void heat_domain_free(heat_domain *d);
/* Interior to zero, boundary cells from the sources (same for any split). */
void heat_domain_init(heat_domain *d);
/* Value of global boundary cell (gr, gc) of the (rows+2) x (cols+2) grid:
 * the sum over sources of temperature * (range - d) / range where the
 * distance d <= range, with the original BSC Heat's coordinates: the top
 * and bottom rows lie at y = 0 and y = 1 with cell c at x = c / (cols + 2);
 * the left and right columns at x = 0 and x = 1 with cell r at
 * y = r / (rows + 2). */
double heat_boundary_value(const heat_config *cfg, long gr, long gc);

/* Snapshots into a persistent NAM region (heat_nam.h); NULL: none. */
typedef struct heat_nam heat_nam;

/* Where the region lives:
 *   HEAT_NAM_FILE: a file every rank maps its subregion of and exposes as
 *     its own part of the window (MPI_Win_create); a put targets the
 *     putting rank itself.
 *   HEAT_NAM_RANK: memory across the network, as the seed's NAM is: one
 *     more MPI rank (the last) owns the whole region as window memory
 *     (MPI_Win_allocate); the compute ranks put their blocks into it and
 *     never touch it otherwise; at the end the memory rank checksums what
 *     it received and writes the region to the file, so mapp-heat-animate
 *     reads it as before. */
typedef enum { HEAT_NAM_FILE, HEAT_NAM_RANK } heat_nam_mode;

typedef struct {
  long every;       /* a snapshot every `every` timesteps */
  heat_nam_mode mode;
  bool checksum;    /* each put computes its block's CRC-32 (otherwise the
                       file mode computes them when publishing, the memory
                       rank from what it received) */
  double answer_s;  /* rank mode: compute rank 0 waits this long for the
                       memory rank's answer, then one line and exit 3 */
} heat_nam_options;


/* How the tasks variant runs its MPI, TAMPI's choices (mapp_tampi.h): who
 * tests the requests (a polling task on the workers, or a polling thread), TAMPI's non-blocking or blocking mode, the polling period, and
 * the watchdog that turns a stalled graph into one line. */
typedef struct {
  mapp_tampi_poller poller;
  mapp_tampi_mode mode;
  double poll_us;    /* TAMPI_POLLING_PERIOD's default: 100 us */
  double watchdog_s; /* 0: none */
} heat_tasks_options;
#define HEAT_TASKS_DEFAULTS \
  ((heat_tasks_options){.poller = MAPP_TAMPI_POLL_TASK, .mode = MAPP_TAMPI_NONBLOCKING, .poll_us = 100.0, \
                        .watchdog_s = 60.0})

/* What the tasks variant's runtime did in a solve. */
typedef struct {
  long request_tests, polling_task_runs, submitter_runs;
  int team_threads; /* its OpenMP team: workers, blocking mode's spare threads, polling thread */
} heat_tasks_stats;

/* A solve's context: the phase timers, the tasks variant's options, and
 * its runtime's statistics (out). */
typedef struct {
  mapp_timers *timers;
  heat_tasks_options tasks;
  heat_tasks_stats stats;
} heat_solve_context;

/* The variants: run cfg.steps timesteps, saving a snapshot into nam (when
 * not NULL) after every timestep it asks for; communication time goes to
 * the COMM phase, snapshot time to the IO phase where they can be told
 * apart (in `tasks` they overlap the computation and all is COMPUTE).
 *   mpi:      blocks in sequence, blocking halo exchange (heat_mpi.c);
 *   forkjoin: anti-diagonals of blocks in parallel regions (heat_forkjoin.c);
 *   tasks:    one task per block and per halo message, request-bound
 *             completion, snapshots as tasks (heat_tasks.c). */
typedef int (*heat_solver)(heat_domain *d, heat_nam *nam, heat_solve_context *ctx);
int heat_solve_mpi(heat_domain *d, heat_nam *nam, heat_solve_context *ctx);
int heat_solve_forkjoin(heat_domain *d, heat_nam *nam, heat_solve_context *ctx);
int heat_solve_tasks(heat_domain *d, heat_nam *nam, heat_solve_context *ctx);

/* The timestep loop of the blocking variants (heat_mpi.c): the pipeline
 * halo exchange (before timestep t, send the first row of t-1 up, receive
 * the row above of t and the row below of t-1; after it, send the last row
 * of t down), `sweep` for the rank's blocks, and the snapshot when due. */
int heat_solve_pipeline(heat_domain *d, heat_nam *nam, mapp_timers *timers, void (*sweep)(heat_domain *));

/* Block (i, j) of the rank, i counted from the rank's first block row:
 * its rows and columns in the rank's grid (ring included, so interior cells
 * start at 1). The one place a block's cells are worked out. */
void heat_block_cells(const heat_domain *d, long i, long j, mapp_range *rows, mapp_range *cols);
/* The shared kernel on block (i, j). */
void heat_update_block(heat_domain *d, long i, long j);
/* Every block of the rank for one timestep, in block order. */
void heat_update_blocks(heat_domain *d);

/* Invariants of the answer: every value finite and within the range of the
 * boundary values (the discrete maximum principle of the averaging). */
int heat_check_answer(const heat_domain *d, mapp_check *finite, mapp_check *bounded);

/* The whole (rows+2) x (cols+2) matrix, boundary included, as dataset
 * "temperature"; collective. */
int heat_write_output(const heat_domain *d, const char *path, const mapp_record *rec);

/* ------------------------------------------------ heat as a mapp app (heat_app.c) */

/* The variants (mpi, forkjoin, tasks): a row's kind is its heat_variant. */
typedef enum { HEAT_VARIANT_MPI, HEAT_VARIANT_FORKJOIN, HEAT_VARIANT_TASKS } heat_variant;
extern const mapp_variant_info heat_variants[];
/* The solver of a variant table row. */
heat_solver heat_variant_solver(const mapp_variant_info *row);

typedef struct {
  long snapshot_every; /* 0: no snapshots */
  const char *nam;     /* the NAM region file, or NULL */
  const char *gif;     /* the animation made from it after the run, or NULL */
  bool nam_rank;       /* --nam-mode rank: the last rank is the memory node */
  bool nam_checksum;   /* --nam-checksum crc32: each put checksums its block */
  MPI_Comm world;      /* nam_rank: the compute ranks and the memory rank */
  heat_tasks_options tasks;
} heat_run_options;

/* One run's state behind the driver's hooks. */
typedef struct {
  heat_domain d;
  heat_nam *nam;
  const char *nam_path, *gif;
  heat_tasks_options tasks;
  heat_nam_options nam_options;
  heat_tasks_stats stats; /* the tasks variant's, of the last solve */
  double solve_s; /* this rank's solver time: the figure of merit's */
} heat_run;

/* --nam-mode rank, before anything else of setup: the world's last rank
 * becomes the memory node (run->service_rank), the others the compute
 * ranks, whose communicator the run uses from here on (run->mpi); the world
 * goes to opt->world. Collective over the world. */
int heat_split_memory_rank(mapp_run *run, heat_run_options *opt);

/* The setup hook's work once main.c has the config: the domain, its
 * initial state and the NAM region (collective). On the memory rank of
 * --nam-mode rank, its whole service of the run. */
int heat_run_create(mapp_run *run, const heat_config *cfg, const heat_run_options *opt, void **state);
/* name, variants, the run's hooks but setup: main.c copies them. */
extern const mapp_app heat_app_hooks;

#endif
