/* Unit tests of the tolerance models (harness/compare.c). */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tolerance.h"
#include "mapp_error.h"

static const tolerance exact = {TOL_EXACT, 0.0};

static double with_bits(uint64_t bits) {
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

static void exact_fails_on_one_ulp(void **state) {
  (void)state;
  double one = 1.0, next = nextafter(1.0, 2.0);
  assert_true(value_within(one, one, exact));
  assert_false(value_within(next, one, exact));
  assert_int_equal(ulp_distance(next, one), 1);
}

static void exact_compares_bits_not_values(void **state) {
  (void)state;
  double quiet_nan = with_bits(0x7ff8000000000000ull), other_nan = with_bits(0x7ff8000000000001ull);
  assert_true(value_within(quiet_nan, quiet_nan, exact));
  assert_false(value_within(other_nan, quiet_nan, exact));
  assert_false(value_within(-0.0, 0.0, exact)); /* same value, other bits */
  assert_true(value_within(-0.0, 0.0, (tolerance){TOL_ULP, 0.0}));
}

static void ulp_distance_across_sign_and_zero(void **state) {
  (void)state;
  assert_int_equal(ulp_distance(0.0, -0.0), 0);
  assert_int_equal(ulp_distance(DBL_TRUE_MIN, 0.0), 1);
  assert_int_equal(ulp_distance(-DBL_TRUE_MIN, DBL_TRUE_MIN), 2);
  assert_int_equal(ulp_distance(-1.0, nextafter(-1.0, -2.0)), 1);
  assert_int_equal(ulp_distance(1.0, nextafter(nextafter(1.0, 2.0), 2.0)), 2);
  assert_int_equal(ulp_distance(INFINITY, DBL_MAX), 1);
  assert_true(ulp_distance(-INFINITY, INFINITY) > (1ull << 62));
  assert_true(ulp_distance(NAN, 1.0) == UINT64_MAX);
  /* symmetric */
  assert_int_equal(ulp_distance(-2.5, 3.0), ulp_distance(3.0, -2.5));
}

static void ulp_model_bound(void **state) {
  (void)state;
  double two_up = nextafter(nextafter(1.0, 2.0), 2.0);
  assert_true(value_within(two_up, 1.0, (tolerance){TOL_ULP, 2.0}));
  assert_false(value_within(two_up, 1.0, (tolerance){TOL_ULP, 1.0}));
}

static void abs_model_bound(void **state) {
  (void)state;
  assert_true(value_within(1.5, 1.0, (tolerance){TOL_ABS, 0.5}));
  assert_false(value_within(1.5, 1.0, (tolerance){TOL_ABS, 0.4}));
  assert_false(value_within(NAN, 1.0, (tolerance){TOL_ABS, 1e300}));
}

/* rel-max: every value within bound x the field's largest |reference|,
 * so a value near zero may differ by the rounding of the largest ones. */
static void rel_max_model_scales_by_the_field(void **state) {
  (void)state;
  const double reference[] = {1000.0, -2.0, 0.0, 1e-9};
  const double near[] = {1000.0 + 5e-9, -2.0 + 9e-9, 9e-9, 0.0};
  const double off[] = {1000.0, -2.0, 2e-8, 1e-9};
  field_stats s;
  compare_values(near, reference, 4, (tolerance){TOL_REL_MAX, 1e-11}, &s);
  assert_int_equal(s.violations, 0);
  compare_values(off, reference, 4, (tolerance){TOL_REL_MAX, 1e-11}, &s);
  assert_int_equal(s.violations, 1);
  assert_int_equal(s.first_violation_at, 2);
  /* rel would have failed the values near zero */
  compare_values(near, reference, 4, (tolerance){TOL_REL, 1e-11}, &s);
  assert_true(s.violations > 0);
  tol_model m;
  assert_int_equal(tolerance_parse_model("rel-max", &m), 0);
  assert_int_equal(m, TOL_REL_MAX);
}

static void rel_model_bound_and_zero_floor(void **state) {
  (void)state;
  assert_true(value_within(100.1, 100.0, (tolerance){TOL_REL, 1e-3}));
  assert_false(value_within(100.1, 100.0, (tolerance){TOL_REL, 5e-4}));
  assert_true(value_within(-100.1, -100.0, (tolerance){TOL_REL, 1e-3}));
  /* a zero reference has no relative scale: the bound acts as absolute */
  assert_true(value_within(1e-13, 0.0, (tolerance){TOL_REL, 1e-12}));
  assert_false(value_within(1e-11, 0.0, (tolerance){TOL_REL, 1e-12}));
}

static void compare_values_finds_the_worst(void **state) {
  (void)state;
  double ref[6] = {1, 2, 3, 4, 5, 6}, got[6];
  memcpy(got, ref, sizeof ref);
  got[4] += 1e-12;
  got[1] += 1e-14;
  field_stats s;
  compare_values(got, ref, 6, exact, &s);
  assert_int_equal(s.count, 6);
  assert_int_equal(s.violations, 2);
  assert_int_equal(s.first_violation_at, 1);
  assert_int_equal(s.worst_abs_at, 4);
  assert_true(fabs(s.worst_abs - 1e-12) < 1e-15);
  assert_true(fabs(s.worst_rel - 1e-12 / 5.0) < 1e-15);
  compare_values(got, ref, 6, (tolerance){TOL_ABS, 1e-9}, &s);
  assert_int_equal(s.violations, 0);
}

static void model_names_parse(void **state) {
  (void)state;
  tol_model m;
  assert_int_equal(tolerance_parse_model("ulp", &m), MAPP_OK);
  assert_int_equal(m, TOL_ULP);
  assert_string_equal(tolerance_model_name(TOL_REL), "rel");
  mapp_error_clear();
  assert_int_equal(tolerance_parse_model("envelope", &m), MAPP_OK);
  assert_int_equal(m, TOL_ENVELOPE);
  assert_string_equal(tolerance_model_name(TOL_ENVELOPE), "envelope");
  assert_int_equal(tolerance_parse_model("fuzzy", &m), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "envelope")); /* the choices name it */
  mapp_error_clear();
  /* envelope judges whole fields (envelope_file.c): no value violates it alone */
  assert_true(value_within(1.0, 2.0, (tolerance){TOL_ENVELOPE, 2.0}));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exact_fails_on_one_ulp),         cmocka_unit_test(exact_compares_bits_not_values),
      cmocka_unit_test(ulp_distance_across_sign_and_zero), cmocka_unit_test(ulp_model_bound),
      cmocka_unit_test(abs_model_bound),                cmocka_unit_test(rel_model_bound_and_zero_floor),
      cmocka_unit_test(rel_max_model_scales_by_the_field),
      cmocka_unit_test(compare_values_finds_the_worst), cmocka_unit_test(model_names_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
