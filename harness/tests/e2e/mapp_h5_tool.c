/* mapp-h5-tool: makes and alters small HDF5 answer files for the harness
 * tests, so `mapp check` can be tested on known differences without h5py.
 *
 *   mapp-h5-tool make FILE DATASET ROWS COLS    values 1 + r + c/1000, attrs tolerance=exact
 *   mapp-h5-tool perturb FILE DATASET INDEX DELTA   adds DELTA to flat element INDEX
 *   mapp-h5-tool set-tolerance FILE MODEL BOUND     root tolerance attributes
 *   mapp-h5-tool delete FILE OBJECT                 unlinks a dataset or group
 *   mapp-h5-tool delete-attr FILE OBJECT NAME       removes attribute NAME of OBJECT ("/" the root)
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"
#include "mapp_h5_attr.h"
#include "mapp_error.h"

static int make(const char *path, const char *name, long rows, long cols) {
  hid_t file;
  MAPP_TRY(h5_create(path, &file));
  hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
  double *data = malloc((size_t)(rows * cols) * sizeof *data);
  for (long r = 0; data && r < rows; ++r)
    for (long c = 0; c < cols; ++c) data[r * cols + c] = 1.0 + (double)r + (double)c / 1000.0;
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dset = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int status = data && dset >= 0 && H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0
                   ? MAPP_OK
                   : mapp_fail(MAPP_ERR_SYSTEM, "writing %s failed", path);
  if (status == MAPP_OK) status = mapp_h5_attr_string(file, "app", "h5-tool");
  if (dset >= 0) H5Dclose(dset);
  H5Sclose(space);
  H5Fclose(file);
  free(data);
  return status;
}

static int perturb(const char *path, const char *name, long index, double delta) {
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return mapp_fail(MAPP_ERR_INPUT, "cannot open %s", path);
  h5_shape shape;
  double *data = NULL;
  int status = h5_dataset_shape(file, path, name, &shape);
  if (status == MAPP_OK && (index < 0 || (size_t)index >= h5_shape_count(&shape)))
    status = mapp_fail(MAPP_ERR_INPUT, "index %ld is outside %s", index, name);
  if (status == MAPP_OK) status = h5_read_doubles(file, path, name, &shape, &data);
  if (status == MAPP_OK) {
    data[index] += delta;
    hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
    if (H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      status = mapp_fail(MAPP_ERR_SYSTEM, "rewriting %s failed", name);
    H5Dclose(dset);
  }
  free(data);
  H5Fclose(file);
  return status;
}

static int set_tolerance(const char *path, const char *model, double bound) {
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return mapp_fail(MAPP_ERR_INPUT, "cannot open %s", path);
  int status = mapp_h5_attr_string(file, "tolerance", model);
  if (status == MAPP_OK) status = mapp_h5_attr_double(file, "tolerance_bound", bound);
  H5Fclose(file);
  return status;
}

static int delete_object(const char *path, const char *object) {
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return mapp_fail(MAPP_ERR_INPUT, "cannot open %s", path);
  int status = H5Ldelete(file, object, H5P_DEFAULT) >= 0 ? MAPP_OK
                                                          : mapp_fail(MAPP_ERR_INPUT, "%s has no '%s'", path, object);
  H5Fclose(file);
  return status;
}

static int delete_attr(const char *path, const char *object, const char *name) {
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return mapp_fail(MAPP_ERR_INPUT, "cannot open %s", path);
  int status = H5Adelete_by_name(file, object, name, H5P_DEFAULT) >= 0
                   ? MAPP_OK
                   : mapp_fail(MAPP_ERR_INPUT, "%s: '%s' has no attribute '%s'", path, object, name);
  H5Fclose(file);
  return status;
}

int main(int argc, char **argv) {
  h5_quiet();
  int status;
  if (argc == 6 && strcmp(argv[1], "make") == 0)
    status = make(argv[2], argv[3], atol(argv[4]), atol(argv[5]));
  else if (argc == 6 && strcmp(argv[1], "perturb") == 0)
    status = perturb(argv[2], argv[3], atol(argv[4]), strtod(argv[5], NULL));
  else if (argc == 5 && strcmp(argv[1], "set-tolerance") == 0)
    status = set_tolerance(argv[2], argv[3], strtod(argv[4], NULL));
  else if (argc == 4 && strcmp(argv[1], "delete") == 0)
    status = delete_object(argv[2], argv[3]);
  else if (argc == 5 && strcmp(argv[1], "delete-attr") == 0)
    status = delete_attr(argv[2], argv[3], argv[4]);
  else
    status = mapp_fail(MAPP_ERR_INPUT, "usage: mapp-h5-tool make FILE DATASET ROWS COLS | perturb FILE DATASET "
                                       "INDEX DELTA | set-tolerance FILE MODEL BOUND | delete FILE OBJECT | "
                                       "delete-attr FILE OBJECT NAME");
  return mapp_report_error("mapp-h5-tool", status);
}
