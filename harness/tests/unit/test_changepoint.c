/* mapp history's change points and `history check`'s rule on synthetic
 * histories built from a real record (tests/data/history-template.json, a heat
 * run of ci/quick-sweep.sh): each revision runs 5 repetitions whose figure
 * of merit is the template's times the revision's level times 1 + noise
 * resampled from the residuals of real records (noise.h: heat small and
 * stencil small at 1 rank, pooled) scaled so that no repetition strays more
 * than 3 % from its level (the +-3 % of issue 28's history; their standard
 * deviation is then about 1 %), stored in an
 * in-memory history, read back as the series `mapp history` judges, and
 * judged by history_judge at the default threshold (5 %). Goals:
 *   (a) a 5 % step in 40 revisions is SLOWER at its revision in >= 95 of 100 trials;
 *   (b) noise alone is SLOWER in at most 5 of 100 series;
 *   (c) a 2 % step is not reported (SLOWER in at most 5 of 100; the count is printed);
 *   (d) where the noise hides a 5 % step the answer is inconclusive, naming the step it could show. */
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
#include "history.h"
#include "historydb.h"
#include "noise.h"

enum { REVISIONS = 40, REPETITIONS = 5, TRIALS = 100 };
static const double NOISE = 0.03, THRESHOLD = 0.05;

static const char *template_path;
static json_t *template_record;

/* The pooled real residuals, scaled to +-NOISE (load_noise). */
static noise_set history_noise;

/* The revision hash of synthetic revision k. */
static void revision_name(size_t k, char *name, size_t len) { snprintf(name, len, "%012zx", (size_t)(0xa0000000000ull + k)); }

/* The template as revision k's repetition r: its own revision hash, a run
 * time an hour per revision later, and figure of merit fom. */
static json_t *synthetic_record(size_t k, size_t r, double fom) {
  json_t *rec = json_deep_copy(template_record);
  char revision[16], when[32];
  revision_name(k, revision, sizeof revision);
  snprintf(when, sizeof when, "2026-01-%02zuT%02zu:%02zu:00Z", 1 + k / 24, k % 24, r);
  json_object_set_new(rec, "git_revision", json_string(revision));
  json_object_set_new(rec, "time", json_string(when));
  json_object_set_new(rec, "repetition", json_integer((json_int_t)r));
  json_object_set_new(json_object_get(rec, "fom"), "value", json_real(fom));
  return rec;
}

/* Records of a history whose level drops by `step` (0.05: 5 %) from revision
 * step_at on (step 0: no change), with noise from `noise`. */
static json_t *noisy_history(const noise_set *noise, size_t step_at, double step, uint64_t seed) {
  json_t *records = json_array();
  const double base = json_number_value(json_object_get(json_object_get(template_record, "fom"), "value"));
  uint64_t rng = seed;
  for (size_t k = 0; k < REVISIONS; ++k)
    for (size_t r = 0; r < REPETITIONS; ++r) {
      double level = k >= step_at ? 1.0 - step : 1.0;
      json_array_append_new(records, synthetic_record(k, r, base * level * (1.0 + noise_draw(noise, &rng))));
    }
  return records;
}

/* Through the history as `mapp history check` runs it: added, read back
 * as a series (per-revision medians, ordered) and judged at threshold. */
static void judge_in_history(const json_t *records, double threshold, history_series_set *set,
                             history_judgement *j) {
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
  assert_int_equal(set->items[0].count, REVISIONS);
  for (size_t i = 0; i < set->items[0].count; ++i) assert_int_equal(set->items[0].points[i].runs, REPETITIONS);
  assert_int_equal(history_judge(&set->items[0], threshold, j), 0);
}

/* A change point judged SLOWER whose first revision is within `slack`
 * revisions of step_at's (found by its revision hash). */
static bool slower_near(const history_series_set *set, const history_judgement *j, size_t step_at, size_t slack,
                        double threshold) {
  for (size_t k = step_at >= slack ? step_at - slack : 0; k <= step_at + slack && k < REVISIONS; ++k) {
    char want[16];
    revision_name(k, want, sizeof want);
    for (size_t i = 0; i < j->changes.count; ++i) {
      const change_point *p = &j->changes.points[i];
      if (changepoint_judge(p, threshold) == STEP_SLOWER && !strcmp(set->items[0].points[p->index].revision, want))
        return true;
    }
  }
  return false;
}

typedef struct {
  int slower, slower_at_step, slower_near_step, inconclusive, with_change_points;
  double detectable_max; /* the largest step any series could show */
} trial_tally;

/* `trials` histories with a step of `step` at step_at (REVISIONS: none),
 * each judged at threshold. */
static trial_tally run_trials(const noise_set *noise, size_t step_at, double step, double threshold, uint64_t seed,
                        int trials, bool step_varies) {
  trial_tally t = {0};
  for (int trial = 0; trial < trials; ++trial) {
    size_t at = step_varies ? 10 + (size_t)(trial % 21) : step_at; /* revisions 10..30 of 40 */
    json_t *records = noisy_history(noise, at, step, seed + (uint64_t)trial);
    history_series_set set;
    history_judgement j;
    judge_in_history(records, threshold, &set, &j);
    t.slower += j.answer == HISTORY_SLOWER;
    t.slower_at_step += at < REVISIONS && slower_near(&set, &j, at, 0, threshold);
    t.slower_near_step += at < REVISIONS && slower_near(&set, &j, at, 1, threshold);
    t.inconclusive += j.answer == HISTORY_INCONCLUSIVE;
    t.with_change_points += j.changes.count > 0;
    t.detectable_max = fmax(t.detectable_max, j.detectable);
    free(j.changes.points);
    history_series_set_free(&set);
    json_decref(records);
  }
  return t;
}

/* Goal (a); and, for the record, the same with the noise scaled to a
 * standard deviation of 3 % instead: a revision's median then strays 1.6 %,
 * and the step's first revision is taken for the old level (or the last
 * one before it for the new) often enough that no detector can place it
 * exactly 95 times in 100; it is still reported, within a revision. */
static void five_percent_step_found_at_its_revision(void **state) {
  (void)state;
  trial_tally t = run_trials(&history_noise, 0, 0.05, THRESHOLD, 1000, TRIALS, true);
  printf("5 %% step in %d revisions (real noise within +-3 %%, sd %.2f %%, %d repetitions), threshold 5 %%: SLOWER "
         "at its revision in %d of %d trials (within a revision %d, anywhere %d, inconclusive %d)\n",
         REVISIONS, 100.0 * noise_sd(&history_noise), REPETITIONS, t.slower_at_step, TRIALS, t.slower_near_step,
         t.slower, t.inconclusive);
  assert_true(t.slower_at_step >= 95);
  noise_set sd3 = history_noise;
  noise_scale(&sd3, NOISE / noise_sd(&sd3));
  t = run_trials(&sd3, 0, 0.05, THRESHOLD, 1000, TRIALS, true);
  printf("the same with sd 3 %%: SLOWER at its revision in %d of %d (within a revision %d, anywhere %d)\n",
         t.slower_at_step, TRIALS, t.slower_near_step, t.slower);
  assert_true(t.slower_near_step >= 90);
}

static void pure_noise_rarely_alarms(void **state) {
  (void)state;
  trial_tally t = run_trials(&history_noise, REVISIONS, 0.0, THRESHOLD, 5000, TRIALS, false);
  printf("noise alone: SLOWER in %d of %d series (change points in %d, inconclusive %d; the smallest step each "
         "could show: %.1f %% at most)\n",
         t.slower, TRIALS, t.with_change_points, t.inconclusive, 100.0 * t.detectable_max);
  assert_true(t.slower <= 5);
  assert_int_equal(t.inconclusive, 0); /* +-3 % noise hides no 5 % step in 40 revisions */
}

/* A 2 % step is usually found as a change point, but its interval stays
 * above -5 %: not a slowdown of the threshold. At a 1 % threshold it is. */
static void two_percent_step_is_not_reported(void **state) {
  (void)state;
  trial_tally five = run_trials(&history_noise, 24, 0.02, THRESHOLD, 9000, TRIALS, false);
  trial_tally one = run_trials(&history_noise, 24, 0.02, 0.01, 9000, TRIALS, false);
  printf("2 %% step: a change point in %d of %d histories; SLOWER at threshold 5 %% in %d, at threshold 1 %% in %d "
         "(at its revision %d)\n",
         five.with_change_points, TRIALS, five.slower, one.slower, one.slower_at_step);
  assert_true(five.slower <= 5);
  assert_true(one.slower >= 70);
}

/* The noise of heat small's real records unscaled (CV about 30 %): a 5 %
 * step in 40 revisions of 5 repetitions is hidden, and check says so. */
static void noise_that_hides_the_threshold_is_inconclusive(void **state) {
  (void)state;
  noise_set wild;
  assert_true(noise_load("heat-small", 1.0, &wild));
  trial_tally t = run_trials(&wild, REVISIONS, 0.0, THRESHOLD, 7000, 20, false);
  printf("heat small's own noise (sd %.1f %%), no step: inconclusive in %d of 20, SLOWER in %d\n", 100.0 * noise_sd(&wild),
         t.inconclusive, t.slower);
  assert_true(t.inconclusive >= 18);
  assert_true(t.slower <= 1);
}

/* The rule on hand-made steps: the interval decides, not the estimate. */
static void the_interval_decides(void **state) {
  (void)state;
  change_point c = {.change = -0.04, .low = -0.06, .high = -0.02, .bounded = true};
  assert_int_equal(changepoint_judge(&c, 0.05), STEP_SLOWER); /* estimate short of 5 %, data support it */
  c = (change_point){.change = -0.03, .low = -0.045, .high = -0.01, .bounded = true};
  assert_int_equal(changepoint_judge(&c, 0.05), STEP_NOT_SLOWER);
  c = (change_point){.change = 0.08, .low = 0.02, .high = 0.12, .bounded = true};
  assert_int_equal(changepoint_judge(&c, 0.05), STEP_NOT_SLOWER);
  c = (change_point){.change = -0.2, .low = -1.0, .high = INFINITY, .bounded = false};
  assert_int_equal(changepoint_judge(&c, 0.05), STEP_UNDECIDED);
  /* too few revisions to split: inconclusive, the smallest step infinite */
  history_point points[3] = {{.revision = "a", .median = 1}, {.revision = "b", .median = 1}, {.revision = "c", .median = 0.5}};
  history_series s = {.config = "x", .points = points, .count = 3};
  history_judgement j;
  assert_int_equal(history_judge(&s, 0.05, &j), 0);
  assert_int_equal(j.answer, HISTORY_INCONCLUSIVE);
  assert_true(isinf(j.detectable));
  free(j.changes.points);
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

/* A clean step is found where it is, its size is the segments' ratio, and
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
  assert_true(a[0].bounded && a[0].low < -0.099 && a[0].high > -0.101 && a[0].high < -0.09);
  assert_int_equal(changepoint_judge(&a[0], 0.05), STEP_SLOWER);
  assert_int_equal(changepoint_judge(&a[0], 0.15), STEP_NOT_SLOWER);
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
  assert_string_equal(s->config, "heat mpi/serial tiny weak n1 t1 @vm"); /* the template's host: its system */
  assert_string_equal(s->system, "vm");
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

/* Two systems are two series of one configuration: a record's "system"
 * decides, else its host; the key names it; the totals count both. */
static void history_keeps_a_series_per_system(void **state) {
  (void)state;
  history_db *db = NULL;
  assert_int_equal(historydb_open(":memory:", true, &db), 0);
  json_t *records = json_array();
  const char *systems[] = {"a", "b", NULL}; /* NULL: none, the host (vm) */
  for (size_t k = 0; k < 3; ++k)
    for (size_t i = 0; i < 3; ++i) {
      json_t *r = synthetic_record(k, i, 10.0 * (double)(i + 1));
      if (systems[i]) json_object_set_new(r, "system", json_string(systems[i]));
      json_array_append_new(records, r);
    }
  json_t *dates = json_object();
  history_add_tally tally;
  assert_int_equal(historydb_add(db, records, dates, &tally), 0);
  assert_int_equal(tally.added, 9);
  history_series_set set;
  assert_int_equal(historydb_series(db, &set), 0);
  assert_int_equal(set.count, 3);
  assert_int_equal(set.systems, 3);
  const char *want[] = {"a", "b", "vm"}; /* by key: "... t1 @a", "@b", "@vm" */
  for (size_t i = 0; i < 3; ++i) {
    char key[64];
    snprintf(key, sizeof key, "heat mpi/serial tiny weak n1 t1 @%s", want[i]);
    assert_string_equal(set.items[i].config, key);
    assert_string_equal(set.items[i].system, want[i]);
    assert_int_equal(set.items[i].count, 3);
    assert_float_equal(set.items[i].points[0].median, 10.0 * (double)(i + 1), 0.0); /* never mixed */
  }
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

/* +-NOISE: the residuals scaled so the largest is NOISE. */
static bool load_noise(void) {
  if (!noise_load("heat-small,stencil-small", 1.0, &history_noise)) return false;
  noise_scale(&history_noise, NOISE / noise_max_abs(&history_noise));
  return true;
}

static int load_template(void **state) {
  (void)state;
  if (!load_noise()) {
    fprintf(stderr, "cannot read the noise file %s\n", MAPP_NOISE_FILE);
    return -1;
  }
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
      cmocka_unit_test(history_keeps_a_series_per_system),
      cmocka_unit_test(the_interval_decides),
      cmocka_unit_test(five_percent_step_found_at_its_revision),
      cmocka_unit_test(pure_noise_rarely_alarms),
      cmocka_unit_test(two_percent_step_is_not_reported),
      cmocka_unit_test(noise_that_hides_the_threshold_is_inconclusive),
  };
  int failed = cmocka_run_group_tests(tests, load_template, NULL);
  json_decref(template_record);
  return failed;
}
