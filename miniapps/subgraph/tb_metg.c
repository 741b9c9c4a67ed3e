/* METG(50 %) from repeated, interleaved points (tb_metg.h). */
#include "tb_metg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double tb_metg_quantile(const double *values, int n, double q) {
  double sorted[TB_METG_MAX_REPEATS];
  if (n <= 0) return NAN;
  if (n > TB_METG_MAX_REPEATS) n = TB_METG_MAX_REPEATS;
  memcpy(sorted, values, sizeof(double) * (size_t)n);
  qsort(sorted, (size_t)n, sizeof(double), compare_doubles);
  double h = (n - 1) * q;
  int below = (int)floor(h);
  if (below >= n - 1) return sorted[n - 1];
  return sorted[below] + (h - below) * (sorted[below + 1] - sorted[below]);
}

double tb_metg_crossing(const double *granularity_us, const double *efficiency, int n) {
  double metg = -1.0;
  for (int i = 0; i + 1 < n; ++i) {
    double a = efficiency[i], b = efficiency[i + 1];
    if (a >= 0.5 && b < 0.5) {
      double f = (a - 0.5) / (a - b), la = log(granularity_us[i]), lb = log(granularity_us[i + 1]);
      metg = exp(la + f * (lb - la));
    }
  }
  return metg;
}

static bool rises_beyond_spread(const tb_metg_point *low, const tb_metg_point *later) {
  return low->efficiency < TB_METG_DIP_LEVEL && later->eff_q1 > low->eff_q3 &&
         later->efficiency - low->efficiency > TB_METG_RISE_MIN;
}

int tb_metg_find_rises(const tb_metg_point *points, int n, tb_metg_rise *out, int max) {
  int count = 0, lowest = 0;
  bool reported = false; /* the lowest point's rise is already out */
  for (int j = 1; j < n; ++j) {
    if (points[j].efficiency < points[lowest].efficiency) {
      lowest = j, reported = false;
    } else if (!reported && rises_beyond_spread(&points[lowest], &points[j])) {
      if (count < max) out[count] = (tb_metg_rise){.dip = lowest, .rise = j};
      ++count, reported = true;
    }
  }
  return count;
}

/* Efficiency of one run (Task Bench): useful time / (wall x workers). */
static double efficiency_of(const tb_metg_sweep *sweep, double kernel_ns, double wall_s) {
  return sweep->tasks * kernel_ns * 1e-9 / (wall_s * sweep->workers);
}

void tb_metg_summarise_point(const tb_metg_sweep *sweep, tb_metg_point *pt) {
  double eff[TB_METG_MAX_REPEATS];
  pt->kernel_ns = tb_metg_quantile(pt->calib_ns, pt->n, 0.5);
  for (int i = 0; i < pt->n; ++i) eff[i] = efficiency_of(sweep, pt->kernel_ns, pt->wall_s[i]);
  pt->wall_median_s = tb_metg_quantile(pt->wall_s, pt->n, 0.5);
  double us_per_wall_s = sweep->workers / sweep->tasks * 1e6;
  pt->granularity_us = pt->wall_median_s * us_per_wall_s;
  pt->granularity_q1_us = tb_metg_quantile(pt->wall_s, pt->n, 0.75) * us_per_wall_s;
  pt->granularity_q3_us = tb_metg_quantile(pt->wall_s, pt->n, 0.25) * us_per_wall_s;
  pt->efficiency = tb_metg_quantile(eff, pt->n, 0.5);
  pt->eff_min = tb_metg_quantile(eff, pt->n, 0.0);
  pt->eff_q1 = tb_metg_quantile(eff, pt->n, 0.25);
  pt->eff_q3 = tb_metg_quantile(eff, pt->n, 0.75);
  pt->eff_max = tb_metg_quantile(eff, pt->n, 1.0);
}

/* The crossing of one curve, picked by `which` (0 median, 1 lower quartile,
 * 3 upper quartile): each point's runs at that quantile, granularity and
 * efficiency together (a slower run has both a larger grain and a lower
 * efficiency, so a stall moves its point along both axes). */
static double crossing_of(const tb_metg_sweep *sweep, int which) {
  double gran[TB_METG_MAX_POINTS], eff[TB_METG_MAX_POINTS];
  for (int i = 0; i < sweep->npoints; ++i) {
    const tb_metg_point *pt = &sweep->points[i];
    gran[i] = which == 1 ? pt->granularity_q1_us : which == 3 ? pt->granularity_q3_us : pt->granularity_us;
    eff[i] = which == 1 ? pt->eff_q1 : which == 3 ? pt->eff_q3 : pt->efficiency;
  }
  return tb_metg_crossing(gran, eff, sweep->npoints);
}

bool tb_metg_is_precise(double low_us, double high_us) {
  if (low_us <= 0 || high_us <= 0) return false;
  double wide = low_us > high_us ? low_us / high_us : high_us / low_us; /* a bent curve can swap them */
  return wide <= TB_METG_PRECISION;
}

void tb_metg_summarise(tb_metg_sweep *sweep) {
  for (int i = 0; i < sweep->npoints; ++i) tb_metg_summarise_point(sweep, &sweep->points[i]);
  sweep->metg_us = crossing_of(sweep, 0);
  sweep->metg_low_us = crossing_of(sweep, 3); /* the more efficient curve crosses at a smaller grain */
  sweep->metg_high_us = crossing_of(sweep, 1);
  sweep->nrises = tb_metg_find_rises(sweep->points, sweep->npoints, sweep->rises, TB_METG_MAX_POINTS);
  sweep->monotone = sweep->nrises == 0;
  sweep->precise = tb_metg_is_precise(sweep->metg_low_us, sweep->metg_high_us);
}

/* One more repeat of a point: a calibration, then a run. */
static int measure_repeat(const tb_metg_probe *probe, tb_metg_sweep *sweep, tb_metg_point *pt) {
  double kernel_ns = 0.0, wall_s = 0.0;
  MAPP_TRY(probe->calibrate(probe->ctx, pt->iterations, &kernel_ns));
  MAPP_TRY(probe->run(probe->ctx, pt->iterations, &wall_s));
  if (!(wall_s > 0.0)) return mapp_fail(MAPP_ERR_SYSTEM, "METG: a run at K = %ld took no time", pt->iterations);
  pt->calib_ns[pt->n] = kernel_ns;
  pt->wall_s[pt->n] = wall_s;
  pt->n++;
  tb_metg_summarise_point(sweep, pt);
  return MAPP_OK;
}

static int add_point(const tb_metg_probe *probe, tb_metg_sweep *sweep, long k) {
  tb_metg_point *pt = &sweep->points[sweep->npoints++];
  memset(pt, 0, sizeof *pt);
  pt->iterations = k;
  if (probe->round_trip) MAPP_TRY(probe->round_trip(probe->ctx, &pt->round_trip_ns));
  return measure_repeat(probe, sweep, pt);
}

/* The ladder is long enough once its last two points are below
 * TB_METG_STOP_EFFICIENCY (on their repeats so far), at K = 0, or full. */
static bool ladder_complete(const tb_metg_sweep *sweep) {
  int n = sweep->npoints;
  if (n == TB_METG_MAX_POINTS || (n > 0 && sweep->points[n - 1].iterations == 0)) return true;
  return n >= 2 && sweep->points[n - 1].efficiency < TB_METG_STOP_EFFICIENCY &&
         sweep->points[n - 2].efficiency < TB_METG_STOP_EFFICIENCY;
}

/* Passes over the whole ladder, one repeat for each point that lacks one,
 * until every point has `repeats`. */
static int fill_passes(const tb_metg_probe *probe, tb_metg_sweep *sweep) {
  for (bool short_of = true; short_of;) {
    short_of = false;
    for (int i = 0; i < sweep->npoints; ++i) {
      tb_metg_point *pt = &sweep->points[i];
      if (pt->n >= sweep->repeats) continue;
      MAPP_TRY(measure_repeat(probe, sweep, pt));
      short_of |= pt->n < sweep->repeats;
    }
  }
  return MAPP_OK;
}

static long next_k(long k) { return k > 1 ? k / 2 : k - 1; }

int tb_metg_measure(const tb_metg_probe *probe, long k_max, int repeats, tb_metg_sweep *sweep) {
  if (repeats < 1 || repeats > TB_METG_MAX_REPEATS)
    return mapp_fail(MAPP_ERR_INPUT, "--metg-repeats: %d is outside [1, %d]", repeats, TB_METG_MAX_REPEATS);
  if (k_max < 1) return mapp_fail(MAPP_ERR_INPUT, "--metg-max: %ld is below 1", k_max);
  sweep->repeats = repeats;
  sweep->npoints = 0;
  long k = k_max;
  /* A stall in the first pass can end the ladder early (two slow points
   * read below 25 %); once their later repeats outvote it, it grows again. */
  for (;;) {
    for (; !ladder_complete(sweep); k = next_k(k)) MAPP_TRY(add_point(probe, sweep, k));
    MAPP_TRY(fill_passes(probe, sweep));
    if (ladder_complete(sweep)) break;
  }
  tb_metg_summarise(sweep);
  return MAPP_OK;
}
