/* The verdicts a figure gets before anything is drawn from it (verdict.h):
 * the median's order-statistic interval (by hand, and its coverage on
 * resampled real noise), outliers by the modified z-score, a record's
 * timed phase and disturbance, and a configuration's verdict in its order
 * (too-short, disturbed, noisy, stable). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "noise.h"
#include "verdict.h"

static void interval(const double *x, size_t n, double *low, double *high, bool *defined) {
  assert_int_equal(verdict_median_interval(x, n, low, high, defined), MAPP_OK);
}

/* Ranks by hand: n = 6 takes min and max (coverage 1 - 2/64 = 96.9 %);
 * n = 10 the 2nd and 9th (P(B <= 1) = 11/1024, 97.9 %; the 3rd would give
 * 89 %); n = 20 the 6th and 15th (P(B <= 5) = 0.0207, 95.9 %); n = 5 has
 * none (1 - 2/32 = 93.8 %). */
static void median_interval_ranks_by_hand(void **state) {
  (void)state;
  double x[20], low, high;
  bool defined;
  for (int i = 0; i < 20; ++i) x[i] = 100.0 - i; /* unsorted on purpose: descending */
  interval(x, 5, &low, &high, &defined);
  assert_false(defined);
  assert_true(isnan(low) && isnan(high));
  interval(x, 6, &low, &high, &defined);
  assert_true(defined);
  assert_float_equal(low, 95.0, 0.0);
  assert_float_equal(high, 100.0, 0.0);
  interval(x, 10, &low, &high, &defined);
  assert_float_equal(low, 92.0, 0.0);  /* 2nd smallest of 91..100 */
  assert_float_equal(high, 99.0, 0.0); /* 9th */
  interval(x, 20, &low, &high, &defined);
  assert_float_equal(low, 86.0, 0.0);  /* 6th smallest of 81..100 */
  assert_float_equal(high, 95.0, 0.0); /* 15th */
  assert_float_equal(x[0], 100.0, 0.0); /* the values are not sorted in place */
}

/* The interval covers the median of the noise it is drawn from in 95 % of
 * samples or more, for n from 6 to 30, on real residuals. */
static void median_interval_covers_real_noise(void **state) {
  (void)state;
  noise_set noise;
  assert_true(noise_load("*", 1.0, &noise));
  uint64_t rng = 42; /* the population's median is 1: recentring put the residuals' at 0 */
  double worst = 1.0;
  for (size_t n = 6; n <= 30; n += 4) {
    int covered = 0;
    const int trials = 2000;
    for (int t = 0; t < trials; ++t) {
      double x[30], low, high;
      bool defined;
      noise_sample(&noise, 1.0, n, &rng, x);
      interval(x, n, &low, &high, &defined);
      covered += low <= 1.0 && high >= 1.0;
    }
    worst = fmin(worst, (double)covered / trials);
  }
  /* exact coverage is 95.7-98.7 % at these n; 2000 samples estimate it
   * within +-1 % (2 sd), and one rank too far in loses 5-20 % */
  printf("median interval on real noise: worst coverage %.3f over n = 6..30 (2000 samples each)\n", worst);
  assert_true(worst >= 0.94);
}

static void precision_for_auto_repetitions(void **state) {
  (void)state;
  double x[12] = {100, 101, 99, 100.5, 99.5, 100.2, 98, 102, 100.1, 99.9, 100.3, 99.7};
  bool precise;
  assert_int_equal(verdict_precise(x, 5, 0.05, &precise), MAPP_OK);
  assert_false(precise); /* too few for an interval at all */
  assert_int_equal(verdict_precise(x, 12, 0.02, &precise), MAPP_OK);
  assert_true(precise); /* n = 12: the 3rd and 10th, 99.5..100.5 around 100.05: +-0.55 % */
  assert_int_equal(verdict_precise(x, 12, 0.004, &precise), MAPP_OK);
  assert_false(precise);
  /* on heat small's real noise (CV about 30 %) 10 repetitions are far from +-2 % */
  noise_set noise;
  assert_true(noise_load("heat-small", 1.0, &noise));
  uint64_t rng = 7;
  double y[10];
  noise_sample(&noise, 1e9, 10, &rng, y);
  assert_int_equal(verdict_precise(y, 10, 0.02, &precise), MAPP_OK);
  assert_false(precise);
}

/* Iglewicz and Hoaglin: |0.6745 (x - median) / MAD| > 3.5. */
static void outliers_by_modified_z(void **state) {
  (void)state;
  /* median 10, |deviations| 0 0 .1 .1 .2 .2 5 -> MAD 0.1: z(15) = 0.6745 * 5 / 0.1 = 33.7,
   * z(10.2) = 1.35 */
  double x[] = {10.0, 10.1, 9.9, 10.2, 9.8, 10.0, 15.0};
  bool flags[7];
  size_t count;
  assert_int_equal(verdict_outliers(x, 7, flags, &count), MAPP_OK);
  assert_int_equal(count, 1);
  assert_true(flags[6]);
  assert_false(flags[3]);
  /* 10.4 is 0.6745 * 0.4 / 0.1 = 2.7 away: kept as ordinary */
  x[6] = 10.4;
  assert_int_equal(verdict_outliers(x, 7, flags, &count), MAPP_OK);
  assert_int_equal(count, 0);
  /* MAD 0: the mean absolute deviation * 1.2533 stands in: z(6) = 1 / (1.2533 * 2/6) = 2.4,
   * z(9) = 4 / (1.2533 * 4/7) = 5.6 */
  double same[] = {5, 5, 5, 5, 6, 6}, wild[] = {5, 5, 5, 5, 5, 5, 9};
  assert_int_equal(verdict_outliers(same, 6, NULL, &count), MAPP_OK);
  assert_int_equal(count, 0);
  assert_int_equal(verdict_outliers(wild, 7, NULL, &count), MAPP_OK);
  assert_int_equal(count, 1);
  double flat[] = {3, 3, 3, 3};
  assert_int_equal(verdict_outliers(flat, 4, NULL, &count), MAPP_OK);
  assert_int_equal(count, 0);
}

static json_t *record_with(const char *disturbance_json, const char *timing_json, double compute_s) {
  json_error_t err;
  json_t *r = json_pack("{s:i, s:{s:f}, s:{s:{s:f}}, s:{s:i}}", "exit_code", 0, "fom", "value", 100.0, "phases",
                        "compute", "max", compute_s, "machine", "cpus", 2);
  if (disturbance_json) json_object_set_new(r, "disturbance", json_loads(disturbance_json, 0, &err));
  if (timing_json) json_object_set_new(r, "timing", json_loads(timing_json, 0, &err));
  return r;
}

static verdict_record_info judged(const char *disturbance_json, const char *timing_json, double compute_s) {
  json_t *r = record_with(disturbance_json, timing_json, compute_s);
  verdict_record_info info;
  verdict_record(r, &info);
  json_decref(r);
  return info;
}

static void record_rules(void **state) {
  (void)state;
  /* an old record: its compute phase is its timed phase, nothing disturbed it */
  verdict_record_info old = judged(NULL, NULL, 0.25);
  assert_float_equal(old.timed_s, 0.25, 0.0);
  assert_false(old.disturbed);
  assert_true(isnan(old.run_delay) && isnan(old.steal));
  /* with --min-time: the timed iterations together */
  assert_float_equal(judged(NULL, "{\"timed_s\": 0.1, \"iterations\": 300}", 0.0003).timed_s, 0.1, 0.0);
  /* run delay is judged whatever the interval */
  assert_true(judged("{\"interval_s\": 0.001, \"run_delay_fraction\": 0.11}", NULL, 1.0).disturbed);
  assert_false(judged("{\"interval_s\": 0.001, \"run_delay_fraction\": 0.10}", NULL, 1.0).disturbed);
  /* steal over 50 ticks (0.5 s of CPU): rounding, not judged */
  verdict_record_info few = judged("{\"steal_fraction\": 0.3, \"cpu_ticks\": 50, \"run_delay_fraction\": 0}", NULL, 1);
  assert_false(few.disturbed);
  assert_true(isnan(few.steal));
  assert_true(judged("{\"steal_fraction\": 0.11, \"cpu_ticks\": 100, \"run_delay_fraction\": 0}", NULL, 1).disturbed);
  assert_false(judged("{\"steal_fraction\": 0.09, \"cpu_ticks\": 400}", NULL, 1).disturbed);
  /* no tick count: interval * the machine's 2 CPUs (0.4 s: not judged; 0.6 s: judged) */
  assert_false(judged("{\"steal_fraction\": 0.5, \"interval_s\": 0.4}", NULL, 1).disturbed);
  assert_true(judged("{\"steal_fraction\": 0.5, \"interval_s\": 0.6}", NULL, 1).disturbed);
  assert_false(judged("{\"steal_fraction\": null, \"interval_s\": 9}", NULL, 1).disturbed);
}

static verdict_summary judge_over(const double *foms, const double *timed, const bool *disturbed, const bool *over,
                                  size_t n, double p) {
  verdict_summary v;
  assert_int_equal(verdict_judge(foms, timed, disturbed, over, n, p, &v), MAPP_OK);
  return v;
}

static verdict_summary judge(const double *foms, const double *timed, const bool *disturbed, size_t n, double p) {
  return judge_over(foms, timed, disturbed, NULL, n, p);
}

/* too-short before disturbed before noisy before stable. */
static void configuration_verdicts_in_order(void **state) {
  (void)state;
  double foms[8] = {100, 101, 99, 100, 100.5, 99.5, 100.2, 99.8}, timed[8], wide[8];
  bool disturbed[8] = {false};
  for (int i = 0; i < 8; ++i) timed[i] = 0.5, wide[i] = 100.0 * (1.0 + 0.2 * ((i % 2) ? 1 : -1));
  verdict_summary v = judge(foms, timed, disturbed, 8, 0.05);
  assert_int_equal(v.kind, VERDICT_STABLE);
  /* n = 8: min and max (k = 2 would cover 1 - 2 * 9/256 = 93 %) */
  assert_float_equal(v.low, 99.0, 0.0);
  assert_float_equal(v.high, 101.0, 0.0);
  assert_float_equal(v.timed_median_s, 0.5, 0.0);
  assert_int_equal(judge(wide, timed, disturbed, 8, 0.05).kind, VERDICT_NOISY);
  assert_int_equal(judge(foms, timed, disturbed, 8, 0.001).kind, VERDICT_NOISY); /* precision is a parameter */
  assert_int_equal(judge(foms, timed, disturbed, 5, 0.05).kind, VERDICT_NOISY);  /* too few for an interval */
  disturbed[0] = disturbed[1] = true; /* 2 of 8 = 25 %: not more than a quarter */
  assert_int_equal(judge(foms, timed, disturbed, 8, 0.05).kind, VERDICT_STABLE);
  disturbed[2] = true;
  v = judge(wide, timed, disturbed, 8, 0.05);
  assert_int_equal(v.kind, VERDICT_DISTURBED); /* before noisy */
  assert_int_equal(v.disturbed, 3);
  for (int i = 0; i < 8; ++i) timed[i] = i < 5 ? 0.009 : 1.0; /* median 0.009 s */
  assert_int_equal(judge(wide, timed, disturbed, 8, 0.05).kind, VERDICT_TOO_SHORT);
  /* unknown timed phases are not too short; no figures at all: noisy */
  assert_int_equal(judge(foms, NULL, NULL, 8, 0.05).kind, VERDICT_STABLE);
  assert_int_equal(judge(NULL, NULL, NULL, 0, 0.05).kind, VERDICT_NOISY);
  char text[160];
  verdict_explain(&v, 0.05, text, sizeof text);
  assert_non_null(strstr(text, "disturbed: 3 of 8"));
}

/* Runs that asked more cores than they had (a poller per rank, I/O
 * threads) and waited for a CPU took their own: oversubscribed, not
 * disturbed; disturbed again once the others' share alone is too much. */
static void oversubscribed_runs_blame_themselves(void **state) {
  (void)state;
  double foms[8] = {100, 101, 99, 100, 100.5, 99.5, 100.2, 99.8}, timed[8];
  bool disturbed[8] = {true, true, true, true, false, false, false, false};
  bool over[8] = {true, true, true, false, true, true, true, true};
  for (int i = 0; i < 8; ++i) timed[i] = 0.5;
  verdict_summary v = judge_over(foms, timed, disturbed, over, 8, 0.05);
  assert_int_equal(v.kind, VERDICT_OVERSUBSCRIBED); /* 4 of 8 disturbed, 3 by themselves: 1 by others */
  assert_int_equal(v.self_disturbed, 3);
  assert_false(verdict_figures_trusted(v.kind));
  assert_string_equal(verdict_name(v.kind), "oversubscribed");
  char text[200];
  verdict_explain(&v, 0.05, text, sizeof text);
  assert_non_null(strstr(text, "oversubscribed: 4 of 8"));
  over[0] = over[1] = false; /* 3 of 8 by others: more than a quarter */
  assert_int_equal(judge_over(foms, timed, disturbed, over, 8, 0.05).kind, VERDICT_DISTURBED);
  for (int i = 0; i < 8; ++i) disturbed[i] = false; /* oversubscribed but never waiting: nothing to say */
  assert_int_equal(judge_over(foms, timed, disturbed, over, 8, 0.05).kind, VERDICT_STABLE);
}

/* The figures on real noise: heat tiny's 0.3 ms phase is
 * too-short; heat small's 10 repetitions (CV about 30 %) are noisy at 5 %. */
static void real_records_judged(void **state) {
  (void)state;
  json_t *records = json_array();
  noise_set tiny;
  assert_true(noise_load("heat-tiny", 1.0, &tiny));
  uint64_t rng = 3;
  for (int i = 0; i < 10; ++i) {
    json_t *r = record_with("{\"run_delay_fraction\": 0.01, \"interval_s\": 0.0004}", NULL, 0.00037);
    json_object_set_new(json_object_get(r, "fom"), "value", json_real(7.8e8 * (1.0 + noise_draw(&tiny, &rng))));
    json_array_append_new(records, r);
  }
  json_array_append_new(records, json_pack("{s:i}", "exit_code", 1)); /* a failed run does not count */
  verdict_summary v;
  assert_int_equal(verdict_of_records(records, 0.05, &v), MAPP_OK);
  assert_int_equal(v.n, 10);
  assert_int_equal(v.kind, VERDICT_TOO_SHORT);
  json_decref(records);
  noise_set small;
  assert_true(noise_load("heat-small", 1.0, &small));
  double foms[10];
  noise_sample(&small, 8e8, 10, &rng, foms);
  v = judge(foms, NULL, NULL, 10, 0.05);
  assert_int_equal(v.kind, VERDICT_NOISY);
  assert_true(v.half_width > 0.05);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(median_interval_ranks_by_hand), cmocka_unit_test(median_interval_covers_real_noise),
      cmocka_unit_test(precision_for_auto_repetitions), cmocka_unit_test(outliers_by_modified_z),
      cmocka_unit_test(record_rules),                  cmocka_unit_test(configuration_verdicts_in_order),
      cmocka_unit_test(oversubscribed_runs_blame_themselves),
      cmocka_unit_test(real_records_judged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
