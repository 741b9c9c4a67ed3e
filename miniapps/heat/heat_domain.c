/* The heat problem: presets, boundary values set by the heat sources, one
 * rank's share of the grid, the invariants of the answer and its output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heat.h"
#include "heat_kernel.h"

/* Two sources by default: one on the top edge, one on the left edge, so
 * the answer is not symmetric and a transposed or flipped result fails. */
static const heat_source default_sources[] = {
    {.row = 0.0, .col = 0.5, .range = 0.6, .temperature = 100.0},
    {.row = 0.75, .col = 0.0, .range = 0.4, .temperature = 60.0},
};

void heat_config_from_preset(const heat_preset *p, heat_config *cfg) {
  const heat_source *sources = p->sources ? p->sources : default_sources;
  int n = p->sources ? p->nsources : (int)(sizeof default_sources / sizeof default_sources[0]);
  *cfg = (heat_config){.rows = p->rows, .cols = p->cols, .block_rows = p->block_rows,
                       .block_cols = p->block_cols, .steps = p->steps, .nsources = n};
  memcpy(cfg->sources, sources, (size_t)n * sizeof *sources);
}

int heat_config_preset(const char *size, heat_config *cfg) {
  const void *row;
  MAPP_TRY(mapp_preset_find("heat", heat_presets, size, &row));
  heat_config_from_preset(row, cfg);
  return MAPP_OK;
}

/* The original BSC Heat's boundary (see heat.h): top and bottom rows at
 * y = 0 and 1, left and right columns at x = 0 and 1, positions along an
 * edge as cell / (cells + 2). Corners belong to the top and bottom rows. */
double heat_boundary_value(const heat_config *cfg, long gr, long gc) {
  double y, x;
  if (gr == 0 || gr == cfg->rows + 1) {
    y = gr == 0 ? 0.0 : 1.0;
    x = (double)gc / (double)(cfg->cols + 2);
  } else {
    y = (double)gr / (double)(cfg->rows + 2);
    x = gc == 0 ? 0.0 : 1.0;
  }
  double value = 0.0;
  for (int s = 0; s < cfg->nsources; ++s) {
    const heat_source *src = &cfg->sources[s];
    double d = hypot(y - src->row, x - src->col);
    if (d <= src->range) value += src->temperature * (src->range - d) / src->range;
  }
  return value;
}

int heat_domain_create(MPI_Comm comm, const heat_config *cfg, heat_domain *d) {
  memset(d, 0, sizeof *d);
  d->cfg = *cfg;
  d->comm = comm;
  MAPP_MPI(MPI_Comm_rank(comm, &d->rank));
  MAPP_MPI(MPI_Comm_size(comm, &d->nranks));
  MAPP_TRY(mapp_blocking_init(&d->blocking, cfg->rows, cfg->cols, cfg->block_rows, cfg->block_cols));
  MAPP_TRY(mapp_share_block_rows(&d->blocking, d->rank, d->nranks, &d->share));
  mapp_row_neighbors(d->rank, d->nranks, &d->above, &d->below);
  d->local_rows = d->share.cells.count;
  d->stride = cfg->cols + 2;
  /* (rows + 2) x (cols + 2) can wrap size_t: refuse it, naming the sizes. */
  size_t cells;
  MAPP_TRY(mapp_size_mul((size_t)(d->local_rows + 2), (size_t)d->stride, &cells, "the heat grid's cells"));
  return mapp_calloc((void **)&d->grid, cells, sizeof(double), "the heat grid");
}

void heat_domain_free(heat_domain *d) {
  free(d->grid);
  d->grid = NULL;
}

void heat_domain_init(heat_domain *d) {
  long first = d->share.cells.first; /* global row of local row 1, minus 1 */
  memset(d->grid, 0, sizeof(double) * (size_t)((d->local_rows + 2) * d->stride));
  for (long r = 0; r < d->local_rows + 2; ++r) {
    long gr = first + r;
    bool boundary_row = gr == 0 || gr == d->cfg.rows + 1;
    bool halo_row = !boundary_row && (r == 0 || r == d->local_rows + 1);
    if (halo_row) continue; /* filled by the neighbour's first exchange */
    for (long c = 0; c < d->stride; ++c)
      if (boundary_row || c == 0 || c == d->stride - 1)
        d->grid[r * d->stride + c] = heat_boundary_value(&d->cfg, gr, c);
  }
}

void heat_block_cells(const heat_domain *d, long i, long j, mapp_range *rows, mapp_range *cols) {
  *rows = mapp_block_row_range(&d->blocking, d->share.blocks.first + i);
  *cols = mapp_block_col_range(&d->blocking, j);
  rows->first += 1 - d->share.cells.first;
  cols->first += 1;
}

void heat_update_block(heat_domain *d, long i, long j) {
  mapp_range rows, cols;
  heat_block_cells(d, i, j, &rows, &cols);
  heat_block_update(d->grid, d->stride, rows.first, rows.count, cols.first, cols.count);
}

void heat_update_blocks(heat_domain *d) {
  for (long i = 0; i < d->share.blocks.count; ++i)
    for (long j = 0; j < d->blocking.nbc; ++j) heat_update_block(d, i, j);
}

/* Range of the fixed boundary: every interior value of an average of
 * neighbours stays inside it (discrete maximum principle). */
static void boundary_extremes(const heat_config *cfg, double *lo, double *hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (long gr = 0; gr < cfg->rows + 2; ++gr) {
    bool edge_row = gr == 0 || gr == cfg->rows + 1;
    for (long gc = 0; gc < cfg->cols + 2; gc += edge_row ? 1 : cfg->cols + 1) {
      double v = heat_boundary_value(cfg, gr, gc);
      if (v < *lo) *lo = v;
      if (v > *hi) *hi = v;
    }
  }
  /* The interior starts at zero: include it in the range. */
  if (*lo > 0.0) *lo = 0.0;
}

int heat_check_answer(const heat_domain *d, mapp_check *finite, mapp_check *bounded) {
  double lo, hi, local[2] = {0.0, 0.0}, global[2];
  boundary_extremes(&d->cfg, &lo, &hi);
  for (long r = 1; r <= d->local_rows; ++r)
    for (long c = 1; c <= d->cfg.cols; ++c) {
      double v = d->grid[r * d->stride + c];
      if (!isfinite(v)) local[0] += 1.0;
      else if (v < lo || v > hi) local[1] = fmax(local[1], fmax(lo - v, v - hi));
    }
  MAPP_MPI(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, d->comm));
  *finite = (mapp_check){.name = "finite", .passed = global[0] == 0.0, .value = global[0], .bound = 0.0};
  *bounded = (mapp_check){.name = "max-principle", .passed = global[1] == 0.0, .value = global[1], .bound = 0.0};
  return MAPP_OK;
}

int heat_write_output(const heat_domain *d, const char *path, const mapp_record *rec) {
  bool first = d->rank == 0, last = d->rank == d->nranks - 1;
  mapp_h5_slab slab = {.ndims = 2, .global_dims = {d->cfg.rows + 2, d->cfg.cols + 2},
                       .first = first ? 0 : 1 + d->share.cells.first,
                       .count = d->local_rows + first + last, .stride = d->stride};
  const double *data = first ? d->grid : d->grid + d->stride;
  hid_t file;
  MAPP_TRY(mapp_h5_create(d->comm, path, &file));
  int status = mapp_h5_write_field(file, "temperature", &slab, data);
  if (status == MAPP_OK) status = mapp_h5_write_provenance(file, d->comm, rec);
  if (status == MAPP_OK) status = mapp_h5_attr_long(file, "block_rows", d->cfg.block_rows);
  if (status == MAPP_OK) status = mapp_h5_attr_long(file, "block_cols", d->cfg.block_cols);
  int closed = mapp_h5_close(file);
  return status != MAPP_OK ? status : closed;
}
