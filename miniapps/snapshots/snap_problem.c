/* The problem: presets, the decomposed grid, source, receivers, time step
 * and the two velocity models (true and smoothed). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots.h"

#define SNAP_PI 3.14159265358979323846

/* medium is the reference point (Devito 4.8.23: acoustic, space
 * order 4, 100^3, 465 steps, every step saved). */
const snap_preset snap_presets[4] = {
    {"tiny", 2, {80, 1, 60}, 300, 4},
    {"small", 2, {600, 1, 200}, 1000, 4},
    {"medium", 3, {100, 100, 100}, 465, 4},
    {"large", 3, {200, 200, 200}, 1000, 4},
};

void snap_config_from_preset(const snap_preset *p, snap_config *cfg) {
  *cfg = (snap_config){.dims = p->dims, .n = {p->n[0], p->n[1], p->n[2]}, .space_order = p->space_order,
                       .nt = p->nt, .save_every = 1, .h = 10.0, .f0 = 15.0, .nbl = 10};
}

int snap_config_check(const snap_config *cfg, int nranks) {
  if (cfg->dims != 2 && cfg->dims != 3) return mapp_fail(MAPP_ERR_INPUT, "--dims must be 2 or 3, got %d", cfg->dims);
  double w[SNAP_MAX_RADIUS + 1];
  int radius = snap_stencil_weights(cfg->space_order, w);
  if (!radius) return mapp_fail(MAPP_ERR_INPUT, "--space-order must be 2, 4 or 8, got %d", cfg->space_order);
  long min_n = 2L * cfg->nbl + 8;
  for (int d = 0; d < 3; d++) {
    if (d == 1 && cfg->dims == 2) continue;
    if (cfg->n[d] < min_n)
      return mapp_fail(MAPP_ERR_INPUT, "grid axis %d has %ld points, fewer than 2 x the %d-point absorbing layer + 8",
                       d, cfg->n[d], cfg->nbl);
  }
  if (cfg->n[0] / nranks < radius)
    return mapp_fail(MAPP_ERR_INPUT, "%d ranks for %ld x points: each rank needs at least %d (the stencil radius)",
                     nranks, cfg->n[0], radius);
  if (cfg->save_every < 1 || cfg->save_every > cfg->nt)
    return mapp_fail(MAPP_ERR_INPUT, "--save-every %ld is outside [1, %ld steps]", cfg->save_every, cfg->nt);
  return MAPP_OK;
}

int snap_grid_create(MPI_Comm comm, const snap_config *cfg, snap_grid *g) {
  memset(g, 0, sizeof *g);
  g->comm = comm;
  MPI_Comm_rank(comm, &g->rank);
  MPI_Comm_size(comm, &g->nranks);
  MAPP_TRY(snap_config_check(cfg, g->nranks));
  g->left = g->rank > 0 ? g->rank - 1 : MPI_PROC_NULL;
  g->right = g->rank < g->nranks - 1 ? g->rank + 1 : MPI_PROC_NULL;
  g->dims = cfg->dims;
  g->radius = snap_stencil_weights(cfg->space_order, g->w);
  for (int r = 0; r <= SNAP_MAX_RADIUS; r++) g->w[r] /= cfg->h * cfg->h;
  mapp_range mine = mapp_split_even(cfg->n[0], g->nranks, g->rank);
  g->first = mine.first;
  for (int d = 0; d < 3; d++) g->global[d] = cfg->dims == 2 && d == 1 ? 1 : cfg->n[d];
  g->n[0] = mine.count, g->n[1] = g->global[1], g->n[2] = g->global[2];
  for (int d = 0; d < 2; d++) {
    g->pad[d] = (cfg->dims == 2 && d == 1) ? 0 : g->radius;
    g->pn[d] = g->n[d] + 2 * g->pad[d];
  }
  /* Along z (contiguous) the padding in front is a whole cache line and a
   * row's length a multiple of one, so every row's interior starts on a
   * 64-byte boundary of a 64-byte-aligned field: the step's vector stores
   * never straddle two lines. */
  const long line = 64 / (long)sizeof(double);
  g->pad[2] = (g->radius + line - 1) / line * line;
  g->pn[2] = (g->pad[2] + g->n[2] + g->radius + line - 1) / line * line;
  g->stride[2] = 1;
  g->stride[1] = cfg->dims == 3 ? g->pn[2] : 0;
  g->stride[0] = g->pn[1] * g->pn[2];
  g->padded = g->pn[0] * g->pn[1] * g->pn[2];
  g->interior = g->n[0] * g->n[1] * g->n[2];
  return MAPP_OK;
}

int snap_row_sources_create(const snap_grid *g, const long *idx, long n, snap_row_sources *s) {
  memset(s, 0, sizeof *s);
  s->rows = g->n[0] * g->n[1];
  size_t slots = n > 0 ? (size_t)n : 1;
  MAPP_TRY(mapp_calloc((void **)&s->first, (size_t)s->rows + 1, sizeof(long), "the sources' row offsets"));
  MAPP_TRY(mapp_calloc((void **)&s->idx, slots, sizeof(long), "the sources' indices"));
  MAPP_TRY(mapp_calloc((void **)&s->order, slots, sizeof(long), "the sources' order"));
  long *row_of = NULL;
  MAPP_TRY(mapp_calloc((void **)&row_of, slots, sizeof(long), "the sources' rows"));
  for (long q = 0; q < n; q++) {
    if (idx[q] < 0) continue;
    long i = idx[q] / g->stride[0] - g->pad[0], j = (idx[q] % g->stride[0]) / g->pn[2] - g->pad[1];
    row_of[q] = i * g->n[1] + j;
    s->first[row_of[q] + 1]++;
  }
  for (long r = 0; r < s->rows; r++) s->first[r + 1] += s->first[r];
  long *fill = NULL;
  int status = mapp_calloc((void **)&fill, (size_t)s->rows + 1, sizeof(long), "the sources' row fill");
  if (status) {
    free(row_of);
    return status;
  }
  memcpy(fill, s->first, sizeof(long) * (size_t)(s->rows + 1));
  for (long q = 0; q < n; q++) {
    if (idx[q] < 0) continue;
    long at = fill[row_of[q]]++;
    s->idx[at] = idx[q], s->order[at] = q;
  }
  free(fill), free(row_of);
  return MAPP_OK;
}

void snap_row_sources_free(snap_row_sources *s) {
  free(s->first), free(s->idx), free(s->order);
  memset(s, 0, sizeof *s);
}

void snap_pack(const snap_grid *g, const double *padded, double *interior) {
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++)
      memcpy(interior + (i * g->n[1] + j) * g->n[2], padded + snap_index(g, i, j, 0), sizeof(double) * g->n[2]);
}

void snap_unpack(const snap_grid *g, const double *interior, double *padded) {
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++)
      memcpy(padded + snap_index(g, i, j, 0), interior + (i * g->n[1] + j) * g->n[2], sizeof(double) * g->n[2]);
}

static double ricker(double t, double f0) {
  double a = SNAP_PI * f0 * (t - 1.0 / f0);
  return (1.0 - 2.0 * a * a) * exp(-a * a);
}

/* Largest eigenvalue of the 1-D second difference (times h^2): the
 * stability bound of the leapfrog scheme follows from it. */
static double stencil_spectral_radius(int space_order) {
  double w[SNAP_MAX_RADIUS + 1];
  int radius = snap_stencil_weights(space_order, w);
  double lam = fabs(w[0]);
  for (int r = 1; r <= radius; r++) lam += 2.0 * fabs(w[r]);
  return lam;
}

/* The owner's padded index of global point (x, y, z), or -1 elsewhere. */
static long owned_index(const snap_grid *g, long x, long y, long z) {
  if (x < g->first || x >= g->first + g->n[0]) return -1;
  return snap_index(g, x - g->first, y, z);
}

int snap_problem_create(MPI_Comm comm, const snap_config *cfg, snap_problem *p) {
  memset(p, 0, sizeof *p);
  p->cfg = *cfg;
  MAPP_TRY(snap_grid_create(comm, cfg, &p->grid));
  p->vmin = 1500.0, p->vmax = 2500.0;
  /* 70 % of the leapfrog stability limit 2 h / (vmax sqrt(dims lambda)). */
  p->dt = 0.7 * 2.0 * cfg->h / (p->vmax * sqrt(cfg->dims * stencil_spectral_radius(cfg->space_order)));
  MAPP_TRY(mapp_calloc((void **)&p->wavelet, (size_t)cfg->nt + 1, sizeof(double), "the source wavelet"));
  for (long k = 0; k <= cfg->nt; k++) p->wavelet[k] = ricker(k * p->dt, cfg->f0);
  const snap_grid *g = &p->grid;
  long yc = g->global[1] / 2, depth = cfg->nbl + 2;
  p->src_local = owned_index(g, g->global[0] / 2, yc, depth);
  p->nrec = g->global[0] - 2L * cfg->nbl;
  /* This rank's receivers only: the global line is nx long. */
  mapp_range mine = snap_receivers_of(p, g->rank);
  p->rec_first = mine.first, p->nrec_local = mine.count;
  size_t slots = mine.count > 0 ? (size_t)mine.count : 1; /* a rank without receivers still has a list */
  MAPP_TRY(mapp_calloc((void **)&p->rec_local, slots, sizeof(long), "the receiver positions"));
  for (long r = 0; r < p->nrec_local; r++) p->rec_local[r] = owned_index(g, cfg->nbl + p->rec_first + r, yc, depth);
  return MAPP_OK;
}

void snap_problem_free(snap_problem *p) {
  free(p->wavelet);
  free(p->rec_local);
  p->wavelet = NULL, p->rec_local = NULL;
}

/* Depth (in points) of the reflector under x: dipping, 55 % down at the
 * centre. */
static double reflector_depth(const snap_problem *p, long x) {
  double nz = (double)p->grid.global[2], nx = (double)p->grid.global[0];
  return 0.55 * nz + 0.1 * nz * ((double)x / nx - 0.5);
}

typedef double (*velocity_fn)(const snap_problem *p, long x, long z);

static double velocity_true(const snap_problem *p, long x, long z) {
  return (double)z < reflector_depth(p, x) ? p->vmin : p->vmax;
}

/* The true model seen through a smooth step 16 points wide: the
 * background a gradient is taken at. */
static double velocity_smooth(const snap_problem *p, long x, long z) {
  double s = ((double)z - reflector_depth(p, x)) / 16.0 + 0.5;
  s = s < 0 ? 0 : s > 1 ? 1 : s * s * (3.0 - 2.0 * s);
  return p->vmin + (p->vmax - p->vmin) * s;
}

static void fill_model(const snap_problem *p, double *m, velocity_fn v) {
  const snap_grid *g = &p->grid;
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++)
      for (long k = 0; k < g->n[2]; k++) {
        double vel = v(p, g->first + i, k);
        m[(i * g->n[1] + j) * g->n[2] + k] = 1.0 / (vel * vel);
      }
}

void snap_model_true(const snap_problem *p, double *m) { fill_model(p, m, velocity_true); }
void snap_model_smooth(const snap_problem *p, double *m) { fill_model(p, m, velocity_smooth); }

void snap_estimate_memory(const snap_grid *g, const snap_config *cfg, int buffers, bool two_levels,
                          snap_estimate *est) {
  size_t field = (size_t)g->padded * sizeof(double), interior = (size_t)g->interior * sizeof(double);
  est->snapshot_bytes = interior;
  /* u and v (three time levels each, or two), the two image
   * accumulators, 1/a and a host read-back field, the absorbing layer's
   * rows and row depths (snap_fill_layer); interior-sized: the model, the
   * gradient, the last wavefield, three engine buffers (the last as 8-byte
   * indices). The true model is freed before the store's buffers are
   * made, so the peak holds one or the other (snap_estimate_host). */
  size_t layer = (size_t)(cfg->nbl + 1) * (size_t)g->pn[2] * sizeof(double) + (size_t)(g->n[0] * g->n[1]) * sizeof(int);
  est->wavefields = (two_levels ? 8 : 10) * field + layer + 6 * interior;
  est->observing = interior;
  /* On CUDA the device holds u and v, the two accumulators, r, 1/a (10
   * padded fields) and the pack buffer; the receivers' scratch is small. */
  est->device = 10 * field + interior;
  est->buffers = (size_t)buffers * interior;
  est->nsnap = cfg->nt / cfg->save_every;
  est->snapshots = (size_t)est->nsnap * est->snapshot_bytes;
}

size_t snap_estimate_host(const snap_estimate *est) {
  return est->wavefields + (est->buffers > est->observing ? est->buffers : est->observing);
}

/* How far global index `at` of an axis of `extent` points lies inside
 * the absorbing layer of nbl points (0 outside it). */
static long layer_depth(long at, long extent, long nbl) {
  long from_edge = at < extent - 1 - at ? at : extent - 1 - at;
  return nbl - from_edge > 0 ? nbl - from_edge : 0;
}

/* Damping d0 (depth/nbl)^2 into the layer, d0 = 3 vmax ln(1000) / (2 L). */
static double layer_damping(const snap_problem *p, long depth) {
  double nbl = p->cfg.nbl, d0 = 3.0 * p->vmax * 6.907755278982137 / (2.0 * nbl * p->cfg.h);
  return depth > 0 ? d0 * (depth / nbl) * (depth / nbl) : 0.0;
}

/* Row (i, j)'s depth into the layer across x and y (y only in 3-D). */
static long row_layer_depth(const snap_grid *g, long nbl, long i, long j) {
  long depth = layer_depth(g->first + i, g->global[0], nbl);
  long y = g->dims == 3 ? layer_depth(j, g->global[1], nbl) : 0;
  return y > depth ? y : depth;
}

void snap_fill_coeffs(const snap_problem *p, const double *m, double *ratio, double *inv_a) {
  const snap_grid *g = &p->grid;
  double dt = p->dt;
  long nbl = p->cfg.nbl;
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++) {
      long row_depth = row_layer_depth(g, nbl, i, j);
      for (long z = 0; z < g->n[2]; z++) {
        long z_depth = layer_depth(z, g->global[2], nbl);
        double eta = layer_damping(p, z_depth > row_depth ? z_depth : row_depth);
        double mm = m[(i * g->n[1] + j) * g->n[2] + z];
        long idx = snap_index(g, i, j, z);
        double a = mm / (dt * dt) + eta / (2.0 * dt);
        inv_a[idx] = 1.0 / a;
        if (ratio) ratio[idx] = snap_ratio(eta / dt, inv_a[idx]);
      }
    }
}

void snap_fill_layer(const snap_problem *p, double *layer, int *row_depth) {
  const snap_grid *g = &p->grid;
  long nbl = p->cfg.nbl;
  for (long c = 0; c <= nbl; c++)
    for (long z = 0; z < g->pn[2]; z++) {
      long at = z - g->pad[2], z_depth = at >= 0 && at < g->n[2] ? layer_depth(at, g->global[2], nbl) : 0;
      layer[c * g->pn[2] + z] = layer_damping(p, z_depth > c ? z_depth : c) / p->dt;
    }
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++) row_depth[i * g->n[1] + j] = (int)row_layer_depth(g, nbl, i, j);
}

