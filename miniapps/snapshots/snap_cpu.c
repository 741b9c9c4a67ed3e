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
  MAPP_TRY(cpu_alloc(g, &k->ratio));
  int status = cpu_alloc(g, &k->inv_a);
  if (status) {
    free(k->ratio), k->ratio = NULL;
    return status;
  }
  snap_fill_coeffs(p, m, k->ratio, k->inv_a);
  return MAPP_OK;
}

static void cpu_free_coeffs(snap_coeffs *k) {
  free(k->ratio), free(k->inv_a);
  k->ratio = k->inv_a = NULL;
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

/* Rows of the update along z (contiguous), one function per stencil
 * radius and dimension, so the radius loop unrolls and the row vectorises
 * with the stencil's weights and shape known. Each point is snap_update,
 * the same expression in the same order whatever the vector width (no
 * contraction into FMA: ISO C's default here), so every clone gives the
 * same bits. The AVX2 clone is chosen at load time where the CPU has it
 * (GCC's target_clones); the default clone runs everywhere else. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(MAPP_NO_TARGET_CLONES)
#define SNAP_ROW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SNAP_ROW_CLONES
#endif

typedef void (*row_fn)(double *restrict next, const double *restrict cur, const double *restrict prev,
                       const double *restrict ratio, const double *restrict inv_a, long n, long s0, long s1,
                       const double *restrict w);

#define SNAP_ROW(NAME, RADIUS, THREE_D)                                                                         \
  SNAP_ROW_CLONES static void NAME(double *restrict next, const double *restrict cur, const double *restrict prev, \
                                   const double *restrict ratio, const double *restrict inv_a, long n, long s0,   \
                                   long s1, const double *restrict w) {                                           \
    double wk[SNAP_MAX_RADIUS + 1];                                                                               \
    for (int r = 0; r <= SNAP_MAX_RADIUS; r++) wk[r] = w[r];                                                      \
    const long sy = (THREE_D) ? s1 : 0;                                                                           \
    if ((THREE_D) && sy == 0) __builtin_unreachable(); /* a 3-D grid's y stride: folds the kernel's 2-D test */  \
    for (long z = 0; z < n; z++) next[z] = snap_update(cur, prev, z, s0, sy, 1, RADIUS, wk, ratio[z], inv_a[z]);  \
  }
SNAP_ROW(row_r1_2d, 1, 0)
SNAP_ROW(row_r2_2d, 2, 0)
SNAP_ROW(row_r4_2d, 4, 0)
SNAP_ROW(row_r1_3d, 1, 1)
SNAP_ROW(row_r2_3d, 2, 1)
SNAP_ROW(row_r4_3d, 4, 1)

static row_fn row_for(const snap_grid *g) {
  static const row_fn rows[2][3] = {{row_r1_2d, row_r2_2d, row_r4_2d}, {row_r1_3d, row_r2_3d, row_r4_3d}};
  int r = g->radius == 1 ? 0 : g->radius == 2 ? 1 : 2;
  return rows[g->dims == 3][r];
}

/* The imaging condition along a row (snap_image per point). */
SNAP_ROW_CLONES static void image_row(double *restrict grad, const double *restrict u, const double *restrict next,
                                      const double *restrict cur, const double *restrict prev, long n) {
  for (long z = 0; z < n; z++) grad[z] += snap_image(u[z], next[z], cur[z], prev[z]);
}

static void inject_row_sources(const snap_row_sources *s, long row, const snap_coeffs *k, double *next,
                               const double *values) {
  for (long q = s->first[row]; q < s->first[row + 1]; q++) {
    long at = s->idx[q];
    next[at] += values[s->order[q]] * k->inv_a[at];
  }
}

/* The step row by row. With `snapshot`, the new field's interior is
 * copied into it as each row is computed (still in L1): the copy runs
 * inside the step's own loop, overlapped with its arithmetic, instead of
 * as a second pass over memory. Saving every step of the bench's forward
 * (2-D, space order 4: 0.77 MB a 0.2 ms step) cost 1.13-1.33x a forward
 * that saves nothing packed afterwards by one thread, 1.05-1.28x packed
 * afterwards on the step's schedule with streaming stores, 1.03-1.05x
 * written like this (3-D, 100^3: 1.05-1.07x).
 * With `image` (the adjoint), each row's sources are injected right after
 * it is computed and the imaging condition accumulated from it then,
 * while the row is in L1: the adjoint's step, injection and imaging in one
 * pass over memory, each point's operations in the order of the three
 * passes. */
typedef struct {
  const snap_row_sources *sources;
  const double *values;
  const double *snapshot;
  double *grad;
} row_image;

static void step_rows(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev,
                      double *snapshot, const row_image *image) {
  const long s0 = g->stride[0], s1 = g->stride[1], n2 = g->n[2];
  const row_fn row_update = row_for(g);
  const double *w = g->w;
#pragma omp parallel if (g->interior >= SNAP_OMP_MIN_POINTS)
  {
#pragma omp for collapse(2) schedule(static) nowait
    for (long i = 0; i < g->n[0]; i++)
      for (long j = 0; j < g->n[1]; j++) {
        long at = snap_index(g, i, j, 0), row = i * g->n[1] + j;
        row_update(next + at, cur + at, prev + at, k->ratio + at, k->inv_a + at, n2, s0, s1, w);
        if (snapshot) stream_row(snapshot + row * n2, next + at, n2);
        if (image) {
          inject_row_sources(image->sources, row, k, next, image->values);
          image_row(image->grad + at, image->snapshot + row * n2, next + at, cur + at, prev + at, n2);
        }
      }
    if (snapshot) stream_fence();
  }
}

static void cpu_step(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev) {
  step_rows(g, k, next, cur, prev, NULL, NULL);
}

static void cpu_step_save(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev,
                          double *snapshot) {
  step_rows(g, k, next, cur, prev, snapshot, NULL);
}

static void cpu_step_image(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur,
                           const double *prev, const snap_row_sources *sources, const double *values,
                           const double *snapshot, double *grad) {
  row_image image = {.sources = sources, .values = values, .snapshot = snapshot, .grad = grad};
  step_rows(g, k, next, cur, prev, NULL, &image);
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
      image_row(grad + row, u, next + row, cur + row, prev + row, g->n[2]);
      if (abs_d2)
        for (long z = 0; z < g->n[2]; z++)
          abs_d2[row + z] += __builtin_fabs(next[row + z] - 2.0 * cur[row + z] + prev[row + z]);
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
    .step_image = cpu_step_image,
};
