/* The series of each figure, derived from grouped results: one series per
 * variant/backend/threads/size (and scaling where both appear), one point
 * per rank count. `plot` draws them; `report` tabulates the same numbers. */
#ifndef HARNESS_PLOTDATA_H
#define HARNESS_PLOTDATA_H

#include <stdbool.h>
#include <stddef.h>

#include "stats.h"

typedef enum {
  PLOT_WEAK_EFFICIENCY, /* eff(n) of weak runs, with the ideal 1.0 */
  PLOT_SPEEDUP,         /* each variant/backend over the reference, per rank count */
  PLOT_STRONG_SPEEDUP,  /* T(n0)/T(n) of strong runs, with the ideal n/n0 */
  PLOT_FOM,             /* the app's own figure of merit */
  PLOT_KIND_COUNT
} plot_kind;

typedef struct {
  long ranks;
  ratio y;
  bool oversubscribed; /* drawn hollow: the point measures sharing, not the machine */
} plot_point;

typedef struct {
  char *label; /* "mpi/serial t=1 tiny" */
  const result_group *first; /* the series' first point: its configuration but the rank count */
  plot_point *points;
  size_t npoints;
} plot_series;

typedef struct {
  plot_kind kind;
  const char *app, *fom_name;
  plot_series *series;
  size_t nseries;
  long min_ranks, max_ranks;
  const speedup_ref *reference; /* PLOT_SPEEDUP: the app's reference (NULL: none present) */
} plot_set;

/* "weak-efficiency", "speedup", "strong-speedup", "fom": the figure's file
 * stem after "<app>-" and its template plots/<slug>.gp. */
const char *plot_kind_slug(plot_kind kind);
/* The series of one app for one figure (nseries 0 when there is nothing to
 * draw, e.g. no weak runs, or none of refs among the app's results). */
int plot_set_build(const group_table *t, const char *app, plot_kind kind, const speedup_refs *refs, plot_set *set);
void plot_set_free(plot_set *set);
/* The distinct apps of the table, in order. */
size_t plot_apps(const group_table *t, const char **apps, size_t max);

#endif
