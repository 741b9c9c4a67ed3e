/* perf_compare_results (perfcompare.h): OLD and NEW results configuration by
 * configuration, as `mapp compare` and `mapp check --perf` print them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "junit.h"
#include "mapp_error.h"
#include "perfcompare.h"
#include "perfstats.h"
#include "results.h"
#include "selection.h"
#include "stats.h"
#include "verdict.h"

typedef struct {
  double threshold, alpha;
  size_t answers[4]; /* by perf_answer */
  size_t compared, unmatched, too_few;
  junit_suite *junit; /* NULL: no JUnit file */
} compare_totals;

/* ---------------------------------------------------------------- JUnit */

/* A configuration's case: "mapp.compare.APP.VARIANT.BACKEND", "SIZE SCALING nN tT [SETTING]". */
static int junit_compare_case(compare_totals *t, const result_group *g, junit_status status, const char *message,
                              const junit_property *props, size_t nprops) {
  if (!t->junit) return MAPP_OK;
  char *classname = str_printf("mapp.compare.%s.%s.%s", g->app, g->variant, g->backend);
  char *name = str_printf("%s %s n%ld t%ld%s%s%s", g->size, g->scaling, g->ranks, g->threads,
                          g->setting[0] ? " [" : "", g->setting, g->setting[0] ? "]" : "");
  junit_case c = {.classname = classname, .name = name, .status = status, .message = message,
                  .type = status == JUNIT_FAILURE ? "slowdown" : NULL, .details = message, .properties = props,
                  .property_count = nprops};
  int result = classname && name ? junit_add_case(t->junit, &c) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(classname);
  free(name);
  return result;
}

/* The comparison's figures as the case's properties. */
static int junit_compared(compare_totals *t, const result_group *old, const result_group *new_, const perf_change *c,
                          perf_answer answer) {
  if (!t->junit) return MAPP_OK;
  char values[8][48];
  snprintf(values[0], sizeof values[0], "%s", perf_answer_name(answer));
  snprintf(values[1], sizeof values[1], "%.6g", c->ratio);
  snprintf(values[2], sizeof values[2], "[%.6g, %.6g]", c->low, c->high);
  snprintf(values[3], sizeof values[3], "%.3g", c->p_value);
  snprintf(values[4], sizeof values[4], "%.6g", old->fom_median);
  snprintf(values[5], sizeof values[5], "%.6g", new_->fom_median);
  snprintf(values[6], sizeof values[6], "%s/%s", verdict_name(old->verdict.kind), verdict_name(new_->verdict.kind));
  snprintf(values[7], sizeof values[7], "%zu/%zu", old->timed, new_->timed);
  const junit_property props[] = {{"answer", values[0]},    {"ratio", values[1]},   {"ratio_ci95", values[2]},
                                  {"p_value", values[3]},   {"old_fom", values[4]}, {"new_fom", values[5]},
                                  {"verdict", values[6]},   {"repetitions", values[7]}};
  char message[160];
  snprintf(message, sizeof message, "new/old %.4g [%.4g, %.4g], p %.2g: %s beyond the %.3g %% threshold", c->ratio,
           c->low, c->high, c->p_value, perf_answer_name(answer), 100.0 * t->threshold);
  return junit_compare_case(t, new_, answer == PERF_SLOWER ? JUNIT_FAILURE : JUNIT_PASS,
                            answer == PERF_SLOWER ? message : NULL, props, sizeof props / sizeof props[0]);
}

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
    return junit_compare_case(totals, new_, JUNIT_SKIPPED, "too few repetitions to judge (need 2 per side)", NULL, 0);
  }
  perf_change c;
  MAPP_TRY(perf_compare(old->foms, old->timed, new_->foms, new_->timed, totals->alpha, &c));
  ++totals->compared;
  perf_answer answer = perf_judge(&c, totals->threshold, totals->alpha);
  /* a side whose figures cannot carry an answer leaves it inconclusive, whatever the statistics say */
  if (!verdict_figures_trusted(old->verdict.kind) || !verdict_figures_trusted(new_->verdict.kind))
    answer = PERF_INCONCLUSIVE;
  ++totals->answers[answer];
  printf(" %3zu %3zu  %10.4g %10.4g", old->timed, new_->timed, old->fom_median, new_->fom_median);
  print_change(&c);
  print_detectable(c.detectable);
  print_measured(old, new_);
  printf("  %s\n", perf_answer_name(answer));
  return junit_compared(totals, old, new_, &c, answer);
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
      MAPP_TRY(junit_compare_case(totals, &new_->items[i], JUNIT_SKIPPED, "only in NEW", NULL, 0));
      continue;
    }
    MAPP_TRY(compare_one(o, &new_->items[i], totals));
  }
  for (size_t i = 0; i < old->count; ++i)
    if (!find_same(new_, &old->items[i])) {
      ++totals->unmatched;
      print_config(&old->items[i]);
      printf(" only in OLD\n");
      MAPP_TRY(junit_compare_case(totals, &old->items[i], JUNIT_SKIPPED, "only in OLD", NULL, 0));
    }
  return MAPP_OK;
}

static void print_summary(const compare_totals *t) {
  printf("%zu compared: %zu slower, %zu faster beyond %.3g %% (p < %g); %zu same (the interval excludes a %.3g %% "
         "change); %zu inconclusive (the noise hides one, or a side is too-short or disturbed; detectable: the change the "
         "repetitions could see); %zu "
         "with too few repetitions; %zu unmatched\n",
         t->compared, t->answers[PERF_SLOWER], t->answers[PERF_FASTER], 100.0 * t->threshold, t->alpha,
         t->answers[PERF_SAME], 100.0 * t->threshold, t->answers[PERF_INCONCLUSIVE], t->too_few, t->unmatched);
}

int perf_compare_results(const char *old_path, const char *new_path, double threshold, double alpha,
                         const selection *select, const char *junit_path) {
  compare_totals totals = {.threshold = threshold, .alpha = alpha};
  json_t *old_records = NULL, *new_records = NULL;
  group_table old = {0}, new_ = {0};
  int status = junit_path ? junit_check_path(junit_path) : MAPP_OK;
  if (status == MAPP_OK && junit_path) status = junit_suite_new("compare", &totals.junit);
  if (status == MAPP_OK) status = load_groups(old_path, select, &old_records, &old);
  if (status == MAPP_OK) status = load_groups(new_path, select, &new_records, &new_);
  if (status == MAPP_OK) status = compare_tables(&old, &new_, &totals);
  if (status == MAPP_OK && totals.junit) status = junit_write(totals.junit, junit_path);
  if (status == MAPP_OK) {
    print_summary(&totals);
    if (totals.answers[PERF_SLOWER]) status = MAPP_ERR_VERIFY;
  }
  junit_suite_free(totals.junit);
  group_table_free(&old);
  group_table_free(&new_);
  json_decref(old_records);
  json_decref(new_records);
  return status;
}
