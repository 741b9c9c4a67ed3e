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

/* The cells one side sends and receives, for every field. */
typedef struct {
  double *send[2], *recv[2];
  int to[2], from[2];
} halo_sides;

static halo_sides sides_of(const mapp_decomp2d *d, double *field, int horizontal) {
  long s = mapp_decomp2d_stride(d), h = d->halo, nr = d->local[0], nc = d->local[1];
  double *interior = field + h * s + h;
  if (horizontal)
    return (halo_sides){.send = {interior, interior + (nc - h)}, .recv = {interior + nc, interior - h},
                        .to = {d->west, d->east}, .from = {d->east, d->west}};
  /* whole padded rows, halo columns included: the corners */
  return (halo_sides){.send = {field + h * s, field + nr * s}, .recv = {field + (h + nr) * s, field},
                      .to = {d->north, d->south}, .from = {d->south, d->north}};
}

/* One direction for every field: each side's cells of all fields packed
 * into one message (MPI_Pack with the side's datatype), so an exchange of
 * many fields, or of every level of a 3-D field, costs two messages a
 * direction instead of two a field: on a network the latency of each
 * message is paid once. The values move unchanged. */
static int exchange_direction(const mapp_decomp2d *d, double *const *fields, int nfields, int horizontal,
                              MPI_Datatype type, char *buffer, int side_bytes) {
  MPI_Request req[4];
  char *out[2] = {buffer, buffer + side_bytes}, *in[2] = {buffer + 2 * side_bytes, buffer + 3 * side_bytes};
  halo_sides sides = sides_of(d, fields[0], horizontal);
  for (int k = 0; k < 2; ++k) {
    int used = 0;
    for (int f = 0; f < nfields; ++f)
      MAPP_MPI(MPI_Pack(sides_of(d, fields[f], horizontal).send[k], 1, type, out[k], side_bytes, &used, d->cart));
    MAPP_MPI(MPI_Irecv(in[k], side_bytes, MPI_PACKED, sides.from[k], 100 + k, d->cart, &req[2 * k]));
    MAPP_MPI(MPI_Isend(out[k], used, MPI_PACKED, sides.to[k], 100 + k, d->cart, &req[2 * k + 1]));
  }
  MAPP_MPI(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
  for (int k = 0; k < 2; ++k) {
    if (sides.from[k] == MPI_PROC_NULL) continue; /* a non-periodic edge keeps its halo */
    int used = 0;
    for (int f = 0; f < nfields; ++f)
      MAPP_MPI(MPI_Unpack(in[k], side_bytes, &used, sides_of(d, fields[f], horizontal).recv[k], 1, type, d->cart));
  }
  return MAPP_OK;
}

/* Bytes one side of one direction packs for nfields fields. */
static int side_bytes(const mapp_decomp2d *d, MPI_Datatype type, int nfields, int *bytes) {
  int one;
  MAPP_MPI(MPI_Pack_size(1, type, d->cart, &one));
  if ((long)one * nfields > 1L << 30)
    return mapp_fail(MAPP_ERR_INPUT, "a halo message of %d fields of %d bytes each is over 1 GiB", nfields, one);
  *bytes = one * nfields;
  return MAPP_OK;
}

int mapp_halo2d_exchange(const mapp_halo2d *h, double *const *fields, int nfields) {
  if (nfields < 1) return MAPP_OK;
  int cols = 0, rows = 0; /* set by side_bytes, which returns an error otherwise */
  MAPP_TRY(side_bytes(h->d, h->d->col_halo, nfields, &cols));
  MAPP_TRY(side_bytes(h->d, h->padded_rows, nfields, &rows));
  int most = cols > rows ? cols : rows;
  char *buffer = NULL;
  MAPP_TRY(mapp_alloc((void **)&buffer, 4 * (size_t)most, "halo message buffers"));
  int status = exchange_direction(h->d, fields, nfields, 1, h->d->col_halo, buffer, cols);
  if (status == MAPP_OK) status = exchange_direction(h->d, fields, nfields, 0, h->padded_rows, buffer, rows);
  free(buffer);
  return status;
}

void mapp_halo2d_free(mapp_halo2d *h) {
  if (h->padded_rows) MPI_Type_free(&h->padded_rows);
  h->padded_rows = 0;
}
