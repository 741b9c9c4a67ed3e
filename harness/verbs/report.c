/* mapp report RESULTS: report.md (machine, one table per app, the spec's
 * tables, the figures) and results.csv (one row per record) for a results
 * folder; each spec table also as plots/APP-NAME.csv. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "coverage.h"
#include "fsutil.h"
#include "headline.h"
#include "history.h"
#include "mapp_error.h"
#include "plot.h"
#include "plotdata.h"
#include "results.h"
#include "spec.h"
#include "stats.h"
#include "verbs.h"

/* ---------------------------------------------------------------- CSV */

static const char *const csv_columns[] = {
    "sweep", "app", "variant", "backend", "size", "scaling", "case", "ranks", "threads", "repetition", "steps",
    "fom", "fom_unit", "wall_s", "setup_s", "compute_s", "communication_s", "io_s", "elapsed_s", "exit_code",
    "verify", "baseline", "host", "compiler", "git_revision", "time"};
#define CSV_COLUMNS (sizeof csv_columns / sizeof csv_columns[0])

/* A record's value for a CSV column: most are top-level fields, a few are nested. */
static const json_t *csv_value(const json_t *r, const char *column) {
  static const char *const phases[][2] = {
      {"setup_s", "setup"}, {"compute_s", "compute"}, {"communication_s", "communication"}, {"io_s", "io"}};
  for (size_t i = 0; i < 4; ++i)
    if (strcmp(column, phases[i][0]) == 0)
      return json_object_get(json_object_get(json_object_get(r, "phases"), phases[i][1]), "max");
  if (strcmp(column, "fom") == 0) return json_object_get(json_object_get(r, "fom"), "value");
  if (strcmp(column, "fom_unit") == 0) return json_object_get(json_object_get(r, "fom"), "name");
  if (strcmp(column, "verify") == 0) return json_object_get(json_object_get(r, "verification"), "status");
  if (strcmp(column, "baseline") == 0) return json_object_get(json_object_get(r, "baseline"), "status");
  return json_object_get(r, column);
}

/* Text as one CSV field: quoted (quotes doubled) where it holds a comma, quote or line break. */
static void csv_text(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; ++s) fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
  fputc('"', f);
}

static void csv_cell(FILE *f, const json_t *v) {
  if (json_is_integer(v)) fprintf(f, "%lld", (long long)json_integer_value(v));
  else if (json_is_real(v)) fprintf(f, "%.9g", json_real_value(v));
  else if (json_is_string(v)) csv_text(f, json_string_value(v));
}

static int write_csv(const char *path, const json_t *records) {
  FILE *f = fopen(path, "w");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
  for (size_t c = 0; c < CSV_COLUMNS; ++c) fprintf(f, "%s%s", c ? "," : "", csv_columns[c]);
  fputc('\n', f);
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    for (size_t c = 0; c < CSV_COLUMNS; ++c) {
      if (c) fputc(',', f);
      csv_cell(f, csv_value(r, csv_columns[c]));
    }
    fputc('\n', f);
  }
  return fclose(f) == 0 ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
}

/* ---------------------------------------------------------------- report.md */

/* The distinct values of a field over the records, joined ("a, b"). */
static char *distinct(const json_t *records, const char *key) {
  strv seen = {0};
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    const char *v = json_string_value(json_object_get(r, key));
    if (v && !strv_contains(&seen, v) && strv_push(&seen, v) != MAPP_OK) break;
  }
  char *text = seen.count ? strv_join(&seen, ", ") : strdup("unknown");
  strv_free(&seen);
  return text;
}

static const char *text_or(const json_t *r, const char *key) {
  const char *text = json_string_value(json_object_get(r, key));
  return text ? text : "-";
}

/* "2 cores, 0 GPUs a node (env local)" per distinct placement, and how many
 * runs used more than that. */
static void write_placement(FILE *f, const json_t *records) {
  strv seen = {0};
  size_t i, over = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    over += json_is_true(json_object_get(r, "oversubscribed"));
    const json_t *p = json_object_get(r, "placement");
    if (!p) continue;
    const char *env = json_string_value(json_object_get(r, "env"));
    char *text = str_printf("%lld cores, %lld GPUs a node (env %s%s)", json_integer_value(json_object_get(p, "cores_per_node")),
                            json_integer_value(json_object_get(p, "gpus_per_node")), env ? env : "?",
                            json_is_true(json_object_get(p, "scheduler")) ? ", batch" : "");
    if (text && !strv_contains(&seen, text)) strv_push(&seen, text);
    free(text);
  }
  char *joined = seen.count ? strv_join(&seen, "; ") : NULL;
  fprintf(f, "| cores and GPUs | %s |\n", joined ? joined : "not recorded");
  fprintf(f, "| oversubscribed runs | %zu of %zu (ranks x threads beyond the cores given, or ranks sharing a GPU; "
             "hollow in the figures) |\n", over, json_array_size(records));
  free(joined);
  strv_free(&seen);
}

static void write_machine(FILE *f, const json_t *records, const speedup_refs *refs) {
  static const char *const rows[][2] = {{"hosts", "host"}, {"compilers", "compiler"}, {"flags", "flags"},
                                        {"build types", "build_type"}, {"git revisions", "git_revision"}};
  fprintf(f, "| | |\n|---|---|\n| records | %zu |\n", json_array_size(records));
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    char *values = distinct(records, rows[i][1]);
    fprintf(f, "| %s | %s |\n", rows[i][0], values ? values : "?");
    free(values);
  }
  const json_t *first = json_array_get(records, 0), *last = json_array_get(records, json_array_size(records) - 1);
  const char *from = json_string_value(json_object_get(first, "time"));
  const char *to = json_string_value(json_object_get(last, "time"));
  fprintf(f, "| ran | %s to %s |\n", from ? from : "?", to ? to : "?");
  write_placement(f, records);
  char *listed = speedup_refs_format(refs);
  if (refs->count > 1) fprintf(f, "| speedup references | %s (each app: the first its results contain) |\n\n", listed);
  else fprintf(f, "| speedup reference | %s |\n\n", refs->count && listed ? listed : "none given");
  free(listed);
}

/* "1.00" or "-" when the number does not apply. */
static void format_ratio(bool ok, const ratio *r, char *buf, size_t len) {
  if (ok) snprintf(buf, len, "%.2f", r->value);
  else snprintf(buf, len, "-");
}

static void write_group_row(FILE *f, const group_table *t, const result_group *g, const speedup_refs *refs) {
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
  if (failed) snprintf(verify, sizeof verify, "**%zu of %zu failed**", failed, g->runs);
  else snprintf(verify, sizeof verify, "pass");
  bool base_failed = strcmp(g->baseline, "fail") == 0;
  char interval[48] = "-";
  if (isfinite(g->verdict.half_width)) snprintf(interval, sizeof interval, " \u00b1%.1f%%", 100.0 * g->verdict.half_width);
  fprintf(f, "| %s%s%s%s | %s | %ld | %ld | %s | %s | %s | %s | %s%s | %s | %s | %s | %s | %s%s%s | %zu |\n",
          g->variant, g->setting[0] ? " [" : "", g->setting, g->setting[0] ? "]" : "", g->backend, g->ranks,
          g->threads, g->size, g->scaling, fom, spread, verdict_name(g->verdict.kind),
          isfinite(g->verdict.half_width) ? interval : "", eff_text, strong_text, speedup_text, verify,
          base_failed ? "**" : "", g->baseline, base_failed ? "**" : "", g->runs);
}

/* ![APP: SLUG](plots/APP-SLUG.png) when the plots drew it. */
static void write_figure(FILE *f, const char *app, const char *slug, const strv *images) {
  char name[320], app_stem[200], slug_stem[100];
  plot_file_stem(app, app_stem, sizeof app_stem);
  plot_file_stem(slug, slug_stem, sizeof slug_stem);
  snprintf(name, sizeof name, "%s-%s.png", app_stem, slug_stem);
  for (size_t i = 0; i < images->count; ++i) {
    const char *slash = strrchr(images->items[i], '/');
    if (strcmp(slash ? slash + 1 : images->items[i], name) == 0) fprintf(f, "![%s: %s](plots/%s)\n\n", app, slug, name);
  }
}

/* The standard figures, then the spec's own (plots: figures:). */
static void write_figures(FILE *f, const char *app, const strv *images, const sweep_spec *spec) {
  for (int kind = 0; kind < PLOT_KIND_COUNT; ++kind) write_figure(f, app, plot_kind_slug((plot_kind)kind), images);
  for (size_t i = 0; spec && i < spec->nfigures; ++i)
    if (!spec->figures[i].app || !strcmp(spec->figures[i].app, app)) write_figure(f, app, spec->figures[i].name, images);
}

/* A path as the report (in dir) links it: relative when it lies under dir. */
static const char *link_path(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

/* Files a run made besides its answer (app_data.artifacts: [{kind, path}]),
 * e.g. heat's snapshot animation: shown inline, one per configuration. */
static void write_artifacts(FILE *f, const char *app, const json_t *records, const char *dir) {
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
      if (!any) fprintf(f, "### Artifacts\n\n");
      any = true;
      fprintf(f, "%s of %s/%s n=%lld t=%lld %s:\n\n![%s](%s)\n\n", kind,
              json_string_value(json_object_get(rec, "variant")), json_string_value(json_object_get(rec, "backend")),
              json_integer_value(json_object_get(rec, "ranks")), json_integer_value(json_object_get(rec, "threads")),
              json_string_value(json_object_get(rec, "size")), kind, link_path(path, dir));
    }
  }
}

typedef struct {
  const char *dir, *name, *description;
  const speedup_refs *refs;
  const strv *images;
  const sweep_spec *spec; /* the results folder's spec.yaml (its tables); NULL without one */
} report_context;

/* ---------------------------------------------------------------- spec tables */

/* Text as a markdown table cell: '|' escaped, line breaks blanked. */
static void md_cell(FILE *f, const char *s) {
  for (; *s; ++s) {
    if (*s == '|') fputs("\\|", f);
    else fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
  }
}

/* "label = metg-w2 or metg-w16, variant = eager": a table's where. */
static void write_where(FILE *f, const table_spec *t) {
  for (size_t k = 0; k < t->where_fields.count; ++k) {
    const char *field = t->where_fields.items[k];
    bool first = true;
    for (size_t j = 0; j < k && first; ++j) first = strcmp(t->where_fields.items[j], field) != 0;
    if (!first) continue;
    fprintf(f, "%s`%s` = ", k ? ", " : ", where ", field);
    for (size_t j = k, n = 0; j < t->where_fields.count; ++j)
      if (!strcmp(t->where_fields.items[j], field)) fprintf(f, "%s`%s`", n++ ? " or " : "", t->where_values.items[j]);
  }
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

static void write_table_md(FILE *f, const table_spec *t, const table_data *d, const char *app, const char *csv_name) {
  fprintf(f, "### ");
  md_cell(f, t->title ? t->title : t->name);
  fprintf(f, "\n\n");
  if (d->count == 0) {
    fprintf(f, "No records match (app `%s`, exit code 0", app);
    write_where(f, t);
    fprintf(f, ").\n\n");
    return;
  }
  for (size_t c = 0; c < t->columns.count; ++c) fprintf(f, "| %s ", t->columns.items[c]);
  fprintf(f, "|\n");
  for (size_t c = 0; c < t->columns.count; ++c) fprintf(f, "|%s", numeric_column(t, d, c) ? "--:" : "---");
  fprintf(f, "|\n");
  for (size_t i = 0; i < d->count; ++i) {
    for (size_t c = 0; c < t->columns.count; ++c) {
      char cell[256];
      table_cell_text(t, &d->rows[i], c, cell, sizeof cell);
      fprintf(f, "| ");
      md_cell(f, cell);
      fprintf(f, " ");
    }
    fprintf(f, "|\n");
  }
  fprintf(f, "\n");
  if (t->values.count) {
    char *values = strv_join(&t->values, "`, `");
    fprintf(f, "`%s`: median (min\u2013max) over the records of the row. ", values ? values : "?");
    free(values);
  }
  fprintf(f, "`-`: no record of the row has it. As CSV: `plots/%s`.\n\n", csv_name);
  for (size_t c = 0; c < d->absent.count; ++c)
    fprintf(f, "No record of this table has `%s` (a field path or a matrix parameter).\n\n", d->absent.items[c]);
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

/* The spec's tables for this app: in report.md and as plots/APP-NAME.csv. */
static int write_tables(FILE *f, const report_context *ctx, const json_t *records, const char *app) {
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
      write_table_md(f, t, &d, app, csv_name);
      status = write_table_csv(csv, t, &d);
      table_data_free(&d);
    }
    free(csv);
    free(plots);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

static int write_app(FILE *f, const report_context *ctx, const group_table *t, const json_t *records, const char *app) {
  const speedup_refs *refs = ctx->refs;
  const char *unit = "FOM";
  for (size_t i = 0; i < t->count; ++i)
    if (strcmp(t->items[i].app, app) == 0) unit = t->items[i].fom_name;
  char ref[128];
  speedup_ref_text(stats_app_reference(t, app, refs), ref, sizeof ref);
  fprintf(f, "## %s\n\n", app);
  fprintf(f, "Speedup reference: %s.\n\n", ref[0] ? ref : "none of the references ran for this app");
  fprintf(f, "| variant | backend | ranks | threads | size | scaling | median %s | spread | verdict | weak eff. | "
             "strong speedup | speedup vs %s | verify | baseline | reps |\n", unit, ref[0] ? ref : "ref");
  fprintf(f, "|---|---|--:|--:|---|---|--:|--:|---|--:|--:|--:|---|---|--:|\n");
  for (size_t i = 0; i < t->count; ++i)
    if (strcmp(t->items[i].app, app) == 0) write_group_row(f, t, &t->items[i], refs);
  fprintf(f, "\nSpread is (max - min) / median over the repetitions; the verdict judges the figure (stable, noisy, "
             "too-short, disturbed; \u00b1 the half-width of the median's 95 %% interval). Weak efficiency is (fom(n) / n) / (fom(n0) / n0); "
             "strong speedup fom(n) / fom(n0) = T(n0) / T(n); n0 is the fewest ranks of the series.\n\n");
  MAPP_TRY(write_tables(f, ctx, records, app));
  write_figures(f, app, ctx->images, ctx->spec);
  return MAPP_OK;
}

static bool status_is(const json_t *r, const char *field, const char *status) {
  const char *text = json_string_value(json_object_get(json_object_get(r, field), "status"));
  return text && strcmp(text, status) == 0;
}

/* What failed in a run, or NULL when it passed: its exit code, its own
 * verification, its baseline, a baseline check: required could not make,
 * or its agreement with the sweep's 1-rank answer. */
static const char *failure_of(const json_t *r) {
  if (status_is(r, "verification", "fail")) return "verification";
  if (status_is(r, "baseline", "fail")) return "baseline";
  if (json_integer_value(json_object_get(r, "exit_code")) != 0) return "exit code";
  if (status_is(r, "consistency", "fail")) return "consistency with 1 rank";
  if (json_object_get(json_object_get(r, "baseline"), "bless") ||
      (json_object_get(json_object_get(r, "baseline"), "error") && !status_is(r, "baseline", "fail")))
    return "no baseline (required)";
  return NULL;
}

/* Every run that did not pass: its configuration, what failed, and its log. */
static void write_failures(FILE *f, const json_t *records) {
  size_t i, shown = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    const char *failure = failure_of(r);
    if (!failure) continue;
    if (shown++ == 0)
      fprintf(f, "## Failed runs\n\n| app | variant/backend | ranks | size | setting | rep | what failed | log |\n"
                 "|---|---|---|---|---|---|---|---|\n");
    const char *setting = json_string_value(json_object_get(r, "setting"));
    const char *log = json_string_value(json_object_get(r, "log"));
    fprintf(f, "| %s | %s/%s | %lld | %s | %s | %lld | %s | %s%s%s |\n", text_or(r, "app"), text_or(r, "variant"),
            text_or(r, "backend"), (long long)json_integer_value(json_object_get(r, "ranks")), text_or(r, "size"),
            setting ? setting : "-", (long long)json_integer_value(json_object_get(r, "repetition")),
            failure, log ? "`" : "", log ? log : "-",
            log ? "`" : "");
  }
  if (shown) fprintf(f, "\n");
  else fprintf(f, "## Failed runs\n\nNone: every run exited 0 and passed its verification, its baseline and its "
                  "consistency checks.\n\n");
}

static int write_markdown(const char *path, const report_context *ctx, const json_t *records) {
  group_table table;
  double precision = ctx->spec ? ctx->spec->measure.precision : VERDICT_DEFAULT_PRECISION;
  MAPP_TRY(stats_group_at(records, precision, &table));
  FILE *f = fopen(path, "w");
  if (!f) {
    group_table_free(&table);
    return mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
  }
  coverage_table coverage;
  int status = coverage_collect(records, &coverage);
  if (status != MAPP_OK) {
    group_table_free(&table);
    fclose(f);
    return status;
  }
  fprintf(f, "# mapp results: %s\n\n", ctx->name);
  if (ctx->description) fprintf(f, "%s\n\n", ctx->description);
  if (status == MAPP_OK) status = headline_write(f, &table);
  coverage_write_markdown(f, &coverage);
  coverage_table_free(&coverage);
  coverage_write_missing(f, records);
  write_machine(f, records, ctx->refs);
  const char *apps[64];
  size_t napps = plot_apps(&table, apps, 64);
  for (size_t i = 0; status == MAPP_OK && i < napps; ++i) {
    status = write_app(f, ctx, &table, records, apps[i]);
    write_artifacts(f, apps[i], records, ctx->dir);
  }
  /* the trend of each configuration across commits, when a history exists */
  if (status == MAPP_OK) status = history_report_section(f, ctx->dir, records);
  write_failures(f, records);
  fprintf(f, "Raw records: `results.jsonl`; one row per record: `results.csv`.\n");
  group_table_free(&table);
  if (fclose(f) != 0 && status == MAPP_OK) status = mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
  return status;
}

/* ---------------------------------------------------------------- verb */

/* Plots are redrawn when results.jsonl may be newer than their index (or a
 * reference is given, which changes the speedup figure). */
static int ensure_plots(const char *results_file, const char *reference, const selection *select, strv *images) {
  char *index = plot_index_path(results_file);
  if (!index) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  if (reference || !selection_empty(select) || !path_exists(index) || path_mtime(index) <= path_mtime(results_file)) {
    strv formats = {0};
    status = strv_push(&formats, "png");
    if (status == MAPP_OK) status = strv_push(&formats, "svg");
    /* the print copy, with the footer saying where the numbers came from */
    if (status == MAPP_OK) status = strv_push(&formats, "pdf");
    if (status == MAPP_OK) status = plot_results(results_file, reference, select, &formats, images);
    strv_free(&formats);
  } else {
    char *text = NULL;
    status = read_text_file(index, &text);
    char *save = NULL;
    for (char *line = text ? strtok_r(text, "\n", &save) : NULL; status == MAPP_OK && line;
         line = strtok_r(NULL, "\n", &save))
      status = strv_push(images, line);
    free(text);
  }
  free(index);
  return status;
}

/* The results folder's spec.yaml (description, tables); *loaded false without one. */
static int load_spec(const char *dir, sweep_spec *spec, bool *loaded) {
  *loaded = false;
  char *spec_path = path_join(dir, "spec.yaml");
  int status = spec_path ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && path_exists(spec_path)) {
    status = spec_load(spec_path, spec);
    *loaded = status == MAPP_OK;
  }
  free(spec_path);
  return status;
}

static int report(const char *results_arg, const char *reference, const selection *select) {
  char *results_file = results_file_of(results_arg);
  char *dir = results_file ? path_dirname(results_file) : NULL;
  char *name = dir ? path_stem(dir, "") : NULL;
  char *md = dir ? path_join(dir, "report.md") : NULL, *csv = dir ? path_join(dir, "results.csv") : NULL;
  sweep_spec spec = {0};
  bool have_spec = false;
  speedup_refs refs = {0};
  strv images = {0};
  json_t *records = NULL;
  int status = name && md && csv ? results_load(results_file, &records) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && json_array_size(records) == 0) status = mapp_fail(MAPP_ERR_INPUT, "%s has no records", results_file);
  if (status == MAPP_OK) status = selection_filter_records(select, records);
  if (status == MAPP_OK) status = ensure_plots(results_file, reference, select, &images);
  if (status == MAPP_OK) status = plot_reference(dir, reference, &refs);
  if (status == MAPP_OK && refs.count == 0) status = speedup_refs_from_records(records, &refs);
  if (status == MAPP_OK) status = load_spec(dir, &spec, &have_spec);
  report_context ctx = {.dir = dir, .name = name, .description = spec.description, .refs = &refs, .images = &images,
                        .spec = have_spec ? &spec : NULL};
  if (status == MAPP_OK) status = write_markdown(md, &ctx, records);
  if (status == MAPP_OK) status = write_csv(csv, records);
  if (status == MAPP_OK) printf("%s\n%s\n", md, csv);
  json_decref(records);
  strv_free(&images);
  if (have_spec) spec_free(&spec);
  speedup_refs_free(&refs);
  free(csv);
  free(md);
  free(name);
  free(dir);
  free(results_file);
  return status;
}

/* Several results folders into OUT/results.jsonl, each record marked with
 * the folder it came from, so one report (tables, figures, failures)
 * covers them all. OUT must not be one of them. */
static int combine(const verb_args *args, const char *out, char **combined) {
  MAPP_TRY(make_dirs(out));
  char *target = path_join(out, "results.jsonl");
  if (!target) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_t *all = json_array();
  int status = all ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (int k = 0; status == MAPP_OK && k < args->cli.positional_count; ++k) {
    char *file = results_file_of(args->cli.positional[k]);
    json_t *records = NULL;
    status = !file ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory")
             : strcmp(file, target) == 0 ? mapp_fail(MAPP_ERR_INPUT, "--out %s is one of the folders combined", out)
                                         : results_load(file, &records);
    size_t i;
    json_t *r;
    if (status == MAPP_OK) json_array_foreach(records, i, r) {
        json_object_set_new(r, "source", json_string(args->cli.positional[k]));
        json_array_append(all, r);
      }
    json_decref(records);
    free(file);
  }
  if (status == MAPP_OK) {
    unlink(target); /* a fresh combination, not appended to an older one */
    for (size_t i = 0; status == MAPP_OK && i < json_array_size(all); ++i)
      status = results_append(target, json_array_get(all, i));
  }
  json_decref(all);
  if (status == MAPP_OK) *combined = target;
  else free(target);
  return status;
}

int verb_report(int argc, char **argv) {
  const char *reference = NULL, *out = NULL;
  selection select = {0};
  const mapp_option opts[] = {
      PLOT_REFERENCE_OPTION(&reference),
      SELECTION_OPTIONS(&select),
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &out, .default_text = "the results folder",
       .help = "write the report (of one or several folders combined) into this folder"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("report", "RESULTS_DIR|RESULTS.jsonl...",
                          "Write RESULTS/report.md (machine, a table per app, the figures in PNG, SVG and PDF,\n"
                          "the runs that failed with their logs; plots are drawn first when results.jsonl is\n"
                          "newer than them) and RESULTS/results.csv. Several folders are combined into --out.",
                          opts, 1, 64, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown && args.cli.positional_count > 1 && !out)
    status = mapp_fail(MAPP_ERR_INPUT, "report of %d results folders needs --out FOLDER for the combined report",
                       args.cli.positional_count);
  char *combined = NULL;
  if (status == MAPP_OK && !args.help_shown && out) status = combine(&args, out, &combined);
  if (status == MAPP_OK && !args.help_shown) status = report(combined ? combined : args.cli.positional[0], reference, &select);
  free(combined);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
