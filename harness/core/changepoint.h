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
 * The detector only says where a level changes; how large a change must be
 * to matter is the caller's threshold on `change` (changepoint_worse). */
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
  double change;  /* after / before - 1: -0.1 is a 10 % lower figure of merit */
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

/* A step that lowers the figure of merit (higher is better) by at least
 * threshold (0.05: 5 %). */
bool changepoint_worse(const change_point *c, double threshold);

#endif
