/* Change points of a performance history: where the level of a series of
 * per-revision figures of merit (oldest first) steps up or down.
 *
 * The method is E-Divisive means (Matteson & James, "A Nonparametric
 * Approach for Multiple Change Point Analysis of Multivariate Data", JASA
 * 2014), the detector MongoDB (Daly et al., ICPE 2020) and Apache
 * Otava/Hunter (Fleming et al., ICPE 2023) run on their nightly benchmark
 * histories. It is chosen over a fixed step test because it assumes no noise
 * distribution (the energy statistic compares the whole distributions on
 * either side, so a skewed, heavy-tailed timing distribution does not fake a
 * step), finds several steps in one series by bisection, and needs no window
 * length. Significance comes from a permutation test, as in the paper and
 * MongoDB's implementation (Hunter replaced it by a t-test for speed; we keep
 * the distribution-free test and make it reproducible with a fixed-seed
 * generator, so the same history always gives the same answer).
 *
 * The detector only says where a level changes. How large the change is
 * comes from the segments either side of it: `change` is the
 * Hodges-Lehmann estimate of after / before - 1 (the median of every
 * pairwise ratio of a point after to a point before), and low..high its 95 %
 * Moses interval (perfstats.h: the order statistics of those ratios that
 * invert the Mann-Whitney U test), distribution-free like the detector.
 *
 * Whether a step counts is changepoint_judge's rule: a step counts as a
 * slowdown of at least the threshold when the data SUPPORT one, that is
 * when it lowers the figure of merit and its interval reaches -threshold
 * (low <= -threshold), not when the point estimate happens to pass it. A
 * true 5 % step's interval lies wholly above -5 % in only 2.5 % of
 * histories, so it counts at a 5 % threshold however the noise falls about
 * it, and a 2 % step whose interval stays above -5 % does not. A slower step
 * whose segments are too short for a 95 % interval (a segment of 2 points
 * with fewer than 8 on the other side, or of 3 with fewer than 5) is
 * undecided: the data say there is a step but not how large. */
#ifndef HARNESS_CHANGEPOINT_H
#define HARNESS_CHANGEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  size_t index;   /* the first point of the new level */
  double p_value; /* of the permutation test that accepted it */
  double before;  /* mean of the segment before it (up to the previous change point) */
  double after;   /* mean of the segment from it (up to the next change point) */
  double change;  /* Hodges-Lehmann after / before - 1: -0.1 is a 10 % lower figure of merit */
  double low, high; /* its 95 % interval (Moses); -1 and INFINITY when not bounded */
  bool bounded;   /* both segments long enough for a 95 % interval */
} change_point;

typedef struct {
  size_t min_segment;  /* fewest points on either side of a change point (>= 2) */
  double alpha;        /* a candidate is accepted when its permutation p-value <= alpha */
  size_t permutations; /* permutations per candidate (p resolves to 1 / (permutations + 1)) */
  uint64_t seed;       /* of the permutations: fixed, so a history always gives the same answer */
} changepoint_options;

/* min_segment 2, alpha 0.01, 499 permutations, a fixed seed. */
changepoint_options changepoint_defaults(void);

/* The longest series changepoint_detect takes: it holds n^2 distances, and
 * each permutation costs O(n^2). */
#define CHANGEPOINT_MAX_POINTS 4096

/* The change points of x[n] in increasing index, in *points (malloc'd; NULL
 * when there are none). A series too short to split has none; one longer
 * than CHANGEPOINT_MAX_POINTS is an input error. */
int changepoint_detect(const double *x, size_t n, const changepoint_options *opt, change_point **points,
                       size_t *count);

/* Matteson & James' divergence Q of splitting x[n] before index tau, with
 * |x - y| as the distance (alpha = 1 in the paper): 0 < tau < n. */
double changepoint_divergence(const double *x, size_t n, size_t tau);

typedef enum {
  STEP_NOT_SLOWER, /* a faster step, or a slower one whose interval stays above -threshold */
  STEP_SLOWER,     /* a slowdown the data support: slower, and low <= -threshold */
  STEP_UNDECIDED   /* slower, but too few points either side to bound its size */
} step_judgement;

/* The rule above for a step of a higher-is-better figure of merit and a
 * threshold (0.05: 5 %). */
step_judgement changepoint_judge(const change_point *c, double threshold);

#endif
