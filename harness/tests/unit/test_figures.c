/* Figures of any axis (figures.c) from synthetic records: series and
 * medians over a matrix parameter, weak efficiency over ranks, speedup over
 * the reference variant, categorical x, and the errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "figures.h"
#include "mapp_error.h"

static json_t *record(const char *variant, const char *size, long ranks, long iterations, double fom, double eff) {
  return json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:{s:I},s:{s:f},s:{s:f}}", "app", "subgraph", "variant", variant,
                   "backend", "threads", "size", size, "ranks", ranks, "threads", 2, "exit_code", 0, "params",
                   "iterations", (json_int_t)iterations, "fom", "value", fom, "app_data", "efficiency", eff);
}

static figure_spec spec_of(const char *x, const char *y) {
  figure_spec f = {.name = (char *)"t", .x = (char *)x, .y = (char *)y};
  strv_push(&f.series, "variant");
  strv_push(&f.series, "backend");
  return f;
}

static json_t *granularity_records(void) {
  json_t *r = json_array();
  /* three repetitions at each K for two variants; the median is the middle one */
  const long ks[] = {0, 100, 1000};
  for (int k = 0; k < 3; ++k)
    for (int rep = 0; rep < 3; ++rep) {
      json_array_append_new(r, record("eager", "tiny", 1, ks[k], 1e6 * (k + 1), 0.1 * (k + 1) + 0.01 * rep));
      json_array_append_new(r, record("subgraph", "tiny", 1, ks[k], 4e6 * (k + 1), 0.3 * (k + 1) + 0.01 * rep));
    }
  json_t *other = record("eager", "tiny", 1, 0, 1.0, 0.0);
  json_object_set_new(other, "app", json_string("heat")); /* another app: left out */
  json_array_append_new(r, other);
  return r;
}

static void medians_over_a_matrix_parameter(void **state) {
  (void)state;
  json_t *r = granularity_records();
  figure_spec f = spec_of("iterations", "app_data.efficiency");
  figure_data d;
  assert_int_equal(figure_collect(r, &f, "subgraph", NULL, &d), MAPP_OK);
  assert_int_equal(d.count, 2);
  assert_string_equal(d.series[1].label, "subgraph/threads");
  assert_int_equal(d.series[1].count, 3);
  assert_float_equal(d.series[1].points[2].x, 1000, 0);
  assert_float_equal(d.series[1].points[2].y, 0.91, 1e-12); /* median of 0.90, 0.91, 0.92 */
  assert_float_equal(d.series[1].points[2].low, 0.90, 1e-12);
  assert_float_equal(d.series[1].points[2].high, 0.92, 1e-12);
  figure_data_free(&d);
  strv_free(&f.series);
  json_decref(r);
}

static void speedup_over_the_reference(void **state) {
  (void)state;
  json_t *r = granularity_records();
  figure_spec f = spec_of("iterations", "speedup");
  figure_data d;
  speedup_refs refs = {0};
  speedup_refs_add(&refs, "eager", "threads");
  assert_int_equal(figure_collect(r, &f, "subgraph", &refs, &d), MAPP_OK);
  assert_string_equal(d.reference, "eager/threads");
  assert_float_equal(d.series[1].points[0].y, 4.0, 1e-12);
  assert_float_equal(d.series[0].points[2].y, 1.0, 1e-12);
  figure_data_free(&d);
  speedup_refs_free(&refs);
  strv_free(&f.series);
  json_decref(r);
}

static void weak_efficiency_and_categories(void **state) {
  (void)state;
  json_t *r = json_array();
  json_array_append_new(r, record("eager", "tiny", 1, 0, 100.0, 0));
  json_array_append_new(r, record("eager", "tiny", 2, 0, 180.0, 0));
  json_array_append_new(r, record("eager", "tiny", 4, 0, 320.0, 0));
  figure_spec f = spec_of("ranks", "efficiency");
  figure_data d;
  assert_int_equal(figure_collect(r, &f, "subgraph", NULL, &d), MAPP_OK);
  assert_float_equal(d.series[0].points[1].y, 0.9, 1e-12);
  assert_float_equal(d.series[0].points[2].y, 0.8, 1e-12);
  figure_data_free(&d);
  json_array_append_new(r, record("eager", "small", 1, 0, 50.0, 0));
  figure_spec g = spec_of("size", "fom");
  assert_int_equal(figure_collect(r, &g, "subgraph", NULL, &d), MAPP_OK);
  assert_true(d.categorical);
  assert_int_equal(d.categories.count, 2);
  assert_string_equal(d.categories.items[1], "small");
  figure_data_free(&d);
  strv_free(&f.series);
  strv_free(&g.series);
  json_decref(r);
}

static void missing_axes_are_input_errors(void **state) {
  (void)state;
  json_t *r = granularity_records();
  figure_spec f = spec_of("width", "fom"), g = spec_of("iterations", "app_data.metg_us"),
              h = spec_of("iterations", "efficiency");
  figure_data d;
  assert_int_equal(figure_collect(r, &f, "subgraph", NULL, &d), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "no subgraph record has x 'width'"));
  mapp_error_clear();
  assert_int_equal(figure_collect(r, &g, "subgraph", NULL, &d), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "no subgraph record has a number at y 'app_data.metg_us'"));
  mapp_error_clear();
  assert_int_equal(figure_collect(r, &h, "subgraph", NULL, &d), MAPP_ERR_INPUT);
  mapp_error_clear();
  strv_free(&f.series);
  strv_free(&g.series);
  strv_free(&h.series);
  json_decref(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(medians_over_a_matrix_parameter),
      cmocka_unit_test(speedup_over_the_reference),
      cmocka_unit_test(weak_efficiency_and_categories),
      cmocka_unit_test(missing_axes_are_input_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
