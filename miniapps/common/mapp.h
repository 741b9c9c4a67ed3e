/* libmapp: what every mini-app shares. */
#ifndef MAPP_H
#define MAPP_H

#include "mapp_backend.h"
#include "mapp_cli.h"
#include "mapp_decomp.h"
#include "mapp_error.h"
#include "mapp_h5.h"
#include "mapp_pool.h"
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
/* Sets the OpenMP thread count when threads > 0 and returns the count in use. */
int mapp_set_threads(long threads);

/* What a mini-app's main hands to mapp_app_main. */
typedef struct {
  const char *name, *prog;           /* "heat", "mapp-heat" */
  const mapp_variant_info *variants; /* for --list */
  void *args;                        /* the app's argument struct ... */
  size_t common_offset;              /* ... and where its mapp_common_args sits */
  int (*thread_level)(int argc, char **argv); /* MPI thread level the line needs; NULL: FUNNELED */
  int (*parse)(int argc, char **argv, void *args, bool *help_shown);
  int (*run)(const mapp_mpi *mpi, const void *args, int argc, char **argv, int *verdict);
} mapp_app;

/* The main every mini-app shares: MPI start-up, the app's parsing on every
 * rank (rank 0 reports a bad line), --list, the run, MPI_Finalize, and the
 * contract's exit code: the failure's status (2 bad input, 3 system), else
 * the verdict (1 when a verification failed), else 0. */
int mapp_app_main(const mapp_app *app, int argc, char **argv);

#endif
