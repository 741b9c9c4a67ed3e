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
#include "perfcompare_internal.h"
#include "perfstats.h"
#include "results.h"
#include "selection.h"
#include "stats.h"
#include "strv.h"
#include "verdict.h"

/* ---------------------------------------------------------------- systems */

/* The systems (results_system_of) of records[0..count), by name, joined by
 * "+" ("-" for none); malloc'd. */
static char *systems_of(const json_t *const *records, size_t count) {
  strv names = {0};
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < count; ++i) {
    const char *system = results_system_of(records[i]);
    if (!strv_contains(&names, system)) status = strv_push(&names, system);
  }
  for (size_t i = 1; status == MAPP_OK && i < names.count; ++i) /* a few names: insertion sort */
    for (size_t k = i; k > 0 && strcmp(names.items[k - 1], names.items[k]) > 0; --k) {
      char *t = names.items[k];
      names.items[k] = names.items[k - 1];
      names.items[k - 1] = t;
    }
  char *text = status != MAPP_OK ? NULL : names.count ? strv_join(&names, "+") : strdup("-");
  strv_free(&names);
  return text;
}

static char *records_systems(const json_t *records) {
  size_t n = json_array_size(records);
  const json_t **items = malloc((n ? n : 1) * sizeof *items);
  for (size_t i = 0; items && i < n; ++i) items[i] = json_array_get(records, i);
  char *text = items ? systems_of(items, n) : NULL;
  free(items);
  return text;
}

/* A configuration's systems on either side: "a" when they agree, "a vs b"
 * (OLD's vs NEW's) when they do not; *across says which. */
static int pair_systems(const result_group *old, const result_group *new_, char *text, size_t len, bool *across) {
  char *a = systems_of(old->records, old->timed), *b = systems_of(new_->records, new_->timed);
  int status = a && b ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  *across = status == MAPP_OK && strcmp(a, b) != 0;
  if (status == MAPP_OK && *across) snprintf(text, len, "%s vs %s", a, b);
  else if (status == MAPP_OK) snprintf(text, len, "%s", a);
  free(a);
  free(b);
  return status;
}

/* "A/B: b slower": an answer across systems, which is no regression. */
static void ab_answer_text(perf_answer answer, const char *systems, char *text, size_t len) {
  const char *new_system = strstr(systems, " vs ");
  new_system = new_system ? new_system + 4 : systems;
  if (answer == PERF_SLOWER || answer == PERF_FASTER)
    snprintf(text, len, "A/B: %s %s", new_system, answer == PERF_SLOWER ? "slower" : "faster");
  else
    snprintf(text, len, "A/B: %s", perf_answer_name(answer));
}

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
                          perf_answer answer, const char *answer_text, const char *systems, bool across) {
  if (!t->junit) return MAPP_OK;
  char values[7][48];
  snprintf(values[0], sizeof values[0], "%.6g", c->ratio);
  snprintf(values[1], sizeof values[1], "[%.6g, %.6g]", c->low, c->high);
  snprintf(values[2], sizeof values[2], "%.3g", c->p_value);
  snprintf(values[3], sizeof values[3], "%.6g", old->fom_median);
  snprintf(values[4], sizeof values[4], "%.6g", new_->fom_median);
  snprintf(values[5], sizeof values[5], "%s/%s", verdict_name(old->verdict.kind), verdict_name(new_->verdict.kind));
  snprintf(values[6], sizeof values[6], "%zu/%zu", old->timed, new_->timed);
  const junit_property props[] = {{"answer", answer_text},  {"system", systems},    {"ratio", values[0]},
                                  {"ratio_ci95", values[1]}, {"p_value", values[2]}, {"old_fom", values[3]},
                                  {"new_fom", values[4]},    {"verdict", values[5]}, {"repetitions", values[6]}};
  char message[160];
  snprintf(message, sizeof message, "new/old %.4g [%.4g, %.4g], p %.2g: %s beyond the %.3g %% threshold", c->ratio,
           c->low, c->high, c->p_value, perf_answer_name(answer), 100.0 * t->threshold);
  bool regression = answer == PERF_SLOWER && !across;
  return junit_compare_case(t, new_, regression ? JUNIT_FAILURE : JUNIT_PASS, regression ? message : NULL, props,
                            sizeof props / sizeof props[0]);
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

static void print_config(const result_group *g, const char *systems) {
  printf("%-9s %-9s %-7s %-10s %-6s %-3ld %-3ld %-12s %-16s", g->app, g->variant, g->backend, g->size, g->scaling,
         g->ranks, g->threads, g->setting[0] ? g->setting : "-", systems);
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

/* The table's line of a row. */
static void print_row(const compare_row *r) {
  print_config(r->new_ ? r->new_ : r->old, r->systems);
  if (r->kind == COMPARE_ONLY_OLD || r->kind == COMPARE_ONLY_NEW) {
    printf(" only in %s\n", r->kind == COMPARE_ONLY_OLD ? "OLD" : "NEW");
    return;
  }
  printf(" %3zu %3zu", r->old->timed, r->new_->timed);
  if (r->kind == COMPARE_TOO_FEW) {
    printf("  too few repetitions to judge (need 2 per side)\n");
    return;
  }
  printf("  %10.4g %10.4g", r->old->fom_median, r->new_->fom_median);
  print_change(&r->change);
  print_detectable(r->change.detectable);
  print_measured(r->old, r->new_);
  printf("  %s\n", r->answer_text);
}

/* A row printed, or kept for the summary. */
static int emit(compare_totals *t, const compare_row *r) {
  if (!t->collect) {
    print_row(r);
    return MAPP_OK;
  }
  if (t->nrows == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    compare_row *grown = realloc(t->rows, cap * sizeof *grown);
    if (!grown) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory keeping %zu compared configurations", cap);
    t->rows = grown;
    t->cap = cap;
  }
  t->rows[t->nrows++] = *r;
  return MAPP_OK;
}

static int compare_one(const result_group *old, const result_group *new_, compare_totals *totals) {
  compare_row row = {.kind = COMPARE_JUDGED, .old = old, .new_ = new_};
  MAPP_TRY(pair_systems(old, new_, row.systems, sizeof row.systems, &row.across));
  if (old->timed < 2 || new_->timed < 2) {
    ++totals->too_few;
    row.kind = COMPARE_TOO_FEW;
    MAPP_TRY(emit(totals, &row));
    return junit_compare_case(totals, new_, JUNIT_SKIPPED, "too few repetitions to judge (need 2 per side)", NULL, 0);
  }
  perf_change *c = &row.change;
  MAPP_TRY(perf_compare(old->foms, old->timed, new_->foms, new_->timed, totals->alpha, c));
  row.answer = perf_judge(c, totals->threshold, totals->alpha);
  /* a side whose figures cannot carry an answer leaves it inconclusive, whatever the statistics say */
  if (!verdict_figures_trusted(old->verdict.kind) || !verdict_figures_trusted(new_->verdict.kind))
    row.answer = PERF_INCONCLUSIVE;
  /* two machines: an A/B of systems, never a regression of the code */
  ++(row.across ? totals->ab : totals->answers)[row.answer];
  totals->compared += !row.across;
  if (row.across) ab_answer_text(row.answer, row.systems, row.answer_text, sizeof row.answer_text);
  else snprintf(row.answer_text, sizeof row.answer_text, "%s", perf_answer_name(row.answer));
  MAPP_TRY(emit(totals, &row));
  return junit_compared(totals, old, new_, c, row.answer, row.answer_text, row.systems, row.across);
}

/* A configuration on one side only ("only in OLD"). */
static int compare_unmatched(const result_group *g, const char *side, compare_totals *totals) {
  char *systems = systems_of(g->records, g->timed), message[16];
  if (!systems) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  ++totals->unmatched;
  bool old_side = strcmp(side, "OLD") == 0;
  compare_row row = {.kind = old_side ? COMPARE_ONLY_OLD : COMPARE_ONLY_NEW, .old = old_side ? g : NULL,
                     .new_ = old_side ? NULL : g};
  snprintf(row.systems, sizeof row.systems, "%s", systems);
  free(systems);
  MAPP_TRY(emit(totals, &row));
  snprintf(message, sizeof message, "only in %s", side);
  return junit_compare_case(totals, g, JUNIT_SKIPPED, message, NULL, 0);
}

static int compare_tables(const group_table *old, const group_table *new_, compare_totals *totals) {
  if (!totals->collect)
    printf("%-9s %-9s %-7s %-10s %-6s %-3s %-3s %-12s %-16s %3s %3s  %10s %10s  %-23s  %9s  %10s  %-19s  %s\n", "app",
         "variant", "backend", "size", "scale", "n", "t", "setting", "system", "old", "new", "old FOM", "new FOM",
         "new/old [95% CI]", "p (U)", "detectable", "measured", "verdict");
  for (size_t i = 0; i < new_->count; ++i) {
    const result_group *o = find_same(old, &new_->items[i]);
    MAPP_TRY(o ? compare_one(o, &new_->items[i], totals) : compare_unmatched(&new_->items[i], "NEW", totals));
  }
  for (size_t i = 0; i < old->count; ++i)
    if (!find_same(new_, &old->items[i])) MAPP_TRY(compare_unmatched(&old->items[i], "OLD", totals));
  return MAPP_OK;
}

/* Before the table, when OLD and NEW come from different systems: both
 * named, and what the comparison is then (the summary keeps the line). */
static int print_systems(const json_t *old_records, const json_t *new_records, compare_totals *t) {
  char *a = records_systems(old_records), *b = records_systems(new_records);
  int status = a && b ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && strcmp(a, b) != 0) {
    t->systems_note = str_printf("OLD and NEW come from different systems (OLD: %s; NEW: %s): a configuration measured "
                                 "on different systems is compared as an A/B of systems (new/old: %s against %s), "
                                 "never as a regression", a, b, b, a);
    if (!t->systems_note) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    else if (!t->collect) printf("%s\n", t->systems_note);
  }
  free(a);
  free(b);
  return status;
}

static void print_summary(const compare_totals *t) {
  printf("%zu compared: %zu slower, %zu faster beyond %.3g %% (p < %g); %zu same (the interval excludes a %.3g %% "
         "change); %zu inconclusive (the noise hides one, or a side is too-short or disturbed; detectable: the change the "
         "repetitions could see); %zu "
         "with too few repetitions; %zu unmatched\n",
         t->compared, t->answers[PERF_SLOWER], t->answers[PERF_FASTER], 100.0 * t->threshold, t->alpha,
         t->answers[PERF_SAME], 100.0 * t->threshold, t->answers[PERF_INCONCLUSIVE], t->too_few, t->unmatched);
  size_t ab = t->ab[PERF_SLOWER] + t->ab[PERF_FASTER] + t->ab[PERF_SAME] + t->ab[PERF_INCONCLUSIVE];
  if (ab)
    printf("%zu compared across systems, an A/B of machines and never a regression: %zu slower, %zu faster beyond "
           "the threshold, %zu same, %zu inconclusive\n", ab, t->ab[PERF_SLOWER], t->ab[PERF_FASTER], t->ab[PERF_SAME],
           t->ab[PERF_INCONCLUSIVE]);
}

/* The summary of a finished comparison on stdout. */
static int print_markdown(const compare_totals *t, const char *old_path, const char *new_path, const char *report_url) {
  char *text = NULL;
  MAPP_TRY(perfcompare_markdown(t, old_path, new_path, report_url, &text));
  fputs(text, stdout);
  free(text);
  return MAPP_OK;
}

int perf_compare_results(const char *old_path, const char *new_path, double threshold, double alpha,
                         const selection *select, const char *junit_path, const perf_compare_output *output) {
  compare_totals totals = {.threshold = threshold, .alpha = alpha, .collect = output && output->markdown};
  json_t *old_records = NULL, *new_records = NULL;
  group_table old = {0}, new_ = {0};
  int status = junit_path ? junit_check_path(junit_path) : MAPP_OK;
  if (status == MAPP_OK && junit_path) status = junit_suite_new("compare", &totals.junit);
  if (status == MAPP_OK) status = load_groups(old_path, select, &old_records, &old);
  if (status == MAPP_OK) status = load_groups(new_path, select, &new_records, &new_);
  if (status == MAPP_OK) status = print_systems(old_records, new_records, &totals);
  if (status == MAPP_OK) status = compare_tables(&old, &new_, &totals);
  if (status == MAPP_OK && totals.junit) status = junit_write(totals.junit, junit_path);
  if (status == MAPP_OK && totals.collect) status = print_markdown(&totals, old_path, new_path, output->report_url);
  else if (status == MAPP_OK) print_summary(&totals);
  if (status == MAPP_OK && totals.answers[PERF_SLOWER]) status = MAPP_ERR_VERIFY;
  junit_suite_free(totals.junit);
  free(totals.rows);
  free(totals.systems_note);
  group_table_free(&old);
  group_table_free(&new_);
  json_decref(old_records);
  json_decref(new_records);
  return status;
}
