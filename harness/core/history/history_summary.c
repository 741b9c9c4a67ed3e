/* The history in a CI summary (history_summary.h). */
#include "history_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "fsutil.h"
#include "mapp_error.h"

void history_judged_free(history_judged *items, size_t n) {
  for (size_t i = 0; items && i < n; ++i) free(items[i].judgement.changes.points);
  free(items);
}

void history_inconclusive_text(const history_series *s, const history_judgement *j, double threshold, char *text,
                               size_t len) {
  changepoint_options opt = changepoint_defaults();
  int n = snprintf(text, len, "%zu revision%s, ", s->count, s->count == 1 ? "" : "s");
  if (n < 0 || (size_t)n >= len) return;
  text += n, len -= (size_t)n;
  if (s->count < 2 * opt.min_segment)
    snprintf(text, len, "too few to judge (needs %zu)", 2 * opt.min_segment);
  else if (j->undecided)
    snprintf(text, len, "a step of %+.1f %% from revision %s with too few revisions on one side to bound it at 95 %%",
             100.0 * j->undecided->change, s->points[j->undecided->index].revision);
  else if (isfinite(j->detectable))
    snprintf(text, len, "the noise (%.1f %% a revision) hides a %.3g %% step: the smallest it could show is %.1f %%",
             100.0 * j->noise, 100.0 * threshold, 100.0 * j->detectable);
  else
    snprintf(text, len, "too few to show any step at the detector's level");
}

/* ---------------------------------------------------------------- change points */

/* What a change point is at threshold: a slowdown that counts, one too
 * short to bound, a smaller one, or a gain. */
static const char *step_answer(const change_point *p, double threshold) {
  switch (changepoint_judge(p, threshold)) {
  case STEP_SLOWER: return "**SLOWER**";
  case STEP_UNDECIDED: return "slower, unbounded";
  default: return p->change < 0 ? "slower, under the threshold" : "faster";
  }
}

static void step_row(md_summary *m, const history_judged *h, const change_point *p, double threshold) {
  const history_series *s = h->series;
  char range[64];
  md_cell(m, "%s", step_answer(p, threshold));
  md_cell(m, "%s", s->config);
  md_cell(m, "`%s`", s->points[p->index].revision);
  md_cell(m, "%+.1f %%", 100.0 * p->change);
  md_cell(m, "%s %%", history_interval_text(p, range, sizeof range));
  md_cell(m, "%.3f", p->p_value);
  md_cell(m, "%.4g -> %.4g %s", p->before, p->after, s->fom_name ? s->fom_name : "");
  md_cell(m, "%s", verdict_name(h->latest->kind));
  md_row_end(m);
}

/* Every change point of items, the slowdowns that count first; how many. */
static size_t write_steps(md_summary *m, const history_judged *items, size_t n, double threshold) {
  static const char *const columns[] = {"answer", "configuration", "from revision", "change", "95 % interval",
                                        "p", "FOM before -> after", "measured (latest revision)"};
  size_t shown = 0;
  md_table(m, "lllrlrll", columns);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < items[i].judgement.changes.count; ++k) {
        const change_point *p = &items[i].judgement.changes.points[k];
        bool counts = changepoint_judge(p, threshold) == STEP_SLOWER;
        if (counts == (pass == 0)) step_row(m, &items[i], p, threshold), ++shown;
      }
  md_table_end(m);
  return shown;
}

static void write_inconclusive(md_summary *m, const history_judged *items, size_t n, double threshold) {
  static const char *const columns[] = {"configuration", "why", "measured (latest revision)"};
  size_t shown = 0;
  for (size_t i = 0; i < n; ++i) {
    if (items[i].judgement.answer != HISTORY_INCONCLUSIVE) continue;
    if (shown++ == 0) {
      md_heading(m, 3, "Inconclusive");
      md_table(m, "lll", columns);
    }
    char why[320];
    history_inconclusive_text(items[i].series, &items[i].judgement, threshold, why, sizeof why);
    md_cell(m, "%s", items[i].series->config);
    md_cell(m, "%s", why);
    md_cell(m, "%s", verdict_name(items[i].latest->kind));
    md_row_end(m);
  }
  if (shown) md_table_end(m);
}

/* ---------------------------------------------------------------- history check */

static void write_check_totals(md_summary *m, const history_judged *items, size_t n, double threshold) {
  static const char *const columns[] = {"configurations checked", "SLOWER", "inconclusive", "ok", "change points"};
  size_t answers[3] = {0}, points = 0;
  for (size_t i = 0; i < n; ++i) {
    ++answers[items[i].judgement.answer];
    points += items[i].judgement.changes.count;
  }
  md_table(m, "rrrrr", columns);
  md_cell(m, "%zu", n);
  md_cell(m, answers[HISTORY_SLOWER] ? "**%zu**" : "%zu", answers[HISTORY_SLOWER]);
  md_cell(m, "%zu", answers[HISTORY_INCONCLUSIVE]);
  md_cell(m, "%zu", answers[HISTORY_OK]);
  md_cell(m, "%zu", points);
  md_row_end(m);
  md_table_end(m);
  md_para(m, "Change points of each configuration's series (E-Divisive means, p at most 0.01); a step is SLOWER when "
             "the data support a slowdown of %.3g %% or more (its 95 %% interval reaches -%.3g %%). Measured: the "
             "verdict of the latest revision's repetitions.", 100.0 * threshold, 100.0 * threshold);
}

int history_summary_check(const char *db_path, const history_judged *items, size_t n, double threshold,
                          const char *report_url, char **text) {
  char *link = report_url ? md_link_line("History site", report_url, report_url)
                          : strdup("The history as a site: `mapp history publish DIR` (its address as --report-url "
                                   "links it here).");
  if (!link) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  md_summary m;
  int status = md_summary_open(&m, MD_SUMMARY_LIMIT, link);
  free(link);
  if (status != MAPP_OK) return status;
  md_heading(&m, 2, "mapp history check: %s", db_path);
  write_check_totals(&m, items, n, threshold);
  md_heading(&m, 3, "Slower and faster");
  if (!write_steps(&m, items, n, threshold)) md_para(&m, "None: no configuration's series has a change point.");
  write_inconclusive(&m, items, n, threshold);
  return md_summary_finish(&m, text);
}

/* ---------------------------------------------------------------- report */

/* The series of the records' configurations, judged, with their latest verdicts. */
static int judge_records(const char *db_path, const history_series_set *set, const json_t *records, double threshold,
                         history_judged **items, size_t *n, verdict_summary **verdicts) {
  json_t *keys = history_config_keys(records);
  *verdicts = calloc(set->count ? set->count : 1, sizeof **verdicts);
  *items = calloc(set->count ? set->count : 1, sizeof **items);
  *n = 0;
  int status = keys && *verdicts && *items ? history_latest_verdicts(db_path, set, *verdicts)
                                           : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; status == MAPP_OK && i < set->count; ++i) {
    if (!json_object_get(keys, set->items[i].config)) continue;
    history_judged *h = &(*items)[(*n)++];
    *h = (history_judged){.series = &set->items[i], .latest = &(*verdicts)[i]};
    status = history_judge(&set->items[i], threshold, &h->judgement);
  }
  json_decref(keys);
  return status;
}

static void write_report_steps(md_summary *m, const char *db_path, const history_judged *items, size_t n,
                               double threshold) {
  size_t slower = 0, inconclusive = 0;
  for (size_t i = 0; i < n; ++i) {
    slower += items[i].judgement.answer == HISTORY_SLOWER;
    inconclusive += items[i].judgement.answer == HISTORY_INCONCLUSIVE;
  }
  md_para(m, "%zu configuration%s of these results in `%s`: %zu with a step the data support as %.3g %% slower or "
             "more, %zu inconclusive (too few revisions, or noise that hides such a step; `mapp history check`).",
          n, n == 1 ? "" : "s", db_path, slower, 100.0 * threshold, inconclusive);
  if (n && !write_steps(m, items, n, threshold)) md_para(m, "No change point in their series.");
}

int history_summary_report(md_summary *m, const char *dir, const json_t *records, double threshold) {
  char *root = path_dirname(dir), *db_path = root ? history_path_beside(root) : NULL;
  free(root);
  if (!db_path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  md_heading(m, 3, "Across commits");
  history_series_set set = {0};
  history_judged *items = NULL;
  verdict_summary *verdicts = NULL;
  char *loaded = NULL;
  size_t n = 0;
  int status = MAPP_OK;
  if (!path_exists(db_path)) {
    md_para(m, "No history beside these results (`%s`): nothing here is called slower or faster across commits "
               "(`mapp sweep --history` or `mapp history add` keeps one).", db_path);
  } else {
    status = history_load_series(db_path, &set, &loaded);
    if (status == MAPP_OK) status = judge_records(db_path, &set, records, threshold, &items, &n, &verdicts);
    if (status == MAPP_OK) write_report_steps(m, db_path, items, n, threshold);
  }
  if (status != MAPP_OK && status != MAPP_ERR_SYSTEM) {
    fprintf(stderr, "mapp report: warning: %s; the summary has no performance history\n", mapp_error_message());
    md_para(m, "The history `%s` could not be read: %s.", db_path, mapp_error_message());
    mapp_error_clear();
    status = MAPP_OK;
  }
  history_judged_free(items, n);
  free(verdicts);
  history_series_set_free(&set);
  free(loaded);
  free(db_path);
  return status;
}
