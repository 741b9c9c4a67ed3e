/* Scaling models fitted by Extra-P, and read back for figures (model.h). */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "paths.h"
#include "proc.h"

double model_eval(const scaling_model *m, double p) {
  double y = m->constant;
  for (size_t i = 0; i < m->nterms; ++i) {
    const model_term *t = &m->terms[i];
    y += t->coefficient * pow(p, t->p_exponent) * (t->log2_exponent != 0.0 ? pow(log2(p), t->log2_exponent) : 1.0);
  }
  return y;
}

void model_format(const scaling_model *m, char *buf, size_t len) {
  int used = snprintf(buf, len, "%.3g", m->constant);
  for (size_t i = 0; i < m->nterms && used > 0 && (size_t)used < len; ++i) {
    const model_term *t = &m->terms[i];
    used += snprintf(buf + used, len - (size_t)used, " %s %.3g", t->coefficient < 0 ? "-" : "+", fabs(t->coefficient));
    if (t->p_exponent == 1.0) used += snprintf(buf + used, len - (size_t)used, " * p");
    else if (t->p_exponent != 0.0) used += snprintf(buf + used, len - (size_t)used, " * p^%g", t->p_exponent);
    if (t->log2_exponent == 1.0) used += snprintf(buf + used, len - (size_t)used, " * log2(p)");
    else if (t->log2_exponent != 0.0) used += snprintf(buf + used, len - (size_t)used, " * log2(p)^%g", t->log2_exponent);
  }
}

char *model_gnuplot(const scaling_model *m) {
  char *expr = str_printf("(%.9g", m->constant);
  for (size_t i = 0; expr && i < m->nterms; ++i) {
    const model_term *t = &m->terms[i];
    char *longer = str_printf("%s + %.9g*x**%.6g*(log(x)/log(2.0))**%.6g", expr, t->coefficient, t->p_exponent,
                              t->log2_exponent);
    free(expr);
    expr = longer;
  }
  char *closed = expr ? str_printf("%s)", expr) : NULL;
  free(expr);
  return closed;
}

/* ---------------------------------------------------------------- fitting */

static char *venv_python(const char *venv) { return str_printf("%s/bin/python", venv); }

int model_python(char **python) {
  *python = NULL;
  const char *named = getenv("MAPP_ANALYSIS_VENV");
  char *script = paths_source_file("ci/analysis-venv.sh");
  if (named && named[0]) { /* a venv named is the one used, or an error */
    char *candidate = venv_python(named);
    int status = candidate && access(candidate, X_OK) == 0
                     ? MAPP_OK
                     : mapp_fail(MAPP_ERR_INPUT, "MAPP_ANALYSIS_VENV=%s has no bin/python (make it with %s %s)", named,
                                 script ? script : "ci/analysis-venv.sh", named);
    if (status == MAPP_OK) *python = candidate;
    else free(candidate);
    free(script);
    return status;
  }
  char *bin = paths_bin_dir(), *source = paths_source_file("build/analysis-venv");
  char *candidates[2] = {bin ? str_printf("%s/../analysis-venv/bin/python", bin) : NULL,
                         source ? venv_python(source) : NULL};
  for (size_t i = 0; i < 2 && !*python; ++i)
    if (candidates[i] && access(candidates[i], X_OK) == 0) *python = strdup(candidates[i]);
  int status = *python ? MAPP_OK
                       : mapp_fail(MAPP_ERR_INPUT, "no analysis venv (Extra-P, Thicket) at %s: make it with %s, or set "
                                                   "MAPP_ANALYSIS_VENV",
                                   source ? source : "build/analysis-venv", script ? script : "ci/analysis-venv.sh");
  for (size_t i = 0; i < 2; ++i) free(candidates[i]);
  free(bin);
  free(source);
  free(script);
  return status;
}

static int fit_argv(const char *python, const char *file, const char *exponents, const long *predict, size_t npredict,
                    strv *argv) {
  char *script = paths_source_file("harness/analysis/extrap_fit.py");
  char *poly = str_printf("--poly-exponents=%s", exponents);
  int status = script && poly ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  const char *fixed[] = {python, script, file, poly};
  for (size_t i = 0; status == MAPP_OK && i < 4; ++i) status = strv_push(argv, fixed[i]);
  if (status == MAPP_OK && npredict) status = strv_push(argv, "--predict");
  for (size_t i = 0; status == MAPP_OK && i < npredict; ++i) {
    char p[32];
    snprintf(p, sizeof p, "%ld", predict[i]);
    status = strv_push(argv, p);
  }
  free(script);
  free(poly);
  return status;
}

/* extrap_fit.py's lines: a JSON object per callpath. */
static int parse_fits(const char *text, const char *series, json_t *fits) {
  const char *line = text;
  while (line && *line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len) {
      json_error_t err;
      json_t *fit = json_loadb(line, len, 0, &err);
      if (!json_is_object(fit)) {
        json_decref(fit);
        return mapp_fail(MAPP_ERR_SYSTEM, "extrap_fit.py printed a line that is no JSON object: %.80s", line);
      }
      json_object_set_new(fit, "series", json_string(series));
      json_array_append_new(fits, fit);
    }
    line = end ? end + 1 : NULL;
  }
  return MAPP_OK;
}

int model_fit_file(const char *python, const char *file, const char *series, const char *exponents,
                   const long *predict, size_t npredict, json_t *fits) {
  strv argv = {0};
  char *text = NULL, *err_path = str_printf("%s.err", file);
  int status = err_path ? fit_argv(python, file, exponents, predict, npredict, &argv) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  proc_outcome out = {0};
  proc_request req = {.argv = &argv, .log_path = err_path};
  if (status == MAPP_OK) status = proc_capture(&req, &text, &out);
  if (status == MAPP_OK && out.exit_code != 0) {
    char *why = NULL;
    read_text_file(err_path, &why);
    char *nl = why ? strchr(why, '\n') : NULL;
    if (nl) *nl = '\0';
    status = mapp_fail(out.exit_code == 2 ? MAPP_ERR_INPUT : MAPP_ERR_SYSTEM, "Extra-P could not fit %s (%s): %s",
                       series, file, why && why[0] ? why : "see the .err file beside it");
    free(why);
  }
  if (status == MAPP_OK) status = parse_fits(text ? text : "", series, fits);
  if (status == MAPP_OK) unlink(err_path);
  free(text);
  free(err_path);
  strv_free(&argv);
  return status;
}

/* ---------------------------------------------------------------- models.json */

static double number_or_nan(const json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

static int read_model(const json_t *fit, scaling_model *m) {
  *m = (scaling_model){.series = json_string_value(json_object_get(fit, "series")),
                       .callpath = json_string_value(json_object_get(fit, "callpath")),
                       .text = json_string_value(json_object_get(fit, "model")),
                       .leading = json_string_value(json_object_get(fit, "leading")),
                       .constant = number_or_nan(json_object_get(fit, "constant")),
                       .ar2 = number_or_nan(json_object_get(json_object_get(fit, "quality"), "AR2")),
                       .smape = number_or_nan(json_object_get(json_object_get(fit, "quality"), "SMAPE"))};
  const json_t *terms = json_object_get(fit, "terms");
  if (!m->series || !m->callpath || !m->text || isnan(m->constant) || !json_is_array(terms))
    return mapp_fail(MAPP_ERR_INPUT, "models.json: a model lacks series, callpath, model, constant or terms");
  m->nterms = json_array_size(terms);
  m->terms = calloc(m->nterms ? m->nterms : 1, sizeof *m->terms);
  if (!m->terms) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < m->nterms; ++i) {
    const json_t *t = json_array_get(terms, i);
    m->terms[i] = (model_term){number_or_nan(json_object_get(t, "coefficient")),
                               number_or_nan(json_object_get(t, "p_exponent")),
                               number_or_nan(json_object_get(t, "log2_exponent"))};
  }
  if (!m->leading) m->leading = "?";
  return MAPP_OK;
}

int model_set_load(const char *results_dir, model_set *set, bool *found) {
  *set = (model_set){0};
  *found = false;
  char *path = path_join(results_dir, "models.json");
  if (!path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (!path_exists(path)) {
    free(path);
    return MAPP_OK;
  }
  json_error_t err;
  set->root = json_load_file(path, 0, &err);
  const json_t *fits = json_object_get(set->root, "models");
  int status = json_is_array(fits) ? MAPP_OK
                                   : mapp_fail(MAPP_ERR_INPUT, "%s: not a models file (%s)", path,
                                               set->root ? "no \"models\" array" : err.text);
  free(path);
  if (status == MAPP_OK && !(set->items = calloc(json_array_size(fits) + 1, sizeof *set->items)))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; status == MAPP_OK && i < json_array_size(fits); ++i) {
    status = read_model(json_array_get(fits, i), &set->items[i]);
    if (status == MAPP_OK) ++set->count;
  }
  set->fit_max_ranks = (long)json_integer_value(json_object_get(set->root, "fit_max_ranks"));
  set->predict_to = (long)json_integer_value(json_object_get(set->root, "predict_to"));
  if (status != MAPP_OK) model_set_free(set);
  else *found = true;
  return status;
}

const scaling_model *model_find(const model_set *set, const char *series, const char *callpath) {
  for (size_t i = 0; i < set->count; ++i)
    if (!strcmp(set->items[i].series, series) && !strcmp(set->items[i].callpath, callpath)) return &set->items[i];
  return NULL;
}

void model_set_free(model_set *set) {
  for (size_t i = 0; i < set->count; ++i) free(set->items[i].terms);
  free(set->items);
  json_decref(set->root);
  *set = (model_set){0};
}
