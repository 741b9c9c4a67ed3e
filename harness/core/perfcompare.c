/* perf_compare_results (perfstats.h): OLD and NEW results configuration by
 * configuration, as `mapp compare` and `mapp check --perf` print them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "perfstats.h"
#include "results.h"
#include "selection.h"
#include "stats.h"

typedef struct {
  double threshold, alpha;
  size_t regressions, improvements, compared, unmatched, too_few;
} compare_totals;

static int load_groups(const char *where, const selection *select, json_t **records, group_table *table) {
  char *path = results_file_of(where);
  if (!path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory naming the results of '%s'", where);
  int status = results_load(path, records);
  free(path);
  if (status == MAPP_OK) status = selection_filter_records(select, *records);
  if (status == MAPP_OK) status = stats_group(*records, table);
  return status;
}

static const result_group *find_same(const group_table *t, const result_group *g) {
  for (size_t i = 0; i < t->count; ++i)
    if (group_same_series(&t->items[i], g) && t->items[i].ranks == g->ranks) return &t->items[i];
  return NULL;
}

static void print_config(const result_group *g) {
  printf("%-9s %-9s %-7s %-10s %-6s %-3ld %-3ld %-12s", g->app, g->variant, g->backend, g->size, g->scaling,
         g->ranks, g->threads, g->setting[0] ? g->setting : "-");
}

static int compare_one(const result_group *old, const result_group *new_, compare_totals *totals) {
  print_config(new_);
  if (old->timed < 2 || new_->timed < 2) {
    ++totals->too_few;
    printf(" %3zu %3zu  too few repetitions to judge (need 2 per side)\n", old->timed, new_->timed);
    return MAPP_OK;
  }
  perf_change c;
  MAPP_TRY(perf_compare(old->foms, old->timed, new_->foms, new_->timed, &c));
  ++totals->compared;
  const char *verdict = "same";
  if (perf_is_regression(&c, totals->threshold, totals->alpha)) verdict = "SLOWER", ++totals->regressions;
  else if (perf_is_improvement(&c, totals->threshold, totals->alpha)) verdict = "faster", ++totals->improvements;
  printf(" %3zu %3zu  %10.4g %10.4g  %6.3f [%6.3f, %6.3f]  %8.2g%s  %s\n", old->timed, new_->timed, old->fom_median,
         new_->fom_median, c.ratio, c.low, c.high, c.p_value, c.exact ? " " : "~", verdict);
  return MAPP_OK;
}

static int compare_tables(const group_table *old, const group_table *new_, compare_totals *totals) {
  printf("%-9s %-9s %-7s %-10s %-6s %-3s %-3s %-12s %3s %3s  %10s %10s  %-23s  %9s  %s\n", "app", "variant", "backend",
         "size", "scale", "n", "t", "setting", "old", "new", "old FOM", "new FOM", "new/old [95% CI]", "p (U)",
         "verdict");
  for (size_t i = 0; i < new_->count; ++i) {
    const result_group *o = find_same(old, &new_->items[i]);
    if (!o) {
      ++totals->unmatched;
      print_config(&new_->items[i]);
      printf(" only in NEW\n");
      continue;
    }
    MAPP_TRY(compare_one(o, &new_->items[i], totals));
  }
  for (size_t i = 0; i < old->count; ++i)
    if (!find_same(new_, &old->items[i])) {
      ++totals->unmatched;
      print_config(&old->items[i]);
      printf(" only in OLD\n");
    }
  return MAPP_OK;
}

int perf_compare_results(const char *old_path, const char *new_path, double threshold, double alpha,
                         const selection *select) {
  compare_totals totals = {.threshold = threshold, .alpha = alpha};
  json_t *old_records = NULL, *new_records = NULL;
  group_table old = {0}, new_ = {0};
  int status = load_groups(old_path, select, &old_records, &old);
  if (status == MAPP_OK) status = load_groups(new_path, select, &new_records, &new_);
  if (status == MAPP_OK) status = compare_tables(&old, &new_, &totals);
  if (status == MAPP_OK) {
    printf("%zu compared: %zu slower, %zu faster beyond %.3g %% (p < %g); %zu with too few repetitions; %zu "
           "unmatched\n",
           totals.compared, totals.regressions, totals.improvements, 100.0 * totals.threshold, totals.alpha,
           totals.too_few, totals.unmatched);
    if (totals.regressions) status = MAPP_ERR_VERIFY;
  }
  group_table_free(&old);
  group_table_free(&new_);
  json_decref(old_records);
  json_decref(new_records);
  return status;
}
