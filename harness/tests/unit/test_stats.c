/* Unit tests of medians, grouping, efficiency and speedup (stats.c, plotdata.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "noise.h"
#include "plotdata.h"
#include "stats.h"

#define assert_close(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-12 * fmax(1.0, fabs((double)(b))))

static json_t *app_record(const char *app, const char *variant, const char *backend, const char *scaling,
                          long ranks, double fom, int exit_code, const char *baseline) {
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:{s:s, s:f}, s:f, s:I, s:{s:s}, s:{s:s}}", "app", app,
                   "variant", variant, "backend", backend, "size", "tiny", "scaling", scaling, "ranks",
                   (json_int_t)ranks, "threads", (json_int_t)1, "fom", "name", "cell-updates/s", "value", fom,
                   "wall_s", 1.0, "exit_code", (json_int_t)exit_code, "verification", "status", "pass", "baseline",
                   "status", baseline);
}

static json_t *record(const char *variant, const char *scaling, long ranks, double fom, int exit_code,
                      const char *baseline) {
  return app_record("heat", variant, "serial", scaling, ranks, fom, exit_code, baseline);
}

/* A list of "VARIANT/BACKEND,..." references (freed by the caller). */
static speedup_refs refs_of(const char *text) {
  speedup_refs refs = {0};
  assert_int_equal(speedup_refs_parse(text, &refs), MAPP_OK);
  return refs;
}

/* weak: mpi at 1 rank (100, 110, 90) and 2 ranks (180, 160); tasks at 2 ranks (360);
 * strong: mpi at 1 (50) and 4 ranks (150); one failed run at 2 ranks. */
static json_t *sample_records(void) {
  json_t *r = json_array();
  json_array_append_new(r, record("mpi", "weak", 1, 100, 0, "pass"));
  json_array_append_new(r, record("mpi", "weak", 1, 110, 0, "pass"));
  json_array_append_new(r, record("mpi", "weak", 1, 90, 0, "pass"));
  json_array_append_new(r, record("mpi", "weak", 2, 180, 0, "pass"));
  json_array_append_new(r, record("mpi", "weak", 2, 160, 0, "fail"));
  json_array_append_new(r, record("mpi", "weak", 2, 999, 2, "none"));
  json_array_append_new(r, record("tasks", "weak", 2, 360, 0, "missing"));
  json_array_append_new(r, record("mpi", "strong", 1, 50, 0, "pass"));
  json_array_append_new(r, record("mpi", "strong", 4, 150, 0, "pass"));
  return r;
}

static const result_group *find(const group_table *t, const char *variant, const char *scaling, long ranks) {
  for (size_t i = 0; i < t->count; ++i)
    if (!strcmp(t->items[i].variant, variant) && !strcmp(t->items[i].scaling, scaling) && t->items[i].ranks == ranks)
      return &t->items[i];
  fail_msg("no group %s %s %ld", variant, scaling, ranks);
  return NULL;
}

static void medians(void **state) {
  (void)state;
  double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {7};
  assert_close(stats_median(odd, 3), 2.0);
  assert_close(stats_median(even, 4), 2.5);
  assert_close(stats_median(one, 1), 7.0);
}

static void efficiency_formula(void **state) {
  (void)state;
  assert_close(weak_efficiency(400, 4, 100, 1), 1.0);
  assert_close(weak_efficiency(200, 4, 100, 1), 0.5);
  assert_close(weak_efficiency(300, 4, 100, 2), 1.5); /* base at 2 ranks */
}

static void groups_take_median_and_spread(void **state) {
  (void)state;
  json_t *records = sample_records();
  group_table t;
  assert_int_equal(stats_group(records, &t), MAPP_OK);
  assert_int_equal(t.count, 5);
  const result_group *one = find(&t, "mpi", "weak", 1), *two = find(&t, "mpi", "weak", 2);
  assert_close(one->fom_median, 100);
  assert_close(one->fom_min, 90);
  assert_close(one->fom_max, 110);
  assert_int_equal(two->runs, 3);
  assert_int_equal(two->timed, 2); /* the exit-2 run has no time worth using */
  assert_close(two->fom_median, 170);
  assert_string_equal(two->baseline, "fail");
  assert_string_equal(two->fom_name, "cell-updates/s");
  /* sorted: strong before weak, ranks ascending within a series */
  assert_string_equal(t.items[0].scaling, "strong");
  assert_true(t.items[0].ranks < t.items[1].ranks);
  group_table_free(&t);
  json_decref(records);
}

static void derived_ratios(void **state) {
  (void)state;
  json_t *records = sample_records();
  group_table t;
  ratio r;
  assert_int_equal(stats_group(records, &t), MAPP_OK);
  assert_true(stats_weak_efficiency(&t, find(&t, "mpi", "weak", 2), &r));
  assert_close(r.value, 170.0 / (2 * 100.0));
  assert_close(r.low, 160.0 / (2 * 100.0));
  assert_false(stats_weak_efficiency(&t, find(&t, "mpi", "strong", 4), &r));
  speedup_refs mpi = refs_of("mpi/serial"), fork = refs_of("fork/serial");
  assert_true(stats_speedup(&t, find(&t, "tasks", "weak", 2), &mpi, &r));
  assert_close(r.value, 360.0 / 170.0);
  assert_false(stats_speedup(&t, find(&t, "tasks", "weak", 2), &fork, &r));
  speedup_refs_free(&mpi);
  speedup_refs_free(&fork);
  assert_true(stats_strong_speedup(&t, find(&t, "mpi", "strong", 4), &r));
  assert_close(r.value, 3.0);
  group_table_free(&t);
  json_decref(records);
}

static void plot_series_per_configuration(void **state) {
  (void)state;
  json_t *records = sample_records();
  group_table t;
  plot_set set;
  assert_int_equal(stats_group(records, &t), MAPP_OK);
  speedup_refs none = {0};
  assert_int_equal(plot_set_build(&t, "heat", PLOT_WEAK_EFFICIENCY, &none, &set), MAPP_OK);
  assert_int_equal(set.nseries, 2); /* mpi (1, 2 ranks) and tasks (2 ranks, its own base) */
  assert_string_equal(set.series[0].label, "mpi/serial t=1 tiny");
  assert_int_equal(set.series[0].npoints, 2);
  assert_close(set.series[1].points[0].y.value, 1.0);
  assert_int_equal(set.min_ranks, 1);
  assert_int_equal(set.max_ranks, 2);
  plot_set_free(&set);
  assert_int_equal(plot_set_build(&t, "heat", PLOT_SPEEDUP, &none, &set), MAPP_OK);
  assert_int_equal(set.nseries, 0); /* no reference: nothing to draw */
  plot_set_free(&set);
  assert_int_equal(plot_set_build(&t, "heat", PLOT_STRONG_SPEEDUP, &none, &set), MAPP_OK);
  assert_int_equal(set.nseries, 1);
  assert_int_equal(set.series[0].npoints, 2);
  plot_set_free(&set);
  group_table_free(&t);
  json_decref(records);
}

/* heat has mpi, crm has percrm and batched (serial and omp): with the list
 * [mpi/serial, percrm/serial] each app takes the first reference it ran,
 * and a reference present only in another app is never borrowed. */
static void each_app_takes_its_first_present_reference(void **state) {
  (void)state;
  json_t *records = json_array();
  json_array_append_new(records, app_record("heat", "mpi", "serial", "weak", 1, 100, 0, "pass"));
  json_array_append_new(records, app_record("heat", "mpi", "serial", "weak", 2, 180, 0, "pass"));
  json_array_append_new(records, app_record("crm", "percrm", "serial", "weak", 1, 10, 0, "pass"));
  json_array_append_new(records, app_record("crm", "percrm", "omp", "weak", 1, 15, 0, "pass"));
  json_array_append_new(records, app_record("crm", "batched", "serial", "weak", 1, 40, 0, "pass"));
  json_array_append_new(records, app_record("crm", "batched", "omp", "weak", 1, 60, 0, "pass"));
  group_table t;
  assert_int_equal(stats_group(records, &t), MAPP_OK);
  speedup_refs refs = refs_of("mpi/serial,percrm/serial"), crm_first = refs_of("batched/omp,mpi/serial");
  assert_int_equal(refs.count, 2);
  assert_string_equal(stats_app_reference(&t, "heat", &refs)->variant, "mpi");
  const speedup_ref *crm = stats_app_reference(&t, "crm", &refs);
  assert_string_equal(crm->variant, "percrm");
  assert_string_equal(crm->backend, "serial");
  ratio r;
  for (size_t i = 0; i < t.count; ++i) {
    const result_group *g = &t.items[i];
    if (strcmp(g->variant, "batched") == 0 && strcmp(g->backend, "omp") == 0) {
      assert_true(stats_speedup(&t, g, &refs, &r));
      assert_close(r.value, 60.0 / 10.0); /* over percrm/serial, not heat's mpi */
      assert_true(stats_speedup(&t, g, &crm_first, &r));
      assert_close(r.value, 1.0); /* the list's order decides */
    }
  }
  plot_set set;
  assert_int_equal(plot_set_build(&t, "crm", PLOT_SPEEDUP, &refs, &set), MAPP_OK);
  assert_int_equal(set.nseries, 4);
  assert_string_equal(set.reference->variant, "percrm");
  plot_set_free(&set);
  assert_int_equal(plot_set_build(&t, "heat", PLOT_SPEEDUP, &crm_first, &set), MAPP_OK);
  assert_string_equal(set.reference->variant, "mpi"); /* batched/omp is not heat's */
  plot_set_free(&set);
  speedup_refs only_crm = refs_of("percrm/omp");
  assert_null(stats_app_reference(&t, "heat", &only_crm));
  assert_false(stats_speedup(&t, find(&t, "mpi", "weak", 2), &only_crm, &r));
  speedup_refs_free(&only_crm);
  speedup_refs_free(&crm_first);
  speedup_refs_free(&refs);
  group_table_free(&t);
  json_decref(records);
}

static void reference_lists_parse(void **state) {
  (void)state;
  speedup_refs refs = refs_of("mpi/serial,percrm/omp");
  assert_int_equal(refs.count, 2);
  assert_string_equal(refs.items[1].variant, "percrm");
  assert_string_equal(refs.items[1].backend, "omp");
  char *text = speedup_refs_format(&refs);
  assert_string_equal(text, "mpi/serial, percrm/omp");
  free(text);
  speedup_refs_free(&refs);
  const char *bad[] = {"", "mpi", "mpi/", "/serial", "a/b/c", "mpi/serial,", ",mpi/serial", "mpi/serial,,x/y"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    mapp_error_clear();
    assert_int_equal(speedup_refs_parse(bad[i], &refs), MAPP_ERR_INPUT);
    assert_non_null(strstr(mapp_error_message(), "VARIANT/BACKEND"));
    speedup_refs_free(&refs);
  }
  mapp_error_clear();
}

/* A heat configuration of 12 runs on real noise (heat small, CV about 30 %),
 * their records carrying the driver's timing and disturbance; one run
 * failed. */
static json_t *judged_records(double timed_s, int disturbed_runs, double scale) {
  noise_set noise;
  assert_true(noise_load("heat-small", 1.0, &noise));
  noise_scale(&noise, scale);
  uint64_t rng = 11;
  json_t *records = json_array();
  for (int i = 0; i < 12; ++i) {
    json_t *r = record("mpi", "weak", 1, 8e8 * (1.0 + noise_draw(&noise, &rng)), 0, "pass");
    json_object_set_new(r, "timing", json_pack("{s:f, s:i}", "timed_s", timed_s, "iterations", 1));
    json_object_set_new(r, "disturbance", json_pack("{s:f}", "run_delay_fraction", i < disturbed_runs ? 0.3 : 0.0));
    json_array_append_new(records, r);
  }
  json_array_append_new(records, record("mpi", "weak", 1, 1.0, 3, "none"));
  return records;
}

static verdict_summary group_verdict(json_t *records, double precision) {
  group_table t;
  assert_int_equal(stats_group_at(records, precision, &t), MAPP_OK);
  assert_int_equal(t.count, 1);
  assert_int_equal(t.items[0].timed, 12);
  verdict_summary v = t.items[0].verdict;
  group_table_free(&t);
  json_decref(records);
  return v;
}

/* stats_group judges each group (verdict.h): interval, outliers, median
 * timed phase and the verdict, at the precision it is given. */
static void groups_carry_their_verdict(void **state) {
  (void)state;
  verdict_summary v = group_verdict(judged_records(0.5, 0, 1.0), 0.05);
  assert_int_equal(v.kind, VERDICT_NOISY); /* heat small's real spread */
  assert_true(v.low < v.median && v.median < v.high);
  assert_float_equal(v.timed_median_s, 0.5, 0.0);
  v = group_verdict(judged_records(0.5, 0, 0.01), 0.05); /* the same noise shrunk 100-fold */
  assert_int_equal(v.kind, VERDICT_STABLE);
  assert_int_equal(group_verdict(judged_records(0.5, 0, 0.01), 0.0001).kind, VERDICT_NOISY);
  assert_int_equal(group_verdict(judged_records(0.5, 4, 0.01), 0.05).kind, VERDICT_DISTURBED); /* 4 of 12 */
  assert_int_equal(group_verdict(judged_records(0.004, 4, 0.01), 0.05).kind, VERDICT_TOO_SHORT);
  /* an outlier is counted and kept */
  json_t *records = judged_records(0.5, 0, 0.01);
  json_object_set_new(json_object_get(json_array_get(records, 0), "fom"), "value", json_real(4e8));
  v = group_verdict(records, 0.05);
  assert_int_equal(v.outliers, 1);
  assert_int_equal(v.n, 12);
  /* old records (no timing, no disturbance): judged by their figures alone */
  group_table t;
  json_t *old = sample_records();
  assert_int_equal(stats_group(old, &t), MAPP_OK);
  assert_int_equal(find(&t, "mpi", "weak", 1)->verdict.kind, VERDICT_NOISY); /* 3 runs: no interval */
  assert_true(isnan(find(&t, "mpi", "weak", 1)->verdict.low));
  group_table_free(&t);
  json_decref(old);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(medians), cmocka_unit_test(efficiency_formula), cmocka_unit_test(groups_take_median_and_spread),
      cmocka_unit_test(derived_ratios), cmocka_unit_test(plot_series_per_configuration),
      cmocka_unit_test(each_app_takes_its_first_present_reference), cmocka_unit_test(reference_lists_parse),
      cmocka_unit_test(groups_carry_their_verdict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
