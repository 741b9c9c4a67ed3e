/* The host backend (serial and omp: the same loops, OpenMP threads set by
 * the driver). Fields are ordinary host arrays. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_num_threads(void) { return 1; }
static int omp_get_thread_num(void) { return 0; }
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "mapp_halo_nd.h"
#include "snap_cpu_rows.h"
#include "snapshots.h"

/* Below this many points a parallel region costs more than the loop (and
 * oversubscribed ranks would spin in its barriers): run it on one thread.
 * Every point is computed alike either way, so answers do not change. */
#define SNAP_OMP_MIN_POINTS 16384

static int cpu_alloc(const snap_grid *g, double **field) {
  MAPP_TRY(snap_alloc_large((void **)field, (size_t)g->padded * sizeof(double), 64, "a wavefield"));
  /* Touched here (in parallel, as the steps will) so no page fault lands in
   * the timed loops. */
  double *f = *field;
#pragma omp parallel for schedule(static) if (g->padded >= SNAP_OMP_MIN_POINTS)
  for (long i = 0; i < g->padded; i++) f[i] = 0.0;
  return MAPP_OK;
}

static void cpu_release(double *field) { free(field); }

static void cpu_free_coeffs(snap_coeffs *k) {
  free(k->inv_a), free(k->layer), free(k->row_depth);
  *k = (snap_coeffs){0};
}

/* The z span where a row outside the layer across x and y (class 0) has
 * no damping: the first run of zeros of its interior (the profile rises
 * towards both ends of z, so there is one), narrowed to whole cache lines
 * (a row starts on one): the undamped kernel then loads and stores
 * aligned vectors. Begun 2 doubles past a line, it was 1.1-1.2x slower
 * than the damped kernel over the whole row. */
static void set_calm_span(const snap_grid *g, snap_coeffs *k) {
  const long line = 64 / (long)sizeof(double);
  long z = g->pad[2], end = g->pad[2] + g->n[2];
  while (z < end && k->layer[z] != 0.0) z++;
  long from = z;
  while (z < end && k->layer[z] == 0.0) z++;
  k->calm_from = (from + line - 1) / line * line;
  k->calm_to = z / line * line;
  if (k->calm_to < k->calm_from) k->calm_to = k->calm_from;
}

/* 1/a per point and the damping as rows (snap_fill_layer): r is formed
 * per point from the two (snap_ratio), so a step streams one model array,
 * not two. At 100^3, space order 2, 2 threads, the forward saving every
 * step took 0.67 s instead of 0.82 (medians of 4 runs interleaved with the
 * two-array build); at space order 8 no change stood out of the noise. */
static int cpu_set_coeffs(const snap_problem *p, const double *m, snap_coeffs *k) {
  const snap_grid *g = &p->grid;
  *k = (snap_coeffs){0};
  int status = cpu_alloc(g, &k->inv_a);
  size_t layer_bytes = sizeof(double) * (size_t)(p->cfg.nbl + 1) * (size_t)g->pn[2];
  if (!status) status = snap_alloc_large((void **)&k->layer, layer_bytes, 64, "the absorbing layer's rows");
  if (!status) {
    k->row_depth = malloc(sizeof(int) * (size_t)(g->n[0] * g->n[1]));
    if (!k->row_depth) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory for %ld rows' layer depths", g->n[0] * g->n[1]);
  }
  if (!status) snap_fill_coeffs(p, m, NULL, k->inv_a), snap_fill_layer(p, k->layer, k->row_depth);
  if (!status) set_calm_span(g, k);
  if (status) cpu_free_coeffs(k);
  return status;
}

/* Row `row`'s eta/dt from padded z offset `z` on. */
static const double *row_damping(const snap_grid *g, const snap_coeffs *k, long row, long z) {
  return k->layer + (long)k->row_depth[row] * g->pn[2] + z;
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

/* A row's sources within [from, from + n) of the padded field, injected
 * into `out`, which holds those n points. */
static void inject_row_sources(const snap_row_sources *s, long row, const snap_coeffs *k, double *out, long from,
                               long n, const double *values) {
  for (long q = s->first[row]; q < s->first[row + 1]; q++) {
    long at = s->idx[q];
    if (at >= from && at < from + n) out[at - from] += values[s->order[q]] * k->inv_a[at];
  }
}

/* The step row by row (next may be prev: in place). With `snapshot`, the
 * new field's interior is copied into it as each row is computed (still
 * in L1): the copy runs inside the step's own loop, overlapped with its
 * arithmetic, instead of as a second pass over memory. Saving every step
 * of the bench's forward (2-D, space order 4: 0.77 MB a 0.2 ms step) cost
 * 1.13-1.33x a forward that saves nothing packed afterwards by one thread,
 * 1.05-1.28x packed afterwards on the step's schedule with streaming
 * stores, 1.03-1.05x written like this (3-D, 100^3: 1.05-1.07x).
 * With `image` (the adjoint), a row is computed in chunks into an L1
 * buffer, its sources injected, the imaging condition accumulated from it
 * (u^{k-2} is still in the field), then written over u^{k-2}: the
 * adjoint's step, injection and imaging in one pass over memory, each
 * point's operations in the order of the three passes.
 * `next` is written with ordinary stores: streaming it out (non-temporal
 * stores from an L1 buffer) made the forward 1.1-1.9x slower at small and
 * 1.2x at medium, since the next step reads it back as its current field. */
typedef struct {
  const double *snapshot;
  double *grad, *abs_d2;
} row_image;

typedef struct {
  const snap_grid *g;
  const snap_coeffs *k;
  double *next;
  const double *cur, *prev;
  double *snapshot;
  const row_image *image;
  snap_row_kernels update;
  const snap_row_sources *sources; /* injected into each row as it is computed (NULL: none) */
  const double *values;            /* their values */
} step_job;

#define SNAP_ROW_CHUNK 512 /* doubles of a row the adjoint computes into L1 at once (4 KiB) */

/* What a row adds to the step once computed into `out` (n points from
 * padded index p, z offset zb of row `row`): its sources; the adjoint's
 * imaging, then the new values into the field; the saved snapshot. */
static void finish_row(const step_job *job, long row, long p, long zb, long n, double *out) {
  const row_image *image = job->image;
  const long n2 = job->g->n[2];
  if (job->sources) inject_row_sources(job->sources, row, job->k, out, p, n, job->values);
  if (image) {
    const double *u = image->snapshot + row * n2 + zb;
    if (image->abs_d2) snap_abs_d2_row(image->abs_d2 + p, out, job->cur + p, job->prev + p, n);
    if (job->next == job->prev) {
      snap_image_row_in_place(image->grad + p, u, out, job->cur + p, job->next + p, n);
    } else {
      snap_image_row(image->grad + p, u, out, job->cur + p, job->prev + p, n);
      memcpy(job->next + p, out, sizeof(double) * (size_t)n);
    }
  }
  if (job->snapshot) stream_row(job->snapshot + row * n2 + zb, out, n);
}

/* Where row `row`'s chunk (padded index p) is computed: the field itself,
 * or for the adjoint an L1 buffer (u^{k-2} must outlive the step for the
 * imaging); u^{k-2} copied there first unless next is prev. */
static double *chunk_target(const step_job *job, long p, long n, double *buffer) {
  double *out = job->image ? buffer : job->next + p;
  if (out != job->prev + p) memcpy(out, job->prev + p, sizeof(double) * (size_t)n);
  return out;
}

/* A chunk of a row (and of its pair, b, when `pair` is not 0): where
 * the new values go, and the arrays the update reads, from its first
 * point on. */
typedef struct {
  double *a, *b;
  const double *cur, *damping_a, *damping_b, *inv_a;
  long pair;
} chunk;

/* Whether the AVX-512 kernels may take points from `from` of a chunk:
 * every array they touch there starts on a line (the row's interior, its
 * chunks and its calm span do; the adjoint's L1 buffers too). */
static bool on_lines(const chunk *c, long from) {
  uintptr_t bits = (uintptr_t)(c->a + from) | (uintptr_t)(c->cur + from) | (uintptr_t)(c->damping_a + from) |
                   (uintptr_t)(c->inv_a + from);
  if (c->pair) bits |= (uintptr_t)(c->b + from) | (uintptr_t)(c->damping_b + from);
  return bits % 64 == 0;
}

/* Points [from, from + n) of a chunk by the portable kernel, or with
 * `wide` by the AVX-512 one (whole vectors only). */
static void update_points(const step_job *job, const chunk *c, long from, long n, int calm, bool wide) {
  const snap_grid *g = job->g;
  if (c->pair)
    (wide ? job->update.wide_two : job->update.two)[calm](c->a + from, c->b + from, c->cur + from,
                                                          c->damping_a + from, c->damping_b + from, c->inv_a + from,
                                                          c->pair, n, g->stride[0], g->w);
  else
    (wide ? job->update.wide_one : job->update.one)[calm](c->a + from, c->cur + from, c->damping_a + from,
                                                          c->inv_a + from, n, g->stride[0], g->stride[1], g->w);
}

/* Points [from, to) of a chunk, by the damped kernel or the undamped: its
 * whole vectors by the AVX-512 kernel where there is one, the rest by the
 * portable one. */
static void update_range(const step_job *job, const chunk *c, long from, long to, int calm) {
  if (from >= to) return;
  bool wide = c->pair ? job->update.wide_two[calm] != NULL : job->update.wide_one[calm] != NULL;
  long vectors = wide && on_lines(c, from) ? (to - from) / SNAP_WIDE * SNAP_WIDE : 0;
  if (vectors) update_points(job, c, from, vectors, calm, true);
  if (from + vectors < to) update_points(job, c, from + vectors, to - from - vectors, calm, false);
}

/* A chunk of n points from z offset zb: undamped where its rows are
 * outside the layer across x and y and z is in the calm span, damped at
 * both ends. */
static void update_chunk(const step_job *job, const chunk *c, long row, long rows_apart, long zb, long n) {
  const snap_coeffs *k = job->k;
  long lo = n, hi = n;
  if (k->row_depth[row] == 0 && (!c->pair || k->row_depth[row + rows_apart] == 0)) {
    long from = k->calm_from - job->g->pad[2] - zb, to = k->calm_to - job->g->pad[2] - zb;
    lo = from < 0 ? 0 : from < n ? from : n;
    hi = to < lo ? lo : to < n ? to : n;
  }
  update_range(job, c, 0, lo, 0);
  update_range(job, c, lo, hi, 1);
  update_range(job, c, hi, n, 0);
}

/* Row `row` (padded index `at`), and with `pair` the row `rows_apart`
 * rows and `pair` doubles on, computed together. */
static void step_rows_at(const step_job *job, long row, long at, long rows_apart, long pair, double *buffers) {
  const snap_grid *g = job->g;
  const snap_coeffs *k = job->k;
  const long n2 = g->n[2];
  for (long zb = 0; zb < n2; zb += SNAP_ROW_CHUNK) {
    long n = n2 - zb < SNAP_ROW_CHUNK ? n2 - zb : SNAP_ROW_CHUNK, p = at + zb;
    chunk c = {.a = chunk_target(job, p, n, buffers), .cur = job->cur + p,
               .damping_a = row_damping(g, k, row, g->pad[2] + zb), .inv_a = k->inv_a + p, .pair = pair};
    if (pair)
      c.b = chunk_target(job, p + pair, n, buffers + SNAP_ROW_CHUNK),
      c.damping_b = row_damping(g, k, row + rows_apart, g->pad[2] + zb);
    update_chunk(job, &c, row, rows_apart, zb, n);
    finish_row(job, row, p, zb, n, c.a);
    if (pair) finish_row(job, row + rows_apart, p + pair, zb, n, c.b);
  }
}

/* 3-D: the rows of a y block per x plane, so the 2r + 1 planes the
 * stencil reads along x stay in L2 from one plane to the next: the rows of
 * 2r + 4 plane blocks (cur's, and the other arrays' one each) in 256 KiB
 * (1.03-1.07x over unblocked at 100^3). The y rows are split into blocks
 * of equal size (within one row), since the threads share the (block,
 * plane) pairs in equal counts: a short last block left one thread 72 %
 * of the rows (100^3, space order 2, blocks of 48, 48 and 4). */
static long rows_per_y_block(const snap_grid *g) {
  long row_bytes = g->pn[2] * (long)sizeof(double), planes = 2L * g->radius + 4;
  long most = (256L * 1024) / (planes * row_bytes);
  if (most < 1) most = 1;
  long blocks = (g->n[1] + most - 1) / most;
  return (g->n[1] + blocks - 1) / blocks;
}

/* Row pair o of a 2-D step (rows 2o and 2o + 1; the last row alone when
 * n[0] is odd). */
static void step_pair_of_rows(const step_job *job, long o, double *buffers) {
  const snap_grid *g = job->g;
  long i = 2 * o;
  step_rows_at(job, i, snap_index(g, i, 0, 0), 1, i + 1 < g->n[0] ? g->stride[0] : 0, buffers);
}

/* 2-D: rows i and i + 1 together (the last alone when n[0] is odd); 3-D:
 * rows one at a time, in y blocks. */
static void step_rows(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev,
                      double *snapshot, const snap_row_sources *sources, const double *values,
                      const row_image *image) {
  const step_job job = {.g = g, .k = k, .next = next, .cur = cur, .prev = prev, .snapshot = snapshot,
                        .image = image, .update = snap_cpu_kernels_for(g), .sources = sources, .values = values};
  const bool three_d = g->dims == 3;
  const long block = three_d ? rows_per_y_block(g) : 1;
  const long blocks = three_d ? (g->n[1] + block - 1) / block : 1, planes = three_d ? g->n[0] : (g->n[0] + 1) / 2;
#pragma omp parallel if (g->interior >= SNAP_OMP_MIN_POINTS)
  {
    double buffers[2 * SNAP_ROW_CHUNK] __attribute__((aligned(64)));
#pragma omp for collapse(2) schedule(static) nowait
    for (long b = 0; b < blocks; b++)
      for (long o = 0; o < planes; o++) {
        if (!three_d) {
          step_pair_of_rows(&job, o, buffers);
          continue;
        }
        long end = (b + 1) * block < g->n[1] ? (b + 1) * block : g->n[1];
        for (long j = b * block; j < end; j++) step_rows_at(&job, o * g->n[1] + j, snap_index(g, o, j, 0), 0, 0, buffers);
      }
    if (snapshot) stream_fence();
  }
}

/* Step job's unit o: in 2-D row pair o, in 3-D the rows [y_from, y_to)
 * of x plane o. */
static void step_unit(const step_job *job, long o, long y_from, long y_to, double *buffers) {
  const snap_grid *g = job->g;
  if (g->dims == 2) return step_pair_of_rows(job, o, buffers);
  for (long j = y_from; j < y_to; j++) step_rows_at(job, o * g->n[1] + j, snap_index(g, o, j, 0), 0, 0, buffers);
}

/* Rows per y block of a 3-D paired pass: the wavefront keeps 2r + 1 x
 * planes of each field and 2 of 1/a, each spanning the block and 3r rows
 * around it (step k reads r either side; step k + 1, r behind, r more),
 * within half of a 1 MiB L2. MAPP_SNAP_PAIR_ROWS overrides it (tuning). */
static long pair_rows_set(void) {
  static long rows = -1; /* read once: the paired step runs every other step */
  if (rows < 0) {
    const char *set = getenv("MAPP_SNAP_PAIR_ROWS");
    rows = set && atol(set) > 0 ? atol(set) : 0;
  }
  return rows;
}

static long pair_rows_per_y_block(const snap_grid *g) {
  if (pair_rows_set()) return pair_rows_set();
  long row_bytes = g->pn[2] * (long)sizeof(double), planes = 4L * g->radius + 4;
  long rows = (512L * 1024) / (planes * row_bytes) - 3L * g->radius;
  return rows < 2L * g->radius ? 2L * g->radius : rows;
}

/* The wavefront over units [from, to) in one y block: step k (`first`,
 * rows `yk`) unit by unit, step k + 1 (`second`, rows `yk1`) over the
 * units [lo, hi) `reach` units behind it. */
typedef struct {
  long from, to, lo, hi, reach;
} pair_slab;

static void pair_sweep(const step_job *first, const step_job *second, const pair_slab *s, const long yk[2],
                       const long yk1[2], double *buffers) {
  long next = s->lo;
  for (long o = s->from; o < s->to; o++) {
    step_unit(first, o, yk[0], yk[1], buffers);
    for (; next < s->hi && next + s->reach <= o; next++) step_unit(second, next, yk1[0], yk1[1], buffers);
  }
  for (; next < s->hi; next++) step_unit(second, next, yk1[0], yk1[1], buffers);
}

/* Where step k + 1's y block begins or ends for step k's bound y: `shift`
 * rows back, within the grid; the grid's end stays where it is. */
static long behind(long y, long shift, long ny) { return y == ny ? ny : y > shift ? y - shift : 0; }

/* Two steps, k and k + 1, in one pass over memory, as a wavefront along
 * x: `a` holds u^{k-2} and receives u^k, `b` holds u^{k-1} and receives
 * u^{k+1}; step k + 1 takes a unit (a 2-D row pair, a 3-D plane's rows of
 * a y block) once step k has passed it by the stencil's reach, while the
 * rows it reads are still in cache, so each field crosses memory once for
 * the two steps. Each point is computed as by two steps one after the
 * other (the same bits), the source injected into the row that holds it
 * as that row is computed, each step's snapshot streamed out row by row.
 * 2-D 600 x 200, space order 8, 1 thread, forward saving every step:
 * 0.157-0.171 s against 0.182-0.256 a step at a time (3 alternating
 * rounds).
 * 3-D sweeps y blocks one after the other, each small enough that the
 * planes the wavefront keeps stay in L2 (on the Intel VM, whole planes
 * were 1.3-1.7x slower than single steps; on the AMD one, blocks of 8 to
 * 64 rows and whole planes were alike). Step k + 1's blocks are step k's
 * moved r rows back in y (the last reaching the end): step k + 1 then
 * reads u^k only where step k has computed it (this block's rows and the
 * blocks' before), and overwrites u^{k-1} only where step k no longer
 * reads it (r rows short of the next block). 3-D 160^3, space order 8,
 * 2 threads, forward saving every step: 0.35-0.37 s against 0.44-0.49 a
 * step at a time; adjoint 0.54-0.59 against 0.66-0.67.
 * The adjoint pairs the same way: each step computes a row into an L1
 * buffer, injects its sources and images it with its own snapshot
 * (step_job.image) before writing it back; the gradient gets step k's
 * term at each point before step k + 1's, as stepping one at a time.
 * Imaging inside the AVX-512 kernels instead (no buffer, no second pass
 * over the row) made the 2-D adjoint slower: 0.27 s against 0.20 (small,
 * space order 4, 1 thread; more streams at once in the kernel's loop).
 * Threads take slabs of units. Step k + 1 writes u^{k+1} over u^{k-1},
 * which a neighbouring slab's step k still reads within the reach of the
 * slab's edge: those units of step k + 1 wait for a barrier, after which
 * every unit of step k is done. */
static void cpu_step_pair(const snap_grid *g, const snap_coeffs *k, double *a, double *b, const snap_step_pair *io) {
  const snap_row_kernels update = snap_cpu_kernels_for(g);
  const row_image images[2] = {{.snapshot = io->imaged[0], .grad = io->grad, .abs_d2 = io->abs_d2},
                               {.snapshot = io->imaged[1], .grad = io->grad, .abs_d2 = io->abs_d2}};
  const step_job first = {.g = g, .k = k, .next = a, .cur = b, .prev = a, .snapshot = io->snapshot[0],
                          .image = io->grad ? &images[0] : NULL, .update = update, .sources = io->sources,
                          .values = io->values[0]};
  const step_job second = {.g = g, .k = k, .next = b, .cur = a, .prev = b, .snapshot = io->snapshot[1],
                           .image = io->grad ? &images[1] : NULL, .update = update, .sources = io->sources,
                           .values = io->values[1]};
  const bool three_d = g->dims == 3;
  const long units = three_d ? g->n[0] : (g->n[0] + 1) / 2, reach = three_d ? g->radius : (g->radius + 1) / 2;
  const long ny = three_d ? g->n[1] : 1, block = three_d ? pair_rows_per_y_block(g) : 1, shift = three_d ? g->radius : 0;
#pragma omp parallel if (g->interior >= SNAP_OMP_MIN_POINTS)
  {
    double buffers[2 * SNAP_ROW_CHUNK] __attribute__((aligned(64)));
    int threads = omp_get_num_threads(), t = omp_get_thread_num();
    pair_slab s = {.from = units * t / threads, .to = units * (t + 1) / threads, .reach = reach};
    /* The units of step k + 1 that need no other slab: [lo, hi). */
    s.lo = t > 0 ? s.from + reach : s.from, s.hi = t < threads - 1 ? s.to - reach : s.to;
    if (s.hi < s.lo) s.hi = s.lo;
    for (long y = 0; y < ny; y += block) {
      long yk[2] = {y, y + block < ny ? y + block : ny};
      long yk1[2] = {behind(yk[0], shift, ny), behind(yk[1], shift, ny)};
      pair_sweep(&first, &second, &s, yk, yk1, buffers);
    }
#pragma omp barrier
    for (long o = s.from; o < s.to; o++)
      if (o < s.lo || o >= s.hi) step_unit(&second, o, 0, ny, buffers);
    if (io->snapshot[0] || io->snapshot[1]) stream_fence();
  }
}

static void cpu_step(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev) {
  step_rows(g, k, next, cur, prev, NULL, NULL, NULL, NULL);
}

static void cpu_step_save(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev,
                          double *snapshot) {
  step_rows(g, k, next, cur, prev, snapshot, NULL, NULL, NULL);
}

static void cpu_step_image(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur,
                           const double *prev, const snap_row_sources *sources, const double *values,
                           const double *snapshot, double *grad, double *abs_d2) {
  row_image image = {.snapshot = snapshot, .grad = grad, .abs_d2 = abs_d2};
  step_rows(g, k, next, cur, prev, NULL, sources, values, &image);
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
      snap_image_row(grad + row, u, next + row, cur + row, prev + row, g->n[2]);
      if (abs_d2) snap_abs_d2_row(abs_d2 + row, next + row, cur + row, prev + row, g->n[2]);
    }
  return MAPP_OK;
}

static int cpu_copy(const snap_grid *g, const double *from, double *to) {
  memcpy(to, from, sizeof(double) * (size_t)g->padded);
  return MAPP_OK;
}

static const char *cpu_kernels(const snap_grid *g) {
  snap_row_kernels k = snap_cpu_kernels_for(g);
  return k.wide_one[0] || k.wide_two[0] ? "avx512" : "portable";
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
    .step_in_place = true,
    .kernels = cpu_kernels,
    .step_pair = cpu_step_pair,
};
