#include "mapp_error_mpi.h"

#include <limits.h>

int mapp_agree(MPI_Comm comm, const char *prog, int status) {
  int rank, worst = status, first_failing;
  MPI_Comm_rank(comm, &rank);
  int candidate = status != MAPP_OK ? rank : INT_MAX;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, comm);
  MPI_Allreduce(&candidate, &first_failing, 1, MPI_INT, MPI_MIN, comm);
  if (status != MAPP_OK && rank == first_failing) mapp_report_error(prog, status);
  return worst;
}

int mapp_agree_alloc(MPI_Comm comm, int status, const char *what) {
  int worst;
  MAPP_MPI(MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, comm));
  if (!worst) return MAPP_OK;
  return status ? status : mapp_fail(worst, "another rank could not allocate %s", what);
}

int mapp_mpi_check_at(const char *file, int line, const char *func, int mpi_status, const char *what) {
  if (mpi_status == MPI_SUCCESS) return MAPP_OK;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(mpi_status, text, &len);
  return mapp_fail_at(file, line, func, MAPP_ERR_SYSTEM, "%s failed: %s", what, text);
}
