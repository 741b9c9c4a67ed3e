/* Envelope baselines on disk: the `envelope` tolerance model (envelope.h)
 * needs the reference run's answer from the -O0 build and from each build
 * whose round-off is legitimate (the members), so its baseline holds all.
 *
 *   /FIELD         the -O0 build's answer: what candidates are compared with
 *   /MEMBER/FIELD  a member's answer of the same run: o3 (the normal build),
 *                  fma (-O3 with FMA contraction, as GPUs and -march builds
 *                  contract), ...
 *   attributes of /FIELD:
 *     tolerance          "envelope"
 *     envelope           max over members of ||MEMBER - O0|| / ||O0||, as blessed
 *     envelope_member    the member that set it
 *     envelope_members   the members, "o3,fma" (absent: "o3", older baselines)
 *     envelope_multiple  a candidate may differ by this many envelopes
 *     envelope_floor     stands in for an envelope below it (builds that agree exactly)
 *
 * `mapp bless --model envelope` writes fields with envelope_write_members;
 * compare_files judges a field whose model is envelope with
 * envelope_judge_field and skips the member groups, which are not fields. */
#ifndef HARNESS_ENVELOPE_FILE_H
#define HARNESS_ENVELOPE_FILE_H

#include <hdf5.h>
#include <stdbool.h>

#include "envelope.h"
#include "h5util.h"

#define ENVELOPE_O3_GROUP "o3"

/* Whether a dataset path of a baseline lies in a member group (fields are
 * top-level datasets; every nested dataset is some member's twin). */
bool envelope_is_o3_path(const char *name);

#define ENVELOPE_MAX_MEMBERS 8

/* One member answer file of a bless: its name (a group of the baseline)
 * and the open file. */
typedef struct {
  const char *name; /* "o3", "fma" */
  hid_t file;
  const char *path;
} envelope_member;

typedef struct {
  double multiple, floor;
} envelope_params;

/* Field `name` of the -O0 answer becomes /name of dst and the -O3
 * answer's /o3/name, with the attributes above. Answers that differ in
 * shape, or hold a non-finite value, are input errors. */
int envelope_write_field(hid_t o0, const char *o0_path, hid_t o3, const char *o3_path, hid_t dst,
                         const char *name, envelope_params params);
/* The same with any members: each member's answer becomes /MEMBER/name. */
int envelope_write_members(hid_t o0, const char *o0_path, const envelope_member *members, size_t nmembers,
                           hid_t dst, const char *name, envelope_params params);

typedef struct {
  envelope_params params;      /* as used: the stored multiple unless overridden */
  mapp_envelope_result result; /* envelope, difference, bound, passed, worst */
  char member[32];             /* the member whose difference set the envelope */
} envelope_verdict;

/* Judges the candidate values of field `name` (shape `shape`) against the
 * -O0 values `o0` of baseline `base` (file `path`) and its /o3 twin.
 * multiple_override < 0 keeps the stored multiple. A missing attribute or
 * twin, or a stored envelope its data do not reproduce, is an input error
 * naming the file and the field. */
int envelope_judge_field(hid_t base, const char *path, const char *name, const h5_shape *shape, const double *o0,
                         const double *candidate, double multiple_override, envelope_verdict *out);

#endif
