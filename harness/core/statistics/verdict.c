/* Records and configurations judged before any verdict is drawn from them
 * (verdict.h says by which rules and why). */
#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

/* /proc/stat's ticks per second (USER_HZ): 100 on every Linux the harness meets. */
enum { PROC_STAT_TICKS_PER_S = 100 };

const char *verdict_name(verdict_kind kind) {
  switch (kind) {
  case VERDICT_STABLE: return "stable";
  case VERDICT_NOISY: return "noisy";
  case VERDICT_TOO_SHORT: return "too-short";
  case VERDICT_DISTURBED: return "disturbed";
  case VERDICT_OVERSUBSCRIBED: return "oversubscribed";
  }
  return "?";
}

bool verdict_figures_trusted(verdict_kind kind) {
  return kind != VERDICT_TOO_SHORT && kind != VERDICT_DISTURBED && kind != VERDICT_OVERSUBSCRIBED;
}

/* ---------------------------------------------------------------- order statistics */

static int ascending(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A sorted copy of values[n] (n > 0), malloc'd. */
static int sorted_copy(const double *values, size_t n, double **sorted) {
  *sorted = malloc(n * sizeof **sorted);
  if (!*sorted) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory sorting %zu values", n);
  memcpy(*sorted, values, n * sizeof **sorted);
  qsort(*sorted, n, sizeof **sorted, ascending);
  return MAPP_OK;
}

static double sorted_median(const double *s, size_t n) {
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* P(Binomial(n, 1/2) = j), through logarithms so that large n does not overflow. */
static double binomial_half(size_t n, size_t j) {
  double log_choose = lgamma((double)n + 1.0) - lgamma((double)j + 1.0) - lgamma((double)(n - j) + 1.0);
  return exp(log_choose - (double)n * log(2.0));
}

/* The largest k >= 1 with [x(k), x(n + 1 - k)] covering the median with
 * probability >= 95 %: coverage is 1 - 2 P(B < k), B ~ Binomial(n, 1/2),
 * the count of values below the true median. 0 when even k = 1 falls short. */
static size_t median_rank(size_t n) {
  double below = 0.0; /* P(B < k) */
  size_t k = 0;
  while (k < n / 2) {
    double next = below + binomial_half(n, k); /* P(B < k + 1) */
    if (1.0 - 2.0 * next < 0.95 - 1e-12) break;
    below = next;
    ++k;
  }
  return k;
}

int verdict_median_interval(const double *values, size_t n, double *low, double *high, bool *defined) {
  *low = *high = NAN;
  *defined = false;
  size_t k = n >= VERDICT_MEDIAN_CI_MIN_N ? median_rank(n) : 0;
  if (k == 0) return MAPP_OK;
  double *s = NULL;
  MAPP_TRY(sorted_copy(values, n, &s));
  *low = s[k - 1];
  *high = s[n - k];
  *defined = true;
  free(s);
  return MAPP_OK;
}

/* max(median - low, high - median) / |median|: how far the interval reaches. */
static double relative_half_width(double median, double low, double high) {
  return fmax(median - low, high - median) / fabs(median);
}

int verdict_precise(const double *foms, size_t n, double precision, bool *precise) {
  *precise = false;
  double low, high;
  bool defined;
  MAPP_TRY(verdict_median_interval(foms, n, &low, &high, &defined));
  if (!defined) return MAPP_OK;
  double *s = NULL;
  MAPP_TRY(sorted_copy(foms, n, &s));
  double median = sorted_median(s, n);
  free(s);
  *precise = median != 0.0 && relative_half_width(median, low, high) <= precision;
  return MAPP_OK;
}

/* ---------------------------------------------------------------- outliers */

/* The spread the modified z-score divides by: MAD / 0.6745 (the normal's
 * standard deviation for normal data), or when MAD is 0 the mean absolute
 * deviation * 1.2533 (sqrt(pi / 2), the same for the mean deviation). */
static int robust_scale(const double *values, size_t n, double median, double *scale) {
  double *deviations = malloc(n * sizeof *deviations);
  if (!deviations) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for %zu deviations", n);
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += deviations[i] = fabs(values[i] - median);
  qsort(deviations, n, sizeof *deviations, ascending);
  double mad = sorted_median(deviations, n);
  free(deviations);
  *scale = mad > 0.0 ? mad / 0.6745 : 1.253314 * sum / (double)n;
  return MAPP_OK;
}

int verdict_outliers(const double *values, size_t n, bool *flags, size_t *count) {
  *count = 0;
  if (flags) memset(flags, 0, n * sizeof *flags);
  if (n < 3) return MAPP_OK; /* two values have no third to say which one strays */
  double *s = NULL, scale = 0.0;
  MAPP_TRY(sorted_copy(values, n, &s));
  double median = sorted_median(s, n);
  free(s);
  MAPP_TRY(robust_scale(values, n, median, &scale));
  if (!(scale > 0.0)) return MAPP_OK;
  for (size_t i = 0; i < n; ++i) {
    bool outlier = fabs(values[i] - median) / scale > VERDICT_OUTLIER_Z;
    if (flags) flags[i] = outlier;
    *count += outlier;
  }
  return MAPP_OK;
}

/* ---------------------------------------------------------------- records */

static double number_or_nan(const json_t *object, const char *key) {
  const json_t *v = json_object_get(object, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The node CPU time the steal fraction was counted over, in seconds: the
 * record's own tick count where it gives one, else interval * CPUs. */
static double steal_basis_s(const json_t *record, const json_t *disturbance) {
  double ticks = number_or_nan(disturbance, "cpu_ticks");
  if (!isnan(ticks)) return ticks / PROC_STAT_TICKS_PER_S;
  double cpus = number_or_nan(json_object_get(record, "machine"), "cpus");
  return number_or_nan(disturbance, "interval_s") * (isnan(cpus) ? 1.0 : cpus);
}

static double timed_seconds(const json_t *record) {
  double timed = number_or_nan(json_object_get(record, "timing"), "timed_s");
  if (!isnan(timed)) return timed;
  return number_or_nan(json_object_get(json_object_get(record, "phases"), "compute"), "max");
}

void verdict_record(const json_t *record, verdict_record_info *out) {
  const json_t *disturbance = json_object_get(record, "disturbance");
  *out = (verdict_record_info){.timed_s = timed_seconds(record), .steal = NAN,
                               .run_delay = number_or_nan(disturbance, "run_delay_fraction")};
  if (steal_basis_s(record, disturbance) >= VERDICT_STEAL_MIN_CPU_S)
    out->steal = number_or_nan(disturbance, "steal_fraction");
  out->disturbed = out->run_delay > VERDICT_MAX_RUN_DELAY || out->steal > VERDICT_MAX_STEAL;
  out->oversubscribed = json_is_true(json_object_get(record, "oversubscribed"));
}

/* ---------------------------------------------------------------- configurations */

/* Median of the known (not NAN) timed seconds; NAN when none is. */
static int median_timed(const double *timed_s, size_t n, double *median) {
  *median = NAN;
  if (!timed_s || !n) return MAPP_OK;
  double *known = malloc(n * sizeof *known);
  if (!known) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t count = 0;
  for (size_t i = 0; i < n; ++i)
    if (!isnan(timed_s[i])) known[count++] = timed_s[i];
  if (count) {
    qsort(known, count, sizeof *known, ascending);
    *median = sorted_median(known, count);
  }
  free(known);
  return MAPP_OK;
}

static int figure_summary(const double *foms, size_t n, verdict_summary *out) {
  bool defined;
  MAPP_TRY(verdict_median_interval(foms, n, &out->low, &out->high, &defined));
  MAPP_TRY(verdict_outliers(foms, n, NULL, &out->outliers));
  double *s = NULL;
  MAPP_TRY(sorted_copy(foms, n, &s));
  out->median = sorted_median(s, n);
  free(s);
  if (defined && out->median != 0.0) out->half_width = relative_half_width(out->median, out->low, out->high);
  return MAPP_OK;
}

static verdict_kind decide(const verdict_summary *v, double precision) {
  if (v->timed_median_s < VERDICT_MIN_TIMED_S) return VERDICT_TOO_SHORT; /* false for NAN */
  double most = VERDICT_MAX_DISTURBED_SHARE * (double)v->n;
  /* by others first: a machine that disturbs a run is the louder news */
  if (v->n && (double)(v->disturbed - v->self_disturbed) > most) return VERDICT_DISTURBED;
  if (v->n && (double)v->disturbed > most) return VERDICT_OVERSUBSCRIBED;
  if (!(v->half_width <= precision)) return VERDICT_NOISY; /* NAN: too few for an interval */
  return VERDICT_STABLE;
}

int verdict_judge(const double *foms, const double *timed_s, const bool *disturbed, const bool *oversubscribed,
                  size_t n, double precision, verdict_summary *out) {
  *out = (verdict_summary){.kind = VERDICT_NOISY, .n = n, .median = NAN, .low = NAN, .high = NAN,
                           .half_width = NAN, .timed_median_s = NAN};
  if (!(precision > 0.0)) precision = VERDICT_DEFAULT_PRECISION;
  if (n) MAPP_TRY(figure_summary(foms, n, out));
  for (size_t i = 0; disturbed && i < n; ++i) {
    out->disturbed += disturbed[i];
    out->self_disturbed += disturbed[i] && oversubscribed && oversubscribed[i];
  }
  MAPP_TRY(median_timed(timed_s, n, &out->timed_median_s));
  out->kind = decide(out, precision);
  return MAPP_OK;
}

static bool counts(const json_t *record) {
  return json_integer_value(json_object_get(record, "exit_code")) == 0 &&
         json_is_number(json_object_get(json_object_get(record, "fom"), "value"));
}

int verdict_of_records(const json_t *records, double precision, verdict_summary *out) {
  size_t total = json_array_size(records), n = 0, i;
  double *foms = malloc((total ? total : 1) * sizeof *foms), *timed = malloc((total ? total : 1) * sizeof *timed);
  bool *disturbed = malloc((total ? total : 1) * sizeof *disturbed);
  bool *over = malloc((total ? total : 1) * sizeof *over);
  int status = foms && timed && disturbed && over ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory judging records");
  const json_t *r;
  json_array_foreach(records, i, r) {
    if (status != MAPP_OK || !counts(r)) continue;
    verdict_record_info info;
    verdict_record(r, &info);
    foms[n] = json_number_value(json_object_get(json_object_get(r, "fom"), "value"));
    timed[n] = info.timed_s;
    over[n] = info.oversubscribed;
    disturbed[n++] = info.disturbed;
  }
  if (status == MAPP_OK) status = verdict_judge(foms, timed, disturbed, over, n, precision, out);
  free(over);
  free(foms);
  free(timed);
  free(disturbed);
  return status;
}

void verdict_explain(const verdict_summary *v, double precision, char *text, size_t len) {
  if (!(precision > 0.0)) precision = VERDICT_DEFAULT_PRECISION;
  char outliers[48] = "";
  if (v->outliers) snprintf(outliers, sizeof outliers, ", %zu outlier%s kept", v->outliers, v->outliers > 1 ? "s" : "");
  switch (v->kind) {
  case VERDICT_TOO_SHORT:
    snprintf(text, len, "too-short: median timed phase %.3g ms < %.3g ms", 1e3 * v->timed_median_s,
             1e3 * VERDICT_MIN_TIMED_S);
    return;
  case VERDICT_DISTURBED:
    snprintf(text, len, "disturbed: %zu of %zu runs waited for a CPU over %.0f %% of the time or lost over %.0f %% to steal",
             v->disturbed, v->n, 100.0 * VERDICT_MAX_RUN_DELAY, 100.0 * VERDICT_MAX_STEAL);
    return;
  case VERDICT_OVERSUBSCRIBED:
    snprintf(text, len, "oversubscribed: %zu of %zu runs waited for a CPU over %.0f %% of the time, %zu of them asking "
                        "more cores than given (ranks x (threads + own helper threads))",
             v->disturbed, v->n, 100.0 * VERDICT_MAX_RUN_DELAY, v->self_disturbed);
    return;
  case VERDICT_NOISY:
    if (isnan(v->half_width))
      snprintf(text, len, "noisy: %zu repetitions, too few for a 95 %% interval of the median (needs %d)", v->n,
               VERDICT_MEDIAN_CI_MIN_N);
    else
      snprintf(text, len, "noisy: median +-%.1f %% at 95 %% (asked +-%.3g %%)%s", 100.0 * v->half_width,
               100.0 * precision, outliers);
    return;
  case VERDICT_STABLE:
    snprintf(text, len, "stable: median +-%.1f %% at 95 %%%s", 100.0 * v->half_width, outliers);
    return;
  }
  snprintf(text, len, "?");
}
