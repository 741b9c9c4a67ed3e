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
#include "verdict.h"

typedef struct {
  double threshold, alpha;
  size_t answers[4]; /* by perf_answer */
  size_t compared, unmatched, too_few;
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

/* The two sides' verdicts (verdict.h) in one word when they agree,
 * "OLD/NEW" when they do not. */
static void print_measured(const result_group *old, const result_group *new_) {
  char text[32];
  verdict_kind a = old->verdict.kind, b = new_->verdict.kind;
  if (a == b) snprintf(text, sizeof text, "%s", verdict_name(a));
  else snprintf(text, sizeof text, "%s/%s", verdict_name(a), verdict_name(b));
  printf("  %-19s", text);
}

/* The change the data could have detected: "+-27.0 %", or "none" when the
 * U test cannot reach alpha with so few repetitions. */
static void print_detectable(double detectable) {
  char text[24] = "none";
  if (isfinite(detectable)) snprintf(text, sizeof text, "+-%.1f %%", 100.0 * detectable);
  printf("  %10s", text);
}

static void print_change(const perf_change *c) {
  if (c->bounded) printf("  %6.3f [%6.3f, %6.3f]", c->ratio, c->low, c->high);
  else printf("  %6.3f [%6s, %6s]", c->ratio, "-", "-");
  printf("  %8.2g%s", c->p_value, c->exact ? " " : "~");
}

static int compare_one(const result_group *old, const result_group *new_, compare_totals *totals) {
  print_config(new_);
  if (old->timed < 2 || new_->timed < 2) {
    ++totals->too_few;
    printf(" %3zu %3zu  too few repetitions to judge (need 2 per side)\n", old->timed, new_->timed);
    return MAPP_OK;
  }
  perf_change c;
  MAPP_TRY(perf_compare(old->foms, old->timed, new_->foms, new_->timed, totals->alpha, &c));
  ++totals->compared;
  perf_answer answer = perf_judge(&c, totals->threshold, totals->alpha);
  ++totals->answers[answer];
  printf(" %3zu %3zu  %10.4g %10.4g", old->timed, new_->timed, old->fom_median, new_->fom_median);
  print_change(&c);
  print_detectable(c.detectable);
  print_measured(old, new_);
  printf("  %s\n", perf_answer_name(answer));
  return MAPP_OK;
}

static int compare_tables(const group_table *old, const group_table *new_, compare_totals *totals) {
  printf("%-9s %-9s %-7s %-10s %-6s %-3s %-3s %-12s %3s %3s  %10s %10s  %-23s  %9s  %10s  %-19s  %s\n", "app",
         "variant", "backend", "size", "scale", "n", "t", "setting", "old", "new", "old FOM", "new FOM",
         "new/old [95% CI]", "p (U)", "detectable", "measured", "verdict");
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

static void print_summary(const compare_totals *t) {
  printf("%zu compared: %zu slower, %zu faster beyond %.3g %% (p < %g); %zu same (the interval excludes a %.3g %% "
         "change); %zu inconclusive (the noise hides one; detectable: the change the repetitions could see); %zu "
         "with too few repetitions; %zu unmatched\n",
         t->compared, t->answers[PERF_SLOWER], t->answers[PERF_FASTER], 100.0 * t->threshold, t->alpha,
         t->answers[PERF_SAME], 100.0 * t->threshold, t->answers[PERF_INCONCLUSIVE], t->too_few, t->unmatched);
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
    print_summary(&totals);
    if (totals.answers[PERF_SLOWER]) status = MAPP_ERR_VERIFY;
  }
  group_table_free(&old);
  group_table_free(&new_);
  json_decref(old_records);
  json_decref(new_records);
  return status;
}
