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

/* Rank 0's receive layout: every rank's slab at its place in the field. */
typedef struct {
  int *counts, *displs;
  double *field;
} gather_plan;

static void plan_free(gather_plan *p) {
  free(p->counts);
  free(p->displs);
  free(p->field);
  *p = (gather_plan){0};
}

static int plan_gather(const mapp_h5_slab *s, const long *slabs, int nranks, gather_plan *p) {
  long row = row_elements(s), total = s->global_dims[0] * row;
  if (total > INT_MAX)
    return mapp_fail(MAPP_ERR_INPUT, "a field of %ld values is too large to gather on rank 0 (at most %d)", total,
                     INT_MAX);
  p->counts = malloc(sizeof(int) * (size_t)nranks);
  p->displs = malloc(sizeof(int) * (size_t)nranks);
  p->field = calloc((size_t)total + 1, sizeof(double));
  if (!p->counts || !p->displs || !p->field)
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory gathering a field of %ld values", total);
  for (int r = 0; r < nranks; ++r) {
    p->counts[r] = (int)(slabs[2 * r + 1] * row);
    p->displs[r] = (int)(slabs[2 * r] * row);
  }
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

int mapp_h5_io_write(const mapp_h5_target *t, const char *name, const mapp_h5_slab *slab, const double *data) {
  int rank, nranks;
  MPI_Comm_rank(t->comm, &rank);
  MPI_Comm_size(t->comm, &nranks);
  long mine[2] = {slab->first, slab->count}, *slabs = NULL;
  if (rank == 0 && !(slabs = malloc(sizeof(long) * 2 * (size_t)nranks)))
    return mapp_h5_agree(t->comm, mapp_fail(MAPP_ERR_SYSTEM, "out of memory gathering field '%s'", name));
  int status = mapp_h5_agree(t->comm, MAPP_OK);
  if (status != MAPP_OK) return status;
  if (MPI_Gather(mine, 2, MPI_LONG, slabs, 2, MPI_LONG, 0, t->comm) != MPI_SUCCESS)
    status = mapp_fail(MAPP_ERR_SYSTEM, "gathering the slabs of field '%s' on rank 0 failed", name);
  double *packed = NULL;
  gather_plan plan = {0};
  if (status == MAPP_OK) status = pack_slab(slab, data, &packed);
  if (status == MAPP_OK && rank == 0) status = plan_gather(slab, slabs, nranks, &plan);
  free(slabs);
  /* Agreed before the gather, which every rank must enter or none. */
  status = mapp_h5_agree(t->comm, status);
  if (status == MAPP_OK && MPI_Gatherv(packed, (int)(slab->count * row_elements(slab)), MPI_DOUBLE, plan.field,
                                       plan.counts, plan.displs, MPI_DOUBLE, 0, t->comm) != MPI_SUCCESS)
    status = mapp_fail(MAPP_ERR_SYSTEM, "gathering field '%s' on rank 0 failed", name);
  if (status == MAPP_OK && rank == 0) status = write_whole(t, name, slab, plan.field);
  free(packed);
  plan_free(&plan);
  return status;
}
