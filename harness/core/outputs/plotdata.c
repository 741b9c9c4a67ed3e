#include "plotdata.h"

#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_error.h"

static const char *const slugs[PLOT_KIND_COUNT] = {
    [PLOT_WEAK_EFFICIENCY] = "weak-efficiency", [PLOT_SPEEDUP] = "speedup",
    [PLOT_STRONG_SPEEDUP] = "strong-speedup", [PLOT_FOM] = "fom"};

const char *plot_kind_slug(plot_kind kind) { return slugs[kind]; }

static bool point_value(const group_table *t, const result_group *g, plot_kind kind, const speedup_refs *refs,
                        ratio *y) {
  switch (kind) {
  case PLOT_WEAK_EFFICIENCY: return stats_weak_efficiency(t, g, y);
  case PLOT_SPEEDUP: return stats_speedup(t, g, refs, y);
  case PLOT_STRONG_SPEEDUP: return stats_strong_speedup(t, g, y);
  case PLOT_FOM:
    *y = (ratio){g->fom_median, g->fom_min, g->fom_max};
    return g->timed > 0;
  default: return false;
  }
}

/* Figures of one scaling mode say so in the title; the others in the label. */
static char *series_label(const result_group *g, plot_kind kind) {
  bool with_scaling = kind == PLOT_SPEEDUP || kind == PLOT_FOM;
  return str_printf("%s/%s t=%ld %s%s%s%s%s", g->variant, g->backend, g->threads, g->size,
                    with_scaling ? " " : "", with_scaling ? g->scaling : "", g->setting[0] ? " " : "", g->setting);
}

static int start_series(plot_set *set, const result_group *g, size_t max_points) {
  plot_series *s = &set->series[set->nseries++];
  s->label = series_label(g, set->kind);
  s->first = g;
  s->points = calloc(max_points, sizeof *s->points);
  return s->label && s->points ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

static void add_point(plot_set *set, long ranks, ratio y, bool oversubscribed) {
  plot_series *s = &set->series[set->nseries - 1];
  s->points[s->npoints++] = (plot_point){ranks, y, oversubscribed};
  if (!set->min_ranks || ranks < set->min_ranks) set->min_ranks = ranks;
  if (ranks > set->max_ranks) set->max_ranks = ranks;
}

/* Groups are sorted with the rank count last, so each series is a run of
 * consecutive groups. */
int plot_set_build(const group_table *t, const char *app, plot_kind kind, const speedup_refs *refs, plot_set *set) {
  *set = (plot_set){.kind = kind, .app = app, .fom_name = "FOM"};
  if (kind == PLOT_SPEEDUP) set->reference = stats_app_reference(t, app, refs);
  set->series = calloc(t->count ? t->count : 1, sizeof *set->series);
  if (!set->series) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  const result_group *previous = NULL;
  for (size_t i = 0; i < t->count; ++i) {
    const result_group *g = &t->items[i];
    ratio y;
    if (strcmp(g->app, app) != 0 || !point_value(t, g, kind, refs, &y)) continue;
    if (!previous || !group_same_series(previous, g)) MAPP_TRY(start_series(set, g, t->count));
    add_point(set, g->ranks, y, g->oversubscribed);
    set->fom_name = g->fom_name;
    previous = g;
  }
  return MAPP_OK;
}

void plot_set_free(plot_set *set) {
  for (size_t i = 0; i < set->nseries; ++i) {
    free(set->series[i].label);
    free(set->series[i].points);
  }
  free(set->series);
  *set = (plot_set){0};
}

size_t plot_apps(const group_table *t, const char **apps, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < t->count && n < max; ++i)
    if (n == 0 || strcmp(apps[n - 1], t->items[i].app) != 0) apps[n++] = t->items[i].app;
  return n;
}
