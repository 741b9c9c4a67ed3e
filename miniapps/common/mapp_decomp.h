/* Domain decomposition: blocks of a grid, balanced splits across ranks, and
 * halo exchange helpers. */
#ifndef MAPP_DECOMP_H
#define MAPP_DECOMP_H

#include <mpi.h>
#include <stdbool.h>

/* A contiguous range [first, first + count). */
typedef struct {
  long first, count;
} mapp_range;

/* The balanced contiguous split of n items into parts: part i gets
 * n/parts items, the first n%parts parts one more. */
mapp_range mapp_split_even(long n, int parts, int index);

/* A rows x cols grid cut into blocks of block_rows x block_cols; the last
 * block of a row or column holds the remainder. */
typedef struct {
  long rows, cols;
  long block_rows, block_cols;
  long nbr, nbc; /* blocks per column, per row */
} mapp_blocking;

int mapp_blocking_init(mapp_blocking *b, long rows, long cols, long block_rows, long block_cols);
/* Cell range of block row i / block column j. */
mapp_range mapp_block_row_range(const mapp_blocking *b, long i);
mapp_range mapp_block_col_range(const mapp_blocking *b, long j);

/* Consecutive rows of blocks per rank (the heat seed's distribution): rank
 * r owns block rows `blocks` and cell rows `cells`. More ranks than block
 * rows is an input error. */
typedef struct {
  mapp_range blocks;
  mapp_range cells;
} mapp_row_share;

int mapp_share_block_rows(const mapp_blocking *b, int rank, int nranks, mapp_row_share *share);

/* Neighbours above (rank - 1) and below (rank + 1), MPI_PROC_NULL at the ends. */
void mapp_row_neighbors(int rank, int nranks, int *above, int *below);

/* A 2-D Cartesian decomposition with halo width `halo`: each rank holds
 * local[0] x local[1] interior cells inside a padded array of
 * (local[0] + 2 halo) x (local[1] + 2 halo), row-major. */
typedef struct {
  MPI_Comm cart;
  int dims[2], coords[2];
  int north, south, west, east; /* MPI_PROC_NULL at non-periodic edges */
  long global[2];
  mapp_range range[2]; /* this rank's rows and columns of the global grid */
  long local[2];
  int halo;
  MPI_Datatype row_halo, col_halo; /* halo x local[1] and local[0] x halo */
} mapp_decomp2d;

int mapp_decomp2d_create(MPI_Comm comm, long rows, long cols, int halo, const bool periodic[2],
                         mapp_decomp2d *d);
/* Padded row length (elements). */
static inline long mapp_decomp2d_stride(const mapp_decomp2d *d) { return d->local[1] + 2L * d->halo; }
/* Exchange the four halo sides (corners are not exchanged). Collective. */
int mapp_decomp2d_exchange(const mapp_decomp2d *d, double *padded);
void mapp_decomp2d_free(mapp_decomp2d *d);

#endif
