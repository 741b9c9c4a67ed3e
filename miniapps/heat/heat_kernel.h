/* The Gauss-Seidel block update every heat variant shares, written once so
 * all variants give bit-for-bit the same matrix.
 *
 * g is a row-major grid with row stride `stride`; the block covers rows
 * [r0, r0 + nr) and columns [c0, c0 + nc), all interior (the caller keeps a
 * ring of boundary/halo cells around it). In place, so a cell sees its top
 * and left neighbours of this timestep and its bottom and right ones of the
 * previous timestep, whatever the block size. */
#ifndef HEAT_KERNEL_H
#define HEAT_KERNEL_H

/* The average of the four neighbours. This is the one place the sum order
 * lives ((up + down) + left) + right, then * 0.25: changing it changes the
 * answer. Every kernel below goes through it, whether its operands come from
 * memory (heat_cell) or from registers (the skewed kernel). No product
 * feeds an addition, so FMA contraction cannot change it either. */
static inline double heat_avg4(double up, double down, double left, double right) {
  return 0.25 * (up + down + left + right);
}

/* One cell, its neighbours read from the grid. */
static inline double heat_cell(const double *restrict g, long i, long stride) {
  return heat_avg4(g[i - stride], g[i + stride], g[i - 1], g[i + 1]);
}

/* Row by row: the reference order. Each cell waits for its left
 * neighbour, so one row is a chain of dependent adds (latency-bound). */
static inline void heat_block_rowwise(double *restrict g, long stride, long r0, long nr, long c0,
                                      long nc) {
  for (long r = r0; r < r0 + nr; ++r) {
    double *row = g + r * stride;
    for (long c = c0; c < c0 + nc; ++c) row[c] = heat_cell(g, r * stride + c, stride);
  }
}

/* ---- Skewed wavefront: several rows in flight, same order of updates ----
 *
 * A band of k rows [r, r + k) advances in steps; at step s row r + j
 * updates column c0 + s - j (row j trails row j - 1 by one column). Each
 * cell then still sees, exactly as in the row-wise order,
 *   up    (r+j-1, c): updated at step s-1 by row j-1 (or by the band above),
 *   left  (r+j, c-1): updated at step s-1 by row j itself,
 *   down  (r+j+1, c): not yet updated (row j+1 reaches c at step s+1),
 *   right (r+j, c+1): not yet updated,
 * so the result is bit for bit the row-wise one, while the k chains of
 * dependent adds are independent of each other and overlap in the core. */

/* Deepest band heat_block_skewed_depth accepts (registers per band). */
#define HEAT_SKEW_MAX 16

/* Steps [s0, s1) of a band where some rows fall outside the block's columns
 * (the start and end triangles of the wavefront, or all of a block
 * narrower than the band): neighbours read from the grid. */
static inline void heat_band_edge(double *restrict g, long stride, long r, int k, long c0, long nc,
                                  long s0, long s1) {
  for (long s = s0; s < s1; ++s) {
    long jlo = s - nc + 1 > 0 ? s - nc + 1 : 0; /* rows already past the last column */
    long jhi = s < k - 1 ? s : k - 1;           /* rows not yet at the first column */
    for (long j = jlo; j <= jhi; ++j) {
      long i = (r + j) * stride + c0 + s - j;
      g[i] = heat_cell(g, i, stride);
    }
  }
}

/* How far ahead, in cells, each row of a band prefetches the row below it
 * (the lines it reads next as `down`, the only ones that come from
 * memory). A band reads k streams offset by one column each, which the
 * hardware prefetchers follow late: on the 4096^2 grid, one core, depth 8,
 * prefetching 64 cells (8 lines) ahead took the kernel from 1.47 to 1.98 G
 * cell-updates/s as one block and from 1.78 to 1.91 in 256^2 blocks;
 * 16 and 32 ahead gained less. */
#define HEAT_PREFETCH_AHEAD 64

/* Steps [s0, s1) where all k rows are inside the block (k - 1 <= s0, s1 <= nc).
 * Each row's last value stays in a register: it is the left neighbour of
 * its next cell and the up neighbour of the next row's next cell, so the
 * chains never wait on a store-to-load round trip through memory. The old
 * value right of row j is also the one below row j - 1 at the same step
 * (both are row j, column c0 + s - j + 1), so it is loaded once and
 * handed down: a step loads k + 2 values and stores k. With k a constant
 * the lane loop unrolls and v[], row[] live in registers. */
static inline __attribute__((always_inline)) void heat_band_steady(double *restrict g, long stride,
                                                                   long r, int k, long c0, long s0,
                                                                   long s1) {
  double *base = g + r * stride + c0;
  const double *above = base - stride; /* row r - 1, the up of the band's first row */
  double *row[HEAT_SKEW_MAX + 1];      /* row j's cell at step s is row[j][s]; row[k]: below */
  double v[HEAT_SKEW_MAX];
  for (int j = 0; j <= k; ++j) row[j] = base + j * (stride - 1);
  for (int j = 0; j < k; ++j) v[j] = row[j][s0 - 1];
  for (long s = s0; s < s1; ++s) {
    /* One prefetch per 64-byte line of each row read as `down`; none past
     * the block's columns. */
    if ((s & 7) == 0 && s + HEAT_PREFETCH_AHEAD < s1)
      for (int j = 1; j <= k; ++j) __builtin_prefetch(row[j] + s + 1 + HEAT_PREFETCH_AHEAD);
    double below = row[k][s + 1];
    /* Last row first, so v[j - 1] still holds row j - 1's previous step. */
    for (int j = k - 1; j >= 0; --j) {
      double right = row[j][s + 1];
      v[j] = heat_avg4(j > 0 ? v[j - 1] : above[s], below, v[j], right);
      row[j][s] = v[j];
      below = right;
    }
  }
}

/* One band of k rows starting at row r: start triangle, steady part, end
 * triangle (steps run from 0 to nc + k - 2). */
static inline __attribute__((always_inline)) void heat_band_skewed(double *restrict g, long stride,
                                                                   long r, int k, long c0,
                                                                   long nc) {
  long s_end = nc + k - 1;
  if (nc <= k - 1) { /* no step has all rows inside the block */
    heat_band_edge(g, stride, r, k, c0, nc, 0, s_end);
    return;
  }
  heat_band_edge(g, stride, r, k, c0, nc, 0, k - 1);
  heat_band_steady(g, stride, r, k, c0, k - 1, nc);
  heat_band_edge(g, stride, r, k, c0, nc, nc, s_end);
}

/* The block in bands of `depth` rows (1 <= depth <= HEAT_SKEW_MAX), top to
 * bottom, then one band of the remaining rows. Call it with a constant
 * depth so each band's lanes unroll into registers. */
static inline __attribute__((always_inline)) void heat_block_skewed_depth(double *restrict g,
                                                                          long stride, long r0,
                                                                          long nr, long c0,
                                                                          long nc, int depth) {
  long r = r0, end = r0 + nr;
  for (; end - r >= depth; r += depth) heat_band_skewed(g, stride, r, depth, c0, nc);
  if (r < end) heat_band_skewed(g, stride, r, (int)(end - r), c0, nc);
}

/* Rows in flight of heat_block_skewed. One row is a chain of three
 * dependent operations per cell (two adds and the multiply, ~9 cycles);
 * k rows overlap k chains until memory or the core's issue width binds.
 * mapp-heat-bench, one core, 4096^2 grid (G cell-updates/s, fraction of the
 * STREAM triad at 16 bytes/cell): row-wise 0.46 (0.19), depth 2 0.83
 * (0.35), 4 1.29 (0.54), 8 1.90 (0.79); depth 16 ran at 1.4 (16 streams,
 * and its 16 chains spill registers), though slightly faster in cache. */
#define HEAT_SKEW_DEPTH 8

/* Defines `name`, the skewed kernel at a constant depth (the unrolled,
 * register-resident code), with heat_block_update's signature, for the
 * benchmarks and tests that compare depths. */
#define HEAT_DEFINE_SKEWED_AT(name, depth)                                                         \
  static void name(double *restrict g, long stride, long r0, long nr, long c0, long nc) {          \
    heat_block_skewed_depth(g, stride, r0, nr, c0, nc, (depth));                                   \
  }

static inline void heat_block_skewed(double *restrict g, long stride, long r0, long nr, long c0,
                                     long nc) {
  heat_block_skewed_depth(g, stride, r0, nr, c0, nc, HEAT_SKEW_DEPTH);
}

/* The kernel every variant calls: the fastest of the bit-identical orders. */
static inline void heat_block_update(double *restrict g, long stride, long r0, long nr, long c0,
                                     long nc) {
  heat_block_skewed(g, stride, r0, nr, c0, nc);
}

#endif
