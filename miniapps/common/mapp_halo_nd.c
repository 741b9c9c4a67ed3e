#include "mapp_halo_nd.h"

#include <limits.h>

#include "mapp_error_mpi.h"

int mapp_slab_halo_exchange_buffers(MPI_Comm comm, int lower, int upper, long count, const double *send_lo,
                                    const double *send_hi, double *recv_lo, double *recv_hi) {
  if (count < 0 || count > INT_MAX)
    return mapp_fail(MAPP_ERR_INPUT, "slab halo of %ld values does not fit one MPI message", count);
  /* Upward first, then downward; tags keep the two directions apart. */
  MAPP_MPI(MPI_Sendrecv(send_hi, (int)count, MPI_DOUBLE, upper, 71, recv_lo, (int)count, MPI_DOUBLE, lower, 71,
                        comm, MPI_STATUS_IGNORE));
  MAPP_MPI(MPI_Sendrecv(send_lo, (int)count, MPI_DOUBLE, lower, 72, recv_hi, (int)count, MPI_DOUBLE, upper, 72,
                        comm, MPI_STATUS_IGNORE));
  return MAPP_OK;
}

int mapp_slab_halo_exchange(MPI_Comm comm, int lower, int upper, double *field, long plane, int halo, long owned) {
  if (owned < halo)
    return mapp_fail(MAPP_ERR_INPUT, "slab of %ld planes is thinner than its halo of %d planes", owned, halo);
  long count = plane * halo;
  double *first_owned = field + count, *past_owned = field + count + plane * owned;
  return mapp_slab_halo_exchange_buffers(comm, lower, upper, count, first_owned, past_owned - count, field,
                                         past_owned);
}
