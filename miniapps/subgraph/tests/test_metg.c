/* Unit tests of METG(50 %) (tb_metg.h) on synthetic curves: the quantiles,
 * the crossing, the monotonicity and precision flags, and whole sweeps on a simulated
 * machine whose clock a stall can cover for part of the sweep, against the
 * rule it replaces (each point the best of three runs back to back). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "tb_metg.h"

/* ---- synthetic points: efficiencies given, walls derived ---- */

enum { TASKS = 1000, WORKERS = 1 };
static const double KERNEL_NS = 1000.0;

static tb_metg_sweep empty_sweep(void) {
  tb_metg_sweep s;
  memset(&s, 0, sizeof s);
  s.tasks = TASKS, s.workers = WORKERS;
  return s;
}

/* Point i of a ladder (its kernel halves with i) whose repeats ran at
 * these efficiencies. */
static void set_point(tb_metg_sweep *s, int i, int n, const double *efficiency) {
  tb_metg_point *pt = &s->points[i];
  memset(pt, 0, sizeof *pt);
  pt->iterations = 1L << (20 - i);
  pt->n = n;
  double kernel_ns = KERNEL_NS / (double)(1L << i);
  for (int r = 0; r < n; ++r) {
    pt->calib_ns[r] = kernel_ns;
    pt->wall_s[r] = TASKS * kernel_ns * 1e-9 / (efficiency[r] * WORKERS);
  }
  if (i >= s->npoints) s->npoints = i + 1;
}

/* A curve of points with five repeats each: the median and +-spread. */
static tb_metg_sweep curve(const double *median, const double *spread, int n) {
  tb_metg_sweep s = empty_sweep();
  for (int i = 0; i < n; ++i) {
    double d = spread[i], e[5] = {median[i] - d, median[i] + d / 2, median[i], median[i] - d / 2, median[i] + d};
    set_point(&s, i, 5, e);
  }
  tb_metg_summarise(&s);
  return s;
}

static void quantiles_are_order_statistics(void **unused) {
  (void)unused;
  const double five[5] = {5, 1, 3, 2, 4}, four[4] = {4, 1, 3, 2};
  assert_float_equal(tb_metg_quantile(five, 5, 0.5), 3.0, 1e-12);
  assert_float_equal(tb_metg_quantile(five, 5, 0.25), 2.0, 1e-12);
  assert_float_equal(tb_metg_quantile(five, 5, 0.75), 4.0, 1e-12);
  assert_float_equal(tb_metg_quantile(five, 5, 0.0), 1.0, 1e-12);
  assert_float_equal(tb_metg_quantile(five, 5, 1.0), 5.0, 1e-12);
  assert_float_equal(tb_metg_quantile(four, 4, 0.5), 2.5, 1e-12);
  assert_float_equal(tb_metg_quantile(four, 4, 0.25), 1.75, 1e-12); /* type 7: 1 + 0.75 x (2 - 1) */
}

/* Two stalled repeats of five do not move a point: its median is a quiet
 * run's, and the stall shows in its spread. */
static void a_point_is_the_median_of_its_repeats(void **unused) {
  (void)unused;
  tb_metg_sweep s = empty_sweep();
  const double e[5] = {0.62, 0.15, 0.61, 0.20, 0.63};
  set_point(&s, 0, 5, e);
  tb_metg_summarise(&s);
  const tb_metg_point *pt = &s.points[0];
  assert_float_equal(pt->efficiency, 0.61, 1e-9);
  assert_float_equal(pt->eff_min, 0.15, 1e-9);
  assert_float_equal(pt->eff_max, 0.63, 1e-9);
  assert_float_equal(pt->eff_q1, 0.20, 1e-9);
  assert_float_equal(pt->eff_q3, 0.62, 1e-9);
  /* the median run's granularity: wall x workers / tasks (point 0: KERNEL_NS) */
  assert_float_equal(pt->granularity_us, KERNEL_NS / 0.61 * 1e-3, 1e-9);
}

static void crossing_interpolates_in_log_granularity(void **unused) {
  (void)unused;
  const double gran[2] = {1.0, 0.5}, eff[2] = {0.8, 0.2};
  assert_float_equal(tb_metg_crossing(gran, eff, 2), sqrt(0.5), 1e-12); /* halfway in log */
  const double exactly[2] = {0.5, 0.2}; /* 50 % counts as still efficient */
  assert_float_equal(tb_metg_crossing(gran, exactly, 2), 1.0, 1e-12);
  const double never[3] = {0.9, 0.7, 0.6}, g3[3] = {4, 2, 1};
  assert_true(tb_metg_crossing(g3, never, 3) < 0);
}

/* A dip below 50 % at a large grain does not end the search: the last
 * crossing going down counts. */
static void crossing_is_the_last_one_going_down(void **unused) {
  (void)unused;
  const double gran[4] = {8, 4, 2, 1}, eff[4] = {0.9, 0.4, 0.7, 0.3};
  assert_float_equal(tb_metg_crossing(gran, eff, 4), exp(log(2.0) + 0.5 * (log(1.0) - log(2.0))), 1e-12);
}

/* The sweep's METG and its range are the median and quartile curves'. */
static void metg_range_comes_from_the_quartile_curves(void **unused) {
  (void)unused;
  const double median[5] = {0.95, 0.8, 0.55, 0.35, 0.2}, spread[5] = {0.02, 0.05, 0.1, 0.1, 0.02};
  tb_metg_sweep s = curve(median, spread, 5);
  double gran[5], eff[5];
  for (int i = 0; i < 5; ++i) gran[i] = s.points[i].granularity_us, eff[i] = s.points[i].efficiency;
  assert_true(gran[4] < gran[3] && gran[3] < gran[2]); /* a ladder: the grain falls with K */
  assert_float_equal(s.metg_us, tb_metg_crossing(gran, eff, 5), 1e-12);
  assert_true(s.metg_low_us > 0 && s.metg_low_us < s.metg_us);
  assert_true(s.metg_high_us > s.metg_us);
  assert_true(s.monotone);
  assert_true(s.precise);
}

/* Two of five runs stalled at the points around the crossing: the median
 * keeps the quiet crossing, but the lower quartile curve crosses far from
 * it, so the sweep says it cannot place METG within 1.5x. */
static void a_crossing_the_repeats_disagree_on_is_imprecise(void **unused) {
  (void)unused;
  const double quiet[5] = {0.95, 0.8, 0.6, 0.4, 0.2};
  tb_metg_sweep calm = empty_sweep(), split = empty_sweep();
  for (int i = 0; i < 5; ++i) {
    const double same[5] = {quiet[i], quiet[i], quiet[i], quiet[i], quiet[i]};
    const double two_stalled[5] = {quiet[i], quiet[i] / 4, quiet[i], quiet[i] / 4, quiet[i]};
    set_point(&calm, i, 5, same);
    set_point(&split, i, 5, i >= 2 ? two_stalled : same);
  }
  tb_metg_summarise(&calm);
  tb_metg_summarise(&split);
  assert_true(calm.precise);
  assert_float_equal(split.metg_us, calm.metg_us, 1e-9 * calm.metg_us);
  assert_false(split.precise);
  assert_true(split.monotone);
}

static void precision_is_the_quartile_curves_ratio(void **unused) {
  (void)unused;
  assert_true(tb_metg_is_precise(1.0, 1.5));
  assert_true(tb_metg_is_precise(1.5, 1.0)); /* a bent curve can swap them */
  assert_false(tb_metg_is_precise(2.0, 1.0));
  assert_false(tb_metg_is_precise(1.0, 1.51));
  assert_false(tb_metg_is_precise(-1.0, 1.0)); /* a quartile curve that does not cross */
  assert_false(tb_metg_is_precise(1.0, -1.0));
}

static void a_falling_noisy_curve_is_monotone(void **unused) {
  (void)unused;
  /* noise within the spread, a plateau near 100 % that wobbles, and a
   * plateau dip to 71 % and back (both measured in quiet sweeps on the
   * 2-core VM: its long runs catch more of the machine's noise) */
  const double median[10] = {0.97, 0.99, 0.86, 0.955, 0.714, 0.979, 0.70, 0.72, 0.30, 0.12};
  const double spread[10] = {0.01, 0.01, 0.01, 0.01, 0.09, 0.08, 0.10, 0.10, 0.05, 0.02};
  tb_metg_sweep s = curve(median, spread, 10);
  assert_true(s.monotone);
  assert_int_equal(s.nrises, 0);
}

/* All repeats of one point stalled (a stall as long as the point): the
 * median curve dips and rises again, which is flagged with the two points. */
static void a_stalled_point_is_flagged(void **unused) {
  (void)unused;
  const double median[6] = {0.98, 0.90, 0.20, 0.75, 0.45, 0.15};
  const double spread[6] = {0.01, 0.02, 0.03, 0.03, 0.03, 0.02};
  tb_metg_sweep s = curve(median, spread, 6);
  assert_false(s.monotone);
  assert_int_equal(s.nrises, 1);
  assert_int_equal(s.rises[0].dip, 2);
  assert_int_equal(s.rises[0].rise, 3);
}

/* A rise within the points' own spread is noise, not a flaw, however large
 * against the dip. */
static void a_rise_within_the_spread_is_not_flagged(void **unused) {
  (void)unused;
  const double median[4] = {0.9, 0.45, 0.65, 0.2}, spread[4] = {0.02, 0.3, 0.3, 0.02};
  tb_metg_sweep s = curve(median, spread, 4);
  assert_true(s.monotone);
}

/* A rise of a few points below 50 %, even with tight spreads, is within
 * TB_METG_RISE_MIN: noise, not a stall. */
static void a_small_rise_is_not_flagged(void **unused) {
  (void)unused;
  const double median[4] = {0.9, 0.40, 0.43, 0.2}, spread[4] = {0.01, 0.01, 0.01, 0.01};
  tb_metg_sweep s = curve(median, spread, 4);
  assert_true(s.monotone);
}

/* A slow climb back after a dip, each step within the tolerance, is still
 * a rise against the dip (the running minimum), reported once. */
static void a_gradual_rise_after_a_dip_is_flagged_once(void **unused) {
  (void)unused;
  const double median[6] = {0.95, 0.30, 0.34, 0.38, 0.42, 0.46};
  const double spread[6] = {0.01, 0.01, 0.01, 0.01, 0.01, 0.01};
  tb_metg_sweep s = curve(median, spread, 6);
  assert_false(s.monotone);
  assert_int_equal(s.nrises, 1);
  assert_int_equal(s.rises[0].dip, 1);
}

/* ---- a simulated machine: each run advances its clock by its wall time ---- */

typedef struct {
  double clock_s;
  double stall_from_s, stall_to_s, stall_factor; /* runs starting in the window take factor x longer */
  long stalled_runs;                             /* or: the first this many runs are stalled */
  int stalled_visit;  /* or: this run (1, 2, ...) of every K up to stalled_k_max */
  long stalled_k_max;
  int visits[64];     /* runs so far per log2(K) */
  long runs;
  double overhead_ns; /* the runtime's cost of a task */
} sim_machine;

static int log2_of(long k) {
  int n = 0;
  while (k > 1) k >>= 1, ++n;
  return n;
}

enum { SIM_TASKS = 8192, SIM_WORKERS = 2 };
static double sim_kernel_ns(long k) { return (double)k + 5.0; }

static int sim_run(void *ctx, long k, double *wall_s) {
  sim_machine *m = ctx;
  double wall = SIM_TASKS * (sim_kernel_ns(k) + m->overhead_ns) * 1e-9 / SIM_WORKERS;
  int visit = ++m->visits[log2_of(k)];
  bool stalled = (m->clock_s >= m->stall_from_s && m->clock_s < m->stall_to_s) || m->runs < m->stalled_runs ||
                 (visit == m->stalled_visit && k <= m->stalled_k_max);
  if (stalled) wall *= m->stall_factor;
  m->runs++;
  m->clock_s += wall;
  *wall_s = wall;
  return MAPP_OK;
}

static int sim_calibrate(void *ctx, long k, double *kernel_ns) {
  sim_machine *m = ctx;
  m->clock_s += 2e-3; /* a calibration's own time */
  *kernel_ns = sim_kernel_ns(k);
  return MAPP_OK;
}

static const double SIM_OVERHEAD_NS = 300.0; /* 50 % where the kernel takes as long: METG ~0.6 us */
static const long SIM_K_MAX = 65536;

static tb_metg_sweep sim_sweep(sim_machine *m, int repeats) {
  tb_metg_probe probe = {.ctx = m, .run = sim_run, .calibrate = sim_calibrate};
  tb_metg_sweep s = empty_sweep();
  s.tasks = SIM_TASKS, s.workers = SIM_WORKERS;
  assert_int_equal(tb_metg_measure(&probe, SIM_K_MAX, repeats, &s), MAPP_OK);
  return s;
}

/* The rule this replaces: each point the best of three runs back to back,
 * the sweep ending after two points below 25 %. */
static double old_rule_metg(sim_machine *m) {
  double gran[TB_METG_MAX_POINTS], eff[TB_METG_MAX_POINTS];
  int n = 0, low = 0;
  for (long k = SIM_K_MAX; n < TB_METG_MAX_POINTS; k = k > 1 ? k / 2 : k - 1) {
    double kernel_ns, wall = 0.0;
    sim_calibrate(m, k, &kernel_ns);
    for (int rep = 0; rep < 3; ++rep) {
      double again;
      sim_run(m, k, &again);
      if (rep == 0 || again < wall) wall = again;
    }
    gran[n] = wall * SIM_WORKERS / SIM_TASKS * 1e6;
    eff[n] = SIM_TASKS * kernel_ns * 1e-9 / (wall * SIM_WORKERS);
    low = eff[n++] < 0.25 ? low + 1 : 0;
    if (low == 2 || k == 0) break;
  }
  return tb_metg_crossing(gran, eff, n);
}

static sim_machine quiet_machine(void) {
  return (sim_machine){.overhead_ns = SIM_OVERHEAD_NS, .stall_factor = 1.0, .stall_to_s = -1.0};
}

/* A competing process takes a worker's core for the last 35 % of the
 * sweep (it started while the sweep ran and outlived it): the old rule's
 * small grains all ran inside it, and its METG moves; here the stall covers
 * under two of five passes, and METG is the quiet one. */
static void a_stall_over_part_of_the_sweep_moves_the_old_rule_not_this(void **unused) {
  (void)unused;
  sim_machine quiet = quiet_machine();
  tb_metg_sweep calm = sim_sweep(&quiet, 5);
  sim_machine old_quiet = quiet_machine();
  double old_calm = old_rule_metg(&old_quiet);
  assert_true(calm.metg_us > 0.5 && calm.metg_us < 0.75); /* ~2 x 300 ns */
  assert_float_equal(old_calm, calm.metg_us, 0.02 * calm.metg_us);

  sim_machine old_stalled = quiet_machine();
  old_stalled.stall_factor = 3.0, old_stalled.stall_from_s = 0.65 * old_quiet.clock_s, old_stalled.stall_to_s = 1e9;
  double old_moved = old_rule_metg(&old_stalled);
  assert_true(old_moved < 0 || old_moved > 1.5 * calm.metg_us || old_moved < calm.metg_us / 1.5);

  sim_machine stalled = quiet_machine();
  stalled.stall_factor = 3.0, stalled.stall_from_s = 0.65 * quiet.clock_s, stalled.stall_to_s = 1e9;
  tb_metg_sweep s = sim_sweep(&stalled, 5);
  assert_float_equal(s.metg_us, calm.metg_us, 1e-6 * calm.metg_us);
  assert_true(s.monotone); /* its lower quartiles hold the two stalled passes: precise or not, METG is right */
  for (int i = 0; i < s.npoints; ++i) assert_int_equal(s.points[i].n, 5);
}

/* A stall shorter than a pass takes at most one run of a point: here the
 * third run of every grain from K = 4096 down (the small grains run last
 * in a pass and take little time). METG is the quiet one and still precise. */
static void a_stall_shorter_than_a_pass_leaves_metg_precise(void **unused) {
  (void)unused;
  sim_machine quiet = quiet_machine();
  tb_metg_sweep calm = sim_sweep(&quiet, 5);
  assert_true(calm.precise);
  sim_machine stalled = quiet_machine();
  stalled.stall_factor = 3.0, stalled.stalled_visit = 3, stalled.stalled_k_max = 4096;
  tb_metg_sweep s = sim_sweep(&stalled, 5);
  assert_float_equal(s.metg_us, calm.metg_us, 1e-6 * calm.metg_us);
  assert_true(s.monotone);
  assert_true(s.precise);
}

/* The first two runs stalled: the first pass reads two points below 25 %
 * and stops; their later repeats outvote the stall, and the ladder grows
 * again down to the crossing. */
static void a_ladder_ended_by_a_stall_grows_again(void **unused) {
  (void)unused;
  sim_machine quiet = quiet_machine();
  tb_metg_sweep calm = sim_sweep(&quiet, 5);
  sim_machine early = quiet_machine();
  early.stall_factor = 5.0, early.stalled_runs = 2;
  tb_metg_sweep s = sim_sweep(&early, 5);
  assert_int_equal(s.npoints, calm.npoints);
  assert_float_equal(s.metg_us, calm.metg_us, 1e-6 * calm.metg_us);
}

/* The ladder ends two points below 25 %, as before. */
static void the_ladder_ends_two_points_below_a_quarter(void **unused) {
  (void)unused;
  sim_machine quiet = quiet_machine();
  tb_metg_sweep s = sim_sweep(&quiet, 3);
  int n = s.npoints;
  assert_true(n >= 3);
  assert_true(s.points[n - 1].efficiency < TB_METG_STOP_EFFICIENCY);
  assert_true(s.points[n - 2].efficiency < TB_METG_STOP_EFFICIENCY);
  assert_true(s.points[n - 3].efficiency >= TB_METG_STOP_EFFICIENCY);
  for (int i = 0; i < n; ++i) assert_int_equal(s.points[i].n, 3);
}

static void repeats_out_of_range_are_refused(void **unused) {
  (void)unused;
  sim_machine m = quiet_machine();
  tb_metg_probe probe = {.ctx = &m, .run = sim_run, .calibrate = sim_calibrate};
  tb_metg_sweep s = empty_sweep();
  assert_int_equal(tb_metg_measure(&probe, 1024, 0, &s), MAPP_ERR_INPUT);
  assert_int_equal(tb_metg_measure(&probe, 1024, TB_METG_MAX_REPEATS + 1, &s), MAPP_ERR_INPUT);
  assert_int_equal(m.runs, 0);
  mapp_error_clear();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(quantiles_are_order_statistics),
      cmocka_unit_test(a_point_is_the_median_of_its_repeats),
      cmocka_unit_test(crossing_interpolates_in_log_granularity),
      cmocka_unit_test(crossing_is_the_last_one_going_down),
      cmocka_unit_test(metg_range_comes_from_the_quartile_curves),
      cmocka_unit_test(a_crossing_the_repeats_disagree_on_is_imprecise),
      cmocka_unit_test(precision_is_the_quartile_curves_ratio),
      cmocka_unit_test(a_falling_noisy_curve_is_monotone),
      cmocka_unit_test(a_stalled_point_is_flagged),
      cmocka_unit_test(a_rise_within_the_spread_is_not_flagged),
      cmocka_unit_test(a_small_rise_is_not_flagged),
      cmocka_unit_test(a_gradual_rise_after_a_dip_is_flagged_once),
      cmocka_unit_test(a_stall_over_part_of_the_sweep_moves_the_old_rule_not_this),
      cmocka_unit_test(a_stall_shorter_than_a_pass_leaves_metg_precise),
      cmocka_unit_test(a_ladder_ended_by_a_stall_grows_again),
      cmocka_unit_test(the_ladder_ends_two_points_below_a_quarter),
      cmocka_unit_test(repeats_out_of_range_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
