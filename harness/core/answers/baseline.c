#include "baseline.h"

#include <stdlib.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "paths.h"

char *baseline_path(const char *app, const char *case_name) {
  char *dir = paths_baseline_dir();
  char *path = dir ? str_printf("%s/%s/%s.h5", dir, app, case_name) : NULL;
  free(dir);
  return path;
}

static int status_object(const char *status, const char *file, json_t **out) {
  *out = json_pack("{s:s, s:s?}", "status", status, "file", file);
  return *out ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* A comparison that could not be made (answer missing, other shape) fails
 * the run; the message says why. */
static int failed_comparison(const char *file, json_t **out) {
  MAPP_TRY(status_object("fail", file, out));
  json_object_set_new(*out, "error", json_string(mapp_error_message()));
  mapp_error_clear();
  return MAPP_OK;
}

/* A program whose answers are another's in another operation order (a
 * peer: its record's baseline_tolerance, {"model": ..., "bound": ...})
 * is checked at the tolerance it states, not the baseline's own (and a
 * sweep checks it against its mini-app's answer at the same). */
int baseline_stated_tolerance(const json_t *record, tolerance_override *ovr, bool *stated) {
  const json_t *t = json_object_get(record, "baseline_tolerance");
  *stated = t != NULL;
  if (!t) return MAPP_OK;
  const char *model = json_string_value(json_object_get(t, "model"));
  const json_t *bound = json_object_get(t, "bound");
  if (!model || !json_is_number(bound) || !(json_number_value(bound) >= 0))
    return mapp_fail(MAPP_ERR_INPUT, "the record's baseline_tolerance needs a model and a bound >= 0");
  MAPP_TRY(tolerance_parse_model(model, &ovr->model));
  ovr->model_set = ovr->bound_set = true;
  ovr->bound = json_number_value(bound);
  return MAPP_OK;
}

int baseline_check_run(const json_t *record, const char *baseline_app, const char *case_name, const char *output,
                       compare_report *report, json_t **out) {
  *report = (compare_report){0};
  const char *app = baseline_app ? baseline_app : json_string_value(json_object_get(record, "app"));
  if (!app || !case_name) return status_object("none", NULL, out);
  char *file = baseline_path(app, case_name);
  if (!file) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  tolerance_override ovr = {0};
  bool stated = false;
  int status;
  if (!path_exists(file)) {
    status = status_object("missing", file, out);
  } else if (baseline_stated_tolerance(record, &ovr, &stated) != MAPP_OK) {
    status = failed_comparison(file, out);
  } else if (compare_files(file, output, stated ? &ovr : NULL, report) != MAPP_OK) {
    status = failed_comparison(file, out);
  } else {
    *out = compare_report_json(report);
    status = *out ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  free(file);
  return status;
}
