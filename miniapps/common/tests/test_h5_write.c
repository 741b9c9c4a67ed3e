/* The answer writer's failure path, as heat and crm use it: create, write a
 * field split over the ranks, the provenance and an attribute, close. Run it
 * against a full disk (/dev/full, a small tmpfs) under 1 or more ranks: every
 * rank must agree on the failure and exit 3 naming the file (no deadlock, no
 * crash at MPI_Finalize), and no file may be left that reads as an answer. On
 * a disk with room it must write the file, and the values must read back.
 *
 * With "bad-slab" the last rank passes a slab outside the field: a failure
 * of one rank alone, which every rank must agree on (exit 2) instead of
 * waiting in a collective the failing rank skipped.
 *
 * usage: test_h5_write PATH [ROWS_PER_RANK [bad-slab]]   (exit: 0, 1 wrong values, 2, 3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error_mpi.h"
#include "mapp_h5.h"

#define COLS 512L

static double value_at(long row, long col) { return (double)row * 1000.0 + (double)col; }

/* The writer exactly as heat_write_output chains it. */
static int write_answer(MPI_Comm comm, const char *path, const mapp_h5_slab *slab, const double *data,
                        const mapp_record *rec) {
  hid_t file;
  MAPP_TRY(mapp_h5_create(comm, path, &file));
  int status = mapp_h5_write_field(file, "temperature", slab, data);
  if (status == MAPP_OK) status = mapp_h5_write_provenance(file, comm, rec);
  if (status == MAPP_OK) status = mapp_h5_attr_long(file, "block_rows", 8);
  int closed = mapp_h5_close(file);
  return status != MAPP_OK ? status : closed;
}

static int read_back(MPI_Comm comm, const char *path, const mapp_h5_slab *slab, double *data) {
  hid_t file;
  MAPP_TRY(mapp_h5_open_read(comm, path, &file));
  int status = mapp_h5_read_field(file, "temperature", slab, data);
  int closed = mapp_h5_close(file);
  MAPP_TRY(status);
  MAPP_TRY(closed);
  for (long r = 0; r < slab->count; ++r)
    for (long c = 0; c < COLS; ++c)
      if (data[r * COLS + c] != value_at(slab->first + r, c))
        return mapp_fail(MAPP_ERR_VERIFY, "%s: value [%ld,%ld] reads back as %g", path, slab->first + r, c,
                         data[r * COLS + c]);
  return MAPP_OK;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int status = MAPP_OK;
  long rows = argc > 2 ? atol(argv[2]) : 64;
  if (argc < 2 || rows < 1) status = mapp_fail(MAPP_ERR_INPUT, "usage: test_h5_write PATH [ROWS_PER_RANK]");
  double *data = NULL;
  if (status == MAPP_OK) status = mapp_alloc((void **)&data, sizeof(double) * (size_t)(rows * COLS), "the field");
  mapp_h5_slab slab = {.ndims = 2, .global_dims = {rows * nranks, COLS}, .first = rows * rank, .count = rows,
                       .stride = COLS};
  for (long r = 0; status == MAPP_OK && r < rows; ++r)
    for (long c = 0; c < COLS; ++c) data[r * COLS + c] = value_at(slab.first + r, c);
  if (argc > 3 && strcmp(argv[3], "bad-slab") == 0 && rank == nranks - 1) slab.count = rows + 1;
  mapp_record rec = {.app = "h5test", .variant = "v", .backend = "serial", .size = "custom", .scaling = "strong",
                     .ranks = nranks, .threads = 1, .argc = argc, .argv = argv};
  status = mapp_agree(MPI_COMM_WORLD, "test_h5_write", status);
  if (status == MAPP_OK) status = write_answer(MPI_COMM_WORLD, argv[1], &slab, data, &rec);
  status = mapp_agree(MPI_COMM_WORLD, "test_h5_write", status);
  if (status == MAPP_OK) {
    for (long i = 0; i < rows * COLS; ++i) data[i] = -1.0;
    status = read_back(MPI_COMM_WORLD, argv[1], &slab, data);
    status = mapp_agree(MPI_COMM_WORLD, "test_h5_write", status);
  }
  free(data);
  MPI_Finalize();
  return status;
}
