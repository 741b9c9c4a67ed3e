/* mapp report --format markdown (report_internal.h): the results folder's
 * summary for CI (mdsummary.h), from what the report computed: its totals
 * and the verdicts of its configurations, the headline (what each
 * technique buys here, with its intervals: headline.h, rendered as the
 * report renders it), what got slower or faster across commits in the
 * history beside it (history_summary.h), the runs that failed and the
 * configurations whose answers nothing checked (coverage.h), and a link
 * line to report.html. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "doc.h"
#include "headline.h"
#include "history_summary.h"
#include "historydb.h"
#include "mapp_error.h"
#include "mdsummary.h"
#include "report_internal.h"

enum { VERDICT_KINDS = VERDICT_OVERSUBSCRIBED + 1 };

static size_t failed_runs(const json_t *records) {
  size_t i, failed = 0;
  const json_t *r;
  json_array_foreach(records, i, r) failed += report_failure_of(r) != NULL;
  return failed;
}

/* "5 stable, 1 noisy" over the configurations with timed runs; "-" when none. */
static void measured_text(const group_table *t, char *text, size_t len) {
  size_t counts[VERDICT_KINDS] = {0}, used = 0;
  for (size_t i = 0; i < t->count; ++i)
    if (t->items[i].timed) ++counts[t->items[i].verdict.kind];
  snprintf(text, len, "-");
  for (int k = 0; k < VERDICT_KINDS; ++k) {
    if (!counts[k]) continue;
    int n = snprintf(text + used, len - used, "%s%zu %s", used ? ", " : "", counts[k], verdict_name((verdict_kind)k));
    if (n < 0 || (size_t)n >= len - used) break;
    used += (size_t)n;
  }
}

static void write_totals(md_summary *m, const group_table *t, const coverage_table *coverage, const json_t *records) {
  static const char *const columns[] = {"records", "configurations", "failed runs", "unchecked configurations",
                                        "measured"};
  char measured[256];
  measured_text(t, measured, sizeof measured);
  size_t failed = failed_runs(records), unchecked = json_array_size(coverage->unchecked);
  md_table(m, "rrrrl", columns);
  md_cell(m, "%zu", json_array_size(records));
  md_cell(m, "%zu", t->count);
  md_cell(m, failed ? "**%zu**" : "%zu", failed);
  md_cell(m, unchecked ? "**%zu**" : "%zu", unchecked);
  md_cell(m, "%s", measured);
  md_row_end(m);
  md_table_end(m);
}

/* The report's headline section, as report.md has it, a level deeper. */
static int write_headline(md_summary *m, const report_context *ctx, const group_table *t,
                          const headline_sources *headlines) {
  doc d;
  char *text = NULL;
  MAPP_TRY(doc_open_text(&d, ctx->dir));
  int status = headline_write(&d, t, headlines);
  int closed = doc_close_text(&d, &text);
  if (status == MAPP_OK) status = closed;
  if (status == MAPP_OK && text && text[0]) md_block(m, text, 1);
  else if (status == MAPP_OK)
    md_para(m, "No technique has both of its configurations in these results: no headline ratio.");
  free(text);
  return status;
}

static void write_failures(md_summary *m, const json_t *records) {
  static const char *const columns[] = {"configuration", "rep", "what failed", "log"};
  size_t i, shown = 0;
  const json_t *r;
  md_heading(m, 3, "Failed runs");
  json_array_foreach(records, i, r) {
    const char *failure = report_failure_of(r);
    if (!failure) continue;
    if (shown++ == 0) md_table(m, "lrll", columns);
    char *name = historydb_config_name(r);
    const char *log = json_string_value(json_object_get(r, "log"));
    md_cell(m, "%s", name ? name : json_text_or(r, "app", "-"));
    md_cell(m, "%lld", (long long)json_integer_value(json_object_get(r, "repetition")));
    md_cell(m, "%s", failure);
    md_cell(m, log ? "`%s`" : "-%s", log ? log : "");
    md_row_end(m);
    free(name);
  }
  if (shown) md_table_end(m);
  else md_para(m, "None: every run exited 0 and passed its verification, baseline and consistency checks.");
}

static void write_unchecked(md_summary *m, const coverage_table *coverage) {
  static const char *const columns[] = {"configuration (key)"};
  size_t i, n = json_array_size(coverage->unchecked);
  const json_t *key;
  md_heading(m, 3, "Unchecked answers");
  if (!n) {
    md_para(m, "None: every configuration's answer was checked against a baseline or for consistency.");
    return;
  }
  md_para(m, "%zu configuration%s whose answer no run compared with a baseline or another answer:", n,
          n == 1 ? "" : "s");
  md_table(m, "l", columns);
  json_array_foreach(coverage->unchecked, i, key) {
    md_cell(m, "`%s`", json_string_value(key));
    md_row_end(m);
  }
  md_table_end(m);
}

int report_summary(const report_context *ctx, const group_table *t, const headline_sources *headlines,
                   const coverage_table *coverage, const json_t *records, const char *html_path,
                   const char *report_url, char **text) {
  const char *address = report_url ? report_url : html_path;
  char *link = md_link_line("Full report", report_url ? report_url : "report.html", address);
  if (!link) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  md_summary m;
  int status = md_summary_open(&m, MD_SUMMARY_LIMIT, link);
  free(link);
  if (status != MAPP_OK) return status;
  md_heading(&m, 2, "mapp report: %s", ctx->name);
  write_totals(&m, t, coverage, records);
  status = write_headline(&m, ctx, t, headlines);
  if (status == MAPP_OK) status = history_summary_report(&m, ctx->dir, records, HISTORY_DEFAULT_THRESHOLD);
  if (status != MAPP_OK) {
    md_summary_free(&m);
    return status;
  }
  write_failures(&m, records);
  write_unchecked(&m, coverage);
  return md_summary_finish(&m, text);
}
