/* E-Divisive means with a permutation test (changepoint.h says why). */
#include "changepoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "perfstats.h"

changepoint_options changepoint_defaults(void) {
  /* alpha 0.01 rather than the paper's 0.05: a history is checked on every
   * push, configuration by configuration, and at 0.05 one noisy series in
   * twenty would raise an alarm. */
  return (changepoint_options){.min_segment = 2, .alpha = 0.01, .permutations = 499, .seed = 0x6d617070686973ull};
}

/* splitmix64: a small, portable stream; the same seed gives the same
 * permutations on every machine. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Pairs i < j within one side count once; a side of one point has none. */
static double pairs(size_t k) { return 0.5 * (double)k * (double)(k - 1); }

/* Q from the sums of |xi - xj| between the sides (a and b points) and within each. */
static double divergence_of(double between, double within_left, double within_right, size_t a, size_t b) {
  double e = 2.0 * between / ((double)a * (double)b);
  if (a > 1) e -= within_left / pairs(a);
  if (b > 1) e -= within_right / pairs(b);
  return (double)a * (double)b / (double)(a + b) * e;
}

/* prefix[i (n + 1) + j] = sum over k < j of |x_i - x_k|: any sum of one
 * point's distances to a run of points in O(1). */
static void fill_prefix(const double *x, size_t n, double *prefix) {
  for (size_t i = 0; i < n; ++i) {
    double *row = prefix + i * (n + 1);
    row[0] = 0.0;
    for (size_t j = 0; j < n; ++j) row[j + 1] = row[j] + fabs(x[i] - x[j]);
  }
}

static double distances(const double *prefix, size_t n, size_t i, size_t from, size_t to) {
  const double *row = prefix + i * (n + 1);
  return row[to] - row[from];
}

/* The best split of x[n] as Matteson & James search it: X = x[0, tau)
 * against Y = x[tau, kappa) for every kappa, not only kappa = n, so a level
 * that returns (a slowdown later fixed) is as visible as one that stays.
 * At least min_segment points on each side; *tau 0 when there is none.
 * Growing X or Y by one point adds that point's distance sums (O(1) from the
 * prefix sums), so the scan is O(n^2). prefix: n (n + 1) doubles. */
static double best_split(const double *x, size_t n, size_t min_segment, double *prefix, size_t *tau) {
  fill_prefix(x, n, prefix);
  double best = -INFINITY, within_x = 0.0;
  *tau = 0;
  for (size_t t = 1; t + min_segment <= n; ++t) {
    within_x += distances(prefix, n, t - 1, 0, t - 1);
    if (t < min_segment) continue;
    double between = 0.0, within_y = 0.0;
    for (size_t k = t; k < n; ++k) { /* Y grows to x[t, k] */
      between += distances(prefix, n, k, 0, t);
      within_y += distances(prefix, n, k, t, k);
      size_t b = k + 1 - t;
      if (b < min_segment) continue;
      double q = divergence_of(between, within_x, within_y, t, b);
      if (q > best) best = q, *tau = t;
    }
  }
  return best;
}

double changepoint_divergence(const double *x, size_t n, size_t tau) {
  double between = 0.0, left = 0.0, right = 0.0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      double d = fabs(x[i] - x[j]);
      if (j < tau) left += d;
      else if (i >= tau) right += d;
      else between += d;
    }
  return divergence_of(between, left, right, tau, n - tau);
}

static void shuffle(double *x, size_t n, uint64_t *rng) {
  for (size_t i = n - 1; i > 0; --i) {
    size_t j = (size_t)(next_random(rng) % (i + 1));
    double t = x[i];
    x[i] = x[j];
    x[j] = t;
  }
}

/* p of the best split of segment x[n] scoring `observed`: the share of
 * random orderings of the same values whose best split scores as high
 * (counting the observed ordering itself). Stops as soon as the answer is
 * certain to exceed alpha, so quiet segments cost a few permutations. */
static double permutation_p(const double *x, size_t n, double observed, const changepoint_options *opt,
                            uint64_t *rng, double *scratch, double *prefix) {
  memcpy(scratch, x, n * sizeof *x);
  size_t as_high = 0; /* shuffles scoring at least the observed Q (the tolerance absorbs rounding of equal ones) */
  const double budget = opt->alpha * (double)(opt->permutations + 1);
  for (size_t r = 0; r < opt->permutations; ++r) {
    shuffle(scratch, n, rng);
    size_t tau;
    if (best_split(scratch, n, opt->min_segment, prefix, &tau) >= observed * (1.0 - 1e-9)) ++as_high;
    if ((double)(as_high + 1) > budget) return (double)(as_high + 1) / (double)(r + 2);
  }
  return (double)(as_high + 1) / (double)(opt->permutations + 1);
}

static double mean(const double *x, size_t from, size_t to) {
  double sum = 0.0;
  for (size_t i = from; i < to; ++i) sum += x[i];
  return sum / (double)(to - from);
}

/* bounds[0..nb) are sorted segment starts with bounds[0] = 0 and a final n. */
static void insert_bound(size_t *bounds, double *p, size_t *nb, size_t at, double p_value) {
  size_t k = *nb;
  while (k > 0 && bounds[k - 1] > at) {
    bounds[k] = bounds[k - 1];
    p[k] = p[k - 1];
    --k;
  }
  bounds[k] = at;
  p[k] = p_value;
  ++*nb;
}

/* A change point's size from the segments either side of it: their means,
 * and the Hodges-Lehmann ratio with its 95 % interval. */
static int size_step(const double *x, size_t from, size_t at, size_t to, change_point *c) {
  c->before = mean(x, from, at);
  c->after = mean(x, at, to);
  double estimate, low, high;
  MAPP_TRY(perf_ratio_interval(x + from, at - from, x + at, to - at, &estimate, &low, &high, &c->bounded));
  if (isnan(estimate)) /* a point not positive: no ratios, the means' ratio stands in */
    estimate = c->before != 0.0 ? c->after / c->before : 1.0;
  c->change = estimate - 1.0;
  c->low = low - 1.0;
  c->high = high - 1.0;
  return MAPP_OK;
}

/* Each change point's size against the segments either side. */
static int describe(const double *x, const size_t *bounds, const double *p, size_t nb, change_point **points,
                    size_t *count) {
  size_t found = nb - 2; /* bounds hold 0 and n besides the change points */
  if (!found) return MAPP_OK;
  change_point *out = calloc(found, sizeof *out);
  if (!out) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for %zu change points", found);
  int status = MAPP_OK;
  for (size_t k = 1; status == MAPP_OK && k + 1 < nb; ++k) {
    out[k - 1].index = bounds[k];
    out[k - 1].p_value = p[k];
    status = size_step(x, bounds[k - 1], bounds[k], bounds[k + 1], &out[k - 1]);
  }
  if (status != MAPP_OK) {
    free(out);
    return status;
  }
  *points = out;
  *count = found;
  return MAPP_OK;
}

/* Bisection as Matteson & James run it: the best split over all current
 * segments is tested; accepted, it divides its segment and the search goes
 * on; rejected, the search ends. */
int changepoint_detect(const double *x, size_t n, const changepoint_options *opt, change_point **points,
                       size_t *count) {
  *points = NULL;
  *count = 0;
  if (opt->min_segment < 2 || !(opt->alpha > 0.0) || opt->permutations < 1)
    return mapp_fail(MAPP_ERR_INPUT, "change-point options out of range (min_segment %zu, alpha %g, %zu permutations)",
                     opt->min_segment, opt->alpha, opt->permutations);
  if (n > CHANGEPOINT_MAX_POINTS)
    return mapp_fail(MAPP_ERR_INPUT, "a series of %zu points is longer than the %d change-point detection takes", n,
                     CHANGEPOINT_MAX_POINTS);
  if (n < 2 * opt->min_segment) return MAPP_OK;
  size_t *bounds = malloc((n + 1) * sizeof *bounds);
  double *p = malloc((n + 1) * sizeof *p), *scratch = malloc(n * sizeof *scratch);
  double *prefix = malloc(n * (n + 1) * sizeof *prefix);
  if (!bounds || !p || !scratch || !prefix) {
    free(bounds);
    free(p);
    free(scratch);
    free(prefix);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for a series of %zu points", n);
  }
  size_t nb = 2;
  bounds[0] = 0, bounds[1] = n, p[0] = p[1] = 0.0;
  uint64_t rng = opt->seed;
  for (;;) {
    size_t best_start = 0, best_len = 0, best_tau = 0;
    double best_q = 0.0;
    for (size_t k = 0; k + 1 < nb; ++k) {
      size_t len = bounds[k + 1] - bounds[k], tau;
      if (len < 2 * opt->min_segment) continue;
      double q = best_split(x + bounds[k], len, opt->min_segment, prefix, &tau);
      if (q > best_q) best_q = q, best_start = bounds[k], best_len = len, best_tau = tau;
    }
    if (best_len == 0) break; /* nothing left to split, or every segment is flat */
    double p_value = permutation_p(x + best_start, best_len, best_q, opt, &rng, scratch, prefix);
    if (p_value > opt->alpha) break;
    insert_bound(bounds, p, &nb, best_start + best_tau, p_value);
  }
  int status = describe(x, bounds, p, nb, points, count);
  free(prefix);
  free(bounds);
  free(p);
  free(scratch);
  return status;
}

step_judgement changepoint_judge(const change_point *c, double threshold) {
  if (!(c->change < 0.0)) return STEP_NOT_SLOWER;
  if (!c->bounded) return STEP_UNDECIDED;
  return c->low <= -threshold ? STEP_SLOWER : STEP_NOT_SLOWER;
}
