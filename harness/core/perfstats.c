#include "perfstats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "stats.h"

enum { BOOTSTRAP_RESAMPLES = 2000, EXACT_LIMIT = 400 /* na * nb under which p is exact */ };

/* splitmix64: a fixed, portable stream for the bootstrap. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double resampled_median(const double *x, size_t n, double *scratch, uint64_t *rng) {
  for (size_t i = 0; i < n; ++i) scratch[i] = x[next_random(rng) % n];
  return stats_median(scratch, n);
}

/* Percentile bootstrap of median(new)/median(old), resampling each side. */
static int bootstrap_ratio(const double *old, size_t n_old, const double *new_, size_t n_new, double *low,
                           double *high) {
  double *ratios = malloc(sizeof(double) * BOOTSTRAP_RESAMPLES);
  double *scratch = malloc(sizeof(double) * (n_old > n_new ? n_old : n_new));
  if (!ratios || !scratch) {
    free(ratios);
    free(scratch);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for the bootstrap");
  }
  uint64_t rng = 0x6d617070ull; /* "mapp" */
  for (int b = 0; b < BOOTSTRAP_RESAMPLES; ++b) {
    double m_old = resampled_median(old, n_old, scratch, &rng);
    ratios[b] = resampled_median(new_, n_new, scratch, &rng) / m_old;
  }
  stats_median(ratios, BOOTSTRAP_RESAMPLES); /* sorts them */
  *low = ratios[(size_t)(0.025 * BOOTSTRAP_RESAMPLES)];
  *high = ratios[(size_t)(0.975 * BOOTSTRAP_RESAMPLES) - 1];
  free(ratios);
  free(scratch);
  return MAPP_OK;
}

/* Number of ways to choose the first sample's positions so that U <= u,
 * without ties: counts[m][n][u] by the recurrence
 * c(m, n, u) = c(m - 1, n, u - n) + c(m, n - 1, u), as a cumulative CDF. */
static double exact_cdf(size_t m, size_t n, double u_value) {
  size_t umax = m * n;
  double *prev = calloc((n + 1) * (umax + 1), sizeof *prev), *cur = calloc((n + 1) * (umax + 1), sizeof *cur);
  if (!prev || !cur) {
    free(prev);
    free(cur);
    return NAN;
  }
  /* row i = 0: c(0, j, 0) = 1 */
  for (size_t j = 0; j <= n; ++j) prev[j * (umax + 1)] = 1.0;
  for (size_t i = 1; i <= m; ++i) {
    memset(cur, 0, (n + 1) * (umax + 1) * sizeof *cur);
    cur[0] = 1.0; /* c(i, 0, 0) = 1 */
    for (size_t j = 1; j <= n; ++j)
      for (size_t u = 0; u <= i * j; ++u)
        cur[j * (umax + 1) + u] = (u >= j ? prev[j * (umax + 1) + u - j] : 0.0) + cur[(j - 1) * (umax + 1) + u];
    double *t = prev;
    prev = cur;
    cur = t;
  }
  double total = 0.0, below = 0.0;
  for (size_t u = 0; u <= umax; ++u) {
    total += prev[n * (umax + 1) + u];
    if ((double)u <= u_value + 1e-9) below += prev[n * (umax + 1) + u];
  }
  free(prev);
  free(cur);
  return below / total;
}

double perf_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u, bool *exact) {
  /* U of a: pairs where a beats b, ties counting one half. */
  double ua = 0.0;
  bool ties = false;
  for (size_t i = 0; i < na; ++i)
    for (size_t j = 0; j < nb; ++j) {
      if (a[i] > b[j]) ua += 1.0;
      else if (a[i] == b[j]) ua += 0.5, ties = true;
    }
  *u = ua;
  double mean = 0.5 * (double)na * (double)nb, small = fmin(ua, (double)na * (double)nb - ua);
  if (!ties && na * nb <= EXACT_LIMIT) {
    *exact = true;
    return fmin(1.0, 2.0 * exact_cdf(na, nb, small));
  }
  /* Normal approximation with continuity correction; ties shrink the
   * variance (the usual correction needs the tie groups; without them this
   * is conservative). */
  *exact = false;
  double n = (double)(na + nb), sd = sqrt((double)na * (double)nb * (n + 1.0) / 12.0);
  double z = (fabs(ua - mean) - 0.5) / sd;
  return fmin(1.0, erfc(fmax(z, 0.0) / sqrt(2.0)));
}

int perf_compare(const double *old, size_t n_old, const double *new_, size_t n_new, perf_change *out) {
  if (n_old < 2 || n_new < 2)
    return mapp_fail(MAPP_ERR_INPUT, "a comparison needs at least 2 repetitions on each side, got %zu and %zu", n_old,
                     n_new);
  double *copy = malloc(sizeof(double) * (n_old + n_new));
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory comparing repetitions");
  memcpy(copy, old, sizeof(double) * n_old);
  memcpy(copy + n_old, new_, sizeof(double) * n_new);
  double m_old = stats_median(copy, n_old), m_new = stats_median(copy + n_old, n_new);
  free(copy);
  *out = (perf_change){.ratio = m_new / m_old};
  MAPP_TRY(bootstrap_ratio(old, n_old, new_, n_new, &out->low, &out->high));
  out->p_value = perf_mann_whitney(new_, n_new, old, n_old, &out->u, &out->exact);
  return MAPP_OK;
}

bool perf_is_regression(const perf_change *c, double threshold, double alpha) {
  return c->ratio < 1.0 - threshold && c->p_value < alpha;
}

bool perf_is_improvement(const perf_change *c, double threshold, double alpha) {
  return c->ratio > 1.0 + threshold && c->p_value < alpha;
}
