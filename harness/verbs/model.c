/* mapp model RESULTS: a scaling model per series, fitted by Extra-P
 * (model.h), kept in RESULTS/models.json for the figures and the report,
 * and each prediction beside the points left out of the fit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "model.h"
#include "selection.h"
#include "verbs.h"

/* The distinct rank counts of the usable records above fit_max (all when
 * fit_max is 0), and predict_to, ascending. */
static int prediction_points(const json_t *records, long fit_max, long predict_to, long **points, size_t *n) {
  *n = 0;
  *points = malloc((json_array_size(records) + 1) * sizeof **points);
  if (!*points) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    long p = (long)json_integer_value(json_object_get(r, "ranks"));
    if (!export_usable(r) || (fit_max > 0 && p <= fit_max)) continue;
    bool seen = false;
    for (size_t k = 0; k < *n; ++k) seen |= (*points)[k] == p;
    if (!seen) (*points)[(*n)++] = p;
  }
  bool seen = false;
  for (size_t k = 0; k < *n; ++k) seen |= (*points)[k] == predict_to;
  if (!seen && predict_to > 0) (*points)[(*n)++] = predict_to;
  for (size_t a = 1; a < *n; ++a)
    for (size_t b = a; b > 0 && (*points)[b - 1] > (*points)[b]; --b) {
      long t = (*points)[b];
      (*points)[b] = (*points)[b - 1];
      (*points)[b - 1] = t;
    }
  return MAPP_OK;
}

/* The mean timed seconds of a series at p (what Extra-P fits: the mean of
 * the repetitions); NAN when the results have none. */
static double measured_mean(const json_t *records, const char *series, long p) {
  double sum = 0;
  size_t n = 0, i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    if (!export_usable(r) || (long)json_integer_value(json_object_get(r, "ranks")) != p) continue;
    char *name = export_series_name(r);
    if (name && !strcmp(name, series)) sum += export_timed_seconds(r), ++n;
    free(name);
  }
  return n ? sum / (double)n : NAN;
}

/* One row per series: its model of the timed seconds, the fit's quality,
 * and each prediction beyond the fit beside what was measured there. */
static void print_models(const json_t *records, const model_set *set, const long *points, size_t npoints) {
  printf("%-56s %-36s %7s %7s  %s\n", "series", "time(p) of the timed phase, s", "adj.R2", "SMAPE%",
         "beyond the fit: predicted / measured (error)");
  for (size_t i = 0; i < set->count; ++i) {
    const scaling_model *m = &set->items[i];
    if (strcmp(m->callpath, "timed") != 0) continue;
    char text[256];
    model_format(m, text, sizeof text);
    printf("%-56s %-36s %7.3f %7.1f ", m->series, text, m->ar2, m->smape);
    for (size_t k = 0; k < npoints; ++k) {
      double predicted = model_eval(m, (double)points[k]), measured = measured_mean(records, m->series, points[k]);
      if (isnan(measured)) printf(" p=%ld: %.4g", points[k], predicted);
      else
        printf(" p=%ld: %.4g / %.4g (%+.0f %%)", points[k], predicted, measured,
               100.0 * (predicted - measured) / measured);
    }
    printf("\n");
  }
}

static int write_models(const char *path, json_t *fits, long fit_max, long predict_to) {
  json_t *root = json_pack("{s:s, s:I, s:I, s:O}", "what",
                           "Extra-P models of each series' time against the rank count p (mapp model)", "fit_max_ranks",
                           (json_int_t)fit_max, "predict_to", (json_int_t)predict_to, "models", fits);
  if (!root) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int failed = json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  json_decref(root);
  return failed ? mapp_fail(MAPP_ERR_SYSTEM, "cannot write %s", path) : MAPP_OK;
}

static long largest_ranks(const json_t *records) {
  long top = 0;
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    long p = (long)json_integer_value(json_object_get(r, "ranks"));
    if (export_usable(r) && p > top) top = p;
  }
  return top;
}

typedef struct {
  long fit_max, predict_to;
} model_options;

static int fit_all(const char *results, const json_t *records, const model_options *opt) {
  char *python = NULL, *dir = path_is_dir(results) ? strdup(results) : path_dirname(results);
  char *extrap_dir = dir ? path_join(dir, "models") : NULL, *models_path = dir ? path_join(dir, "models.json") : NULL;
  strv written = {0}, series = {0}, skipped = {0};
  long *points = NULL;
  size_t npoints = 0;
  json_t *fits = json_array();
  int status = extrap_dir && models_path && fits ? model_python(&python) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK)
    status = export_extrap(records, extrap_dir, EXPORT_MIN_EXTRAP_POINTS, opt->fit_max, &written, &series, &skipped);
  if (status == MAPP_OK && !written.count) {
    char *why = export_skipped_text(&skipped);
    status = mapp_fail(MAPP_ERR_INPUT, "too few rank counts for a fit (%d at least%s) in every series: %s",
                       EXPORT_MIN_EXTRAP_POINTS, opt->fit_max > 0 ? " up to --fit-max-ranks" : "",
                       why ? why : "no usable record");
    free(why);
  }
  long predict_to = opt->predict_to > 0 ? opt->predict_to : largest_ranks(records);
  if (status == MAPP_OK) status = prediction_points(records, opt->fit_max, predict_to, &points, &npoints);
  for (size_t i = 0; status == MAPP_OK && i < written.count; ++i) {
    const char *exponents = strstr(series.items[i], " strong ") ? MODEL_STRONG_EXPONENTS : MODEL_WEAK_EXPONENTS;
    status = model_fit_file(python, written.items[i], series.items[i], exponents, points, npoints, fits);
  }
  if (status == MAPP_OK) status = write_models(models_path, fits, opt->fit_max, predict_to);
  model_set set = {0};
  bool found = false;
  if (status == MAPP_OK) status = model_set_load(dir, &set, &found);
  if (status == MAPP_OK) print_models(records, &set, points, npoints);
  for (size_t i = 0; status == MAPP_OK && i < skipped.count; ++i)
    printf("left out (fewer than %d rank counts): %s\n", EXPORT_MIN_EXTRAP_POINTS, skipped.items[i]);
  if (status == MAPP_OK) printf("models: %s (%zu series, Extra-P's input in %s)\n", models_path, written.count, extrap_dir);
  model_set_free(&set);
  json_decref(fits);
  free(points);
  strv_free(&written);
  strv_free(&series);
  strv_free(&skipped);
  free(python);
  free(dir);
  free(extrap_dir);
  free(models_path);
  return status;
}

int verb_model(int argc, char **argv) {
  model_options opt = {0};
  selection select = {0};
  const mapp_option opts[] = {
      {.name = "fit-max-ranks", .kind = MAPP_OPT_LONG, .dest = &opt.fit_max, .min = 0, .max = 1L << 30,
       .help = "fit on the points up to this many ranks, and check the predictions at the rest (0: fit on all)"},
      {.name = "predict-to", .kind = MAPP_OPT_LONG, .dest = &opt.predict_to, .min = 0, .max = 1L << 30,
       .help = "the rank count the figures draw the models to (0: the largest of the results)"},
      SELECTION_OPTIONS(&select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("model", "RESULTS_DIR|RESULTS.jsonl",
                          "Fit a scaling model per series (app, variant, backend, size, scaling, threads, setting)\n"
                          "of its time against the rank count p with Extra-P: the timed phase and each phase.\n"
                          "Needs 5 rank counts a series and the venv of ci/analysis-venv.sh. Writes\n"
                          "RESULTS/models.json (mapp plot draws each model through its points, mapp report names\n"
                          "its leading term) and prints each model, its fit and its predictions beyond the fit.",
                          opts, 1, 1, false, argc, argv, &args);
  json_t *records = NULL;
  if (status == MAPP_OK && !args.help_shown) status = verb_load_records(args.cli.positional[0], &select, &records);
  if (status == MAPP_OK && !args.help_shown) status = fit_all(args.cli.positional[0], records, &opt);
  json_decref(records);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
