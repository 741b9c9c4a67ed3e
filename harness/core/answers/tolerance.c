#include "tolerance.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

static const char *const model_names[] = {
    [TOL_EXACT] = "exact", [TOL_ABS] = "abs",           [TOL_REL] = "rel",
    [TOL_ULP] = "ulp",     [TOL_ENVELOPE] = "envelope", [TOL_REL_MAX] = "rel-max"};
#define MODEL_COUNT (sizeof model_names / sizeof model_names[0])

int tolerance_parse_model(const char *text, tol_model *model) {
  for (size_t i = 0; i < MODEL_COUNT; ++i)
    if (strcmp(text, model_names[i]) == 0) {
      *model = (tol_model)i;
      return MAPP_OK;
    }
  return mapp_fail(MAPP_ERR_INPUT, "unknown tolerance model '%s' (choose exact, abs, rel, ulp, envelope or rel-max)",
                   text);
}

const char *tolerance_model_name(tol_model model) { return model_names[model]; }

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Maps a double to an integer whose order is the order of the doubles:
 * positive values keep their bits, negative ones are mirrored below zero,
 * so -0.0 and +0.0 both map to 0 and neighbours differ by 1. */
static int64_t ordered_bits(double x) {
  int64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits < 0 ? INT64_MIN - bits : bits;
}

uint64_t ulp_distance(double a, double b) {
  if (isnan(a) || isnan(b)) return same_bits(a, b) ? 0 : UINT64_MAX;
  int64_t ia = ordered_bits(a), ib = ordered_bits(b);
  /* The difference in unsigned arithmetic: -inf to +inf exceeds INT64_MAX. */
  return ia >= ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
}

static double abs_error(double a, double b) {
  if (same_bits(a, b)) return 0.0;
  if (isnan(a) || isnan(b)) return INFINITY;
  return fabs(a - b);
}

static double rel_error(double abs_err, double reference) {
  if (abs_err == 0.0) return 0.0;
  if (isinf(abs_err)) return INFINITY;
  return abs_err / fmax(fabs(reference), DBL_MIN);
}

bool value_within(double candidate, double reference, tolerance tol) {
  if (same_bits(candidate, reference) || tol.model == TOL_ENVELOPE) return true;
  if (tol.model == TOL_EXACT || isnan(candidate) || isnan(reference)) return false;
  double diff = abs_error(candidate, reference);
  switch (tol.model) {
  case TOL_ABS: return diff <= tol.bound;
  case TOL_REL:
    return fabs(reference) < DBL_MIN ? diff <= tol.bound : diff <= tol.bound * fabs(reference);
  case TOL_ULP: return (double)ulp_distance(candidate, reference) <= tol.bound;
  default: return false;
  }
}

/* The largest finite |value| of a dataset (0 for none). */
static double max_magnitude(const double *values, size_t count) {
  double top = 0.0;
  for (size_t i = 0; i < count; ++i)
    if (isfinite(values[i]) && fabs(values[i]) > top) top = fabs(values[i]);
  return top;
}

void compare_values(const double *candidate, const double *reference, size_t count, tolerance tol,
                    field_stats *s) {
  *s = (field_stats){.count = count};
  if (tol.model == TOL_REL_MAX) tol = (tolerance){TOL_ABS, tol.bound * max_magnitude(reference, count)};
  for (size_t i = 0; i < count; ++i) {
    double a = candidate[i], b = reference[i];
    double abs_err = abs_error(a, b), rel_err = rel_error(abs_err, b);
    uint64_t ulp = ulp_distance(a, b);
    if (abs_err > s->worst_abs) {
      s->worst_abs = abs_err;
      s->worst_abs_at = i;
    }
    if (rel_err > s->worst_rel) {
      s->worst_rel = rel_err;
      s->worst_rel_at = i;
    }
    if (ulp > s->worst_ulp) {
      s->worst_ulp = ulp;
      s->worst_ulp_at = i;
    }
    if (!value_within(a, b, tol) && s->violations++ == 0) s->first_violation_at = i;
  }
}

/* ---------------------------------------------------------------- files */

/* Applies the `tolerance` / `tolerance_bound` attributes of obj, if any. */
static int read_tolerance(hid_t obj, const char *where, tolerance *tol) {
  char *model = NULL;
  bool found;
  int status = h5_get_attr_string(obj, "tolerance", &model);
  if (status == MAPP_OK && model) status = tolerance_parse_model(model, &tol->model);
  free(model);
  if (status == MAPP_OK) status = h5_get_attr_double(obj, "tolerance_bound", &tol->bound, &found);
  if (status == MAPP_OK && !(tol->bound >= 0))
    status = mapp_fail(MAPP_ERR_INPUT, "%s: tolerance_bound must be >= 0, got %g", where, tol->bound);
  return status != MAPP_OK ? mapp_fail(status, "%s: bad tolerance attributes", where) : MAPP_OK;
}

static void apply_override(const tolerance_override *ovr, tolerance *tol) {
  if (!ovr) return;
  if (ovr->model_set) tol->model = ovr->model;
  if (ovr->bound_set) tol->bound = ovr->bound;
}

/* The candidate's dataset must exist with the baseline's shape. */
static int check_candidate_shape(hid_t cand, const compare_report *r, const char *name,
                                 const h5_shape *want) {
  char want_text[128], got_text[128];
  h5_shape_format(want, want_text, sizeof want_text);
  if (H5Lexists(cand, name, H5P_DEFAULT) <= 0)
    return mapp_fail(MAPP_ERR_INPUT, "dataset '%s': candidate %s does not have it (baseline %s has shape %s)",
                     name, r->candidate, r->baseline, want_text);
  h5_shape got;
  MAPP_TRY(h5_dataset_shape(cand, r->candidate, name, &got));
  h5_shape_format(&got, got_text, sizeof got_text);
  if (!h5_shape_equal(&got, want))
    return mapp_fail(MAPP_ERR_INPUT, "dataset '%s': candidate %s has shape %s, baseline %s has shape %s",
                     name, r->candidate, got_text, r->baseline, want_text);
  return MAPP_OK;
}

static int field_tolerance(hid_t base, const compare_report *r, const char *name, tolerance *tol) {
  hid_t dset = H5Dopen2(base, name, H5P_DEFAULT);
  if (dset < 0) return mapp_fail(MAPP_ERR_INPUT, "%s: cannot open dataset '%s'", r->baseline, name);
  char where[512];
  snprintf(where, sizeof where, "%s: dataset '%s'", r->baseline, name);
  int status = read_tolerance(dset, where, tol);
  H5Dclose(dset);
  return status;
}

/* Per-value models pass when no value is out of bounds; envelope judges
 * the field's norm against the -O0/-O3 pair stored with it. */
static int judge_field(hid_t base, const compare_report *r, const tolerance_override *ovr, const double *ref,
                       const double *got, field_result *f) {
  compare_values(got, ref, h5_shape_count(&f->shape), f->tol, &f->stats);
  f->passed = f->stats.violations == 0;
  if (f->tol.model != TOL_ENVELOPE) return MAPP_OK;
  double multiple = ovr && ovr->bound_set ? ovr->bound : -1.0;
  MAPP_TRY(envelope_judge_field(base, r->baseline, f->name, &f->shape, ref, got, multiple, &f->envelope));
  f->passed = f->envelope.result.passed;
  return MAPP_OK;
}

static int compare_field(hid_t base, hid_t cand, compare_report *r, tolerance root_tol,
                         const tolerance_override *ovr, field_result *f) {
  MAPP_TRY(h5_dataset_shape(base, r->baseline, f->name, &f->shape));
  MAPP_TRY(check_candidate_shape(cand, r, f->name, &f->shape));
  f->tol = root_tol;
  MAPP_TRY(field_tolerance(base, r, f->name, &f->tol));
  apply_override(ovr, &f->tol);
  /* exact has no bound: a --bound under it would be ignored while the user
   * believes the check is looser (or tighter) than it is. */
  if (ovr && ovr->bound_set && f->tol.model == TOL_EXACT)
    return mapp_fail(MAPP_ERR_INPUT, "--bound %g has no meaning under the exact model of dataset '%s' (%s): "
                                     "give --model abs, rel or ulp with it", ovr->bound, f->name, r->baseline);
  double *ref = NULL, *got = NULL;
  int status = h5_read_doubles(base, r->baseline, f->name, &f->shape, &ref);
  if (status == MAPP_OK) status = h5_read_doubles(cand, r->candidate, f->name, &f->shape, &got);
  if (status == MAPP_OK) status = judge_field(base, r, ovr, ref, got, f);
  free(ref);
  free(got);
  return status;
}

static int compare_open_files(hid_t base, hid_t cand, const tolerance_override *ovr, compare_report *r) {
  tolerance root_tol = {TOL_EXACT, 0.0};
  MAPP_TRY(read_tolerance(base, r->baseline, &root_tol));
  strv names = {0};
  int status = h5_list_datasets(base, r->baseline, &names);
  if (status == MAPP_OK && names.count == 0)
    status = mapp_fail(MAPP_ERR_INPUT, "baseline %s has no datasets", r->baseline);
  if (status == MAPP_OK && !(r->fields = calloc(names.count, sizeof *r->fields)))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  r->passed = true;
  for (size_t i = 0; status == MAPP_OK && i < names.count; ++i) {
    if (envelope_is_o3_path(names.items[i])) continue; /* the -O3 half of an envelope field */
    field_result *f = &r->fields[r->nfields++];
    f->name = strdup(names.items[i]);
    status = f->name ? compare_field(base, cand, r, root_tol, ovr, f) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    r->passed = r->passed && f->passed;
  }
  strv_free(&names);
  return status;
}

int compare_files(const char *baseline, const char *candidate, const tolerance_override *ovr,
                  compare_report *r) {
  *r = (compare_report){.baseline = strdup(baseline), .candidate = strdup(candidate)};
  if (!r->baseline || !r->candidate) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  h5_quiet();
  hid_t base = -1, cand = -1;
  int status = h5_open_read(baseline, &base);
  if (status == MAPP_OK) status = h5_open_read(candidate, &cand);
  if (status == MAPP_OK) status = compare_open_files(base, cand, ovr, r);
  h5_close(cand);
  h5_close(base);
  if (status != MAPP_OK) r->passed = false;
  return status;
}

static size_t longest_name(const compare_report *r) {
  size_t width = 0;
  for (size_t i = 0; i < r->nfields; ++i) {
    size_t len = strlen(r->fields[i].name);
    if (len > width) width = len;
  }
  return width;
}

/* " at [3,4]" where the worst absolute error is, "" when there is none. */
static void worst_where(const field_result *f, char *buf, size_t len) {
  char index[120];
  h5_index_format(&f->shape, f->stats.worst_abs_at, index, sizeof index);
  snprintf(buf, len, "%s%s", f->stats.worst_abs > 0 ? " at " : "", f->stats.worst_abs > 0 ? index : "");
}

static void print_envelope_field(const field_result *f, int width, FILE *out) {
  const mapp_envelope_result *e = &f->envelope.result;
  char where[128];
  worst_where(f, where, sizeof where);
  fprintf(out, "%-*s  model=envelope envelope=%.3g (set by %s) difference=%.3g bound=%.3g (%g x max(envelope, floor %g))  "
               "worst_abs=%.3g%s  ", width, f->name, e->envelope, f->envelope.member, e->difference, e->bound,
          f->envelope.params.multiple, f->envelope.params.floor, f->stats.worst_abs, where);
  if (e->passed) fprintf(out, "PASS\n");
  else fprintf(out, "FAIL (difference %.3g > bound %.3g)\n", e->difference, e->bound);
}

static void print_field(const field_result *f, int width, FILE *out) {
  if (f->tol.model == TOL_ENVELOPE) {
    print_envelope_field(f, width, out);
    return;
  }
  const field_stats *s = &f->stats;
  char where[128];
  worst_where(f, where, sizeof where);
  fprintf(out, "%-*s  model=%s bound=%g  worst_abs=%.3g%s  worst_rel=%.3g  ulp=%llu  ", width, f->name,
          tolerance_model_name(f->tol.model), f->tol.bound, s->worst_abs, where, s->worst_rel,
          (unsigned long long)s->worst_ulp);
  if (f->passed) {
    fprintf(out, "PASS\n");
    return;
  }
  char first[120];
  h5_index_format(&f->shape, s->first_violation_at, first, sizeof first);
  fprintf(out, "FAIL (%zu of %zu values out of bounds, first at %s)\n", s->violations, s->count, first);
}

void compare_report_print(const compare_report *r, FILE *out) {
  int width = (int)longest_name(r);
  for (size_t i = 0; i < r->nfields; ++i) print_field(&r->fields[i], width, out);
}

/* Non-finite errors (a NaN against a number) are null: JSON has no inf. */
static json_t *json_number(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *index_json(const h5_shape *shape, size_t flat) {
  json_t *index = json_array();
  hsize_t coords[H5S_MAX_RANK];
  h5_unflatten(shape, flat, coords);
  for (int i = 0; i < shape->ndims; ++i) json_array_append_new(index, json_integer((json_int_t)coords[i]));
  return index;
}

/* An envelope field's bound is the effective one, multiple x max(envelope, floor). */
static json_t *field_json(const field_result *f) {
  const field_stats *s = &f->stats;
  bool envelope = f->tol.model == TOL_ENVELOPE;
  json_t *j = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:b}", "name", f->name, "model",
                        tolerance_model_name(f->tol.model), "bound",
                        json_number(envelope ? f->envelope.result.bound : f->tol.bound), "worst_abs",
                        json_number(s->worst_abs), "worst_abs_at", index_json(&f->shape, s->worst_abs_at),
                        "worst_rel", json_number(s->worst_rel), "worst_ulp",
                        (json_int_t)(s->worst_ulp > INT64_MAX ? INT64_MAX : s->worst_ulp), "violations",
                        (json_int_t)s->violations, "passed", f->passed);
  if (j && envelope) {
    json_object_set_new(j, "envelope", json_number(f->envelope.result.envelope));
    json_object_set_new(j, "envelope_member", json_string(f->envelope.member));
    json_object_set_new(j, "difference", json_number(f->envelope.result.difference));
    json_object_set_new(j, "multiple", json_number(f->envelope.params.multiple));
    json_object_set_new(j, "floor", json_number(f->envelope.params.floor));
  }
  return j;
}

json_t *compare_report_json(const compare_report *r) {
  double worst_abs = 0, worst_rel = 0;
  uint64_t worst_ulp = 0;
  json_t *fields = json_array();
  for (size_t i = 0; i < r->nfields; ++i) {
    const field_stats *s = &r->fields[i].stats;
    worst_abs = fmax(worst_abs, s->worst_abs);
    worst_rel = fmax(worst_rel, s->worst_rel);
    if (s->worst_ulp > worst_ulp) worst_ulp = s->worst_ulp;
    json_array_append_new(fields, field_json(&r->fields[i]));
  }
  return json_pack("{s:s, s:s, s:o, s:o, s:I, s:o}", "status", r->passed ? "pass" : "fail", "file",
                   r->baseline, "worst_abs", json_number(worst_abs), "worst_rel", json_number(worst_rel),
                   "worst_ulp", (json_int_t)(worst_ulp > INT64_MAX ? INT64_MAX : worst_ulp), "fields",
                   fields);
}

void compare_report_free(compare_report *r) {
  for (size_t i = 0; i < r->nfields; ++i) free(r->fields[i].name);
  free(r->fields);
  free(r->baseline);
  free(r->candidate);
  *r = (compare_report){0};
}
