#include "perfstats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "stats.h"

enum { EXACT_LIMIT = 400 /* na * nb under which the U distribution is exact */ };

static const double CONFIDENCE = 0.95, POWER = 0.80;
static const double PI = 3.14159265358979323846;

/* ---------------------------------------------------------------- the U distribution */

/* counts[u] (u = 0 .. m n) = the arrangements of m and n values without ties
 * whose U is u, by the recurrence c(m, n, u) = c(m - 1, n, u - n) +
 * c(m, n - 1, u), rolled over m. malloc'd. */
static int u_counts(size_t m, size_t n, double **counts) {
  size_t width = m * n + 1;
  double *prev = calloc((n + 1) * width, sizeof *prev), *cur = calloc((n + 1) * width, sizeof *cur);
  if (!prev || !cur) {
    free(prev);
    free(cur);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for the U distribution of %zu and %zu values", m, n);
  }
  for (size_t j = 0; j <= n; ++j) prev[j * width] = 1.0; /* c(0, j, 0) = 1 */
  for (size_t i = 1; i <= m; ++i) {
    memset(cur, 0, (n + 1) * width * sizeof *cur);
    cur[0] = 1.0; /* c(i, 0, 0) = 1 */
    for (size_t j = 1; j <= n; ++j)
      for (size_t u = 0; u <= i * j; ++u)
        cur[j * width + u] = (u >= j ? prev[j * width + u - j] : 0.0) + cur[(j - 1) * width + u];
    double *t = prev;
    prev = cur;
    cur = t;
  }
  memmove(prev, prev + n * width, width * sizeof *prev);
  free(cur);
  *counts = prev;
  return MAPP_OK;
}

/* P(U <= u_value) under the null hypothesis, exactly. */
static int exact_cdf(size_t m, size_t n, double u_value, double *p) {
  double *counts = NULL;
  MAPP_TRY(u_counts(m, n, &counts));
  double total = 0.0, below = 0.0;
  for (size_t u = 0; u <= m * n; ++u) {
    total += counts[u];
    if ((double)u <= u_value + 1e-9) below += counts[u];
  }
  free(counts);
  *p = below / total;
  return MAPP_OK;
}

/* The standard normal's quantile, by bisection of its distribution function
 * (called a few times per comparison, so plain and sure beats fast). */
static double normal_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    double mid = 0.5 * (lo + hi);
    if (0.5 * erfc(-mid / sqrt(2.0)) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/* The largest c with P(U <= c) <= tail under the null hypothesis of m and n
 * values; -1 when even U = 0 is likelier than tail. */
static int u_lower_critical(size_t m, size_t n, double tail, long *c) {
  *c = -1;
  if (m * n > EXACT_LIMIT) {
    /* normal approximation with continuity correction:
     * P(U <= c) ~ Phi((c + 0.5 - mn/2) / sd) */
    double mn = (double)m * (double)n, sd = sqrt(mn * (double)(m + n + 1) / 12.0);
    *c = (long)floor(mn / 2.0 - 0.5 + normal_quantile(tail) * sd);
    if (*c < -1) *c = -1;
    return MAPP_OK;
  }
  double *counts = NULL;
  MAPP_TRY(u_counts(m, n, &counts));
  double total = 0.0, below = 0.0;
  for (size_t u = 0; u <= m * n; ++u) total += counts[u];
  for (size_t u = 0; u <= m * n; ++u) {
    below += counts[u];
    if (below / total > tail * (1.0 + 1e-12)) break;
    *c = (long)u;
  }
  free(counts);
  return MAPP_OK;
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
  double mean = 0.5 * (double)na * (double)nb, small = fmin(ua, (double)na * (double)nb - ua), below = 1.0;
  if (!ties && na * nb <= EXACT_LIMIT && exact_cdf(na, nb, small, &below) == MAPP_OK) {
    *exact = true;
    return fmin(1.0, 2.0 * below);
  }
  mapp_error_clear(); /* out of memory for the exact table: the approximation still answers */
  /* Normal approximation with continuity correction; ties shrink the
   * variance (the usual correction needs the tie groups; without them this
   * is conservative). */
  *exact = false;
  double n = (double)(na + nb), sd = sqrt((double)na * (double)nb * (n + 1.0) / 12.0);
  double z = (fabs(ua - mean) - 0.5) / sd;
  return fmin(1.0, erfc(fmax(z, 0.0) / sqrt(2.0)));
}

/* ---------------------------------------------------------------- the ratio's interval */

static int ascending(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static bool all_positive(const double *x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!(x[i] > 0.0)) return false;
  return true;
}

/* Every log(y_j / x_i), sorted; malloc'd (nx ny of them). */
static int log_ratios(const double *x, size_t nx, const double *y, size_t ny, double **out) {
  double *d = malloc(nx * ny * sizeof *d);
  if (!d) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for %zu x %zu ratios", nx, ny);
  for (size_t i = 0; i < nx; ++i)
    for (size_t j = 0; j < ny; ++j) d[i * ny + j] = log(y[j]) - log(x[i]);
  qsort(d, nx * ny, sizeof *d, ascending);
  *out = d;
  return MAPP_OK;
}

int perf_ratio_interval(const double *x, size_t nx, const double *y, size_t ny, double *estimate, double *low,
                        double *high, bool *bounded) {
  *estimate = NAN;
  *low = 0.0;
  *high = INFINITY;
  *bounded = false;
  if (!nx || !ny || !all_positive(x, nx) || !all_positive(y, ny)) return MAPP_OK;
  double *d = NULL;
  MAPP_TRY(log_ratios(x, nx, y, ny, &d));
  size_t total = nx * ny;
  *estimate = exp(total % 2 ? d[total / 2] : 0.5 * (d[total / 2 - 1] + d[total / 2]));
  long c;
  int status = u_lower_critical(nx, ny, 0.5 * (1.0 - CONFIDENCE), &c);
  if (status == MAPP_OK && c >= 0 && (size_t)c <= total - 1 - (size_t)c) {
    /* [D(c + 1), D(nx ny - c)] in 1-based order statistics */
    *low = exp(d[c]);
    *high = exp(d[total - 1 - (size_t)c]);
    *bounded = true;
  }
  free(d);
  return status;
}

/* ---------------------------------------------------------------- detectable change */

int perf_robust_spread(const double *x, size_t n, double *spread) {
  *spread = NAN;
  if (!n) return MAPP_OK;
  double *s = malloc(n * sizeof *s);
  if (!s) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  memcpy(s, x, n * sizeof *s);
  double median = stats_median(s, n);
  for (size_t i = 0; i < n; ++i) s[i] = fabs(x[i] - median);
  double mad = stats_median(s, n);
  free(s);
  *spread = median != 0.0 ? 1.4826 * mad / fabs(median) : NAN;
  return MAPP_OK;
}

int perf_relative_sd(const double *x, size_t n, double *spread) {
  *spread = NAN;
  if (n < 2) return MAPP_OK;
  double *s = malloc(n * sizeof *s), mean = 0.0, sum = 0.0;
  if (!s) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  memcpy(s, x, n * sizeof *s);
  double median = stats_median(s, n);
  free(s);
  for (size_t i = 0; i < n; ++i) mean += x[i];
  mean /= (double)n;
  for (size_t i = 0; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
  if (median != 0.0) *spread = sqrt(sum / (double)(n - 1)) / fabs(median);
  return MAPP_OK;
}

/* The smallest two-sided p the U test can give with na and nb values:
 * 2 / C(na + nb, na), the two most extreme arrangements. */
static double smallest_p(size_t na, size_t nb) {
  double log_choose = lgamma((double)(na + nb) + 1.0) - lgamma((double)na + 1.0) - lgamma((double)nb + 1.0);
  return 2.0 * exp(-log_choose);
}

double perf_detectable(double spread_a, size_t na, double spread_b, size_t nb, double alpha) {
  if (!na || !nb || smallest_p(na, nb) >= alpha) return INFINITY;
  double z = normal_quantile(1.0 - 0.5 * alpha) + normal_quantile(POWER);
  double se = sqrt(spread_a * spread_a / (double)na + spread_b * spread_b / (double)nb);
  return z * sqrt(PI / 3.0) * se;
}

/* ---------------------------------------------------------------- the comparison */

static int medians_of(const double *old, size_t n_old, const double *new_, size_t n_new, double *m_old, double *m_new) {
  double *copy = malloc(sizeof(double) * (n_old + n_new));
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory comparing repetitions");
  memcpy(copy, old, sizeof(double) * n_old);
  memcpy(copy + n_old, new_, sizeof(double) * n_new);
  *m_old = stats_median(copy, n_old);
  *m_new = stats_median(copy + n_old, n_new);
  free(copy);
  return MAPP_OK;
}

int perf_compare(const double *old, size_t n_old, const double *new_, size_t n_new, double alpha, perf_change *out) {
  if (n_old < 2 || n_new < 2)
    return mapp_fail(MAPP_ERR_INPUT, "a comparison needs at least 2 repetitions on each side, got %zu and %zu", n_old,
                     n_new);
  double m_old = NAN, m_new = NAN, estimate = NAN, s_old = NAN, s_new = NAN;
  MAPP_TRY(medians_of(old, n_old, new_, n_new, &m_old, &m_new));
  *out = (perf_change){.ratio = m_new / m_old};
  MAPP_TRY(perf_ratio_interval(old, n_old, new_, n_new, &estimate, &out->low, &out->high, &out->bounded));
  out->p_value = perf_mann_whitney(new_, n_new, old, n_old, &out->u, &out->exact);
  MAPP_TRY(perf_relative_sd(old, n_old, &s_old));
  MAPP_TRY(perf_relative_sd(new_, n_new, &s_new));
  out->detectable = perf_detectable(s_old, n_old, s_new, n_new, alpha);
  if (isnan(out->detectable)) out->detectable = INFINITY; /* a median of 0: no relative spread */
  return MAPP_OK;
}

bool perf_is_regression(const perf_change *c, double threshold, double alpha) {
  return c->ratio < 1.0 - threshold && c->p_value < alpha;
}

bool perf_is_improvement(const perf_change *c, double threshold, double alpha) {
  return c->ratio > 1.0 + threshold && c->p_value < alpha;
}

perf_answer perf_judge(const perf_change *c, double threshold, double alpha) {
  if (perf_is_regression(c, threshold, alpha)) return PERF_SLOWER;
  if (perf_is_improvement(c, threshold, alpha)) return PERF_FASTER;
  if (c->bounded && c->low > 1.0 - threshold && c->high < 1.0 + threshold) return PERF_SAME;
  return PERF_INCONCLUSIVE;
}

const char *perf_answer_name(perf_answer answer) {
  static const char *const names[] = {"same", "SLOWER", "faster", "inconclusive"};
  return names[answer];
}
