/* The driver every mini-app shares: its variant table, its size presets and
 * the run from the command line to the exit code.
 *
 * An app describes itself once, in a mapp_app (its library holds the
 * variant table, so main.c, the benchmarks and the tests read the same one),
 * and its main is one call:
 *
 *   int main(int argc, char **argv) { return mapp_app_main(&heat_app_cli, argc, argv); }
 *
 * The driver then does, in order and identically for every app:
 *   parse the common flags and the app's own (every rank; rank 0 reports),
 *   --print-case (the case and size the options make, before MPI; exit),
 *   MPI_Init_thread at the level the chosen variant declares, --list,
 *   resolve variant x backend, the thread count (1 on every backend but omp),
 *   the size preset (options not given take its values; whether the run is
 *   the preset's case follows from the options' declarations), then the
 *   app's hooks:
 *     setup    (SETUP phase)   build the config and the state;
 *     compute  (COMPUTE wall, after a barrier, max over ranks: run->compute_s)
 *              with --min-time S, repeated as Google Benchmark's min_time:
 *              reset (untimed) puts the state back where setup left it and
 *              compute runs again until the timed iterations together last
 *              S; the first is a warm-up, left out when more than one ran;
 *              digest fingerprints every iteration's answer, which must be
 *              the one of the first bit for bit (else a failed verification);
 *              run->compute_s is then the fastest timed iteration (the
 *              figure of merit's time) and the phases that iteration's;
 *     verify   invariants into run->rec.checks;
 *     describe dims, figure of merit, app_data into run->rec;
 *     write    (IO phase)      the answer file, when --output is given;
 *     destroy  always;
 *   then the record (--result), the summary line, the verdict and the exit
 *   code: a failure's status (2 bad input, 3 system), else 1 when a
 *   verification failed, else 0. Every hook's status is agreed across ranks
 *   before the next one, so no rank enters a collective the others skip. */
#ifndef MAPP_APP_H
#define MAPP_APP_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapp_backend.h"
#include "mapp_cli.h"
#include "mapp_digest.h"
#include "mapp_disturb.h"
#include "mapp_record.h"
#include "mapp_timer.h"

/* MPI start-up shared by the apps: MPI_Init_thread at `required` (a lower
 * provided level is a system error naming both), rank and size. */
typedef struct {
  MPI_Comm comm;
  int rank, nranks;
  int thread_level;
} mapp_mpi;

int mapp_mpi_init(int *argc, char ***argv, int required, mapp_mpi *mpi);
/* This rank's place on its node: its rank among the ranks sharing the
 * node's memory (MPI_COMM_TYPE_SHARED; on a simulated cluster, its host)
 * and their count; either may be NULL. Collective over comm. */
int mapp_node_ranks(MPI_Comm comm, int *local_rank, int *local_size);
/* Sets the OpenMP thread count when threads > 0 and returns the count in use. */
int mapp_set_threads(long threads);

/* ------------------------------------------------------------ size presets */

/* The size names every app offers (an app may add its own after them, e.g.
 * heat's "bsc"); one list, used by --help and the harness's defaults. */
#define MAPP_SIZE_NAMES "tiny|small|medium|large"

/* An app's preset table: an array of its own structs, each starting with
 * `const char *name`. */
typedef struct {
  const void *table;
  size_t count, stride;
} mapp_presets;
#define MAPP_PRESETS(array) ((mapp_presets){(array), sizeof(array) / sizeof((array)[0]), sizeof((array)[0])})

/* The preset called `size`, or an input error listing the names there are. */
int mapp_preset_find(const char *app, mapp_presets presets, const char *size, const void **out);

/* ------------------------------------------------------------ the run */

typedef struct mapp_run {
  mapp_mpi mpi;
  mapp_common_args common;
  const struct mapp_app *app;
  const mapp_variant_info *variant; /* the table's row --variant chose */
  mapp_backend backend;
  int threads;           /* OpenMP threads in force (1 but on omp) */
  const void *preset;    /* the app's preset row --size chose */
  /* Derived by the driver before setup from the options' declarations
   * (mapp_option.changes): the problem differs from the preset, so no
   * baseline case applies (custom_case), and its dimensions too
   * (custom_size: the record's size says "custom"). Setup may add what no
   * option declares (a planted fault). */
  bool custom_case, custom_size;
  /* Set by setup on a rank that served the others for the whole run (heat's
   * memory rank): the driver skips the rest on it, and it makes no record
   * and prints nothing (the others report). setup moves the others to a
   * communicator without it (mpi). */
  bool service_rank;
  /* Set by setup when the answer holds only the first answer_ranks ranks'
   * share of a weak problem (crm --sampled-ranks: the other ranks' work is
   * charged on a simulated cluster, not computed): the case and the
   * answer are then those of the weak problem on that many ranks, and the
   * record says so (answer_ranks). 0: every rank's. */
  int answer_ranks;
  mapp_option *options;  /* the line's table: the common options, then the app's */
  mapp_cli_result cli;   /* which of them the line gave, and their defaults */
  mapp_timers timers;
  double compute_s;      /* the compute hook's wall time, max over ranks; with
                            --min-time the fastest timed iteration's */
  mapp_iterations iterations; /* every iteration's time (mapp_disturb.h) */
  mapp_disturbance disturbance; /* what disturbed the timed iterations */
  mapp_record rec;       /* the driver fills what every app shares */
  int checks_dropped;    /* mapp_run_check calls past the record's capacity */
  mapp_gpu_info gpu;     /* a CUDA run's device (rec.gpu points here) */
  int argc;
  char **argv;
  char case_buf[64];
} mapp_run;

typedef struct mapp_app {
  const char *name;    /* "heat": the executable is mapp-<name> */
  const char *summary; /* --help */
  const mapp_variant_info *variants; /* NULL-name terminated; the first is the speedup
                                        reference and, without default_variant, the default */
  const char *default_variant;       /* --variant's default when not the first (or NULL) */
  const mapp_option *options;        /* the app's own flags (MAPP_OPTION_END terminated);
                                        their destinations hold the defaults */
  mapp_presets presets;
  /* Where a preset holds its step count (MAPP_PRESET_LONG): --steps' default. */
  size_t preset_steps;
  /* --steps changes the problem's dimensions (the record's size becomes
   * "custom"), not only its answer. */
  bool steps_change_size;
  /* Every variant x CPU backend gives the same answer bit for bit (the
   * generic tests compare them); false where the operation order differs. */
  bool bitwise_variants;
  /* The answer of one global problem is the same bit for bit on any rank
   * count (strong scaling), so a sweep checks its n-rank answers against
   * its own 1-rank one. */
  bool bitwise_ranks;
  const char *fom_name; /* "cell-updates/s" */
  const mapp_headline *headline; /* NULL: the app declares none (no headline row) */
  int (*setup)(mapp_run *run, void **state);
  int (*compute)(mapp_run *run, void *state);
  /* Puts the state back where setup left it, so compute runs again from the
   * same initial state (--min-time); NULL: the app cannot repeat its timed
   * phase, and --min-time is refused. An app may refuse a configuration
   * whose side effects cannot be repeated (an input error naming it). */
  int (*reset)(mapp_run *run, void *state);
  /* Fingerprints this rank's answer after compute into *digest
   * (mapp_digest_add over every answer array, in a fixed order), so repeated
   * timed iterations are held to the same answer bit for bit. Needed with
   * reset. */
  int (*digest)(mapp_run *run, void *state, uint64_t *digest);
  int (*verify)(mapp_run *run, void *state);
  int (*describe)(mapp_run *run, void *state);
  int (*write)(mapp_run *run, void *state, const char *path);
  void (*destroy)(void *state);
} mapp_app;

int mapp_app_main(const mapp_app *app, int argc, char **argv);

/* For hooks: the problem's dimension `name` into the record. */
void mapp_run_dim(mapp_run *run, const char *name, long global, long per_rank);
/* For hooks: one verification into the record. More than the record holds
 * (MAPP_RECORD_MAX_CHECKS) fails the run after the hook, naming the count. */
void mapp_run_check(mapp_run *run, const char *name, bool passed, double value, double bound);

/* How mapp_run_reduce combines the ranks' values. */
typedef enum { MAPP_REDUCE_MAX, MAPP_REDUCE_MIN, MAPP_REDUCE_SUM } mapp_reduce_op;
/* For describe: this rank's value reduced over the ranks with op, stored in
 * the record's app_data under key ("a.b" nests b in object a) and returned
 * in *global (NULL: not wanted). Collective: every rank makes the same
 * calls in the same order. */
int mapp_run_reduce(mapp_run *run, const char *key, double local, mapp_reduce_op op, double *global);
/* The same for a count, stored as a JSON integer. */
int mapp_run_reduce_long(mapp_run *run, const char *key, long local, mapp_reduce_op op, long *global);
/* For describe: a value the same on every rank under key ("a.b" nests), the
 * reference stolen (NULL: out of memory, reported). */
int mapp_run_set(mapp_run *run, const char *key, json_t *value);
/* For setup: whether the line gave the option called name (common or the
 * app's), for a default derived from other values. */
bool mapp_run_given(const mapp_run *run, const char *name);
/* The rank count whose weak problem is solved: --weak-ranks, else the ranks
 * that run. */
int mapp_run_weak_ranks(const mapp_run *run);
/* The weak-scaled count: `per_rank` x mapp_run_weak_ranks under --scaling
 * weak, else itself. */
long mapp_run_scaled(const mapp_run *run, long per_rank);

#endif
