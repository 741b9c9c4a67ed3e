#include "envelope.h"

#include <math.h>

#include "mapp_error.h"

/* Sum of squares kept as scale^2 * ssq (LAPACK's dnrm2 update), so fields
 * of huge or tiny magnitude neither overflow nor underflow. */
typedef struct {
  double scale, ssq;
} norm_acc;

static void norm_add(norm_acc *a, double v) {
  double x = fabs(v);
  if (x == 0.0) return;
  if (a->scale < x) {
    a->ssq = 1.0 + a->ssq * (a->scale / x) * (a->scale / x);
    a->scale = x;
  } else {
    a->ssq += (x / a->scale) * (x / a->scale);
  }
}

static double norm_value(const norm_acc *a) { return a->scale * sqrt(a->ssq); }

double mapp_relative_l2(const double *x, const double *ref, size_t n) {
  norm_acc diff = {0.0, 0.0}, base = {0.0, 0.0};
  for (size_t i = 0; i < n; ++i) {
    if (!isfinite(x[i])) return INFINITY;
    norm_add(&diff, x[i] - ref[i]);
    norm_add(&base, ref[i]);
  }
  double b = norm_value(&base);
  return b > 0.0 ? norm_value(&diff) / b : norm_value(&diff);
}

static int check_reference(const double *ref, size_t n, const char *which) {
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(ref[i]))
      return mapp_fail(MAPP_ERR_INPUT, "envelope: the %s reference holds %g at element %zu", which, ref[i], i);
  return MAPP_OK;
}

static size_t worst_index(const double *x, const double *ref, size_t n) {
  size_t worst = 0;
  double big = -1.0;
  for (size_t i = 0; i < n; ++i) {
    double d = isfinite(x[i]) ? fabs(x[i] - ref[i]) : INFINITY;
    if (d > big) big = d, worst = i;
  }
  return worst;
}

int mapp_envelope_check(const double *ref_o0, const double *ref_o3, const double *cand, size_t n,
                        double multiple, double floor, mapp_envelope_result *out) {
  if (n == 0) return mapp_fail(MAPP_ERR_INPUT, "envelope: empty field");
  if (!(multiple > 0.0) || !(floor >= 0.0))
    return mapp_fail(MAPP_ERR_INPUT, "envelope: multiple (%g) must be > 0 and floor (%g) >= 0", multiple, floor);
  MAPP_TRY(check_reference(ref_o0, n, "-O0"));
  MAPP_TRY(check_reference(ref_o3, n, "-O3"));
  out->envelope = mapp_relative_l2(ref_o3, ref_o0, n);
  out->difference = mapp_relative_l2(cand, ref_o0, n);
  out->bound = multiple * fmax(out->envelope, floor);
  out->passed = out->difference <= out->bound;
  out->worst = worst_index(cand, ref_o0, n);
  return MAPP_OK;
}
