/* Comparing an answer with its baseline: the tolerance models of
 * DESIGN.md, applied value by value, and the file-level comparison that
 * `check`, `run`, `sweep` and `collect` share.
 *
 * Models (for candidate a and baseline b):
 *   exact  the bits are equal (NaN equals NaN only with the same bits; -0 != +0)
 *   abs    |a - b| <= bound
 *   rel    |a - b| <= bound * |b|; where b is zero or subnormal it has no
 *          relative scale, and the bound is read as absolute there
 *   ulp    the doubles are at most `bound` representable values apart
 *   rel-max  |a - b| <= bound * max |b| over the dataset: the same field
 *          computed in another order (a peer's), whose values near zero
 *          carry the absolute rounding of the field's largest ones
 *   envelope  the batched-CRM report's three-way test, over the whole field:
 *          ||a - b|| / ||b|| <= bound * max(envelope, floor), b the -O0
 *          answer and the envelope its difference from the -O3 answer
 *          (envelope.h; the baseline layout in envelope_file.h)
 * Identical bits always pass; a NaN against anything else always fails. */
#ifndef HARNESS_TOLERANCE_H
#define HARNESS_TOLERANCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "envelope_file.h"
#include "h5util.h"

typedef enum {
  TOL_EXACT,
  TOL_ABS,
  TOL_REL,
  TOL_ULP,
  TOL_ENVELOPE, /* bound is the multiple of the envelope */
  TOL_REL_MAX,  /* bound times the dataset's max |b|: compare_values (value_within has no dataset) */
} tol_model;

typedef struct {
  tol_model model;
  double bound;
} tolerance;

/* "exact" | "abs" | "rel" | "ulp" | "envelope" | "rel-max"; anything else is an input error. */
int tolerance_parse_model(const char *text, tol_model *model);
const char *tolerance_model_name(tol_model model);

/* Distance in units in the last place: how many doubles lie between a and b
 * (+0 and -0 are 0 apart); UINT64_MAX when either is NaN. */
uint64_t ulp_distance(double a, double b);
/* Per value; always true for envelope, which judges a whole field at once. */
bool value_within(double candidate, double reference, tolerance tol);

typedef struct {
  size_t count;
  double worst_abs;    /* max |a - b| */
  size_t worst_abs_at; /* flat index */
  double worst_rel;    /* max |a - b| / max(|b|, DBL_MIN) */
  size_t worst_rel_at;
  uint64_t worst_ulp;
  size_t worst_ulp_at;
  size_t violations; /* values outside the tolerance */
  size_t first_violation_at;
} field_stats;

void compare_values(const double *candidate, const double *reference, size_t count, tolerance tol,
                    field_stats *stats);

/* Flags that override the baseline's tolerance attributes. */
typedef struct {
  bool model_set, bound_set;
  tol_model model;
  double bound;
} tolerance_override;

typedef struct {
  char *name;
  h5_shape shape;
  tolerance tol;
  field_stats stats;        /* worst errors against the baseline's values */
  envelope_verdict envelope; /* TOL_ENVELOPE only */
  bool passed;
} field_result;

typedef struct {
  char *baseline, *candidate;
  field_result *fields;
  size_t nfields;
  bool passed;
} compare_report;

/* Compares every dataset of the baseline (but the -O3 answers of an
 * envelope baseline, /o3/...) with the candidate's dataset of the same
 * name. Tolerance: the baseline's root attributes `tolerance` and
 * `tolerance_bound` (exact, 0 when absent), then the same attributes on the
 * dataset, then the override; an envelope field's multiple is its
 * `envelope_multiple` unless --bound overrides it. A missing or unreadable
 * file, a dataset the candidate lacks or has in another shape, an envelope
 * field without its attributes or -O3 answer are input errors naming the
 * file and the dataset; failing the tolerance is not an error
 * (report->passed says it). */
int compare_files(const char *baseline, const char *candidate, const tolerance_override *ovr,
                  compare_report *report);
/* One line per field:
 * "temperature  model=exact bound=0  worst_abs=0  worst_rel=0  ulp=0  PASS"
 * "u  model=envelope envelope=0 difference=1e-15 bound=2e-13 (2 x max(envelope, floor 1e-13))  worst_abs=3e-14 at [0,4,2]  PASS" */
void compare_report_print(const compare_report *report, FILE *out);
/* {"status": "pass"|"fail", "file": ..., "worst_abs": ..., "worst_rel": ...,
 *  "worst_ulp": ..., "fields": [{"name", "model", "bound", ...}]} */
json_t *compare_report_json(const compare_report *report);
void compare_report_free(compare_report *report);

#endif
