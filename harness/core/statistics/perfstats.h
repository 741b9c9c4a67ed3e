/* Performance regressions between two sets of repetitions, as Google
 * Benchmark's compare tool judges them (the ratio of medians and a
 * two-sided Mann-Whitney U test), and honest where the noise cannot decide:
 *
 *   SLOWER        median ratio NEW/OLD below 1 - threshold and U-test p < alpha;
 *   faster        the mirror image;
 *   same          the 95 % interval of the ratio lies inside
 *                 (1 - threshold, 1 + threshold): the data exclude a change
 *                 of the threshold either way;
 *   inconclusive  anything else: the noise hides whether the change reaches
 *                 the threshold. The answer then names the smallest change
 *                 the data could have detected (perf_change.detectable).
 *
 * The ratio's interval is the Hodges-Lehmann/Moses interval (Hollander &
 * Wolfe, "Nonparametric Statistical Methods", 3.2) of the shift between
 * log(NEW) and log(OLD), exponentiated: the order statistics of the n_old
 * n_new pairwise log-ratios picked by the U test's null distribution. It is
 * the interval that inverts the same U test, so `p < alpha` and "the
 * interval excludes 1" agree; it is distribution-free for a multiplicative
 * change and exact at small samples, where a percentile bootstrap of a
 * median undercovers.
 *
 * The detectable change is the minimal detectable change of the U test at
 * level alpha with 80 % power: (z(1 - alpha/2) + z(0.8)) sqrt(pi/3)
 * sqrt(s_old^2 / n_old + s_new^2 / n_new), where s is each side's standard
 * deviation relative to its median and sqrt(pi/3) the U test's efficiency
 * against the t-test on normal data; infinite when the U test cannot reach
 * alpha with so few repetitions at all (its smallest two-sided p,
 * 2 / C(n_old + n_new, n_old), is not below alpha). The standard deviation
 * rather than a robust spread (1.4826 MAD), because timings come in
 * clusters: on this project's real noise a change of the MAD-based size was
 * found in 20-83 % of trials, of the SD-based size in 70-96 %
 * (tests/test_perfstats.c); the smallest change the data could have seen
 * must not be claimed smaller than it is. */
#ifndef HARNESS_PERFSTATS_H
#define HARNESS_PERFSTATS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  double ratio;      /* median(new) / median(old) of a higher-is-better figure */
  double low, high;  /* its 95 % interval (Moses, above); 0 and INFINITY when too few for one */
  bool bounded;      /* the interval exists (enough repetitions for 95 %) */
  double p_value;    /* two-sided Mann-Whitney U */
  double u;          /* U of the new sample */
  bool exact;        /* p from the exact null distribution (no ties, small samples) */
  double detectable; /* relative change the data could detect (0.1: 10 %); INFINITY when none */
} perf_change;

/* Compare samples old[n_old] and new[n_new] (figures of merit, higher is
 * better, > 0) at level alpha; both need at least 2 values. */
int perf_compare(const double *old, size_t n_old, const double *new_, size_t n_new, double alpha, perf_change *out);

typedef enum { PERF_SAME, PERF_SLOWER, PERF_FASTER, PERF_INCONCLUSIVE } perf_answer;

/* The answer for a threshold (0.05: 5 %) and level alpha, by the rules above. */
perf_answer perf_judge(const perf_change *c, double threshold, double alpha);
/* "same", "SLOWER", "faster", "inconclusive". */
const char *perf_answer_name(perf_answer answer);

/* A regression: slower than 1 - threshold by the median ratio, and the
 * difference significant at level alpha. */
bool perf_is_regression(const perf_change *c, double threshold, double alpha);
/* The mirror image: faster beyond threshold, significantly. */
bool perf_is_improvement(const perf_change *c, double threshold, double alpha);

/* Two-sided Mann-Whitney U p-value of samples a and b. */
double perf_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u, bool *exact);

/* The Hodges-Lehmann estimate of y / x (exp of the median pairwise
 * log-ratio) and its 95 % Moses interval, for positive samples x[nx] and
 * y[ny]; *bounded false (and 0, INFINITY) when the samples are too small
 * for a 95 % interval, or a value is not positive. */
int perf_ratio_interval(const double *x, size_t nx, const double *y, size_t ny, double *estimate, double *low,
                        double *high, bool *bounded);

/* The minimal detectable change (above) of samples of sizes na and nb
 * whose relative spreads are spread_a and spread_b, at level alpha with
 * 80 % power. */
double perf_detectable(double spread_a, size_t na, double spread_b, size_t nb, double alpha);
/* The sample standard deviation of x[n] over |median|: the spread the
 * detectable change takes. NAN for n < 2 or a median of 0. */
int perf_relative_sd(const double *x, size_t n, double *spread);
/* 1.4826 MAD / |median| of x[n]: a spread robust to a few wild values
 * (history's per-revision noise, whose medians are near normal). */
int perf_robust_spread(const double *x, size_t n, double *spread);

#endif
