/* Statistics over a results file, Google Benchmark's way: repetitions of a
 * configuration are summarised by their median, with min and max as the
 * spread, never by a single time. */
#ifndef HARNESS_STATS_H
#define HARNESS_STATS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "reference.h"
#include "verdict.h"

/* The repetitions of one configuration. Strings point into the records. */
typedef struct {
  const char *app, *variant, *backend, *size, *scaling;
  const char *setting; /* the sweep entry's label or flags; "" for none */
  long ranks, threads;
  const char *fom_name; /* "cell-updates/s" */
  size_t runs;          /* records of this configuration */
  size_t timed;         /* of which exited 0 with a figure of merit: the ones the numbers use */
  size_t verify_failed; /* runs whose own verification failed */
  size_t timed_out;     /* runs the harness stopped at their time limit (outcome "timeout") */
  bool oversubscribed;  /* a run used more cores or GPUs than its environment gave it */
  const char *baseline; /* worst over the runs: fail, missing, pass, none */
  double fom_median, fom_min, fom_max;
  double wall_median;
  /* The timed runs judged (verdict.h): verdict.kind (stable, noisy,
   * too-short, disturbed, oversubscribed), verdict.low/high the median's 95 % interval (NAN
   * under 6 runs), verdict.outliers, verdict.timed_median_s, verdict.disturbed. */
  verdict_summary verdict;
  /* the samples, one per timed run: foms unsorted until the group is
   * summarised (then sorted), timed_s and disturbed in the order read */
  double *foms, *walls, *timed_s;
  bool *disturbed;
  bool *self_oversubscribed; /* the run asked more cores than it was given (verdict.h: oversubscribed) */
  /* the timed runs' records (borrowed from the records grouped: valid
   * while they are), in the order read */
  const json_t **records;
  /* the app this program is a peer of (the record's peer_of: a production
   * system run beside a mini-app, such as Devito beside snapshots); "" */
  const char *peer_of;
  /* the mini-app's variant a peer's group stands beside (the record's
   * peer_variant, else its own variant: GT4Py's python mode beside the
   * app's eager) */
  const char *peer_variant;
  size_t capacity;
} result_group;

typedef struct {
  result_group *items; /* sorted by app, scaling, size, variant, backend, setting, threads, ranks */
  size_t count;
} group_table;

/* Median of values (sorts them in place); n > 0. */
double stats_median(double *values, size_t n);
/* Groups records by configuration and judges each group at the default
 * precision (VERDICT_DEFAULT_PRECISION: noisy beyond +-5 %). */
int stats_group(const json_t *records, group_table *table);
/* The same with the median's interval asked within +-precision (0.02: 2 %;
 * a sweep's `precision`). */
int stats_group_at(const json_t *records, double precision, group_table *table);
void group_table_free(group_table *table);

/* A derived number with the spread its min and max FOM give. */
typedef struct {
  double value, low, high;
} ratio;

/* eff(n) = fom(n) / (n fom(1)) for weak scaling: 1.0 when throughput grows
 * with the ranks. The base is the series' smallest rank count n0 when no
 * n = 1 run exists: eff(n) = (fom(n)/n) / (fom(n0)/n0). */
double weak_efficiency(double fom, long ranks, double base_fom, long base_ranks);
bool stats_weak_efficiency(const group_table *t, const result_group *g, ratio *out);
/* The reference of an app: the first of refs whose variant/backend occurs
 * among the app's groups; NULL when none does. */
const speedup_ref *stats_app_reference(const group_table *t, const char *app, const speedup_refs *refs);
/* fom / fom of g's app reference at the same size, scaling and rank count
 * (the reference's fewest threads). */
bool stats_speedup(const group_table *t, const result_group *g, const speedup_refs *refs, ratio *out);
/* Strong scaling T(n0)/T(n) = fom(n)/fom(n0): the work is fixed. */
bool stats_strong_speedup(const group_table *t, const result_group *g, ratio *out);
/* Same configuration but the rank count (and for the reference, variant and backend). */
bool group_same_series(const result_group *a, const result_group *b);

#endif
