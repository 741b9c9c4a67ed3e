/* mapp report RESULTS: report.md and report.html (machine, one table per
 * app, the spec's tables, the figures, the failed runs with their commands
 * and log tails: one content, two renderings, doc.h) and results.csv (one
 * row per record) for a results folder; each spec table also as
 * plots/APP-NAME.csv. Here: the verb (its options, folders combined, the
 * plots drawn first), results.csv and the report's sections in order; the
 * sections are written by report_machine.c, report_apps.c and
 * report_failures.c. */
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "coverage.h"
#include "doc.h"
#include "env.h"
#include "fsutil.h"
#include "headline.h"
#include "history.h"
#include "mapp_error.h"
#include "mdsummary.h"
#include "plot.h"
#include "plotdata.h"
#include "report_internal.h"
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

/* ---------------------------------------------------------------- report.md, report.html */

static int write_sections(doc *d, const report_context *ctx, const group_table *table,
                          const headline_sources *headlines, const coverage_table *coverage, const json_t *records) {
  doc_heading(d, 1, "mapp results: %s", ctx->name);
  if (ctx->description) doc_para(d, "%s", ctx->description);
  MAPP_TRY(headline_write(d, table, headlines));
  coverage_write(d, coverage);
  coverage_write_missing(d, records);
  report_write_machine(d, records, ctx->refs);
  const char *apps[64];
  size_t napps = plot_apps(table, apps, 64);
  for (size_t i = 0; i < napps; ++i) {
    MAPP_TRY(report_write_app(d, ctx, table, records, apps[i]));
    report_write_artifacts(d, apps[i], records, ctx->dir);
  }
  /* the trend of each configuration across commits, when a history exists */
  MAPP_TRY(history_report_section(d, ctx->dir, records));
  report_write_failures(d, records, ctx->dir);
  doc_para(d, "Raw records: `results.jsonl`; one row per record: `results.csv`.");
  return MAPP_OK;
}

/* What --format markdown asks: the summary for CI, linking report_url (NULL: report.html's path). */
typedef struct {
  bool markdown;
  const char *report_url;
  char *text; /* the summary written (malloc'd) */
} summary_request;

/* Each app's headline pair, from its --list on the environment's app path. */
static int query_headlines(const char *env_path, const group_table *table, headline_sources *headlines) {
  harness_env env;
  MAPP_TRY(env_load(env_path, &env));
  int status = headline_sources_query(table, &env, headlines);
  env_free(&env);
  return status;
}

/* report.md and report.html: one pass over the content, two renderings;
 * the summary (when asked) from the same groups and coverage. */
static int write_report(const char *md_path, const char *html_path, const report_context *ctx, const json_t *records,
                        summary_request *summary) {
  group_table table;
  double precision = ctx->spec ? ctx->spec->measure.precision : VERDICT_DEFAULT_PRECISION;
  MAPP_TRY(stats_group_at(records, precision, &table));
  coverage_table coverage = {0};
  headline_sources headlines = {0};
  char *title = str_printf("mapp results: %s", ctx->name);
  int status = title ? coverage_collect(records, &coverage) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = query_headlines(ctx->env_path, &table, &headlines);
  doc d;
  if (status == MAPP_OK) status = doc_open(&d, ctx->dir, title, md_path, html_path);
  if (status == MAPP_OK) {
    status = write_sections(&d, ctx, &table, &headlines, &coverage, records);
    int closed = doc_close(&d);
    if (status == MAPP_OK) status = closed;
  }
  if (status == MAPP_OK && summary->markdown)
    status = report_summary(ctx, &table, &headlines, &coverage, records, html_path, summary->report_url,
                            &summary->text);
  headline_sources_free(&headlines);
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

/* The paths written, or the summary: printed, and appended to a GitHub step summary. */
static int print_outcome(const char *md, const char *html, const char *csv, const summary_request *summary) {
  if (!summary->markdown) {
    printf("%s\n%s\n%s\n", md, html, csv);
    return MAPP_OK;
  }
  fputs(summary->text, stdout);
  return md_summary_append_step(summary->text);
}

static int report(const char *results_arg, const char *reference, const char *env_path, const selection *select,
                  summary_request *summary) {
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
  model_set models = {0};
  bool have_models = false;
  if (status == MAPP_OK) status = model_set_load(dir, &models, &have_models);
  report_context ctx = {.dir = dir, .name = name, .description = spec.description, .refs = &refs, .images = &images,
                        .spec = have_spec ? &spec : NULL, .models = &models, .env_path = env_path};
  if (status == MAPP_OK) status = write_report(md, html, &ctx, records, summary);
  model_set_free(&models);
  if (status == MAPP_OK) status = write_csv(csv, records);
  if (status == MAPP_OK) status = print_outcome(md, html, csv, summary);
  free(summary->text);
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
  const char *reference = NULL, *out = NULL, *format = "text", *env_path = NULL;
  summary_request summary = {0};
  selection select = {0};
  const mapp_option opts[] = {
      PLOT_REFERENCE_OPTION(&reference),
      SELECTION_OPTIONS(&select),
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &out, .default_text = "the results folder",
       .help = "write the report (of one or several folders combined) into this folder"},
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &env_path, .default_text = "envs/local.yaml",
       .help = "environment whose app path the apps are found on (each app's --list declares its headline)"},
      MD_FORMAT_OPTION(&format),
      MD_REPORT_URL_OPTION(&summary.report_url, "the path of RESULTS/report.html"),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("report", "RESULTS_DIR|RESULTS.jsonl...",
                          "Write RESULTS/report.md and RESULTS/report.html (machine, a table per app, the\n"
                          "figures in PNG, SVG and PDF, the runs that failed with their commands and logs; plots\n"
                          "are drawn first when results.jsonl is newer than them; the HTML page stands alone,\n"
                          "figures inlined) and RESULTS/results.csv. Several folders are combined into --out.\n"
                          "--format markdown: then print a summary for CI instead of the paths (the totals, the\n"
                          "headline, what got slower or faster across commits, failed runs, unchecked answers,\n"
                          "a link to report.html; under 60,000 characters), appended to $GITHUB_STEP_SUMMARY\n"
                          "too when that is set.",
                          opts, 1, 64, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown && args.cli.positional_count > 1 && !out)
    status = mapp_fail(MAPP_ERR_INPUT, "report of %d results folders needs --out FOLDER for the combined report",
                       args.cli.positional_count);
  char *combined = NULL;
  if (status == MAPP_OK && !args.help_shown && out) status = combine(&args, out, &combined);
  summary.markdown = strcmp(format, "markdown") == 0;
  if (status == MAPP_OK && !args.help_shown)
    status = report(combined ? combined : args.cli.positional[0], reference, env_path, &select, &summary);
  free(combined);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
