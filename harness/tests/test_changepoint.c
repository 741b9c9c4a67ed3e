/* mapp history's change-point detection on synthetic histories built from a
 * real record (tests/history-template.json, a heat run of ci/quick-sweep.sh):
 * each revision runs 5 repetitions whose figure of merit is the template's
 * times the revision's level times noise of +-3 % (uniform, the spread
 * mapp compare's tests use), stored in an in-memory history and read back as
 * the series `mapp history` judges. Goals:
 *   (a) a 5 % step in 40 revisions is found at its revision in >= 95 of 100 trials;
 *   (b) pure noise raises at most 5 alarms in 100 series;
 *   (c) a 2 % step counts at a 1 % threshold and not at 5 %. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "changepoint.h"
#include "historydb.h"

enum { REVISIONS = 40, REPETITIONS = 5, TRIALS = 100 };
static const double NOISE = 0.03;

static const char *template_path;
static json_t *template_record;

static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1]. */
static double unit_noise(uint64_t *rng) { return 2.0 * (double)(next_random(rng) >> 11) / 9007199254740992.0 - 1.0; }

/* The template as revision k's repetition r: its own revision hash, a run
 * time an hour per revision later, and figure of merit fom. */
static json_t *synthetic_record(size_t k, size_t r, double fom) {
  json_t *rec = json_deep_copy(template_record);
  char revision[16], when[32];
  snprintf(revision, sizeof revision, "%012zx", (size_t)(0xa0000000000ull + k));
  snprintf(when, sizeof when, "2026-01-%02zuT%02zu:%02zu:00Z", 1 + k / 24, k % 24, r);
  json_object_set_new(rec, "git_revision", json_string(revision));
  json_object_set_new(rec, "time", json_string(when));
  json_object_set_new(rec, "repetition", json_integer((json_int_t)r));
  json_object_set_new(json_object_get(rec, "fom"), "value", json_real(fom));
  return rec;
}

/* Records of a history whose level drops by `step` (0.05: 5 %) from revision
 * step_at on (step 0: no change). */
static json_t *synthetic_history(size_t step_at, double step, uint64_t seed) {
  json_t *records = json_array();
  const double base = json_number_value(json_object_get(json_object_get(template_record, "fom"), "value"));
  uint64_t rng = seed;
  for (size_t k = 0; k < REVISIONS; ++k)
    for (size_t r = 0; r < REPETITIONS; ++r) {
      double level = k >= step_at ? 1.0 - step : 1.0;
      json_array_append_new(records, synthetic_record(k, r, base * level * (1.0 + NOISE * unit_noise(&rng))));
    }
  return records;
}

/* Through the history as `mapp history` runs it: added, read back as a
 * series (per-revision medians, ordered), change points found. */
static void detect_in_history(const json_t *records, history_series_set *set, change_point **points, size_t *count) {
  history_db *db = NULL;
  assert_int_equal(historydb_open(":memory:", true, &db), 0);
  json_t *dates = json_object();
  history_add_tally tally;
  assert_int_equal(historydb_add(db, records, dates, &tally), 0);
  assert_int_equal(tally.added, json_array_size(records));
  assert_int_equal(historydb_series(db, set), 0);
  historydb_close(db);
  json_decref(dates);
  assert_int_equal(set->count, 1);
  const history_series *s = &set->items[0];
  double medians[REVISIONS];
  assert_int_equal(s->count, REVISIONS);
  for (size_t i = 0; i < s->count; ++i) {
    assert_int_equal(s->points[i].runs, REPETITIONS);
    medians[i] = s->points[i].median;
  }
  changepoint_options opt = changepoint_defaults();
  assert_int_equal(changepoint_detect(medians, s->count, &opt, points, count), 0);
}

/* A slower step of at least threshold within `slack` revisions of step_at. */
static bool found_near(const change_point *points, size_t count, size_t step_at, size_t slack, double threshold) {
  for (size_t i = 0; i < count; ++i)
    if (changepoint_worse(&points[i], threshold) && points[i].index + slack >= step_at && points[i].index <= step_at + slack)
      return true;
  return false;
}

/* The revision hash of step_at: the change point must name it. */
static bool found_at(const history_series_set *set, const change_point *points, size_t count, size_t step_at,
                     double threshold) {
  char want[16];
  snprintf(want, sizeof want, "%012zx", (size_t)(0xa0000000000ull + step_at));
  for (size_t i = 0; i < count; ++i)
    if (changepoint_worse(&points[i], threshold) && !strcmp(set->items[0].points[points[i].index].revision, want))
      return true;
  return false;
}

static void five_percent_step_found_at_its_revision(void **state) {
  (void)state;
  int hits = 0;
  for (uint64_t trial = 0; trial < TRIALS; ++trial) {
    size_t step_at = 10 + (size_t)(trial % 21); /* revisions 10..30 of 40 */
    json_t *records = synthetic_history(step_at, 0.05, 1000 + trial);
    history_series_set set;
    change_point *points;
    size_t count;
    detect_in_history(records, &set, &points, &count);
    hits += found_at(&set, points, count, step_at, 0.04);
    free(points);
    history_series_set_free(&set);
    json_decref(records);
  }
  printf("5 %% step in %d revisions (+-3 %% noise, %d repetitions): found at its revision in %d of %d trials\n",
         REVISIONS, REPETITIONS, hits, TRIALS);
  assert_true(hits >= 95);
}

static void pure_noise_rarely_alarms(void **state) {
  (void)state;
  int alarms = 0, regressions = 0;
  for (uint64_t trial = 0; trial < TRIALS; ++trial) {
    json_t *records = synthetic_history(REVISIONS, 0.0, 5000 + trial);
    history_series_set set;
    change_point *points;
    size_t count;
    detect_in_history(records, &set, &points, &count);
    alarms += count > 0;
    for (size_t i = 0; i < count; ++i) regressions += changepoint_worse(&points[i], 0.05);
    free(points);
    history_series_set_free(&set);
    json_decref(records);
  }
  printf("pure noise: change points in %d of %d series, %d of them 5 %% slower\n", alarms, TRIALS, regressions);
  assert_true(alarms <= 5);
  assert_int_equal(regressions, 0);
}

/* What `mapp history check --threshold` decides on a 2 % step. At +-3 %
 * noise a 2 % step is 1.8 standard deviations of a revision's median: it is
 * found in most histories (77 of these 100 within 2 revisions, 88 anywhere),
 * and never counts at 5 %. tests/history.sh checks the threshold's edge
 * through `mapp history check` on a step that is found every time. */
static void two_percent_step_follows_the_threshold(void **state) {
  (void)state;
  int at_one = 0, at_five = 0, anywhere = 0;
  for (uint64_t trial = 0; trial < TRIALS; ++trial) {
    json_t *records = synthetic_history(24, 0.02, 9000 + trial);
    history_series_set set;
    change_point *points;
    size_t count;
    detect_in_history(records, &set, &points, &count);
    at_one += found_near(points, count, 24, 2, 0.01);
    anywhere += found_near(points, count, 24, REVISIONS, 0.01);
    at_five += found_near(points, count, 24, REVISIONS, 0.05);
    free(points);
    history_series_set_free(&set);
    json_decref(records);
  }
  printf("2 %% step: reported at --threshold 1 in %d of %d trials within 2 revisions of it (%d anywhere), at "
         "--threshold 5 in %d\n",
         at_one, TRIALS, anywhere, at_five);
  assert_true(at_one >= 70);
  assert_int_equal(at_five, 0);
}

/* Q by hand: {0, 0 | 1, 1}: between-sum 4 over 4 pairs, within 0:
 * E = 2 * 4/4 = 2, Q = 2*2/4 * 2 = 2. {0 | 0, 1, 1}: between 2/3 per pair x
 * 2 = 4/3, within the right 2/3: E = 4/3 - 2/3 = 2/3, Q = 3/4 * 2/3 = 1/2. */
static void divergence_by_hand(void **state) {
  (void)state;
  const double x[] = {0, 0, 1, 1};
  assert_float_equal(changepoint_divergence(x, 4, 2), 2.0, 1e-12);
  assert_float_equal(changepoint_divergence(x, 4, 1), 0.5, 1e-12);
}

/* A clean step is found where it is, its size is the segments' means, and
 * the answer is the same every time (the permutations' seed is fixed). */
static void clean_step_is_exact_and_reproducible(void **state) {
  (void)state;
  double x[30];
  for (int i = 0; i < 30; ++i) x[i] = i < 18 ? 100.0 + (i % 3) * 0.1 : 90.0 + (i % 3) * 0.1;
  changepoint_options opt = changepoint_defaults();
  change_point *a, *b;
  size_t na, nb;
  assert_int_equal(changepoint_detect(x, 30, &opt, &a, &na), 0);
  assert_int_equal(changepoint_detect(x, 30, &opt, &b, &nb), 0);
  assert_int_equal(na, 1);
  assert_int_equal(nb, 1);
  assert_int_equal(a[0].index, 18);
  assert_float_equal(a[0].change, -0.1, 2e-3);
  assert_float_equal(a[0].p_value, b[0].p_value, 0.0);
  assert_true(a[0].p_value <= opt.alpha);
  assert_true(changepoint_worse(&a[0], 0.05));
  assert_false(changepoint_worse(&a[0], 0.15));
  free(a);
  free(b);
}

/* Two steps (down, then back up) are both found; a flat or short series has none. */
static void two_steps_and_edge_cases(void **state) {
  (void)state;
  double x[36];
  for (int i = 0; i < 36; ++i) x[i] = (i >= 12 && i < 24 ? 80.0 : 100.0) + (i % 4) * 0.2;
  changepoint_options opt = changepoint_defaults();
  change_point *c;
  size_t n;
  assert_int_equal(changepoint_detect(x, 36, &opt, &c, &n), 0);
  assert_int_equal(n, 2);
  assert_int_equal(c[0].index, 12);
  assert_int_equal(c[1].index, 24);
  assert_true(c[0].change < -0.15 && c[1].change > 0.15);
  free(c);
  double flat[20];
  for (int i = 0; i < 20; ++i) flat[i] = 5.0;
  assert_int_equal(changepoint_detect(flat, 20, &opt, &c, &n), 0);
  assert_int_equal(n, 0);
  assert_int_equal(changepoint_detect(x, 3, &opt, &c, &n), 0);
  assert_int_equal(n, 0);
  opt.min_segment = 1;
  assert_int_equal(changepoint_detect(x, 36, &opt, &c, &n), 2);
}

/* The history's side of a series: repetitions of one configuration and
 * revision are one point (median, min, max); the same record added twice
 * is stored once; another setting is another series; a known commit date
 * orders revisions before the time they ran does. */
static void history_groups_orders_and_stores_once(void **state) {
  (void)state;
  history_db *db = NULL;
  assert_int_equal(historydb_open(":memory:", true, &db), 0);
  json_t *records = json_array();
  const double foms[] = {10.0, 30.0, 20.0};
  for (size_t r = 0; r < 3; ++r) json_array_append_new(records, synthetic_record(1, r, foms[r]));
  json_array_append_new(records, synthetic_record(2, 0, 50.0)); /* ran later, committed earlier */
  json_t *other = synthetic_record(1, 0, 7.0);
  json_object_set_new(other, "setting", json_string("steps50"));
  json_array_append_new(records, other);
  json_t *dates = json_pack("{s:s, s:s}", "0a0000000001", "2026-02-02T10:00:00+01:00", "0a0000000002",
                            "2026-02-02T08:00:00Z");
  history_add_tally tally;
  assert_int_equal(historydb_add(db, records, dates, &tally), 0);
  assert_int_equal(tally.added, 5);
  assert_int_equal(historydb_add(db, records, dates, &tally), 0);
  assert_int_equal(tally.added, 0);
  history_series_set set;
  assert_int_equal(historydb_series(db, &set), 0);
  assert_int_equal(set.records, 5);
  assert_int_equal(set.count, 2);
  const history_series *s = strstr(set.items[0].config, "steps50") ? &set.items[1] : &set.items[0];
  assert_string_equal(s->config, "heat mpi/serial tiny weak n1 t1");
  assert_int_equal(s->count, 2);
  assert_string_equal(s->points[0].revision, "0a0000000002"); /* 08:00Z before 09:00Z */
  assert_string_equal(s->points[1].revision, "0a0000000001");
  assert_int_equal(s->points[1].runs, 3);
  assert_float_equal(s->points[1].median, 20.0, 0.0);
  assert_float_equal(s->points[1].min, 10.0, 0.0);
  assert_float_equal(s->points[1].max, 30.0, 0.0);
  history_series_set_free(&set);
  historydb_close(db);
  json_decref(dates);
  json_decref(records);
}

static void times_parse_with_their_zone(void **state) {
  (void)state;
  double a, b;
  assert_true(history_parse_time("2026-11-25T11:26:06Z", &a));
  assert_true(history_parse_time("2026-11-25T12:26:06+01:00", &b));
  assert_float_equal(a, b, 0.0);
  assert_float_equal(a, 1795605966.0, 0.0); /* date -u -d 2026-11-25T11:26:06Z +%s */
  assert_false(history_parse_time("yesterday", &a));
  assert_false(history_parse_time("2026-11-25T11:26:06 GMT", &a));
}

static int load_template(void **state) {
  (void)state;
  json_error_t err;
  template_record = json_load_file(template_path, 0, &err);
  if (!template_record) fprintf(stderr, "cannot read %s: %s\n", template_path, err.text);
  return template_record ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s history-template.json\n", argv[0]);
    return 2;
  }
  template_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(divergence_by_hand),
      cmocka_unit_test(clean_step_is_exact_and_reproducible),
      cmocka_unit_test(two_steps_and_edge_cases),
      cmocka_unit_test(times_parse_with_their_zone),
      cmocka_unit_test(history_groups_orders_and_stores_once),
      cmocka_unit_test(five_percent_step_found_at_its_revision),
      cmocka_unit_test(pure_noise_rarely_alarms),
      cmocka_unit_test(two_percent_step_follows_the_threshold),
  };
  int failed = cmocka_run_group_tests(tests, load_template, NULL);
  json_decref(template_record);
  return failed;
}
