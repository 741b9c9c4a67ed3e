/* mapp compare's statistics on synthetic repetitions: a 10 % slowdown over
 * 10 repetitions is caught, noise of the same spread is not, and the U test
 * matches values worked out by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "perfstats.h"

enum { REPS = 10 };

/* Deterministic noise in [-spread, spread] (a fixed LCG per stream). */
static void samples(double center, double spread, uint32_t seed, double *out) {
  for (int i = 0; i < REPS; ++i) {
    seed = seed * 1664525u + 1013904223u;
    out[i] = center * (1.0 + spread * (2.0 * (seed >> 8) / 16777216.0 - 1.0));
  }
}

static void ten_percent_slowdown_is_caught(void **state) {
  (void)state;
  double old[REPS], new_[REPS];
  samples(100.0, 0.03, 1, old);
  samples(90.0, 0.03, 2, new_);
  perf_change c;
  assert_int_equal(perf_compare(old, REPS, new_, REPS, &c), 0);
  assert_true(c.ratio < 0.95);
  assert_true(c.high < 1.0); /* the interval excludes "no change" */
  assert_true(c.p_value < 0.01);
  assert_true(perf_is_regression(&c, 0.05, 0.05));
}

static void same_spread_noise_is_not(void **state) {
  (void)state;
  /* Ten draws of pure noise against pure noise: none may be flagged. */
  for (uint32_t seed = 10; seed < 20; ++seed) {
    double old[REPS], new_[REPS];
    samples(100.0, 0.03, seed, old);
    samples(100.0, 0.03, seed + 100, new_);
    perf_change c;
    assert_int_equal(perf_compare(old, REPS, new_, REPS, &c), 0);
    assert_false(perf_is_regression(&c, 0.05, 0.05));
    assert_true(c.low < 1.0 && c.high > 1.0 - 0.1);
  }
}

/* U test by hand: {1, 2, 3} against {4, 5, 6}: U = 0, and exactly one of
 * the C(6,3) = 20 arrangements is that extreme each way: p = 2/20. */
static void mann_whitney_exact_by_hand(void **state) {
  (void)state;
  double a[] = {1, 2, 3}, b[] = {4, 5, 6}, u;
  bool exact;
  double p = perf_mann_whitney(a, 3, b, 3, &u, &exact);
  assert_true(exact);
  assert_float_equal(u, 0.0, 0.0);
  assert_float_equal(p, 0.1, 1e-12);
  /* interleaved {1, 3, 5} against {2, 4, 6}: U = 3 of 9, P(U <= 3) = 7/20, p = 0.7 */
  double c[] = {1, 3, 5}, d[] = {2, 4, 6};
  p = perf_mann_whitney(c, 3, d, 3, &u, &exact);
  assert_float_equal(u, 3.0, 0.0);
  assert_float_equal(p, 0.7, 1e-12);
}

static void too_few_repetitions_are_refused(void **state) {
  (void)state;
  double one[] = {1.0}, two[] = {1.0, 2.0};
  perf_change c;
  assert_int_equal(perf_compare(one, 1, two, 2, &c), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ten_percent_slowdown_is_caught),
      cmocka_unit_test(same_spread_noise_is_not),
      cmocka_unit_test(mann_whitney_exact_by_hand),
      cmocka_unit_test(too_few_repetitions_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
