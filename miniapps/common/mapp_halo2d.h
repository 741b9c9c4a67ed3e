/* Halo exchange of a 2-D decomposition that fills the corners too, for
 * stencils that read diagonal neighbours, on a process grid chosen by the
 * caller (--layout), several fields per call. Builds on mapp_decomp2d. */
#ifndef MAPP_HALO2D_H
#define MAPP_HALO2D_H

#include <mpi.h>
#include <stdbool.h>

#include "mapp_decomp.h"

/* mapp_decomp2d_create with the process grid given: dims[0] ranks along the
 * rows, dims[1] along the columns (0: let MPI_Dims_create choose). Their
 * product must be the rank count (input error otherwise). */
int mapp_decomp2d_create_dims(MPI_Comm comm, long rows, long cols, int halo, const bool periodic[2],
                              const int dims[2], mapp_decomp2d *d);

typedef struct {
  const mapp_decomp2d *d;
  MPI_Datatype padded_rows; /* halo rows of the full padded width (corners included) */
} mapp_halo2d;

int mapp_halo2d_init(mapp_halo2d *h, const mapp_decomp2d *d);
/* Exchange the halos of nfields padded arrays, corners included: the
 * columns first (interior rows), then whole padded rows, so a corner comes
 * from the diagonal neighbour through the one beside. Each side of a
 * direction is one message holding every field's cells. Sides at a
 * non-periodic edge are left as they are. Collective. */
int mapp_halo2d_exchange(const mapp_halo2d *h, double *const *fields, int nfields);
void mapp_halo2d_free(mapp_halo2d *h);

#endif
