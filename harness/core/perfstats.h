/* Performance regressions between two sets of repetitions, as Google
 * Benchmark's compare tool judges them: the ratio of medians with a
 * bootstrap confidence interval, and a two-sided Mann-Whitney U test. */
#ifndef HARNESS_PERFSTATS_H
#define HARNESS_PERFSTATS_H

#include <stdbool.h>
#include <stddef.h>

#include "selection.h"

typedef struct {
  double ratio;         /* median(new) / median(old) of a higher-is-better figure */
  double low, high;     /* its 95 % bootstrap confidence interval */
  double p_value;       /* two-sided Mann-Whitney U */
  double u;             /* U of the new sample */
  bool exact;           /* p from the exact null distribution (no ties, small samples) */
} perf_change;

/* Compare samples old[n_old] and new[n_new] (figures of merit, higher is
 * better); both need at least 2 values. The bootstrap uses a fixed seed, so
 * the same samples always give the same interval. */
int perf_compare(const double *old, size_t n_old, const double *new_, size_t n_new, perf_change *out);

/* A regression: slower than 1 - threshold by the median ratio, and the
 * difference significant at level alpha. */
bool perf_is_regression(const perf_change *c, double threshold, double alpha);
/* The mirror image: faster beyond threshold, significantly. */
bool perf_is_improvement(const perf_change *c, double threshold, double alpha);

/* Two-sided Mann-Whitney U p-value of samples a and b. */
double perf_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u, bool *exact);

/* mapp compare's work: OLD and NEW results (folders or .jsonl files; the
 * records select keeps, NULL for all) configuration by configuration, a
 * table on stdout; MAPP_ERR_VERIFY when one is slower beyond threshold with
 * p < alpha. */
int perf_compare_results(const char *old_path, const char *new_path, double threshold, double alpha,
                         const selection *select);

#endif
