/* Answer files through serial HDF5 (mapp_h5_io.h), for the SimGrid build:
 * its MPI is SMPI's, which parallel HDF5 was not built against. Rank 0
 * gathers every rank's slab into the whole field and alone writes it;
 * readers open the file on every rank, read-only, each reading its slab.
 * Rank 0 holds one whole field at a time: the simulated problems are the
 * small ones (a field per rank of a 1,024-rank run fits easily). */
#include "mapp_h5_io.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "mapp_error_mpi.h"

hid_t mapp_h5_io_file_access(MPI_Comm comm) {
  (void)comm;
  return H5Pcreate(H5P_FILE_ACCESS);
}

hid_t mapp_h5_io_transfer(void) { return H5Pcreate(H5P_DATASET_XFER); }

bool mapp_h5_io_holds_file(MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  return rank == 0;
}

static long row_elements(const mapp_h5_slab *s) {
  long row = 1;
  for (int i = 1; i < s->ndims; ++i) row *= s->global_dims[i];
  return row;
}

/* The slab's rows without the stride's padding (MPI counts are ints). */
static int pack_slab(const mapp_h5_slab *s, const double *data, double **packed) {
  long row = row_elements(s);
  if (s->count * row > INT_MAX)
    return mapp_fail(MAPP_ERR_INPUT, "a slab of %ld x %ld values is too large to gather (at most %d)", s->count,
                     row, INT_MAX);
  *packed = malloc(sizeof(double) * (size_t)(s->count * row + 1));
  if (!*packed) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory packing a slab of %ld rows", s->count);
  for (long r = 0; r < s->count; ++r) memcpy(*packed + r * row, data + r * s->stride, sizeof(double) * (size_t)row);
  return MAPP_OK;
}

/* Rank 0's whole field, every rank's slab received at its place. */
typedef struct {
  double *field;
} gather_plan;

static void plan_free(gather_plan *p) {
  free(p->field);
  *p = (gather_plan){0};
}

static int plan_field(const mapp_h5_slab *s, gather_plan *p) {
  long row = row_elements(s), total = s->global_dims[0] * row;
  if (total > INT_MAX)
    return mapp_fail(MAPP_ERR_INPUT, "a field of %ld values is too large to gather on rank 0 (at most %d)", total,
                     INT_MAX);
  p->field = calloc((size_t)total + 1, sizeof(double));
  if (!p->field) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory gathering a field of %ld values", total);
  return MAPP_OK;
}

static int write_whole(const mapp_h5_target *t, const char *name, const mapp_h5_slab *s, const double *field) {
  hsize_t dims[MAPP_H5_MAX_RANK];
  for (int i = 0; i < s->ndims; ++i) dims[i] = (hsize_t)s->global_dims[i];
  hid_t space = H5Screate_simple(s->ndims, dims, NULL);
  hid_t dset = space < 0 ? -1 : H5Dcreate2(t->file, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t err = dset < 0 ? -1 : H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, field);
  if (dset >= 0 && H5Dclose(dset) < 0) err = -1;
  if (space >= 0) H5Sclose(space);
  if (err < 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "writing field '%s' to '%s' failed (disk full or I/O error)", name, t->label);
  return MAPP_OK;
}

/* Rank 0 receives every other rank's slab, rank by rank, into its place:
 * point-to-point in a fixed order instead of MPI_Gatherv, whose linear
 * algorithm in SMPI waits on all the ranks' receives at once, and SimGrid
 * pays for each completion a walk over every pending one (measured: a
 * 1,024-rank crm run spent 75 % of its 109 s there). The answer is the
 * same; the simulated time is that of a linear gather. */
static int receive_slabs(const mapp_h5_target *t, const mapp_h5_slab *slab, const double *packed, int nranks,
                         gather_plan *plan) {
  long row = row_elements(slab), total = slab->global_dims[0] * row;
  memcpy(plan->field + slab->first * row, packed, sizeof(double) * (size_t)(slab->count * row));
  for (int r = 1; r < nranks; ++r) {
    long header[2];
    MAPP_MPI(MPI_Recv(header, 2, MPI_LONG, r, 91, t->comm, MPI_STATUS_IGNORE));
    if (header[0] < 0 || header[1] < 0 || (header[0] + header[1]) * row > total)
      return mapp_fail(MAPP_ERR_SYSTEM, "rank %d sent rows %ld..%ld of a field of %ld rows", r, header[0],
                       header[0] + header[1], slab->global_dims[0]);
    MAPP_MPI(MPI_Recv(plan->field + header[0] * row, (int)(header[1] * row), MPI_DOUBLE, r, 92, t->comm,
                      MPI_STATUS_IGNORE));
  }
  return MAPP_OK;
}

static int send_slab(const mapp_h5_target *t, const mapp_h5_slab *slab, const double *packed) {
  long header[2] = {slab->first, slab->count};
  MAPP_MPI(MPI_Send(header, 2, MPI_LONG, 0, 91, t->comm));
  MAPP_MPI(MPI_Send(packed, (int)(slab->count * row_elements(slab)), MPI_DOUBLE, 0, 92, t->comm));
  return MAPP_OK;
}

int mapp_h5_io_write(const mapp_h5_target *t, const char *name, const mapp_h5_slab *slab, const double *data) {
  int rank, nranks;
  MPI_Comm_rank(t->comm, &rank);
  MPI_Comm_size(t->comm, &nranks);
  double *packed = NULL;
  gather_plan plan = {0};
  int status = pack_slab(slab, data, &packed);
  if (status == MAPP_OK && rank == 0) status = plan_field(slab, &plan);
  /* Agreed before the gather, which every rank must enter or none. */
  status = mapp_h5_agree(t->comm, status);
  if (status == MAPP_OK) status = rank == 0 ? receive_slabs(t, slab, packed, nranks, &plan) : send_slab(t, slab, packed);
  if (status == MAPP_OK && rank == 0) status = write_whole(t, name, slab, plan.field);
  free(packed);
  plan_free(&plan);
  return status;
}
