/* mapp report, an app's section (report_internal.h): its table (a row per
 * configuration: figure of merit, spread, verdict, efficiency, speedups,
 * verification, baseline), the spec's tables for it (also as
 * plots/APP-NAME.csv), its figures, and the artifacts its runs made. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doc.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "plot.h"
#include "plotdata.h"
#include "report_internal.h"
#include "spec.h"
#include "stats.h"
#include "ratios.h"
#include "tables.h"

/* "1.00" or "-" when the number does not apply. */
static void format_ratio(bool ok, const ratio *r, char *buf, size_t len) {
  if (ok) snprintf(buf, len, "%.2f", r->value);
  else snprintf(buf, len, "-");
}

static void write_group_row(doc *d, const group_table *t, const result_group *g, const speedup_refs *refs) {
  ratio eff, strong, speedup;
  char eff_text[32], strong_text[32], speedup_text[32], fom[32] = "-", spread[32] = "-", verify[48];
  format_ratio(stats_weak_efficiency(t, g, &eff), &eff, eff_text, sizeof eff_text);
  format_ratio(stats_strong_speedup(t, g, &strong), &strong, strong_text, sizeof strong_text);
  format_ratio(stats_speedup(t, g, refs, &speedup), &speedup, speedup_text, sizeof speedup_text);
  if (g->timed) {
    snprintf(fom, sizeof fom, "%.4g", g->fom_median);
    snprintf(spread, sizeof spread, "%.1f%%", g->fom_median > 0 ? 100.0 * (g->fom_max - g->fom_min) / g->fom_median : 0.0);
  }
  size_t failed = g->runs - g->timed + g->verify_failed;
  if (failed && g->timed_out == failed) snprintf(verify, sizeof verify, "**%zu of %zu timed out**", failed, g->runs);
  else if (failed) snprintf(verify, sizeof verify, "**%zu of %zu failed**", failed, g->runs);
  else snprintf(verify, sizeof verify, "pass");
  /* With no timed run left, a group whose runs hit their time limit has no
   * spread to judge: its verdict is that. */
  const char *verdict = !g->timed && g->timed_out ? "timeout" : verdict_name(g->verdict.kind);
  bool base_failed = strcmp(g->baseline, "fail") == 0;
  char interval[48] = "";
  if (isfinite(g->verdict.half_width)) snprintf(interval, sizeof interval, " \u00b1%.1f%%", 100.0 * g->verdict.half_width);
  doc_cell(d, "%s%s%s%s", g->variant, g->setting[0] ? " [" : "", g->setting, g->setting[0] ? "]" : "");
  doc_cell(d, "%s", g->backend);
  doc_cell(d, "%ld", g->ranks);
  doc_cell(d, "%ld", g->threads);
  doc_cell(d, "%s", g->size);
  doc_cell(d, "%s", g->scaling);
  doc_cell(d, "%s", fom);
  doc_cell(d, "%s", spread);
  doc_cell(d, "%s%s", verdict, interval);
  doc_cell(d, "%s", eff_text);
  doc_cell(d, "%s", strong_text);
  doc_cell(d, "%s", speedup_text);
  doc_cell(d, "%s", verify);
  doc_cell(d, base_failed ? "**%s**" : "%s", g->baseline);
  doc_cell(d, "%zu", g->runs);
  doc_row_end(d);
}

/* The figure plots/APP-SLUG.png (its SVG in the HTML) when the plots drew it. */
static void write_figure(doc *d, const char *app, const char *slug, const strv *images) {
  char name[320], app_stem[200], slug_stem[100];
  plot_file_stem(app, app_stem, sizeof app_stem);
  plot_file_stem(slug, slug_stem, sizeof slug_stem);
  snprintf(name, sizeof name, "%s-%s.png", app_stem, slug_stem);
  for (size_t i = 0; i < images->count; ++i) {
    const char *slash = strrchr(images->items[i], '/');
    if (strcmp(slash ? slash + 1 : images->items[i], name) != 0) continue;
    char caption[400], path[340];
    snprintf(caption, sizeof caption, "%s: %s", app, slug);
    snprintf(path, sizeof path, "plots/%s", name);
    doc_figure(d, caption, path);
  }
}

/* The phase's name without the tree's root: "main->communication" reads
 * "communication". */
static const char *phase_name(const scaling_model *m) {
  const char *arrow = strrchr(m->callpath, '>');
  return arrow ? arrow + 1 : m->callpath;
}

/* The phase of `series` inside its timed loop (not setup, not the answer's
 * io) that carries its timed model's shape out to p1 ranks: for a series
 * that grows, the one whose model grows most from 1 rank to p1; for one
 * that levels off, the one that holds the most time at p1. NULL when no
 * such phase is modelled. */
static const scaling_model *leading_phase(const model_set *models, const char *series, bool flat, double p1) {
  const scaling_model *best = NULL;
  double best_value = 0.0;
  for (size_t i = 0; i < models->count; ++i) {
    const scaling_model *m = &models->items[i];
    if (strcmp(m->series, series) || !strcmp(m->callpath, "timed")) continue;
    if (!strcmp(phase_name(m), "setup") || !strcmp(phase_name(m), "io")) continue;
    double value = flat ? model_eval(m, p1) : model_eval(m, p1) - model_eval(m, 1.0);
    if (isfinite(value) && value > best_value) best = m, best_value = value;
  }
  return best;
}

/* Under the scaling figures, one line: how each modelled series' timed
 * phase grows with the ranks (its Extra-P model's leading term), and which
 * of the timed loop's phases drives that growth (or, where it levels off,
 * holds the time) at the largest rank count the models are drawn to. */
static void write_model_line(doc *d, const char *app, const model_set *models) {
  size_t n = strlen(app), count = 0;
  char line[4096];
  int used = snprintf(line, sizeof line, "Scaling models (Extra-P, `mapp model`%s): the timed phase of", "");
  if (models->fit_max_ranks > 0)
    used = snprintf(line, sizeof line, "Scaling models (Extra-P, `mapp model`, fitted to <= %ld ranks): the timed "
                    "phase of", models->fit_max_ranks);
  double p1 = models->predict_to > 1 ? (double)models->predict_to : 64.0;
  for (size_t i = 0; i < models->count && used > 0 && (size_t)used < sizeof line; ++i) {
    const scaling_model *m = &models->items[i];
    if (strcmp(m->callpath, "timed") || strncmp(m->series, app, n) || m->series[n] != ' ') continue;
    bool flat = !strcmp(m->leading, "1");
    char text[256], why[256] = "";
    model_format(m, text, sizeof text);
    const scaling_model *phase = leading_phase(models, m->series, flat, p1);
    if (phase && flat)
      snprintf(why, sizeof why, ", most of it in %s at p=%.0f (%.3g s)", phase_name(phase), p1, model_eval(phase, p1));
    else if (phase)
      snprintf(why, sizeof why, ", driven by %s (as %s: +%.3g s from p=1 to %.0f)", phase_name(phase),
               phase->leading, model_eval(phase, p1) - model_eval(phase, 1.0), p1);
    used += snprintf(line + used, sizeof line - (size_t)used, "%s %s %s%s (%s s)%s", count ? ";" : "", m->series + n + 1,
                     flat ? "levels off" : "grows as ", flat ? "" : m->leading, text, why);
    ++count;
  }
  if (count) doc_para(d, "%s.", line);
}

/* The standard figures, then the spec's own (plots: figures:). */
static void write_figures(doc *d, const char *app, const strv *images, const sweep_spec *spec,
                          const model_set *models) {
  for (int kind = 0; kind < PLOT_KIND_COUNT; ++kind) {
    write_figure(d, app, plot_kind_slug((plot_kind)kind), images);
    if (kind == PLOT_STRONG_SPEEDUP) write_model_line(d, app, models);
  }
  for (size_t i = 0; spec && i < spec->nfigures; ++i)
    if (!spec->figures[i].app || !strcmp(spec->figures[i].app, app)) write_figure(d, app, spec->figures[i].name, images);
}

/* A path as the report (in dir) links it: relative when it lies under dir. */
static const char *link_path(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

/* Files a run made besides its answer (app_data.artifacts: [{kind, path}]),
 * e.g. heat's snapshot animation: shown inline, one per configuration. */
void report_write_artifacts(doc *d, const char *app, const json_t *records, const char *dir) {
  size_t i, k;
  json_t *rec, *item;
  bool any = false;
  json_array_foreach(records, i, rec) {
    if (!json_is_string(json_object_get(rec, "app")) || strcmp(json_string_value(json_object_get(rec, "app")), app) != 0 ||
        json_integer_value(json_object_get(rec, "repetition")) > 0)
      continue;
    json_array_foreach(json_object_get(json_object_get(rec, "app_data"), "artifacts"), k, item) {
      const char *kind = json_string_value(json_object_get(item, "kind"));
      const char *path = json_string_value(json_object_get(item, "path"));
      if (!kind || !path || access(path, R_OK) != 0) continue;
      if (!any) doc_heading(d, 3, "Artifacts");
      any = true;
      doc_para(d, "%s of %s/%s n=%lld t=%lld %s:", kind, json_text_or(rec, "variant", "-"),
               json_text_or(rec, "backend", "-"), json_integer_value(json_object_get(rec, "ranks")),
               json_integer_value(json_object_get(rec, "threads")), json_text_or(rec, "size", "-"));
      doc_figure(d, kind, link_path(path, dir));
    }
  }
}

/* ---------------------------------------------------------------- spec tables */

/* ", where `label` = `metg-w2` or `metg-w16`, `variant` = `eager`": a table's
 * where (malloc'd; "" without one). */
static char *where_text(const table_spec *t) {
  strv parts = {0};
  int status = MAPP_OK;
  for (size_t k = 0; status == MAPP_OK && k < t->where_fields.count; ++k) {
    const char *field = t->where_fields.items[k];
    bool first = true;
    for (size_t j = 0; j < k && first; ++j) first = strcmp(t->where_fields.items[j], field) != 0;
    if (!first) continue;
    strv values = {0};
    for (size_t j = k; status == MAPP_OK && j < t->where_fields.count; ++j)
      if (!strcmp(t->where_fields.items[j], field)) status = strv_pushf(&values, "`%s`", t->where_values.items[j]);
    char *alternatives = status == MAPP_OK ? strv_join(&values, " or ") : NULL;
    status = alternatives ? strv_pushf(&parts, "%s`%s` = %s", k ? ", " : ", where ", field, alternatives)
                          : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(alternatives);
    strv_free(&values);
  }
  char *text = status == MAPP_OK ? (parts.count ? strv_join(&parts, "") : strdup("")) : NULL;
  strv_free(&parts);
  return text;
}

/* A column of numbers (right-aligned): a value column, or keys that are all numbers or "-". */
static bool numeric_column(const table_spec *t, const table_data *d, size_t c) {
  if (table_is_value(t, c)) return true;
  bool any = false;
  for (size_t i = 0; i < d->count; ++i) {
    const char *text = d->rows[i].keys.items[c];
    char *end;
    if (!strcmp(text, "-")) continue;
    strtod(text, &end);
    if (end == text || *end) return false;
    any = true;
  }
  return any;
}

static int write_table_doc(doc *out, const table_spec *t, const table_data *d, const char *app, const char *csv_name) {
  doc_heading(out, 3, "%s", t->title ? t->title : t->name);
  if (d->count == 0) {
    char *where = where_text(t);
    if (!where) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    doc_para(out, "No records match (app `%s`, exit code 0%s).", app, where);
    free(where);
    return MAPP_OK;
  }
  char aligns[DOC_MAX_COLUMNS + 1];
  size_t ncolumns = t->columns.count < DOC_MAX_COLUMNS ? t->columns.count : DOC_MAX_COLUMNS;
  for (size_t c = 0; c < ncolumns; ++c) aligns[c] = numeric_column(t, d, c) ? 'r' : 'l';
  aligns[ncolumns] = '\0';
  doc_table(out, aligns);
  for (size_t c = 0; c < ncolumns; ++c) doc_cell(out, "%s", t->columns.items[c]);
  doc_row_end(out);
  for (size_t i = 0; i < d->count; ++i) {
    for (size_t c = 0; c < ncolumns; ++c) {
      char cell[256];
      table_cell_text(t, &d->rows[i], c, cell, sizeof cell);
      doc_cell(out, "%s", cell);
    }
    doc_row_end(out);
  }
  doc_table_end(out);
  char *values = t->values.count ? strv_join(&t->values, "`, `") : NULL;
  doc_para(out, "%s%s%s`-`: no record of the row has it. As CSV: `plots/%s`.", values ? "`" : "", values ? values : "",
           values ? "`: median (min\u2013max) over the records of the row. " : "", csv_name);
  free(values);
  for (size_t c = 0; c < d->absent.count; ++c)
    doc_para(out, "No record of this table has `%s` (a field path or a matrix parameter).", d->absent.items[c]);
  return MAPP_OK;
}

/* plots/APP-NAME.csv: key columns as text, each value column as its
 * median, min and max in full precision, and the records of each row. */
static int write_table_csv(const char *path, const table_spec *t, const table_data *d) {
  FILE *f = fopen(path, "w");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
  for (size_t c = 0; c < t->columns.count; ++c) {
    const char *name = t->columns.items[c];
    if (c) fputc(',', f);
    if (table_is_value(t, c)) fprintf(f, "%s,%s_min,%s_max", name, name, name);
    else csv_text(f, name);
  }
  fprintf(f, ",runs\n");
  for (size_t i = 0; i < d->count; ++i) {
    const table_row *row = &d->rows[i];
    for (size_t c = 0; c < t->columns.count; ++c) {
      const table_stat *s = &row->stats[c];
      if (c) fputc(',', f);
      if (!table_is_value(t, c)) csv_text(f, strcmp(row->keys.items[c], "-") ? row->keys.items[c] : "");
      else if (s->count) fprintf(f, "%.9g,%.9g,%.9g", s->median, s->low, s->high);
      else fputs(",,", f);
    }
    fprintf(f, ",%zu\n", row->runs);
  }
  return fclose(f) == 0 ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
}

/* The spec's tables for this app: in the report and as plots/APP-NAME.csv. */
static int write_tables(doc *out, const report_context *ctx, const json_t *records, const char *app) {
  for (size_t i = 0; ctx->spec && i < ctx->spec->ntables; ++i) {
    const table_spec *t = &ctx->spec->tables[i];
    if (t->app && strcmp(t->app, app) != 0) continue;
    char app_stem[200], name_stem[100], csv_name[320];
    plot_file_stem(app, app_stem, sizeof app_stem);
    plot_file_stem(t->name, name_stem, sizeof name_stem);
    snprintf(csv_name, sizeof csv_name, "%s-%s.csv", app_stem, name_stem);
    char *plots = path_join(ctx->dir, "plots"), *csv = plots ? path_join(plots, csv_name) : NULL;
    table_data d;
    int status = csv ? make_dirs(plots) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    if (status == MAPP_OK) status = table_collect(records, t, app, &d);
    if (status == MAPP_OK) {
      status = write_table_doc(out, t, &d, app, csv_name);
      if (status == MAPP_OK) status = write_table_csv(csv, t, &d);
      table_data_free(&d);
    }
    free(csv);
    free(plots);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

/* ---------------------------------------------------------------- spec ratios */

static void side_cell(doc *d, const ratio_side *s) {
  if (!s->config) doc_cell(d, "-");
  else if (s->runs > 1) doc_cell(d, "`%s`: %.3g (%.3g\u2013%.3g)", s->config, s->median, s->low, s->high);
  else doc_cell(d, "`%s`: %.3g", s->config, s->median);
}

/* One row: the ratio of the medians, with the range the extremes allow,
 * or the side that is missing on this machine. */
static void write_ratio_row(doc *d, const ratio_row *row) {
  doc_cell(d, "%s", row->key);
  side_cell(d, &row->num);
  side_cell(d, &row->den);
  if (row->num.config && row->den.config && row->den.median > 0 && row->den.low > 0)
    doc_cell(d, "**%.3g** (%.3g\u2013%.3g)", row->num.median / row->den.median, row->num.low / row->den.high,
             row->num.high / row->den.low);
  else doc_cell(d, "missing: no %s run here", row->num.config ? "denominator" : "numerator");
  doc_row_end(d);
}

/* The spec's ratios for this app: only sides that ran on one machine pair up. */
static int write_ratios(doc *out, const report_context *ctx, const json_t *records, const char *app) {
  for (size_t i = 0; ctx->spec && i < ctx->spec->nratios; ++i) {
    const ratio_spec *r = &ctx->spec->ratios[i];
    if (r->app && strcmp(r->app, app) != 0) continue;
    ratio_data data;
    MAPP_TRY(ratio_collect(records, r, app, &data));
    char *same = strv_join(&r->same, "`, `");
    if (!same) return ratio_data_free(&data), mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    doc_heading(out, 3, "%s", r->title ? r->title : r->name);
    if (!data.count) doc_para(out, "Neither side of this ratio ran (app `%s`, exit code 0).", app);
    else {
      doc_table(out, "lllr");
      doc_cell(out, "where");
      doc_cell(out, "numerator (best configuration: median fom)");
      doc_cell(out, "denominator (best configuration: median fom)");
      doc_cell(out, "ratio");
      doc_row_end(out);
      for (size_t k = 0; k < data.count; ++k) write_ratio_row(out, &data.rows[k]);
      doc_table_end(out);
    }
    doc_para(out, "Each side is its best configuration (variant, backend, ranks x threads, label) by median figure of "
                  "merit; the two pair up only where `%s` agree, so no ratio is formed across machines. The range is "
                  "the slowest over the fastest run and back.%s%s",
             same, r->note ? " " : "", r->note ? r->note : "");
    free(same);
    ratio_data_free(&data);
  }
  return MAPP_OK;
}

static void write_app_header(doc *d, const char *unit, const char *ref) {
  static const char *const columns[] = {"variant", "backend", "ranks", "threads", "size", "scaling"};
  doc_table(d, "llrrllrrlrrrllr");
  for (size_t i = 0; i < sizeof columns / sizeof columns[0]; ++i) doc_cell(d, "%s", columns[i]);
  doc_cell(d, "median %s", unit);
  doc_cell(d, "spread");
  doc_cell(d, "verdict");
  doc_cell(d, "weak eff.");
  doc_cell(d, "strong speedup");
  doc_cell(d, "speedup vs %s", ref[0] ? ref : "ref");
  doc_cell(d, "verify");
  doc_cell(d, "baseline");
  doc_cell(d, "reps");
  doc_row_end(d);
}

int report_write_app(doc *d, const report_context *ctx, const group_table *t, const json_t *records, const char *app) {
  const speedup_refs *refs = ctx->refs;
  const char *unit = "FOM";
  for (size_t i = 0; i < t->count; ++i)
    if (strcmp(t->items[i].app, app) == 0) unit = t->items[i].fom_name;
  char ref[128];
  speedup_ref_text(stats_app_reference(t, app, refs), ref, sizeof ref);
  doc_heading(d, 2, "%s", app);
  doc_para(d, "Speedup reference: %s.", ref[0] ? ref : "none of the references ran for this app");
  write_app_header(d, unit, ref);
  for (size_t i = 0; i < t->count; ++i)
    if (strcmp(t->items[i].app, app) == 0) write_group_row(d, t, &t->items[i], refs);
  doc_table_end(d);
  doc_para(d, "Spread is (max - min) / median over the repetitions; the verdict judges the figure (stable, noisy, "
              "too-short, disturbed; \u00b1 the half-width of the median's 95 %% interval). Weak efficiency is (fom(n) "
              "/ n) / (fom(n0) / n0); strong speedup fom(n) / fom(n0) = T(n0) / T(n); n0 is the fewest ranks of the "
              "series.");
  MAPP_TRY(write_tables(d, ctx, records, app));
  MAPP_TRY(write_ratios(d, ctx, records, app));
  write_figures(d, app, ctx->images, ctx->spec, ctx->models);
  return MAPP_OK;
}
