/* heat_kernel.h: the skewed kernel (every depth, the unrolled constant
 * depths that production uses and the generic runtime depth) gives bit for
 * bit the row-wise Gauss-Seidel result, over block shapes with remainder
 * bands, 1 x N and N x 1 blocks, blocks narrower than the band, several
 * blocks and timesteps; and the comparison is sharp enough to catch a
 * changed sum order or one ulp. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "heat_kernel.h"

typedef void (*kernel_fn)(double *restrict g, long stride, long r0, long nr, long c0, long nc);

/* A grid with a margin of interior-like cells around the block, so a write
 * outside the block is caught too. */
typedef struct {
  long rows, cols; /* whole grid, ring included */
  double *ref, *out;
} grid_pair;

enum { MARGIN = 2 };

static uint64_t rng_state;
static double next_random(void) { /* splitmix64, uniform in [0, 1) */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* Random values in both copies: any change of operands or sum order then
 * shows up in the last bits with overwhelming probability. */
static grid_pair pair_new(long rows, long cols, uint64_t seed) {
  grid_pair p = {rows, cols, malloc(sizeof(double) * rows * cols), malloc(sizeof(double) * rows * cols)};
  assert_non_null(p.ref);
  assert_non_null(p.out);
  rng_state = seed;
  for (long i = 0; i < rows * cols; ++i) p.ref[i] = p.out[i] = next_random();
  return p;
}

static void pair_free(grid_pair *p) {
  free(p->ref);
  free(p->out);
}

/* Index of the first cell where the two grids differ in any bit, or -1. */
static long first_difference(const grid_pair *p) {
  size_t n = (size_t)(p->rows * p->cols);
  if (memcmp(p->ref, p->out, n * sizeof(double)) == 0) return -1;
  for (size_t i = 0; i < n; ++i)
    if (memcmp(&p->ref[i], &p->out[i], sizeof(double)) != 0) return (long)i;
  return -1;
}

static void assert_identical(const grid_pair *p, const char *what, long nr, long nc) {
  long i = first_difference(p);
  if (i >= 0)
    fail_msg("%s, block %ld x %ld: cell (%ld, %ld) is %.17g, row-wise gives %.17g", what, nr, nc,
             i / p->cols, i % p->cols, p->out[i], p->ref[i]);
}

/* ---- the kernels under test ---- */

/* Constant depths: the unrolled, register-resident code the bench and the
 * app run. */
HEAT_DEFINE_SKEWED_AT(skewed2, 2)
HEAT_DEFINE_SKEWED_AT(skewed3, 3)
HEAT_DEFINE_SKEWED_AT(skewed4, 4)
HEAT_DEFINE_SKEWED_AT(skewed8, 8)
HEAT_DEFINE_SKEWED_AT(skewed16, HEAT_SKEW_MAX)

static const struct {
  const char *name;
  kernel_fn fn;
} kernels[] = {{"skewed2", skewed2}, {"skewed3", skewed3},   {"skewed4", skewed4},
               {"skewed8", skewed8}, {"skewed16", skewed16}, {"heat_block_update", heat_block_update}};

/* One block of nr x nc at (MARGIN, MARGIN) must match row-wise, updated by
 * `run`, or when run is NULL by the skewed kernel at a depth known only at
 * run time (the generic, not unrolled code path). */
static void check_block(long nr, long nc, const char *name, kernel_fn run, int depth) {
  grid_pair p = pair_new(nr + 2 * MARGIN, nc + 2 * MARGIN, (uint64_t)(nr * 1000 + nc));
  heat_block_rowwise(p.ref, p.cols, MARGIN, nr, MARGIN, nc);
  if (run)
    run(p.out, p.cols, MARGIN, nr, MARGIN, nc);
  else
    heat_block_skewed_depth(p.out, p.cols, MARGIN, nr, MARGIN, nc, depth);
  char what[64];
  if (run)
    snprintf(what, sizeof what, "%s", name);
  else
    snprintf(what, sizeof what, "runtime depth %d", depth);
  assert_identical(&p, what, nr, nc);
  pair_free(&p);
}

/* Every shape up to 2 bands of the deepest skew in each direction: all
 * remainders, 1 x N, N x 1, blocks narrower than a band. */
static void test_small_shapes(void **state) {
  (void)state;
  for (long nr = 1; nr <= 2 * HEAT_SKEW_MAX + 1; ++nr)
    for (long nc = 1; nc <= 2 * HEAT_SKEW_MAX + 1; ++nc) {
      for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k)
        check_block(nr, nc, kernels[k].name, kernels[k].fn, 0);
      for (int depth = 1; depth <= HEAT_SKEW_MAX; ++depth) check_block(nr, nc, NULL, NULL, depth);
    }
}

/* Long thin and larger blocks, where the steady part dominates. */
static void test_large_shapes(void **state) {
  (void)state;
  static const long shapes[][2] = {{1, 1000}, {1000, 1}, {2, 513}, {513, 2}, {37, 129},
                                   {129, 37}, {64, 64},  {100, 7}, {7, 100}, {255, 257}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k)
      check_block(shapes[s][0], shapes[s][1], kernels[k].name, kernels[k].fn, 0);
}

/* A grid of blocks with remainders, swept block by block for several
 * timesteps as heat_update_blocks does: the dependencies across block
 * edges and timesteps hold too. */
static void sweep(kernel_fn run, double *g, long n_r, long n_c, long br, long bc) {
  for (long r = 1; r <= n_r; r += br)
    for (long c = 1; c <= n_c; c += bc)
      run(g, n_c + 2, r, br < n_r + 1 - r ? br : n_r + 1 - r, c, bc < n_c + 1 - c ? bc : n_c + 1 - c);
}

static void test_blocks_and_timesteps(void **state) {
  (void)state;
  const long n_r = 100, n_c = 120;
  static const long blocks[][2] = {{16, 16}, {7, 9}, {100, 120}, {1, 120}, {100, 1}, {13, 3}};
  for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; ++b) {
    grid_pair p = pair_new(n_r + 2, n_c + 2, 42 + b);
    for (int step = 0; step < 5; ++step) {
      sweep(heat_block_rowwise, p.ref, n_r, n_c, blocks[b][0], blocks[b][1]);
      sweep(heat_block_update, p.out, n_r, n_c, blocks[b][0], blocks[b][1]);
    }
    assert_identical(&p, "heat_block_update, 5 timesteps", blocks[b][0], blocks[b][1]);
    pair_free(&p);
  }
}

/* ---- the check can fail ---- */

/* Row-wise with the sum in another order ((left + right) + up) + down:
 * mathematically the same average, not bit for bit. */
static void reordered_rowwise(double *restrict g, long stride, long r0, long nr, long c0, long nc) {
  for (long r = r0; r < r0 + nr; ++r)
    for (long c = c0; c < c0 + nc; ++c) {
      long i = r * stride + c;
      g[i] = 0.25 * (g[i - 1] + g[i + 1] + g[i - stride] + g[i + stride]);
    }
}

static void test_reordered_sum_detected(void **state) {
  (void)state;
  grid_pair p = pair_new(40 + 2, 50 + 2, 7);
  heat_block_rowwise(p.ref, p.cols, 1, 40, 1, 50);
  reordered_rowwise(p.out, p.cols, 1, 40, 1, 50);
  assert_true(first_difference(&p) >= 0);
  pair_free(&p);
}

static void test_one_ulp_detected(void **state) {
  (void)state;
  grid_pair p = pair_new(40 + 2, 50 + 2, 8);
  heat_block_rowwise(p.ref, p.cols, 1, 40, 1, 50);
  heat_block_update(p.out, p.cols, 1, 40, 1, 50);
  assert_int_equal(first_difference(&p), -1);
  long victim = 17 * p.cols + 23;
  p.out[victim] = nextafter(p.out[victim], INFINITY);
  assert_int_equal(first_difference(&p), victim);
  pair_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_shapes),
      cmocka_unit_test(test_large_shapes),
      cmocka_unit_test(test_blocks_and_timesteps),
      cmocka_unit_test(test_reordered_sum_detected),
      cmocka_unit_test(test_one_ulp_detected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
