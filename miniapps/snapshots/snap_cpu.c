/* The host backend (serial and omp: the same loops, OpenMP threads set by
 * the driver). Fields are ordinary host arrays. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "mapp_halo_nd.h"
#include "snapshots.h"

/* Below this many points a parallel region costs more than the loop (and
 * oversubscribed ranks would spin in its barriers): run it on one thread.
 * Every point is computed alike either way, so answers do not change. */
#define SNAP_OMP_MIN_POINTS 16384

static int cpu_alloc(const snap_grid *g, double **field) {
  MAPP_TRY(mapp_alloc((void **)field, (size_t)g->padded * sizeof(double), "a wavefield"));
  /* Touched here (in parallel, as the steps will) so no page fault lands in
   * the timed loops. */
  double *f = *field;
#pragma omp parallel for schedule(static) if (g->padded >= SNAP_OMP_MIN_POINTS)
  for (long i = 0; i < g->padded; i++) f[i] = 0.0;
  return MAPP_OK;
}

static void cpu_release(double *field) { free(field); }

static int cpu_set_coeffs(const snap_problem *p, const double *m, snap_coeffs *k) {
  const snap_grid *g = &p->grid;
  double *arrays[3] = {0};
  for (int a = 0; a < 3; a++) {
    int status = cpu_alloc(g, &arrays[a]);
    if (status) {
      for (int b = 0; b < a; b++) free(arrays[b]);
      return status;
    }
  }
  k->c = arrays[0], k->b = arrays[1], k->inv_a = arrays[2];
  snap_fill_coeffs(p, m, k->c, k->b, k->inv_a);
  return MAPP_OK;
}

static void cpu_free_coeffs(snap_coeffs *k) {
  free(k->c), free(k->b), free(k->inv_a);
  k->c = k->b = k->inv_a = NULL;
}

/* A snapshot is not read again until the adjoint, so it is written with
 * streaming stores: not read for ownership, not evicting the wavefields. */
static void stream_row(double *dst, const double *src, long n) {
#if defined(__SSE2__)
  long k = 0;
  if (((uintptr_t)dst & 15) != 0) dst[k] = src[k], ++k;
  for (; k + 1 < n; k += 2) _mm_stream_pd(dst + k, _mm_loadu_pd(src + k));
  if (k < n) dst[k] = src[k];
#else
  memcpy(dst, src, sizeof(double) * (size_t)n);
#endif
}

/* This thread's streaming stores complete before the barrier that ends
 * its parallel region (after which the snapshot is handed over). */
static void stream_fence(void) {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

/* The step, and when `snapshot` is given the new field's interior copied
 * into it row by row as each row is computed (still in L1): the copy runs
 * inside the step's own loop, overlapped with its arithmetic, instead of
 * as a second pass over memory. Saving every step of the bench's forward
 * (2-D, space order 4: 0.77 MB a 0.2 ms step) cost 1.13-1.33x a forward
 * that saves nothing packed afterwards by one thread, 1.05-1.28x packed
 * afterwards on the step's schedule with streaming stores, 1.03-1.05x
 * written like this (3-D, 100^3: 1.05-1.07x). */
static void step_rows(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev,
                      double *snapshot) {
  const long s0 = g->stride[0], s1 = g->stride[1], s2 = g->stride[2];
  const int radius = g->radius;
  const double *w = g->w;
#pragma omp parallel if (g->interior >= SNAP_OMP_MIN_POINTS)
  {
#pragma omp for collapse(2) schedule(static) nowait
    for (long i = 0; i < g->n[0]; i++)
      for (long j = 0; j < g->n[1]; j++) {
        long row = snap_index(g, i, j, 0);
        for (long z = 0; z < g->n[2]; z++) {
          long at = row + z;
          next[at] = snap_update(cur, prev, at, s0, s1, s2, radius, w, k->c[at], k->b[at], k->inv_a[at]);
        }
        if (snapshot) stream_row(snapshot + (i * g->n[1] + j) * g->n[2], next + row, g->n[2]);
      }
    if (snapshot) stream_fence();
  }
}

static void cpu_step(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev) {
  step_rows(g, k, next, cur, prev, NULL);
}

static void cpu_step_save(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev,
                          double *snapshot) {
  step_rows(g, k, next, cur, prev, snapshot);
}

static void cpu_inject(const snap_coeffs *k, double *field, const long *idx, const double *values, long n) {
  for (long r = 0; r < n; r++)
    if (idx[r] >= 0) field[idx[r]] += values[r] * k->inv_a[idx[r]];
}

static void cpu_sample(const double *field, const long *idx, double *out, long n) {
  for (long r = 0; r < n; r++) out[r] = idx[r] >= 0 ? field[idx[r]] : 0.0;
}

static int cpu_exchange(const snap_grid *g, double *field) {
  return mapp_slab_halo_exchange(g->comm, g->left, g->right, field, g->stride[0], g->radius, g->n[0]);
}

static int cpu_snapshot_out(const snap_grid *g, const double *field, double *host) {
#pragma omp parallel if (g->interior >= SNAP_OMP_MIN_POINTS)
  {
#pragma omp for collapse(2) schedule(static) nowait
    for (long i = 0; i < g->n[0]; i++)
      for (long j = 0; j < g->n[1]; j++)
        stream_row(host + (i * g->n[1] + j) * g->n[2], field + snap_index(g, i, j, 0), g->n[2]);
    stream_fence();
  }
  return MAPP_OK;
}

static int cpu_snapshot_wait(void) { return MAPP_OK; }

static int cpu_image(const snap_grid *g, double *grad, const double *snapshot, const double *next, const double *cur,
                     const double *prev, double *abs_d2) {
#pragma omp parallel for collapse(2) schedule(static) if (g->interior >= SNAP_OMP_MIN_POINTS)
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++) {
      long row = snap_index(g, i, j, 0);
      const double *u = snapshot + (i * g->n[1] + j) * g->n[2];
      for (long z = 0; z < g->n[2]; z++) {
        long at = row + z;
        grad[at] += snap_image(u[z], next[at], cur[at], prev[at]);
        if (abs_d2) abs_d2[at] += __builtin_fabs(next[at] - 2.0 * cur[at] + prev[at]);
      }
    }
  return MAPP_OK;
}

static int cpu_copy(const snap_grid *g, const double *from, double *to) {
  memcpy(to, from, sizeof(double) * (size_t)g->padded);
  return MAPP_OK;
}

const snap_ops snap_cpu_ops = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .release = cpu_release,
    .set_coeffs = cpu_set_coeffs,
    .free_coeffs = cpu_free_coeffs,
    .step = cpu_step,
    .step_save = cpu_step_save,
    .inject = cpu_inject,
    .sample = cpu_sample,
    .exchange = cpu_exchange,
    .snapshot_out = cpu_snapshot_out,
    .snapshot_wait = cpu_snapshot_wait,
    .image = cpu_image,
    .to_host = cpu_copy,
    .from_host = cpu_copy,
    /* The CPU's fields are host memory: a snapshot held there is read in place. */
    .image_in_place = cpu_image,
};
