/* Corner-filling multi-field halo exchange (mapp_halo2d.h). */
#include "mapp_halo2d.h"

#include <stdlib.h>

#include "mapp_error_mpi.h"

int mapp_decomp2d_create_dims(MPI_Comm comm, long rows, long cols, int halo, const bool periodic[2],
                              const int dims[2], mapp_decomp2d *d) {
  int nranks;
  MAPP_MPI(MPI_Comm_size(comm, &nranks));
  int want[2] = {dims[0], dims[1]};
  if (want[0] < 0 || want[1] < 0 || (want[0] && want[1] && want[0] * want[1] != nranks) ||
      (want[0] && nranks % want[0]) || (want[1] && nranks % want[1]))
    return mapp_fail(MAPP_ERR_INPUT, "a process grid of %d x %d does not match %d ranks", want[0], want[1],
                     nranks);
  MAPP_MPI(MPI_Dims_create(nranks, 2, want));
  int periods[2] = {periodic[0], periodic[1]};
  *d = (mapp_decomp2d){.global = {rows, cols}, .halo = halo};
  if (halo < 1) return mapp_fail(MAPP_ERR_INPUT, "halo width %d must be >= 1", halo);
  d->dims[0] = want[0], d->dims[1] = want[1];
  if (rows < (long)d->dims[0] * halo || cols < (long)d->dims[1] * halo)
    return mapp_fail(MAPP_ERR_INPUT, "grid %ld x %ld is too small for %d x %d ranks with halo %d", rows, cols,
                     d->dims[0], d->dims[1], halo);
  MAPP_MPI(MPI_Cart_create(comm, 2, d->dims, periods, 0, &d->cart));
  int rank;
  MAPP_MPI(MPI_Comm_rank(d->cart, &rank));
  MAPP_MPI(MPI_Cart_coords(d->cart, rank, 2, d->coords));
  MAPP_MPI(MPI_Cart_shift(d->cart, 0, 1, &d->north, &d->south));
  MAPP_MPI(MPI_Cart_shift(d->cart, 1, 1, &d->west, &d->east));
  for (int k = 0; k < 2; ++k) {
    d->range[k] = mapp_split_even(d->global[k], d->dims[k], d->coords[k]);
    d->local[k] = d->range[k].count;
  }
  long stride = mapp_decomp2d_stride(d);
  MAPP_MPI(MPI_Type_vector(halo, (int)d->local[1], (int)stride, MPI_DOUBLE, &d->row_halo));
  MAPP_MPI(MPI_Type_vector((int)d->local[0], halo, (int)stride, MPI_DOUBLE, &d->col_halo));
  MAPP_MPI(MPI_Type_commit(&d->row_halo));
  MAPP_MPI(MPI_Type_commit(&d->col_halo));
  return MAPP_OK;
}

int mapp_halo2d_init(mapp_halo2d *h, const mapp_decomp2d *d) {
  *h = (mapp_halo2d){.d = d};
  long stride = mapp_decomp2d_stride(d);
  /* halo rows of the whole padded width are contiguous */
  MAPP_MPI(MPI_Type_contiguous((int)(d->halo * stride), MPI_DOUBLE, &h->padded_rows));
  MAPP_MPI(MPI_Type_commit(&h->padded_rows));
  return MAPP_OK;
}

/* One direction for every field: send the edge cells, receive the halo on
 * the opposite side. */
static int exchange_pairs(const mapp_decomp2d *d, double *const *fields, int nfields, int horizontal,
                          MPI_Datatype type, MPI_Request *req) {
  long s = mapp_decomp2d_stride(d), h = d->halo, nr = d->local[0], nc = d->local[1];
  int nreq = 0;
  for (int f = 0; f < nfields; ++f) {
    double *interior = fields[f] + h * s + h;
    double *send[2], *recv[2];
    int to[2], from[2];
    if (horizontal) {
      send[0] = interior, recv[0] = interior + nc, to[0] = d->west, from[0] = d->east;
      send[1] = interior + (nc - h), recv[1] = interior - h, to[1] = d->east, from[1] = d->west;
    } else { /* whole padded rows, halo columns included: the corners */
      send[0] = fields[f] + h * s, recv[0] = fields[f] + (h + nr) * s, to[0] = d->north, from[0] = d->south;
      send[1] = fields[f] + nr * s, recv[1] = fields[f], to[1] = d->south, from[1] = d->north;
    }
    for (int k = 0; k < 2; ++k) {
      MAPP_MPI(MPI_Irecv(recv[k], 1, type, from[k], 100 + 2 * f + k, d->cart, &req[nreq++]));
      MAPP_MPI(MPI_Isend(send[k], 1, type, to[k], 100 + 2 * f + k, d->cart, &req[nreq++]));
    }
  }
  MAPP_MPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
  return MAPP_OK;
}

int mapp_halo2d_exchange(const mapp_halo2d *h, double *const *fields, int nfields) {
  MPI_Request *req = NULL;
  MAPP_TRY(mapp_alloc((void **)&req, sizeof *req * 4 * (size_t)(nfields ? nfields : 1), "halo requests"));
  int status = exchange_pairs(h->d, fields, nfields, 1, h->d->col_halo, req);
  if (status == MAPP_OK) status = exchange_pairs(h->d, fields, nfields, 0, h->padded_rows, req);
  free(req);
  return status;
}

void mapp_halo2d_free(mapp_halo2d *h) {
  if (h->padded_rows) MPI_Type_free(&h->padded_rows);
  h->padded_rows = 0;
}
