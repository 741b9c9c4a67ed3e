#include "mapp_h5.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_build_info.h"
#include "mapp_error.h"

/* HDF5 prints its own error stack by default; our messages say what failed. */
static void silence_hdf5(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

static int open_with(MPI_Comm comm, const char *path, bool create, hid_t *file) {
  silence_hdf5();
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot set up parallel HDF5 access for '%s'", path);
  *file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
                 : H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (*file < 0)
    return mapp_fail(MAPP_ERR_INPUT, "cannot %s HDF5 file '%s'", create ? "create" : "open", path);
  return MAPP_OK;
}

int mapp_h5_create(MPI_Comm comm, const char *path, hid_t *file) { return open_with(comm, path, true, file); }
int mapp_h5_open_read(MPI_Comm comm, const char *path, hid_t *file) { return open_with(comm, path, false, file); }

int mapp_h5_close(hid_t file) {
  return H5Fclose(file) < 0 ? mapp_fail(MAPP_ERR_SYSTEM, "closing an HDF5 file failed") : MAPP_OK;
}

static void shape_text(int ndims, const long *dims, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < ndims && used < len; ++i)
    used += (size_t)snprintf(buf + used, len - used, "%s%ld", i ? " x " : "", dims[i]);
  if (used < len) snprintf(buf + used, len - used, ")");
}

static int check_slab(const char *name, const mapp_h5_slab *s) {
  long row = 1;
  for (int i = 1; i < s->ndims; ++i) row *= s->global_dims[i];
  if (s->ndims < 1 || s->ndims > MAPP_H5_MAX_RANK || s->first < 0 || s->count < 0 ||
      s->first + s->count > s->global_dims[0] || s->stride < row)
    return mapp_fail(MAPP_ERR_INPUT, "field '%s': invalid slab [%ld, +%ld) of %ld, stride %ld", name,
                     s->first, s->count, s->global_dims[0], s->stride);
  return MAPP_OK;
}

/* The file-side selection (this rank's slab) and the memory-side one (a 2-D
 * view: count rows of `stride` elements of which the first row-size count). */
static int make_spaces(const mapp_h5_slab *s, hid_t *file_space, hid_t *mem_space) {
  hsize_t gdims[MAPP_H5_MAX_RANK], start[MAPP_H5_MAX_RANK] = {0}, count[MAPP_H5_MAX_RANK];
  hsize_t row = 1;
  for (int i = 0; i < s->ndims; ++i) {
    gdims[i] = (hsize_t)s->global_dims[i];
    count[i] = gdims[i];
    if (i) row *= gdims[i];
  }
  start[0] = (hsize_t)s->first;
  count[0] = (hsize_t)s->count;
  *file_space = H5Screate_simple(s->ndims, gdims, NULL);
  if (s->count == 0) H5Sselect_none(*file_space);
  else H5Sselect_hyperslab(*file_space, H5S_SELECT_SET, start, NULL, count, NULL);
  hsize_t mdims[2] = {(hsize_t)(s->count > 0 ? s->count : 1), (hsize_t)s->stride};
  hsize_t mstart[2] = {0, 0}, mcount[2] = {(hsize_t)s->count, row};
  *mem_space = H5Screate_simple(2, mdims, NULL);
  if (s->count == 0) H5Sselect_none(*mem_space);
  else H5Sselect_hyperslab(*mem_space, H5S_SELECT_SET, mstart, NULL, mcount, NULL);
  return (*file_space < 0 || *mem_space < 0) ? mapp_fail(MAPP_ERR_SYSTEM, "HDF5 dataspace creation failed")
                                             : MAPP_OK;
}

static hid_t collective_xfer(void) {
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

int mapp_h5_write_field(hid_t file, const char *name, const mapp_h5_slab *slab, const double *data) {
  MAPP_TRY(check_slab(name, slab));
  hid_t fspace, mspace;
  MAPP_TRY(make_spaces(slab, &fspace, &mspace));
  hid_t dset = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t dxpl = collective_xfer();
  herr_t err = dset < 0 ? -1 : H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, data);
  H5Pclose(dxpl);
  if (dset >= 0) H5Dclose(dset);
  H5Sclose(fspace);
  H5Sclose(mspace);
  return err < 0 ? mapp_fail(MAPP_ERR_SYSTEM, "writing field '%s' failed", name) : MAPP_OK;
}

int mapp_h5_field_shape(hid_t file, const char *name, int *ndims, long dims[MAPP_H5_MAX_RANK]) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0)
    return mapp_fail(MAPP_ERR_INPUT, "the file has no field '%s'", name);
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t space = dset < 0 ? -1 : H5Dget_space(dset);
  int rank = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
  hsize_t hd[MAPP_H5_MAX_RANK];
  int ok = rank >= 1 && rank <= MAPP_H5_MAX_RANK && H5Sget_simple_extent_dims(space, hd, NULL) == rank;
  if (space >= 0) H5Sclose(space);
  if (dset >= 0) H5Dclose(dset);
  if (!ok) return mapp_fail(MAPP_ERR_INPUT, "field '%s' is not a dataset of 1 to %d dimensions", name, MAPP_H5_MAX_RANK);
  *ndims = rank;
  for (int i = 0; i < rank; ++i) dims[i] = (long)hd[i];
  return MAPP_OK;
}

int mapp_h5_read_field(hid_t file, const char *name, const mapp_h5_slab *slab, double *data) {
  MAPP_TRY(check_slab(name, slab));
  int ndims;
  long dims[MAPP_H5_MAX_RANK];
  MAPP_TRY(mapp_h5_field_shape(file, name, &ndims, dims));
  bool same = ndims == slab->ndims;
  for (int i = 0; same && i < ndims; ++i) same = dims[i] == slab->global_dims[i];
  if (!same) {
    char have[96], want[96];
    shape_text(ndims, dims, have, sizeof have);
    shape_text(slab->ndims, slab->global_dims, want, sizeof want);
    return mapp_fail(MAPP_ERR_INPUT, "field '%s' has shape %s, expected %s", name, have, want);
  }
  hid_t fspace, mspace;
  MAPP_TRY(make_spaces(slab, &fspace, &mspace));
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t dxpl = collective_xfer();
  herr_t err = dset < 0 ? -1 : H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, data);
  H5Pclose(dxpl);
  if (dset >= 0) H5Dclose(dset);
  H5Sclose(fspace);
  H5Sclose(mspace);
  return err < 0 ? mapp_fail(MAPP_ERR_SYSTEM, "reading field '%s' failed", name) : MAPP_OK;
}

static int write_attr(hid_t obj, const char *name, hid_t type, const void *value) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t err = attr < 0 ? -1 : H5Awrite(attr, type, value);
  if (attr >= 0) H5Aclose(attr);
  H5Sclose(space);
  return err < 0 ? mapp_fail(MAPP_ERR_SYSTEM, "writing HDF5 attribute '%s' failed", name) : MAPP_OK;
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

int mapp_h5_write_provenance(hid_t file, MPI_Comm comm, const mapp_record *rec) {
  /* Attributes are collective metadata: every rank must write the same
   * bytes, so the clock is read once. */
  char when[32];
  mapp_utc_now(when, sizeof when);
  MAPP_MPI(MPI_Bcast(when, sizeof when, MPI_CHAR, 0, comm));
  char *command = mapp_command_line(rec->argc, rec->argv);
  if (!command) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory recording provenance");
  const char *strings[][2] = {
      {"app", rec->app},         {"variant", rec->variant},       {"backend", rec->backend},
      {"size", rec->size},       {"scaling", rec->scaling},       {"case", rec->case_name ? rec->case_name : ""},
      {"git_revision", mapp_git_revision}, {"compiler", MAPP_C_COMPILER}, {"flags", MAPP_C_FLAGS},
      {"build_type", MAPP_BUILD_TYPE},     {"date", when},        {"command", command},
  };
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < sizeof strings / sizeof strings[0]; ++i)
    status = mapp_h5_attr_string(file, strings[i][0], strings[i][1] ? strings[i][1] : "");
  free(command);
  MAPP_TRY(status);
  MAPP_TRY(mapp_h5_attr_long(file, "ranks", rec->ranks));
  MAPP_TRY(mapp_h5_attr_long(file, "threads", rec->threads));
  MAPP_TRY(mapp_h5_attr_long(file, "steps", rec->steps));
  return MAPP_OK;
}
