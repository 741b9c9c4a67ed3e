/* Measurement settings of a sweep spec (measure.h). */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "verdict.h"

measure_spec measure_defaults(void) {
  return (measure_spec){.repetitions = 1, .precision = VERDICT_DEFAULT_PRECISION,
                        .max_repetitions = MEASURE_DEFAULT_MAX_REPETITIONS,
                        .max_seconds = MEASURE_DEFAULT_MAX_SECONDS};
}

/* A finite number in [min, max], with an optional trailing '%' when
 * percent is set (the number is then a percentage either way). */
static int parse_number(const yaml_map *m, const char *key, const char *text, bool percent, double min, double max,
                        double *out) {
  char *end;
  double x = strtod(text, &end);
  while (*end == ' ') ++end;
  if (percent && *end == '%') ++end;
  if (end == text || *end != '\0' || !isfinite(x) || x < min || x > max)
    return yaml_error_at(m, key, "'%s' must be a number from %g to %g%s, got '%s'", key, min, max,
                         percent ? " (a percentage)" : "", text);
  *out = percent ? x / 100.0 : x;
  return MAPP_OK;
}

static int get_number(const yaml_map *m, const char *key, bool percent, double min, double max, double *out) {
  char *text = NULL;
  MAPP_TRY(yaml_get_string(m, key, false, &text));
  int status = text ? parse_number(m, key, text, percent, min, max, out) : MAPP_OK;
  free(text);
  return status;
}

/* repetitions: N (>= 1) or auto. */
static int get_repetitions(const yaml_map *m, measure_spec *out) {
  char *text = NULL;
  MAPP_TRY(yaml_get_string(m, "repetitions", false, &text));
  int status = MAPP_OK;
  if (text && strcmp(text, "auto") == 0) {
    out->auto_repetitions = true;
    out->repetitions = VERDICT_MEDIAN_CI_MIN_N;
  } else if (text) {
    double n;
    status = parse_number(m, "repetitions", text, false, 1, 1e6, &n);
    if (status == MAPP_OK && n != floor(n))
      status = yaml_error_at(m, "repetitions", "'repetitions' must be a whole number or auto, got '%s'", text);
    if (status == MAPP_OK) out->repetitions = (long)n, out->auto_repetitions = false;
  }
  free(text);
  return status;
}

int measure_parse(const yaml_map *m, const measure_spec *inherited, measure_spec *out) {
  *out = *inherited;
  MAPP_TRY(get_number(m, "min_time", false, 0.0, 1e6, &out->min_time));
  MAPP_TRY(get_repetitions(m, out));
  MAPP_TRY(get_number(m, "precision", true, 0.01, 100.0, &out->precision));
  double max_reps = (double)out->max_repetitions;
  MAPP_TRY(get_number(m, "max_repetitions", false, 1, 1e6, &max_reps));
  out->max_repetitions = (long)max_reps;
  MAPP_TRY(get_number(m, "max_seconds", false, 0.001, 1e9, &out->max_seconds));
  MAPP_TRY(get_number(m, "time_limit", false, 0.001, 1e9, &out->time_limit));
  double retries = (double)out->retries;
  MAPP_TRY(get_number(m, "retries", false, 0, 100, &retries));
  if (retries != floor(retries))
    return yaml_error_at(m, "retries", "'retries' must be a whole number from 0 to 100, got %g", retries);
  out->retries = (long)retries;
  if (out->auto_repetitions && out->max_repetitions < out->repetitions)
    return yaml_error_at(m, "max_repetitions", "'max_repetitions' of %ld is below the %ld runs repetitions: auto "
                         "starts with (the fewest with a 95 %% interval of the median)",
                         out->max_repetitions, out->repetitions);
  return MAPP_OK;
}
