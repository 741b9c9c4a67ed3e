#include "mapp_decomp.h"
#include "mapp_halo2d.h"

#include "mapp_error_mpi.h"

mapp_range mapp_split_even(long n, int parts, int index) {
  long base = n / parts, extra = n % parts;
  mapp_range r;
  r.first = index * base + (index < extra ? index : extra);
  r.count = base + (index < extra ? 1 : 0);
  return r;
}

int mapp_blocking_init(mapp_blocking *b, long rows, long cols, long block_rows, long block_cols) {
  if (rows < 1 || cols < 1)
    return mapp_fail(MAPP_ERR_INPUT, "grid of %ld x %ld cells: both sides must be >= 1", rows, cols);
  if (block_rows < 1 || block_cols < 1)
    return mapp_fail(MAPP_ERR_INPUT, "block of %ld x %ld cells: both sides must be >= 1", block_rows,
                     block_cols);
  if (block_rows > rows || block_cols > cols)
    return mapp_fail(MAPP_ERR_INPUT, "block of %ld x %ld cells is larger than the grid of %ld x %ld",
                     block_rows, block_cols, rows, cols);
  *b = (mapp_blocking){.rows = rows, .cols = cols, .block_rows = block_rows, .block_cols = block_cols,
                       .nbr = (rows + block_rows - 1) / block_rows,
                       .nbc = (cols + block_cols - 1) / block_cols};
  return MAPP_OK;
}

static mapp_range block_range(long n, long block, long i) {
  mapp_range r = {i * block, block};
  if (r.first + r.count > n) r.count = n - r.first;
  return r;
}

mapp_range mapp_block_row_range(const mapp_blocking *b, long i) { return block_range(b->rows, b->block_rows, i); }
mapp_range mapp_block_col_range(const mapp_blocking *b, long j) { return block_range(b->cols, b->block_cols, j); }

int mapp_share_block_rows(const mapp_blocking *b, int rank, int nranks, mapp_row_share *share) {
  if (nranks > b->nbr)
    return mapp_fail(MAPP_ERR_INPUT, "%d ranks but only %ld rows of blocks (%ld rows / blocks of %ld)",
                     nranks, b->nbr, b->rows, b->block_rows);
  share->blocks = mapp_split_even(b->nbr, nranks, rank);
  long first = mapp_block_row_range(b, share->blocks.first).first;
  mapp_range last = mapp_block_row_range(b, share->blocks.first + share->blocks.count - 1);
  share->cells = (mapp_range){first, last.first + last.count - first};
  return MAPP_OK;
}

void mapp_row_neighbors(int rank, int nranks, int *above, int *below) {
  *above = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  *below = rank < nranks - 1 ? rank + 1 : MPI_PROC_NULL;
}

int mapp_decomp2d_create(MPI_Comm comm, long rows, long cols, int halo, const bool periodic[2],
                         mapp_decomp2d *d) {
  static const int any_grid[2] = {0, 0}; /* MPI_Dims_create chooses both */
  return mapp_decomp2d_create_dims(comm, rows, cols, halo, periodic, any_grid, d);
}

int mapp_decomp2d_exchange(const mapp_decomp2d *d, double *padded) {
  long s = mapp_decomp2d_stride(d), h = d->halo, nr = d->local[0], nc = d->local[1];
  double *interior = padded + h * s + h;
  /* Send our edge rows/cols; receive into the halo on the opposite side. */
  double *send[4] = {interior, interior + (nr - h) * s, interior, interior + (nc - h)};
  double *recv[4] = {interior + nr * s, interior - h * s, interior + nc, interior - h};
  int to[4] = {d->north, d->south, d->west, d->east};
  int from[4] = {d->south, d->north, d->east, d->west};
  MPI_Datatype type[4] = {d->row_halo, d->row_halo, d->col_halo, d->col_halo};
  MPI_Request req[8];
  for (int k = 0; k < 4; ++k) {
    MAPP_MPI(MPI_Irecv(recv[k], 1, type[k], from[k], k, d->cart, &req[2 * k]));
    MAPP_MPI(MPI_Isend(send[k], 1, type[k], to[k], k, d->cart, &req[2 * k + 1]));
  }
  MAPP_MPI(MPI_Waitall(8, req, MPI_STATUSES_IGNORE));
  return MAPP_OK;
}

void mapp_decomp2d_free(mapp_decomp2d *d) {
  if (d->row_halo) MPI_Type_free(&d->row_halo);
  if (d->col_halo) MPI_Type_free(&d->col_halo);
  if (d->cart) MPI_Comm_free(&d->cart);
}
