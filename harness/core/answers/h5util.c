#include "h5util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

void h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

int h5_open_read(const char *path, hid_t *file) {
  htri_t is_h5 = H5Fis_hdf5(path);
  if (is_h5 <= 0) {
    FILE *probe = fopen(path, "rb");
    bool readable = probe != NULL;
    if (probe) fclose(probe);
    return mapp_fail(MAPP_ERR_INPUT, readable ? "%s is not an HDF5 file" : "%s does not exist or cannot be read",
                     path);
  }
  *file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  return *file < 0 ? mapp_fail(MAPP_ERR_INPUT, "cannot open %s", path) : MAPP_OK;
}

int h5_create(const char *path, hid_t *file) {
  *file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  return *file < 0 ? mapp_fail(MAPP_ERR_INPUT, "cannot create HDF5 file %s", path) : MAPP_OK;
}

void h5_close(hid_t file) {
  if (file >= 0) H5Fclose(file);
}

typedef struct {
  strv *names;
  int status;
} visit_state;

static herr_t collect_dataset(hid_t obj, const char *name, const H5O_info_t *info, void *data) {
  (void)obj;
  visit_state *state = data;
  if (info->type != H5O_TYPE_DATASET) return 0;
  state->status = strv_push(state->names, name);
  return state->status == MAPP_OK ? 0 : 1;
}

int h5_list_datasets(hid_t file, const char *path, strv *names) {
  visit_state state = {.names = names, .status = MAPP_OK};
  if (H5Ovisit(file, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &state) < 0 && state.status == MAPP_OK)
    return mapp_fail(MAPP_ERR_INPUT, "cannot list the datasets of %s", path);
  return state.status;
}

static int read_space(hid_t dset, h5_shape *shape) {
  hid_t space = H5Dget_space(dset);
  int ndims = space >= 0 ? H5Sget_simple_extent_dims(space, shape->dims, NULL) : -1;
  if (space >= 0) H5Sclose(space);
  shape->ndims = ndims;
  return ndims < 0 ? MAPP_ERR_INPUT : MAPP_OK;
}

/* Opens dataset `name`; absent is an input error naming the file. */
static int open_dataset(hid_t file, const char *path, const char *name, hid_t *dset) {
  htri_t exists = H5Lexists(file, name, H5P_DEFAULT);
  *dset = exists > 0 ? H5Dopen2(file, name, H5P_DEFAULT) : -1;
  if (*dset < 0) return mapp_fail(MAPP_ERR_INPUT, "%s has no dataset '%s'", path, name);
  return MAPP_OK;
}

int h5_dataset_shape(hid_t file, const char *path, const char *name, h5_shape *shape) {
  hid_t dset;
  MAPP_TRY(open_dataset(file, path, name, &dset));
  int status = read_space(dset, shape);
  H5Dclose(dset);
  return status != MAPP_OK ? mapp_fail(status, "%s: cannot read the shape of '%s'", path, name) : MAPP_OK;
}

size_t h5_shape_count(const h5_shape *shape) {
  size_t count = 1;
  for (int i = 0; i < shape->ndims; ++i) count *= (size_t)shape->dims[i];
  return count;
}

bool h5_shape_equal(const h5_shape *a, const h5_shape *b) {
  if (a->ndims != b->ndims) return false;
  for (int i = 0; i < a->ndims; ++i)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* Writes "[v0,v1,...]" of `count` values into buf. */
static void format_list(const unsigned long long *values, int count, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "[");
  for (int i = 0; i < count && used < len; ++i)
    used += (size_t)snprintf(buf + used, len - used, "%s%llu", i ? "," : "", values[i]);
  if (used < len) snprintf(buf + used, len - used, "]");
}

void h5_shape_format(const h5_shape *shape, char *buf, size_t len) {
  unsigned long long dims[H5S_MAX_RANK];
  for (int i = 0; i < shape->ndims; ++i) dims[i] = shape->dims[i];
  format_list(dims, shape->ndims, buf, len);
}

void h5_unflatten(const h5_shape *shape, size_t flat, hsize_t index[H5S_MAX_RANK]) {
  for (int i = shape->ndims - 1; i >= 0; --i) {
    index[i] = flat % shape->dims[i];
    flat /= shape->dims[i];
  }
}

void h5_index_format(const h5_shape *shape, size_t flat, char *buf, size_t len) {
  hsize_t coords[H5S_MAX_RANK];
  unsigned long long index[H5S_MAX_RANK];
  h5_unflatten(shape, flat, coords);
  for (int i = 0; i < shape->ndims; ++i) index[i] = coords[i];
  format_list(index, shape->ndims, buf, len);
}

static bool is_numeric(hid_t dset) {
  hid_t type = H5Dget_type(dset);
  H5T_class_t cls = H5Tget_class(type);
  H5Tclose(type);
  return cls == H5T_FLOAT || cls == H5T_INTEGER;
}

int h5_read_doubles(hid_t file, const char *path, const char *name, const h5_shape *shape,
                    double **data) {
  hid_t dset;
  MAPP_TRY(open_dataset(file, path, name, &dset));
  int status = MAPP_OK;
  if (!is_numeric(dset)) status = mapp_fail(MAPP_ERR_INPUT, "%s: dataset '%s' is not numeric", path, name);
  size_t count = h5_shape_count(shape);
  if (status == MAPP_OK) status = mapp_alloc((void **)data, (count ? count : 1) * sizeof **data, name);
  if (status == MAPP_OK && H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0) {
    free(*data);
    *data = NULL;
    status = mapp_fail(MAPP_ERR_INPUT, "%s: cannot read dataset '%s'", path, name);
  }
  H5Dclose(dset);
  return status;
}

/* Reads a string attribute whose type is `ftype` (fixed or variable length). */
static int read_string_attr(hid_t attr, hid_t ftype, char **out) {
  if (H5Tis_variable_str(ftype) > 0) {
    hid_t mtype = H5Tcopy(H5T_C_S1);
    H5Tset_size(mtype, H5T_VARIABLE);
    char *value = NULL;
    herr_t err = H5Aread(attr, mtype, &value);
    H5Tclose(mtype);
    *out = err >= 0 && value ? strdup(value) : NULL;
    if (err >= 0) H5free_memory(value);
    return *out ? MAPP_OK : MAPP_ERR_INPUT;
  }
  size_t size = H5Tget_size(ftype);
  *out = calloc(size + 1, 1);
  if (!*out || H5Aread(attr, ftype, *out) < 0) {
    free(*out);
    *out = NULL;
    return MAPP_ERR_INPUT;
  }
  return MAPP_OK;
}

int h5_get_attr_string(hid_t obj, const char *name, char **out) {
  *out = NULL;
  if (H5Aexists(obj, name) <= 0) return MAPP_OK;
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t ftype = attr >= 0 ? H5Aget_type(attr) : -1;
  int status = ftype >= 0 && H5Tget_class(ftype) == H5T_STRING ? read_string_attr(attr, ftype, out)
                                                                : MAPP_ERR_INPUT;
  if (ftype >= 0) H5Tclose(ftype);
  if (attr >= 0) H5Aclose(attr);
  return status != MAPP_OK ? mapp_fail(status, "attribute '%s' is not a readable string", name) : MAPP_OK;
}

int h5_get_attr_double(hid_t obj, const char *name, double *out, bool *found) {
  *found = H5Aexists(obj, name) > 0;
  if (!*found) return MAPP_OK;
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t ftype = attr >= 0 ? H5Aget_type(attr) : -1;
  H5T_class_t cls = ftype >= 0 ? H5Tget_class(ftype) : H5T_NO_CLASS;
  bool ok = (cls == H5T_FLOAT || cls == H5T_INTEGER) && H5Aread(attr, H5T_NATIVE_DOUBLE, out) >= 0;
  if (ftype >= 0) H5Tclose(ftype);
  if (attr >= 0) H5Aclose(attr);
  return ok ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "attribute '%s' is not a number", name);
}

typedef struct {
  hid_t dst;
  const char *prefix;
} attr_copy;

/* Copies one attribute in its own file type: read into a buffer of the
 * memory equivalent, write back; variable-length data is reclaimed after. */
static herr_t copy_one_attribute(hid_t src, const char *src_name, const H5A_info_t *info, void *data) {
  (void)info;
  const attr_copy *to = data;
  hid_t dst = to->dst;
  char name[512];
  snprintf(name, sizeof name, "%s%s", to->prefix, src_name);
  hid_t attr = H5Aopen(src, src_name, H5P_DEFAULT);
  hid_t ftype = H5Aget_type(attr), space = H5Aget_space(attr);
  hid_t mtype = H5Tget_native_type(ftype, H5T_DIR_DEFAULT);
  hssize_t points = H5Sget_simple_extent_npoints(space);
  size_t bytes = (size_t)(points > 0 ? points : 1) * H5Tget_size(mtype);
  void *buf = calloc(bytes, 1);
  herr_t err = buf && H5Aread(attr, mtype, buf) >= 0 ? 0 : -1;
  if (err == 0 && H5Aexists(dst, name) > 0) H5Adelete(dst, name);
  hid_t copy = err == 0 ? H5Acreate2(dst, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
  if (copy < 0 || H5Awrite(copy, mtype, buf) < 0) err = -1;
  if (copy >= 0) H5Aclose(copy);
  bool variable_length = H5Tdetect_class(mtype, H5T_VLEN) > 0 || H5Tis_variable_str(mtype) > 0;
  if (buf && err == 0 && variable_length) H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, buf);
  free(buf);
  H5Tclose(mtype);
  H5Tclose(ftype);
  H5Sclose(space);
  H5Aclose(attr);
  if (err < 0) mapp_fail(MAPP_ERR_SYSTEM, "copying attribute '%s' failed", name);
  return err;
}

int h5_copy_attributes(hid_t src, hid_t dst, const char *prefix) {
  hsize_t index = 0;
  attr_copy to = {dst, prefix};
  herr_t err = H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &index, copy_one_attribute, &to);
  return err < 0 ? mapp_fail(MAPP_ERR_SYSTEM, "copying attributes failed") : MAPP_OK;
}

/* Chunks of whole trailing dimensions, about 64k elements each. */
static hid_t compressed_dcpl(const h5_shape *shape) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (shape->ndims == 0 || h5_shape_count(shape) == 0 || H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
    return dcpl;
  hsize_t chunk[H5S_MAX_RANK];
  size_t inner = 1;
  for (int i = shape->ndims - 1; i >= 1; --i) inner *= (size_t)(chunk[i] = shape->dims[i]);
  size_t rows = inner >= 65536 ? 1 : 65536 / inner;
  chunk[0] = shape->dims[0] < rows ? shape->dims[0] : rows;
  H5Pset_chunk(dcpl, shape->ndims, chunk);
  H5Pset_shuffle(dcpl);
  H5Pset_deflate(dcpl, 6);
  return dcpl;
}

int h5_copy_dataset_compressed(hid_t src, const char *name, hid_t dst, const char *dst_name) {
  hid_t in = H5Dopen2(src, name, H5P_DEFAULT);
  if (in < 0) return mapp_fail(MAPP_ERR_INPUT, "cannot open dataset '%s'", name);
  h5_shape shape;
  int status = read_space(in, &shape);
  hid_t ftype = H5Dget_type(in), mtype = H5Tget_native_type(ftype, H5T_DIR_DEFAULT);
  hid_t space = H5Dget_space(in);
  size_t bytes = h5_shape_count(&shape) * H5Tget_size(mtype);
  void *buf = status == MAPP_OK ? malloc(bytes ? bytes : 1) : NULL;
  hid_t dcpl = compressed_dcpl(&shape), lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t out = buf && H5Dread(in, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0
                  ? H5Dcreate2(dst, dst_name, ftype, space, lcpl, dcpl, H5P_DEFAULT)
                  : -1;
  if (out < 0 || H5Dwrite(out, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
    status = mapp_fail(MAPP_ERR_SYSTEM, "copying dataset '%s' failed", name);
  if (status == MAPP_OK) status = h5_copy_attributes(in, out, "");
  if (out >= 0) H5Dclose(out);
  free(buf);
  H5Pclose(lcpl);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Tclose(mtype);
  H5Tclose(ftype);
  H5Dclose(in);
  return status;
}
