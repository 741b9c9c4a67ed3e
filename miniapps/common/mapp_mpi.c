#include <omp.h>
#include <stdlib.h>

#include "mapp.h"

int mapp_mpi_init(int *argc, char ***argv, int required, mapp_mpi *mpi) {
  /* Open MPI picks its osc/pt2pt RMA component for singleton runs and where
   * shared memory has no single-copy mechanism, and pt2pt fails
   * MPI_Win_create under MPI_THREAD_MULTIPLE (the NAM window of heat's task
   * variant). Excluding it here, before MPI reads its parameters, spares
   * every user the environment variable; a value the user set wins. */
  setenv("OMPI_MCA_osc", "^pt2pt", 0);
  MAPP_MPI(MPI_Init_thread(argc, argv, required, &mpi->thread_level));
  mpi->comm = MPI_COMM_WORLD;
  /* Errors come back as codes we turn into messages, not aborts. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(mpi->comm, &mpi->rank);
  MPI_Comm_size(mpi->comm, &mpi->nranks);
  if (mpi->thread_level < required)
    return mapp_fail(MAPP_ERR_SYSTEM, "MPI provides thread level %d, this run needs %d",
                     mpi->thread_level, required);
  return MAPP_OK;
}

int mapp_node_ranks(MPI_Comm comm, int *local_rank, int *local_size) {
  MPI_Comm node;
  int rank, size;
  MAPP_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  if (local_rank) *local_rank = rank;
  if (local_size) *local_size = size;
  return MAPP_OK;
}

int mapp_set_threads(long threads) {
  if (threads > 0) omp_set_num_threads((int)threads);
  return omp_get_max_threads();
}
