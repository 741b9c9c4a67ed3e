/* The MPI half of libmapp's error handling (mapp_error.h is the serial
 * half): MPI calls checked into statuses, and statuses agreed across ranks.
 * Part of the MPI library (mapp_common); the serial core has none of it. */
#ifndef MAPP_ERROR_MPI_H
#define MAPP_ERROR_MPI_H

#include <mpi.h>

#include "mapp_error.h"

/* Collective: every rank passes its status; all get the worst one back, and
 * the lowest failing rank's message is printed once on stderr as
 * "PROG: error: MESSAGE" (mapp_report_error: under MAPP_DEBUG=1 with that
 * rank's trace). Ranks that did not fail do not print. */
int mapp_agree(MPI_Comm comm, const char *prog, int status);

/* Collective, printing nothing: after allocations, a status every rank
 * agrees on, so that no rank waits in a collective another never joins. A
 * rank that failed keeps its own status; the others fail with the worst one
 * and "another rank could not allocate WHAT". */
int mapp_agree_alloc(MPI_Comm comm, int status, const char *what);

/* An MPI call's result as a status: on failure records "WHAT failed: the
 * MPI error string", with the caller's line as the trace's first frame. */
#define mapp_mpi_check(mpi_status, what) mapp_mpi_check_at(__FILE__, __LINE__, __func__, (mpi_status), (what))
int mapp_mpi_check_at(const char *file, int line, const char *func, int mpi_status, const char *what);
/* Wrap an MPI call and return its failure (the line is in the trace once:
 * mapp_mpi_check recorded it, so this is not MAPP_TRY). */
#define MAPP_MPI(call)                                                                             \
  do {                                                                                             \
    int mapp_mpi_status_ = mapp_mpi_check((call), #call);                                          \
    if (mapp_mpi_status_ != MAPP_OK) return mapp_mpi_status_;                                      \
  } while (0)

#endif
