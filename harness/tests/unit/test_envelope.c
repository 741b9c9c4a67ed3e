/* The envelope tolerance model: a candidate within twice the -O0/-O3
 * envelope passes; one perturbed beyond it fails; the floor stands in for
 * an exact envelope; bad references are input errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "envelope.h"
#include "mapp_error.h"

enum { N = 1000 };

/* A smooth reference field and a copy perturbed by rel * |field| in a
 * sign pattern (rounding-like, not a uniform shift). */
static void field(double *x) {
  for (int i = 0; i < N; ++i) x[i] = 300.0 + 10.0 * sin(0.01 * i);
}
static void perturbed(const double *x, double rel, double *y) {
  for (int i = 0; i < N; ++i) y[i] = x[i] * (1.0 + rel * ((i * 7919) % 3 - 1));
}

static void test_within_envelope_passes(void **unused) {
  (void)unused;
  double o0[N], o3[N], cand[N];
  field(o0);
  perturbed(o0, 1e-12, o3);
  perturbed(o0, 1.5e-12, cand);
  mapp_envelope_result r;
  assert_int_equal(mapp_envelope_check(o0, o3, cand, N, MAPP_ENVELOPE_MULTIPLE, MAPP_ENVELOPE_FLOOR, &r), MAPP_OK);
  assert_true(r.envelope > 5e-13 && r.envelope < 2e-12);
  assert_true(r.passed);
  memcpy(cand, o0, sizeof cand); /* the -O0 answer itself */
  assert_int_equal(mapp_envelope_check(o0, o3, cand, N, 2.0, MAPP_ENVELOPE_FLOOR, &r), MAPP_OK);
  assert_true(r.passed);
  assert_true(r.difference == 0.0);
}

/* The proof: a perturbation larger than the envelope fails. */
static void test_beyond_envelope_fails(void **unused) {
  (void)unused;
  double o0[N], o3[N], cand[N];
  field(o0);
  perturbed(o0, 1e-12, o3);
  perturbed(o0, 1e-9, cand);
  mapp_envelope_result r;
  assert_int_equal(mapp_envelope_check(o0, o3, cand, N, MAPP_ENVELOPE_MULTIPLE, MAPP_ENVELOPE_FLOOR, &r), MAPP_OK);
  assert_false(r.passed);
  assert_true(r.difference > r.bound);
  /* one point off by much more than the envelope also fails, and is found */
  memcpy(cand, o0, sizeof cand);
  cand[417] += 1e-6;
  assert_int_equal(mapp_envelope_check(o0, o3, cand, N, MAPP_ENVELOPE_MULTIPLE, MAPP_ENVELOPE_FLOOR, &r), MAPP_OK);
  assert_false(r.passed);
  assert_int_equal(r.worst, 417);
}

/* Builds that agree exactly: the floor is the envelope. */
static void test_floor(void **unused) {
  (void)unused;
  double o0[N], cand[N];
  field(o0);
  perturbed(o0, 1e-15, cand);
  mapp_envelope_result r;
  assert_int_equal(mapp_envelope_check(o0, o0, cand, N, 2.0, 1e-13, &r), MAPP_OK);
  assert_true(r.envelope == 0.0 && r.bound == 2e-13);
  assert_true(r.passed);
  perturbed(o0, 1e-11, cand);
  assert_int_equal(mapp_envelope_check(o0, o0, cand, N, 2.0, 1e-13, &r), MAPP_OK);
  assert_false(r.passed);
}

static void test_nonfinite_and_zero(void **unused) {
  (void)unused;
  double o0[N], o3[N], cand[N];
  field(o0);
  perturbed(o0, 1e-12, o3);
  memcpy(cand, o0, sizeof cand);
  cand[3] = NAN;
  mapp_envelope_result r;
  assert_int_equal(mapp_envelope_check(o0, o3, cand, N, 2.0, 1e-13, &r), MAPP_OK);
  assert_false(r.passed);
  assert_int_equal(r.worst, 3);
  o3[5] = INFINITY;
  mapp_error_clear();
  assert_int_equal(mapp_envelope_check(o0, o3, o0, N, 2.0, 1e-13, &r), MAPP_ERR_INPUT);
  assert_int_equal(mapp_envelope_check(o0, o0, o0, 0, 2.0, 1e-13, &r), MAPP_ERR_INPUT);
  assert_int_equal(mapp_envelope_check(o0, o0, o0, N, 0.0, 1e-13, &r), MAPP_ERR_INPUT);
  /* an all-zero reference compares absolutely */
  double zero[4] = {0}, small[4] = {0, 1e-20, 0, 0};
  assert_true(mapp_relative_l2(small, zero, 4) == 1e-20);
  /* magnitudes that would overflow a plain sum of squares */
  double big[2] = {1e200, 1e200}, bigger[2] = {1e200, 1.000001e200};
  assert_true(fabs(mapp_relative_l2(bigger, big, 2) - 1e-6 / sqrt(2.0)) < 1e-12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_within_envelope_passes),
      cmocka_unit_test(test_beyond_envelope_fails),
      cmocka_unit_test(test_floor),
      cmocka_unit_test(test_nonfinite_and_zero),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
