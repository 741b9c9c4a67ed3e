/* mapp report RESULTS: report.md and report.html (machine, one table per
 * app, the spec's tables, the figures, the failed runs with their commands
 * and log tails: one content, two renderings, doc.h) and results.csv (one
 * row per record) for a results folder; each spec table also as
 * plots/APP-NAME.csv. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "coverage.h"
#include "doc.h"
#include "fsutil.h"
#include "headline.h"
#include "history.h"
#include "historydb.h"
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

/* ---------------------------------------------------------------- the report's sections (doc.h) */

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
static void write_placement(doc *d, const json_t *records) {
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
  doc_cell(d, "cores and GPUs");
  doc_cell(d, "%s", joined ? joined : "not recorded");
  doc_row_end(d);
  doc_cell(d, "oversubscribed runs");
  doc_cell(d, "%zu of %zu (ranks x threads beyond the cores given, or ranks sharing a GPU; hollow in the figures)",
           over, json_array_size(records));
  doc_row_end(d);
  free(joined);
  strv_free(&seen);
}

/* Runs launched more than once (retries:): the flaky configurations, those
 * whose run passed only after a retry, and the timeouts. */
static void write_retries(doc *d, const json_t *records) {
  strv flaky = {0};
  size_t i, retried = 0, timeouts = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    size_t attempts = json_array_size(json_object_get(r, "attempts"));
    const char *outcome = json_string_value(json_object_get(r, "outcome"));
    timeouts += outcome && strcmp(outcome, "timeout") == 0;
    if (attempts < 2) continue;
    ++retried;
    char *config = historydb_config_key(r); /* "heat mpi/serial tiny weak n1 t1" */
    if (config && outcome && strcmp(outcome, "ok") == 0 && !strv_contains(&flaky, config)) strv_push(&flaky, config);
    free(config);
  }
  char *listed = flaky.count ? strv_join(&flaky, ", ") : NULL;
  doc_cell(d, "retried runs");
  doc_cell(d, "%zu of %zu launched more than once (retries); %zu flaky configuration%s (passed only after a retry)%s%s; "
           "%zu timed out", retried, json_array_size(records), flaky.count, flaky.count == 1 ? "" : "s",
           listed ? ": " : "", listed ? listed : "", timeouts);
  doc_row_end(d);
  free(listed);
  strv_free(&flaky);
}

/* Runs on a simulated cluster: their figures are predictions, in series of
 * their own (the setting "simulated:ENV"), on the platforms they name. */
static void write_predictions(doc *d, const json_t *records) {
  strv platforms = {0};
  size_t i, simulated = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    if (!json_is_true(json_object_get(r, "simulated"))) continue;
    ++simulated;
    const json_t *sim = json_object_get(r, "simulation");
    char *text = str_printf("%s (env %s)", text_or(sim, "platform"), text_or(sim, "env"));
    if (text && !strv_contains(&platforms, text)) strv_push(&platforms, text);
    free(text);
  }
  if (simulated) {
    char *listed = strv_join(&platforms, "; ");
    doc_cell(d, "predictions");
    doc_cell(d, "%zu of %zu runs simulated by SimGrid SMPI on %s: their figures are predictions, not measurements, "
             "in series of their own (setting simulated:ENV)", simulated, json_array_size(records), listed ? listed : "?");
    doc_row_end(d);
    free(listed);
  }
  strv_free(&platforms);
}

static void write_machine(doc *d, const json_t *records, const speedup_refs *refs) {
  static const char *const rows[][2] = {{"hosts", "host"}, {"compilers", "compiler"}, {"flags", "flags"},
                                        {"build types", "build_type"}, {"git revisions", "git_revision"}};
  doc_heading(d, 2, "Machine");
  doc_table_plain(d, "ll");
  doc_cell(d, "records");
  doc_cell(d, "%zu", json_array_size(records));
  doc_row_end(d);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    char *values = distinct(records, rows[i][1]);
    doc_cell(d, "%s", rows[i][0]);
    doc_cell(d, "%s", values ? values : "?");
    doc_row_end(d);
    free(values);
  }
  const json_t *first = json_array_get(records, 0), *last = json_array_get(records, json_array_size(records) - 1);
  const char *from = json_string_value(json_object_get(first, "time"));
  const char *to = json_string_value(json_object_get(last, "time"));
  doc_cell(d, "ran");
  doc_cell(d, "%s to %s", from ? from : "?", to ? to : "?");
  doc_row_end(d);
  write_placement(d, records);
  write_retries(d, records);
  write_predictions(d, records);
  char *listed = speedup_refs_format(refs);
  if (refs->count > 1) {
    doc_cell(d, "speedup references");
    doc_cell(d, "%s (each app: the first its results contain)", listed ? listed : "?");
  } else {
    doc_cell(d, "speedup reference");
    doc_cell(d, "%s", refs->count && listed ? listed : "none given");
  }
  doc_row_end(d);
  doc_table_end(d);
  free(listed);
}

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
  if (failed) snprintf(verify, sizeof verify, "**%zu of %zu failed**", failed, g->runs);
  else snprintf(verify, sizeof verify, "pass");
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
  doc_cell(d, "%s%s", verdict_name(g->verdict.kind), interval);
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

/* The standard figures, then the spec's own (plots: figures:). */
static void write_figures(doc *d, const char *app, const strv *images, const sweep_spec *spec) {
  for (int kind = 0; kind < PLOT_KIND_COUNT; ++kind) write_figure(d, app, plot_kind_slug((plot_kind)kind), images);
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
static void write_artifacts(doc *d, const char *app, const json_t *records, const char *dir) {
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
      doc_para(d, "%s of %s/%s n=%lld t=%lld %s:", kind, text_or(rec, "variant"), text_or(rec, "backend"),
               json_integer_value(json_object_get(rec, "ranks")), json_integer_value(json_object_get(rec, "threads")),
               text_or(rec, "size"));
      doc_figure(d, kind, link_path(path, dir));
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

static int write_app(doc *d, const report_context *ctx, const group_table *t, const json_t *records, const char *app) {
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
  write_figures(d, app, ctx->images, ctx->spec);
  return MAPP_OK;
}

/* ---------------------------------------------------------------- failures */

/* Runs whose log tail and command the report shows (the table lists them all). */
enum { FAILURES_SHOWN = 20, LOG_TAIL_LINES = 20, LOG_TAIL_BYTES = 16384 };

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

/* The last LOG_TAIL_LINES lines of the file (malloc'd); NULL when it cannot
 * be read. Only its last LOG_TAIL_BYTES are read: a log may be huge. */
static char *file_tail(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = malloc(LOG_TAIL_BYTES + 1);
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  long from = size > LOG_TAIL_BYTES ? size - LOG_TAIL_BYTES : 0;
  size_t got = text && size >= 0 && fseek(f, from, SEEK_SET) == 0 ? fread(text, 1, LOG_TAIL_BYTES, f) : 0;
  bool ok = text && size >= 0 && !ferror(f);
  fclose(f);
  if (!ok) {
    free(text);
    return NULL;
  }
  while (got && text[got - 1] == '\n') --got;
  text[got] = '\0';
  size_t start = got, lines = 0;
  while (start > 0 && !(text[start - 1] == '\n' && ++lines == LOG_TAIL_LINES)) --start;
  /* read from the middle of a line: start after its end (unless it is the only line) */
  if (start == 0 && from > 0 && strchr(text, '\n')) start = strcspn(text, "\n") + 1;
  memmove(text, text + start, got - start + 1);
  return text;
}

/* The tail of a run's log: where its record says, else in runs/ of the
 * results folder (a folder moved since, or combined from others). */
static char *log_tail(const char *log, const char *dir, char **found) {
  char *tail = file_tail(log);
  *found = tail ? strdup(log) : NULL;
  if (tail) return tail;
  const char *slash = strrchr(log, '/');
  char *runs = path_join(dir, "runs"), *beside = runs ? path_join(runs, slash ? slash + 1 : log) : NULL;
  tail = beside ? file_tail(beside) : NULL;
  if (tail) *found = beside;
  else free(beside);
  free(runs);
  return tail;
}

/* A failed run's command and the end of its log. */
static void write_failure_detail(doc *d, const json_t *r, const char *failure, const char *dir) {
  const char *setting = json_string_value(json_object_get(r, "setting"));
  doc_heading(d, 3, "%s %s/%s n=%lld t=%lld %s%s%s rep %lld: %s", text_or(r, "app"), text_or(r, "variant"),
              text_or(r, "backend"), (long long)json_integer_value(json_object_get(r, "ranks")),
              (long long)json_integer_value(json_object_get(r, "threads")), text_or(r, "size"), setting ? " " : "",
              setting ? setting : "", (long long)json_integer_value(json_object_get(r, "repetition")), failure);
  const char *launch = json_string_value(json_object_get(r, "launch"));
  if (!launch) launch = json_string_value(json_object_get(r, "command"));
  if (launch) {
    doc_para(d, "To reproduce it, from the folder the sweep ran in:");
    doc_code(d, "sh", launch);
  }
  const char *log = json_string_value(json_object_get(r, "log"));
  char *found = NULL, *tail = log ? log_tail(log, dir, &found) : NULL;
  if (tail) {
    size_t lines = tail[0] != '\0';
    for (const char *c = tail; *c; ++c) lines += *c == '\n';
    doc_para(d, "The last %zu line%s of `%s`:", lines, lines == 1 ? "" : "s", found ? found : log);
    doc_code(d, "", tail[0] ? tail : "(empty)");
  } else if (log) {
    doc_para(d, "Its log `%s` cannot be read.", log);
  } else {
    doc_para(d, "Its record names no log.");
  }
  free(tail);
  free(found);
}

static void write_failure_row(doc *d, const json_t *r, const char *failure) {
  const char *setting = json_string_value(json_object_get(r, "setting"));
  const char *log = json_string_value(json_object_get(r, "log"));
  doc_cell(d, "%s", text_or(r, "app"));
  doc_cell(d, "%s/%s", text_or(r, "variant"), text_or(r, "backend"));
  doc_cell(d, "%lld", (long long)json_integer_value(json_object_get(r, "ranks")));
  doc_cell(d, "%s", text_or(r, "size"));
  doc_cell(d, "%s", setting ? setting : "-");
  doc_cell(d, "%lld", (long long)json_integer_value(json_object_get(r, "repetition")));
  doc_cell(d, "%s", failure);
  doc_cell(d, log ? "`%s`" : "-%s", log ? log : "");
  doc_row_end(d);
}

/* Every run that did not pass: its configuration, what failed and its log;
 * then, for the first FAILURES_SHOWN, the command that reproduces it and the
 * end of its log. */
static void write_failures(doc *d, const json_t *records, const char *dir) {
  static const char *const columns[] = {"app", "variant/backend", "ranks", "size", "setting", "rep", "what failed", "log"};
  size_t i, failed = 0;
  const json_t *r;
  doc_heading(d, 2, "Failed runs");
  json_array_foreach(records, i, r) {
    const char *failure = failure_of(r);
    if (!failure) continue;
    if (failed++ == 0) {
      doc_table(d, "llllllll");
      for (size_t c = 0; c < sizeof columns / sizeof columns[0]; ++c) doc_cell(d, "%s", columns[c]);
      doc_row_end(d);
    }
    write_failure_row(d, r, failure);
  }
  if (!failed) {
    doc_para(d, "None: every run exited 0 and passed its verification, its baseline and its consistency checks.");
    return;
  }
  doc_table_end(d);
  size_t shown = 0;
  json_array_foreach(records, i, r) {
    const char *failure = failure_of(r);
    if (failure && shown++ < FAILURES_SHOWN) write_failure_detail(d, r, failure, dir);
  }
  if (failed > FAILURES_SHOWN)
    doc_para(d, "The other %zu failed runs: their logs are in the table above.", failed - FAILURES_SHOWN);
}

/* ---------------------------------------------------------------- report.md, report.html */

static int write_sections(doc *d, const report_context *ctx, const group_table *table, const coverage_table *coverage,
                          const json_t *records) {
  doc_heading(d, 1, "mapp results: %s", ctx->name);
  if (ctx->description) doc_para(d, "%s", ctx->description);
  MAPP_TRY(headline_write(d, table));
  coverage_write(d, coverage);
  coverage_write_missing(d, records);
  write_machine(d, records, ctx->refs);
  const char *apps[64];
  size_t napps = plot_apps(table, apps, 64);
  for (size_t i = 0; i < napps; ++i) {
    MAPP_TRY(write_app(d, ctx, table, records, apps[i]));
    write_artifacts(d, apps[i], records, ctx->dir);
  }
  /* the trend of each configuration across commits, when a history exists */
  MAPP_TRY(history_report_section(d, ctx->dir, records));
  write_failures(d, records, ctx->dir);
  doc_para(d, "Raw records: `results.jsonl`; one row per record: `results.csv`.");
  return MAPP_OK;
}

/* report.md and report.html: one pass over the content, two renderings. */
static int write_report(const char *md_path, const char *html_path, const report_context *ctx, const json_t *records) {
  group_table table;
  double precision = ctx->spec ? ctx->spec->measure.precision : VERDICT_DEFAULT_PRECISION;
  MAPP_TRY(stats_group_at(records, precision, &table));
  coverage_table coverage = {0};
  char *title = str_printf("mapp results: %s", ctx->name);
  int status = title ? coverage_collect(records, &coverage) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  doc d;
  if (status == MAPP_OK) status = doc_open(&d, ctx->dir, title, md_path, html_path);
  if (status == MAPP_OK) {
    status = write_sections(&d, ctx, &table, &coverage, records);
    int closed = doc_close(&d);
    if (status == MAPP_OK) status = closed;
  }
  coverage_table_free(&coverage);
  group_table_free(&table);
  free(title);
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
  char *html = dir ? path_join(dir, "report.html") : NULL;
  sweep_spec spec = {0};
  bool have_spec = false;
  speedup_refs refs = {0};
  strv images = {0};
  json_t *records = NULL;
  int status = name && md && csv && html ? results_load(results_file, &records) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && json_array_size(records) == 0) status = mapp_fail(MAPP_ERR_INPUT, "%s has no records", results_file);
  if (status == MAPP_OK) status = selection_filter_records(select, records);
  if (status == MAPP_OK) status = ensure_plots(results_file, reference, select, &images);
  if (status == MAPP_OK) status = plot_reference(dir, reference, &refs);
  if (status == MAPP_OK && refs.count == 0) status = speedup_refs_from_records(records, &refs);
  if (status == MAPP_OK) status = load_spec(dir, &spec, &have_spec);
  report_context ctx = {.dir = dir, .name = name, .description = spec.description, .refs = &refs, .images = &images,
                        .spec = have_spec ? &spec : NULL};
  if (status == MAPP_OK) status = write_report(md, html, &ctx, records);
  if (status == MAPP_OK) status = write_csv(csv, records);
  if (status == MAPP_OK) printf("%s\n%s\n%s\n", md, html, csv);
  json_decref(records);
  strv_free(&images);
  if (have_spec) spec_free(&spec);
  speedup_refs_free(&refs);
  free(csv);
  free(html);
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
                          "Write RESULTS/report.md and RESULTS/report.html (machine, a table per app, the\n"
                          "figures in PNG, SVG and PDF, the runs that failed with their commands and logs; plots\n"
                          "are drawn first when results.jsonl is newer than them; the HTML page stands alone,\n"
                          "figures inlined) and RESULTS/results.csv. Several folders are combined into --out.",
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
