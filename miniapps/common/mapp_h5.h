/* Answer fields in parallel HDF5: one file whatever the rank count, each
 * rank writing its hyperslab of the first dimension, with provenance
 * attributes on the root group, so a baseline made on 1 rank checks a run
 * on 4. All functions are collective over the communicator the file was
 * opened with. The simulated build (SimGrid SMPI) writes the same file
 * through serial HDF5, rank 0 gathering the slabs (mapp_h5_io.h). */
#ifndef MAPP_H5_H
#define MAPP_H5_H

#include <hdf5.h>
#include <mpi.h>

#include "mapp_h5_attr.h"
#include "mapp_record.h"

#define MAPP_H5_MAX_RANK 4

/* Writing an answer is all or nothing, and never leaves the ranks apart:
 *  - mapp_h5_create writes to PATH.partial; mapp_h5_close renames it to PATH
 *    only when every rank wrote every piece, and otherwise removes it (and
 *    an earlier PATH the run was to replace), so after a failure no file
 *    reads as an answer;
 *  - every write on such a file (fields, attributes, provenance, close) ends
 *    with the ranks agreeing on its status: a step that failed on one rank
 *    (a full disk) returns the same failure on all, with the first failing
 *    rank's message, and later steps return it without touching the file,
 *    so callers' `if (status == MAPP_OK)` chains stay collective;
 *  - a PATH that is a device, pipe (exit 3) or folder (exit 2) is refused
 *    before anything is written;
 *  - mapp_h5_close must be called on every path (it is what releases the
 *    file), and it leaves no HDF5 handle open, also after a failure: HDF5
 *    1.10 crashes at MPI_Finalize on a file whose close failed. */
int mapp_h5_create(MPI_Comm comm, const char *path, hid_t *file);
int mapp_h5_open_read(MPI_Comm comm, const char *path, hid_t *file);
int mapp_h5_close(hid_t file);

/* A field of ndims dimensions (global_dims), of which this rank holds the
 * slab [first, first + count) of dimension 0. The rank's data is laid out
 * with a row stride of `stride` elements between consecutive indices of
 * dimension 0 (stride >= the product of the other dimensions), so a grid
 * with halo columns writes without a copy: pass the first interior element
 * and the padded width. */
typedef struct {
  int ndims;
  long global_dims[MAPP_H5_MAX_RANK];
  long first, count; /* this rank's slab of dimension 0 */
  long stride;       /* elements between consecutive dim-0 indices in memory */
} mapp_h5_slab;

int mapp_h5_write_field(hid_t file, const char *name, const mapp_h5_slab *slab, const double *data);
/* Reads the slab; a missing dataset or one of another shape is an input
 * error naming the file's shape and the expected one. */
int mapp_h5_read_field(hid_t file, const char *name, const mapp_h5_slab *slab, double *data);
/* Shape of a dataset (any rank), or an input error if it is missing. */
int mapp_h5_field_shape(hid_t file, const char *name, int *ndims, long dims[MAPP_H5_MAX_RANK]);

/* Attributes: mapp_h5_attr.h (on a file made by mapp_h5_create, collective
 * like every other write on it). */

/* Root attributes: app, variant, backend, size, case, ranks, threads, steps,
 * git_revision, compiler, flags, build_type, date, command. */
int mapp_h5_write_provenance(hid_t file, MPI_Comm comm, const mapp_record *rec);

#endif
