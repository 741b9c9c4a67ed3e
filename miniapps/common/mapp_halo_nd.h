/* Halo exchange of an N-dimensional field cut into slabs along its slowest
 * axis (any rank count, 2-D or 3-D alike): each rank holds `halo` planes of
 * `plane` contiguous values on either side of its `owned` planes, so every
 * message is one contiguous block and needs no derived datatype. */
#ifndef MAPP_HALO_ND_H
#define MAPP_HALO_ND_H

#include <mpi.h>

/* Exchange with the neighbours below (lower) and above (upper) along the
 * slab axis, MPI_PROC_NULL at the ends (those halos are left as they are).
 * field points at the first halo plane: [halo | owned | halo] planes.
 * Input error when owned < halo (a neighbour's halo would need planes of a
 * rank further away). Collective over comm. */
int mapp_slab_halo_exchange(MPI_Comm comm, int lower, int upper, double *field, long plane, int halo, long owned);

/* The same with the four blocks given separately (count values each), for
 * fields that live elsewhere (a device) and are staged through buffers:
 * send_lo goes to lower and recv_hi comes from upper, and so on. */
int mapp_slab_halo_exchange_buffers(MPI_Comm comm, int lower, int upper, long count, const double *send_lo,
                                    const double *send_hi, double *recv_lo, double *recv_hi);

#endif
