/* libmapp under MPI: parallel HDF5 slabs written by any rank count read
 * back on any other, shape mismatches reported as input errors, the 2-D
 * halo exchange, and error agreement across ranks. Run with 1 and 4 ranks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp.h"

static int rank, nranks;
static char path[256];

/* A value that names its global position, so a misplaced slab shows. */
static double cell_value(long i, long j) { return (double)i * 1000.0 + (double)j + 0.5; }

static void h5_slabs_round_trip(void **state) {
  (void)state;
  const long rows = 13, cols = 7, pad = 2; /* memory rows are padded: stride 9 */
  mapp_range mine = mapp_split_even(rows, nranks, rank);
  double *buf = calloc((size_t)(mine.count + 1) * (cols + pad), sizeof(double));
  for (long i = 0; i < mine.count; ++i)
    for (long j = 0; j < cols; ++j) buf[i * (cols + pad) + j] = cell_value(mine.first + i, j);
  mapp_h5_slab slab = {.ndims = 2, .global_dims = {rows, cols}, .first = mine.first,
                       .count = mine.count, .stride = cols + pad};
  hid_t file;
  assert_int_equal(mapp_h5_create(MPI_COMM_WORLD, path, &file), MAPP_OK);
  assert_int_equal(mapp_h5_write_field(file, "f", &slab, buf), MAPP_OK);
  assert_int_equal(mapp_h5_attr_string(file, "note", "unit test"), MAPP_OK);
  assert_int_equal(mapp_h5_close(file), MAPP_OK);

  /* Read it back with a different split: reversed rank order. */
  mapp_range other = mapp_split_even(rows, nranks, nranks - 1 - rank);
  double *back = calloc((size_t)(other.count + 1) * cols, sizeof(double));
  mapp_h5_slab rslab = {.ndims = 2, .global_dims = {rows, cols}, .first = other.first,
                        .count = other.count, .stride = cols};
  assert_int_equal(mapp_h5_open_read(MPI_COMM_WORLD, path, &file), MAPP_OK);
  assert_int_equal(mapp_h5_read_field(file, "f", &rslab, back), MAPP_OK);
  for (long i = 0; i < other.count; ++i)
    for (long j = 0; j < cols; ++j) assert_true(back[i * cols + j] == cell_value(other.first + i, j));
  char note[64];
  assert_int_equal(mapp_h5_read_attr_string(file, "note", note, sizeof note), MAPP_OK);
  assert_string_equal(note, "unit test");

  /* Another shape and a missing field are input errors naming the shapes. */
  mapp_h5_slab wrong = rslab;
  wrong.global_dims[1] = cols + 1;
  wrong.stride = cols + 1;
  double *big = calloc((size_t)(other.count + 1) * (cols + 1), sizeof(double));
  mapp_error_clear();
  assert_int_equal(mapp_h5_read_field(file, "f", &wrong, big), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "(13 x 7)"));
  mapp_error_clear();
  assert_int_equal(mapp_h5_read_field(file, "g", &rslab, back), MAPP_ERR_INPUT);
  assert_int_equal(mapp_h5_close(file), MAPP_OK);
  free(buf);
  free(back);
  free(big);
}

/* A CUDA run's answer file names its GPU, driver, runtime, nvcc and the
 * architectures (rank 0's device on every rank); a CPU run's names none. */
static void answer_carries_gpu_provenance(void **state) {
  (void)state;
  mapp_gpu_info gpu = {.name = "NVIDIA H100 80GB HBM3", .cc_major = 9, .cc_minor = 0, .memory_bytes = 85e9,
                       .driver = "13.0", .runtime = "13.0"};
  if (rank != 0) snprintf(gpu.name, sizeof gpu.name, "another GPU"); /* rank 0's is the one written */
  char *argv[] = {"test"};
  mapp_record rec = {.app = "t", .variant = "v", .backend = "cuda", .size = "tiny", .scaling = "strong",
                     .ranks = nranks, .threads = 1, .argc = 1, .argv = argv, .gpu = &gpu};
  hid_t file;
  char text[256];
  assert_int_equal(mapp_h5_create(MPI_COMM_WORLD, path, &file), MAPP_OK);
  assert_int_equal(mapp_h5_write_provenance(file, MPI_COMM_WORLD, &rec), MAPP_OK);
  assert_int_equal(mapp_h5_close(file), MAPP_OK);
  assert_int_equal(mapp_h5_open_read(MPI_COMM_WORLD, path, &file), MAPP_OK);
  assert_int_equal(mapp_h5_read_attr_string(file, "gpu_name", text, sizeof text), MAPP_OK);
  assert_string_equal(text, "NVIDIA H100 80GB HBM3");
  assert_int_equal(mapp_h5_read_attr_string(file, "gpu_compute_capability", text, sizeof text), MAPP_OK);
  assert_string_equal(text, "9.0");
  assert_int_equal(mapp_h5_read_attr_string(file, "nvcc", text, sizeof text), MAPP_OK);
  assert_string_equal(text, mapp_cuda_compiler());
  assert_int_equal(mapp_h5_close(file), MAPP_OK);
}

static void halo_exchange_fills_neighbours(void **state) {
  (void)state;
  const long rows = 12, cols = 10;
  const bool periodic[2] = {true, false};
  mapp_decomp2d d;
  assert_int_equal(mapp_decomp2d_create(MPI_COMM_WORLD, rows, cols, 1, periodic, &d), MAPP_OK);
  long s = mapp_decomp2d_stride(&d), h = d.halo;
  double *f = calloc((size_t)(d.local[0] + 2 * h) * s, sizeof(double));
  for (long i = 0; i < d.local[0]; ++i)
    for (long j = 0; j < d.local[1]; ++j)
      f[(i + h) * s + j + h] = cell_value(d.range[0].first + i, d.range[1].first + j);
  assert_int_equal(mapp_decomp2d_exchange(&d, f), MAPP_OK);
  for (long i = 0; i < d.local[0]; ++i) {
    long gi = d.range[0].first + i;
    if (d.range[1].first > 0) /* west halo: the column left of ours */
      assert_true(f[(i + h) * s] == cell_value(gi, d.range[1].first - 1));
    if (d.range[1].first + d.local[1] < cols) /* east halo */
      assert_true(f[(i + h) * s + d.local[1] + h] == cell_value(gi, d.range[1].first + d.local[1]));
  }
  for (long j = 0; j < d.local[1]; ++j) { /* rows are periodic: halos always filled */
    long gj = d.range[1].first + j;
    long north = (d.range[0].first - 1 + rows) % rows, south = (d.range[0].first + d.local[0]) % rows;
    assert_true(f[j + h] == cell_value(north, gj));
    assert_true(f[(d.local[0] + h) * s + j + h] == cell_value(south, gj));
  }
  free(f);
  mapp_decomp2d_free(&d);
}

static void agree_spreads_the_worst_status(void **state) {
  (void)state;
  int mine = rank == nranks - 1 ? MAPP_ERR_INPUT : MAPP_OK;
  mapp_error_clear();
  if (mine) mapp_fail(mine, "rank %d failed on purpose", rank);
  assert_int_equal(mapp_agree(MPI_COMM_WORLD, "test_mpi", mine), MAPP_ERR_INPUT);
  mapp_error_clear();
  assert_int_equal(mapp_agree(MPI_COMM_WORLD, "test_mpi", MAPP_OK), MAPP_OK);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  snprintf(path, sizeof path, "test_mpi_%d.h5", nranks);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(h5_slabs_round_trip),
      cmocka_unit_test(answer_carries_gpu_provenance),
      cmocka_unit_test(halo_exchange_fills_neighbours),
      cmocka_unit_test(agree_spreads_the_worst_status),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) remove(path);
  MPI_Finalize();
  return any ? 1 : 0;
}
