/* Envelope baselines on disk: the `envelope` tolerance model (envelope.h)
 * needs two answers of the reference run, so its baseline holds both.
 *
 *   /FIELD     the -O0 build's answer: what candidates are compared with
 *   /o3/FIELD  the -O3 (normal) build's answer of the same run
 *   attributes of /FIELD:
 *     tolerance          "envelope"
 *     envelope           ||O3 - O0|| / ||O0|| (mapp_relative_l2), as blessed
 *     envelope_multiple  a candidate may differ by this many envelopes
 *     envelope_floor     stands in for an envelope below it (builds that agree exactly)
 *
 * `mapp bless --model envelope` writes fields with envelope_write_field;
 * compare_files judges a field whose model is envelope with
 * envelope_judge_field and skips the /o3 group, which is not a field. */
#ifndef HARNESS_ENVELOPE_FILE_H
#define HARNESS_ENVELOPE_FILE_H

#include <hdf5.h>
#include <stdbool.h>

#include "envelope.h"
#include "h5util.h"

#define ENVELOPE_O3_GROUP "o3"

/* Whether a dataset path of a baseline lies in the /o3 group. */
bool envelope_is_o3_path(const char *name);

typedef struct {
  double multiple, floor;
} envelope_params;

/* Field `name` of the -O0 answer becomes /name of dst and the -O3
 * answer's /o3/name, with the attributes above. Answers that differ in
 * shape, or hold a non-finite value, are input errors. */
int envelope_write_field(hid_t o0, const char *o0_path, hid_t o3, const char *o3_path, hid_t dst,
                         const char *name, envelope_params params);

typedef struct {
  envelope_params params;      /* as used: the stored multiple unless overridden */
  mapp_envelope_result result; /* envelope, difference, bound, passed, worst */
} envelope_verdict;

/* Judges the candidate values of field `name` (shape `shape`) against the
 * -O0 values `o0` of baseline `base` (file `path`) and its /o3 twin.
 * multiple_override < 0 keeps the stored multiple. A missing attribute or
 * twin, or a stored envelope its data do not reproduce, is an input error
 * naming the file and the field. */
int envelope_judge_field(hid_t base, const char *path, const char *name, const h5_shape *shape, const double *o0,
                         const double *candidate, double multiple_override, envelope_verdict *out);

#endif
