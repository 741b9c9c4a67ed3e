#include "envelope_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_h5_attr.h"
#include "mapp_error.h"
#include "strv.h"

static const char *const hint = "re-bless it with mapp bless APP --model envelope";

bool envelope_is_o3_path(const char *name) { return strchr(name, '/') != NULL; }

/* "MEMBER/NAME" (malloc'd). */
static char *twin_of(const char *member, const char *name) { return str_printf("%s/%s", member, name); }

/* Re-raises a pending error of a context-free callee (envelope.c, h5util.c)
 * with the file and field it concerns. */
static int in_field(int status, const char *path, const char *name) {
  if (status == MAPP_OK) return MAPP_OK;
  char message[512];
  snprintf(message, sizeof message, "%s", mapp_error_message());
  mapp_error_clear();
  return mapp_fail(status, "%s: field '%s': %s", path, name, message);
}

/* ---------------------------------------------------------------- bless */

static int read_same_shape(hid_t o0, const char *o0_path, hid_t o3, const char *o3_path, const char *name,
                           double **v0, double **v3, size_t *count) {
  h5_shape s0, s3;
  MAPP_TRY(h5_dataset_shape(o0, o0_path, name, &s0));
  MAPP_TRY(h5_dataset_shape(o3, o3_path, name, &s3));
  if (!h5_shape_equal(&s0, &s3)) {
    char t0[128], t3[128];
    h5_shape_format(&s0, t0, sizeof t0);
    h5_shape_format(&s3, t3, sizeof t3);
    return mapp_fail(MAPP_ERR_INPUT, "field '%s': the -O0 answer %s has shape %s, the member answer %s has %s", name,
                     o0_path, t0, o3_path, t3);
  }
  *count = h5_shape_count(&s0);
  if (!*v0) MAPP_TRY(h5_read_doubles(o0, o0_path, name, &s0, v0));
  return h5_read_doubles(o3, o3_path, name, &s3, v3);
}

static int stamp_field(hid_t dst, const char *name, double envelope, const char *member, const char *members,
                       envelope_params p) {
  hid_t dset = H5Dopen2(dst, name, H5P_DEFAULT);
  if (dset < 0) return mapp_fail(MAPP_ERR_SYSTEM, "cannot reopen dataset '%s' of the new baseline", name);
  int status = mapp_h5_attr_string(dset, "tolerance", "envelope");
  if (status == MAPP_OK) status = mapp_h5_attr_double(dset, "envelope", envelope);
  if (status == MAPP_OK) status = mapp_h5_attr_string(dset, "envelope_member", member);
  if (status == MAPP_OK) status = mapp_h5_attr_string(dset, "envelope_members", members);
  if (status == MAPP_OK) status = mapp_h5_attr_double(dset, "envelope_multiple", p.multiple);
  if (status == MAPP_OK) status = mapp_h5_attr_double(dset, "envelope_floor", p.floor);
  H5Dclose(dset);
  return status;
}

int envelope_write_members(hid_t o0, const char *o0_path, const envelope_member *members, size_t nmembers,
                           hid_t dst, const char *name, envelope_params p) {
  if (nmembers == 0 || nmembers > ENVELOPE_MAX_MEMBERS)
    return mapp_fail(MAPP_ERR_INPUT, "an envelope needs 1 to %d member answers, got %zu", ENVELOPE_MAX_MEMBERS,
                     nmembers);
  double *v0 = NULL, envelope = 0.0;
  const char *widest = members[0].name;
  char list[256] = "";
  int status = h5_copy_dataset_compressed(o0, name, dst, name);
  for (size_t m = 0; status == MAPP_OK && m < nmembers; ++m) {
    double *vm = NULL;
    size_t count = 0;
    char *twin = twin_of(members[m].name, name);
    status = twin ? read_same_shape(o0, o0_path, members[m].file, members[m].path, name, &v0, &vm, &count)
                  : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    /* NaN when the -O0 answer holds one, +inf when the member's does */
    double distance = status == MAPP_OK ? mapp_relative_l2(vm, v0, count) : 0.0;
    if (status == MAPP_OK && !isfinite(distance))
      status = mapp_fail(MAPP_ERR_INPUT, "field '%s': the -O0 (%s) or %s (%s) answer holds a non-finite value", name,
                         o0_path, members[m].name, members[m].path);
    if (status == MAPP_OK && distance > envelope) envelope = distance, widest = members[m].name;
    if (status == MAPP_OK) status = h5_copy_dataset_compressed(members[m].file, name, dst, twin);
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s", used ? "," : "", members[m].name);
    free(twin);
    free(vm);
  }
  if (status == MAPP_OK) status = stamp_field(dst, name, envelope, widest, list, p);
  free(v0);
  return status;
}

int envelope_write_field(hid_t o0, const char *o0_path, hid_t o3, const char *o3_path, hid_t dst,
                         const char *name, envelope_params p) {
  envelope_member o3_member = {.name = ENVELOPE_O3_GROUP, .file = o3, .path = o3_path};
  return envelope_write_members(o0, o0_path, &o3_member, 1, dst, name, p);
}

/* ---------------------------------------------------------------- check */

static int required_attr(hid_t dset, const char *path, const char *name, const char *attr, double *value) {
  bool found = false;
  MAPP_TRY(in_field(h5_get_attr_double(dset, attr, value, &found), path, name));
  if (!found)
    return mapp_fail(MAPP_ERR_INPUT, "%s: field '%s' has tolerance envelope but no '%s' attribute (%s)", path, name,
                     attr, hint);
  return MAPP_OK;
}

/* The stored envelope, multiple and floor of field `name`. */
static int read_params(hid_t base, const char *path, const char *name, double *stored, envelope_params *p) {
  hid_t dset = H5Dopen2(base, name, H5P_DEFAULT);
  if (dset < 0) return mapp_fail(MAPP_ERR_INPUT, "%s: cannot open dataset '%s'", path, name);
  int status = required_attr(dset, path, name, "envelope", stored);
  if (status == MAPP_OK) status = required_attr(dset, path, name, "envelope_multiple", &p->multiple);
  if (status == MAPP_OK) status = required_attr(dset, path, name, "envelope_floor", &p->floor);
  H5Dclose(dset);
  return status;
}

/* A member's twin of field `name`, which must exist with the field's shape. */
static int read_twin(hid_t base, const char *path, const char *member, const char *name, const h5_shape *shape,
                     double **values) {
  char *twin = twin_of(member, name);
  if (!twin) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  h5_shape got;
  int status = MAPP_OK;
  if (H5Lexists(base, member, H5P_DEFAULT) <= 0 || H5Lexists(base, twin, H5P_DEFAULT) <= 0)
    status = mapp_fail(MAPP_ERR_INPUT, "%s: field '%s' has tolerance envelope but no %s answer /%s (%s)", path, name,
                       member, twin, hint);
  if (status == MAPP_OK) status = h5_dataset_shape(base, path, twin, &got);
  if (status == MAPP_OK && !h5_shape_equal(&got, shape))
    status = mapp_fail(MAPP_ERR_INPUT, "%s: /%s has another shape than field '%s'", path, twin, name);
  if (status == MAPP_OK) status = h5_read_doubles(base, path, twin, shape, values);
  free(twin);
  return status;
}

/* The members of field `name`: its envelope_members attribute, or the one
 * -O3 twin of a baseline blessed before members existed. */
static int read_members(hid_t base, const char *path, const char *name, strv *members) {
  hid_t dset = H5Dopen2(base, name, H5P_DEFAULT);
  if (dset < 0) return mapp_fail(MAPP_ERR_INPUT, "%s: cannot open dataset '%s'", path, name);
  char *list = NULL;
  int status = in_field(h5_get_attr_string(dset, "envelope_members", &list), path, name);
  H5Dclose(dset);
  if (status == MAPP_OK && !list) return strv_push(members, ENVELOPE_O3_GROUP);
  for (char *save = NULL, *word = list ? strtok_r(list, ",", &save) : NULL; status == MAPP_OK && word;
       word = strtok_r(NULL, ",", &save))
    status = strv_push(members, word);
  free(list);
  if (status == MAPP_OK && members->count == 0)
    status = mapp_fail(MAPP_ERR_INPUT, "%s: field '%s' names no envelope member (%s)", path, name, hint);
  return status;
}

/* The member farthest from the -O0 answer: it sets the envelope. */
static int widest_member(hid_t base, const char *path, const char *name, const h5_shape *shape, const double *o0,
                         double **values, char *member, size_t member_len) {
  strv members = {0};
  int status = read_members(base, path, name, &members);
  double widest = -1.0;
  for (size_t m = 0; status == MAPP_OK && m < members.count; ++m) {
    double *v = NULL;
    status = read_twin(base, path, members.items[m], name, shape, &v);
    double distance = status == MAPP_OK ? mapp_relative_l2(v, o0, h5_shape_count(shape)) : 0.0;
    if (status == MAPP_OK && distance > widest) {
      widest = distance;
      free(*values);
      *values = v;
      snprintf(member, member_len, "%s", members.items[m]);
    } else {
      free(v);
    }
  }
  strv_free(&members);
  return status;
}

/* The envelope printed and stored must be the one the data give: a baseline
 * edited by hand would otherwise be judged by numbers nobody can see. The
 * same code on the same data gives the same bits; the slack only allows for
 * a libm or compiler that rounds the norm differently. */
static int check_stored(const char *path, const char *name, double stored, double computed) {
  if (fabs(stored - computed) <= 1e-9 * fmax(stored, computed)) return MAPP_OK;
  return mapp_fail(MAPP_ERR_INPUT, "%s: field '%s' states envelope %.3g, but its -O0 and member answers give %.3g (%s)",
                   path, name, stored, computed, hint);
}

int envelope_judge_field(hid_t base, const char *path, const char *name, const h5_shape *shape, const double *o0,
                         const double *candidate, double multiple_override, envelope_verdict *out) {
  double stored = 0.0, *o3 = NULL;
  MAPP_TRY(read_params(base, path, name, &stored, &out->params));
  if (multiple_override >= 0) out->params.multiple = multiple_override;
  int status = widest_member(base, path, name, shape, o0, &o3, out->member, sizeof out->member);
  if (status == MAPP_OK)
    status = in_field(mapp_envelope_check(o0, o3, candidate, h5_shape_count(shape), out->params.multiple,
                                          out->params.floor, &out->result), path, name);
  if (status == MAPP_OK) status = check_stored(path, name, stored, out->result.envelope);
  free(o3);
  return status;
}
