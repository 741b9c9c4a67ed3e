/* mapp_halo2d (libmapp), directly: on a 2-D process grid every rank fills
 * its interior with a function of the global index; after one exchange
 * every halo cell that lies inside the global grid, corners included, must
 * hold that function's value, and the cells outside it must be untouched.
 * Run on 1, 4 and 6 ranks (uneven splits). With "break" the corners are not
 * exchanged (sides only, mapp_decomp2d_exchange), and the test must fail. */
#include <stdio.h>
#include <string.h>

#include "mapp.h"
#include "mapp_halo2d.h"

static double value(long gi, long gj) { return 1000.0 * (double)gj + (double)gi; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  bool sides_only = argc > 1 && !strcmp(argv[1], "break");
  const long rows = 13, cols = 17;
  const int halo = 3, dims[2] = {0, 0};
  const bool periodic[2] = {false, false};
  mapp_decomp2d d;
  mapp_halo2d h;
  int status = mapp_decomp2d_create_dims(MPI_COMM_WORLD, rows, cols, halo, periodic, dims, &d);
  if (status == MAPP_OK) status = mapp_halo2d_init(&h, &d);
  long bad = 0;
  if (status == MAPP_OK) {
    long s = mapp_decomp2d_stride(&d), n = (d.local[0] + 2 * halo) * s;
    double field[4096], *fields[2] = {field, field + 2048};
    for (long e = 0; e < n; ++e) field[e] = field[2048 + e] = -1.0;
    for (long j = 0; j < d.local[0]; ++j)
      for (long i = 0; i < d.local[1]; ++i)
        field[(j + halo) * s + i + halo] = field[2048 + (j + halo) * s + i + halo] =
            value(d.range[1].first + i, d.range[0].first + j);
    status = sides_only ? mapp_decomp2d_exchange(&d, field) : mapp_halo2d_exchange(&h, fields, 2);
    for (int f = 0; f < (sides_only ? 1 : 2); ++f)
      for (long j = -halo; j < d.local[0] + halo; ++j)
        for (long i = -halo; i < d.local[1] + halo; ++i) {
          long gi = d.range[1].first + i, gj = d.range[0].first + j;
          bool inside = gi >= 0 && gi < cols && gj >= 0 && gj < rows;
          double got = fields[f][(j + halo) * s + i + halo], want = inside ? value(gi, gj) : -1.0;
          if (got != want) ++bad;
        }
  }
  long bad_all = 0;
  MPI_Allreduce(&bad, &bad_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%d ranks (%d x %d): %ld halo cells wrong\n", nranks, d.dims[0], d.dims[1], bad_all);
  if (status == MAPP_OK) {
    mapp_halo2d_free(&h);
    mapp_decomp2d_free(&d);
  }
  status = mapp_agree(MPI_COMM_WORLD, "test_halo2d", status);
  MPI_Finalize();
  return status != MAPP_OK ? status : bad_all ? 1 : 0;
}
