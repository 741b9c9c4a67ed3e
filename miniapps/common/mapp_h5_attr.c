/* HDF5 attributes (mapp_h5_attr.h). */
#include "mapp_h5_attr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

static const mapp_h5_attr_guard *guard;

void mapp_h5_attr_set_guard(const mapp_h5_attr_guard *g) { guard = g; }

static int write_attr(hid_t obj, const char *name, hid_t type, const void *value) {
  const char *label = "an HDF5 file";
  int skipped = MAPP_OK;
  if (guard && !guard->begin(obj, &skipped, &label)) return skipped;
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr = space < 0 ? -1 : H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t err = attr < 0 ? -1 : H5Awrite(attr, type, value);
  if (attr >= 0 && H5Aclose(attr) < 0) err = -1;
  if (space >= 0) H5Sclose(space);
  int status =
      err < 0 ? mapp_fail(MAPP_ERR_SYSTEM, "writing HDF5 attribute '%s' to '%s' failed", name, label) : MAPP_OK;
  return guard ? guard->end(obj, status) : status;
}

int mapp_h5_attr_string(hid_t obj, const char *name, const char *value) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, strlen(value) + 1);
  H5Tset_strpad(type, H5T_STR_NULLTERM);
  int status = write_attr(obj, name, type, value);
  H5Tclose(type);
  return status;
}

int mapp_h5_attr_double(hid_t obj, const char *name, double value) {
  return write_attr(obj, name, H5T_NATIVE_DOUBLE, &value);
}

int mapp_h5_attr_long(hid_t obj, const char *name, long value) {
  return write_attr(obj, name, H5T_NATIVE_LONG, &value);
}

int mapp_h5_read_attr_string(hid_t obj, const char *name, char *buf, size_t len) {
  if (H5Aexists(obj, name) <= 0) return mapp_fail(MAPP_ERR_INPUT, "HDF5 attribute '%s' is missing", name);
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t ftype = H5Aget_type(attr);
  int ok = H5Tget_class(ftype) == H5T_STRING && !H5Tis_variable_str(ftype);
  size_t size = ok ? H5Tget_size(ftype) : 0;
  char *tmp = ok ? calloc(size + 1, 1) : NULL;
  hid_t mtype = H5Tcopy(H5T_C_S1);
  H5Tset_size(mtype, size ? size : 1);
  ok = tmp && H5Aread(attr, mtype, tmp) >= 0;
  if (ok) snprintf(buf, len, "%s", tmp);
  free(tmp);
  H5Tclose(mtype);
  H5Tclose(ftype);
  H5Aclose(attr);
  return ok ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "HDF5 attribute '%s' is not a fixed-length string", name);
}
