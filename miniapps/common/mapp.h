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

#endif
