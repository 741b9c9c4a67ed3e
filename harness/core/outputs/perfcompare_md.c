/* mapp compare --format markdown (perfcompare.h): the comparison's CI
 * summary (mdsummary.h) from the rows perfcompare.c judged: its totals,
 * every configuration slower or faster with its ratio, interval, p and
 * both sides' verdicts, the configurations not judged and why, and a link
 * line to the HTML report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "mdsummary.h"
#include "perfcompare_internal.h"
#include "results.h"
#include "verdict.h"

/* "heat mpi/serial tiny strong n2 t1 [steps50]". */
static void group_name(const result_group *g, char *text, size_t len) {
  snprintf(text, len, "%s %s/%s %s %s n%ld t%ld%s%s%s", g->app, g->variant, g->backend, g->size, g->scaling, g->ranks,
           g->threads, g->setting[0] ? " [" : "", g->setting, g->setting[0] ? "]" : "");
}

/* Both sides' verdicts: one word when they agree, "OLD/NEW" when not. */
static void verdicts(const compare_row *r, char *text, size_t len) {
  verdict_kind a = r->old->verdict.kind, b = r->new_->verdict.kind;
  if (a == b) snprintf(text, len, "%s", verdict_name(a));
  else snprintf(text, len, "%s/%s", verdict_name(a), verdict_name(b));
}

static void interval(const perf_change *c, char *text, size_t len) {
  if (c->bounded) snprintf(text, len, "[%.3f, %.3f]", c->low, c->high);
  else snprintf(text, len, "unbounded (too few repetitions)");
}

static void write_totals(md_summary *m, const compare_totals *t) {
  static const char *const columns[] = {"compared", "SLOWER", "faster", "same", "inconclusive",
                                        "too few repetitions", "on one side only", "across systems (A/B)"};
  md_table(m, "rrrrrrrr", columns);
  md_cell(m, "%zu", t->compared);
  md_cell(m, t->answers[PERF_SLOWER] ? "**%zu**" : "%zu", t->answers[PERF_SLOWER]);
  md_cell(m, "%zu", t->answers[PERF_FASTER]);
  md_cell(m, "%zu", t->answers[PERF_SAME]);
  md_cell(m, "%zu", t->answers[PERF_INCONCLUSIVE]);
  md_cell(m, "%zu", t->too_few);
  md_cell(m, "%zu", t->unmatched);
  md_cell(m, "%zu", t->ab[PERF_SLOWER] + t->ab[PERF_FASTER] + t->ab[PERF_SAME] + t->ab[PERF_INCONCLUSIVE]);
  md_row_end(m);
  md_table_end(m);
  if (t->systems_note) md_para(m, "%s.", t->systems_note);
  md_para(m, "SLOWER or faster: the median figure of merit NEW/OLD beyond the %.3g %% threshold with p below %g "
             "(two-sided Mann-Whitney U over the repetitions); the interval is the ratio's 95 %% (Moses) interval; "
             "same: the interval excludes a %.3g %% change either way. Measured: each side's verdict (stable, "
             "noisy, too-short, disturbed, oversubscribed). Runs compared across systems are an A/B of the "
             "machines, never a regression.",
          100.0 * t->threshold, t->alpha, 100.0 * t->threshold);
}

static bool moved(const compare_row *r) {
  return r->kind == COMPARE_JUDGED && (r->answer == PERF_SLOWER || r->answer == PERF_FASTER);
}

static void write_moved_row(md_summary *m, const compare_row *r) {
  char name[256], range[64], measured[48];
  group_name(r->new_, name, sizeof name);
  interval(&r->change, range, sizeof range);
  verdicts(r, measured, sizeof measured);
  bool regression = r->answer == PERF_SLOWER && !r->across;
  md_cell(m, regression ? "**%s**" : "%s", r->answer_text);
  md_cell(m, "%s", name);
  md_cell(m, "%s", r->systems);
  md_cell(m, "%.3f", r->change.ratio);
  md_cell(m, "%s", range);
  md_cell(m, "%.2g%s", r->change.p_value, r->change.exact ? "" : "~");
  md_cell(m, "%s", measured);
  md_cell(m, "%zu + %zu", r->old->timed, r->new_->timed);
  md_row_end(m);
}

/* Regressions first, then the rest that moved (faster, and A/B answers). */
static void write_moved(md_summary *m, const compare_totals *t) {
  static const char *const columns[] = {"answer", "configuration", "system", "new/old", "95 % interval",
                                        "p (U)", "measured", "runs (old + new)"};
  md_heading(m, 3, "Slower and faster");
  size_t shown = 0;
  md_table(m, "lllrlrlr", columns);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < t->nrows; ++i) {
      const compare_row *r = &t->rows[i];
      bool regression = moved(r) && r->answer == PERF_SLOWER && !r->across;
      if (moved(r) && regression == (pass == 0)) write_moved_row(m, r), ++shown;
    }
  md_table_end(m);
  if (!shown) md_para(m, "None: no configuration is slower or faster beyond the threshold.");
}

/* Why a configuration was not judged, into text; false when it was. */
static bool not_judged(const compare_row *r, double threshold, char *text, size_t len) {
  char range[64], measured[48], seen[32] = "none";
  if (r->kind == COMPARE_ONLY_OLD || r->kind == COMPARE_ONLY_NEW) {
    snprintf(text, len, "only in %s", r->kind == COMPARE_ONLY_OLD ? "OLD" : "NEW");
    return true;
  }
  if (r->kind == COMPARE_TOO_FEW) {
    snprintf(text, len, "too few repetitions to judge (%zu + %zu; need 2 per side)", r->old->timed, r->new_->timed);
    return true;
  }
  if (r->answer != PERF_INCONCLUSIVE) return false;
  interval(&r->change, range, sizeof range);
  verdicts(r, measured, sizeof measured);
  if (isfinite(r->change.detectable)) snprintf(seen, sizeof seen, "+-%.1f %%", 100.0 * r->change.detectable);
  snprintf(text, len, "%s: new/old %.3f %s, the noise or a side's verdict (%s) hides a %.3g %% change; the "
           "repetitions could detect %s", r->answer_text, r->change.ratio, range, measured, 100.0 * threshold, seen);
  return true;
}

static void write_not_judged(md_summary *m, const compare_totals *t) {
  static const char *const columns[] = {"configuration", "system", "why"};
  size_t shown = 0;
  for (size_t i = 0; i < t->nrows; ++i) {
    const compare_row *r = &t->rows[i];
    char why[640], name[256];
    if (!not_judged(r, t->threshold, why, sizeof why)) continue;
    if (shown++ == 0) {
      md_heading(m, 3, "Not judged");
      md_table(m, "lll", columns);
    }
    group_name(r->new_ ? r->new_ : r->old, name, sizeof name);
    md_cell(m, "%s", name);
    md_cell(m, "%s", r->systems);
    md_cell(m, "%s", why);
    md_row_end(m);
  }
  if (shown) md_table_end(m);
}

/* The link line: report_url, else NEW's report.html when it exists. */
static char *link_line(const char *new_path, const char *report_url) {
  if (report_url) return md_link_line("Full report", report_url, report_url);
  char *file = results_file_of(new_path), *dir = file ? path_dirname(file) : NULL;
  char *html = dir ? path_join(dir, "report.html") : NULL;
  char *line = !html ? NULL
               : path_exists(html) ? md_link_line("Full report", "report.html", html)
                                   : str_printf("No HTML report of NEW yet: `mapp report %s` writes one.", new_path);
  free(html);
  free(dir);
  free(file);
  return line;
}

int perfcompare_markdown(const compare_totals *t, const char *old_path, const char *new_path, const char *report_url,
                         char **text) {
  char *link = link_line(new_path, report_url);
  if (!link) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  md_summary m;
  int status = md_summary_open(&m, MD_SUMMARY_LIMIT, link);
  free(link);
  if (status != MAPP_OK) return status;
  md_heading(&m, 2, "mapp compare: %s against %s", new_path, old_path);
  write_totals(&m, t);
  write_moved(&m, t);
  write_not_judged(&m, t);
  return md_summary_finish(&m, text);
}
