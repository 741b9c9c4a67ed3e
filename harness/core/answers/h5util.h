/* Serial HDF5 for the harness (default property lists: the harness reads
 * and writes whole files on one process, whatever the library was built
 * for). Failures are input errors naming the file and the object. */
#ifndef HARNESS_H5UTIL_H
#define HARNESS_H5UTIL_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

typedef struct {
  int ndims;
  hsize_t dims[H5S_MAX_RANK];
} h5_shape;

/* Silence the HDF5 error stack printer: our messages say what failed. */
void h5_quiet(void);
int h5_open_read(const char *path, hid_t *file);
/* Creates (truncating) path for writing. */
int h5_create(const char *path, hid_t *file);
void h5_close(hid_t file);

/* Paths of every dataset in the file, in visit order ("temperature", "g/u"). */
int h5_list_datasets(hid_t file, const char *path, strv *names);
/* Shape of dataset `name`; input error naming path and name when absent. */
int h5_dataset_shape(hid_t file, const char *path, const char *name, h5_shape *shape);
/* The whole numeric dataset converted to double (malloc'd). */
int h5_read_doubles(hid_t file, const char *path, const char *name, const h5_shape *shape,
                    double **data);
size_t h5_shape_count(const h5_shape *shape);
bool h5_shape_equal(const h5_shape *a, const h5_shape *b);
/* "[102,122]" into buf. */
void h5_shape_format(const h5_shape *shape, char *buf, size_t len);
/* The row-major multi-index of flat index `flat`. */
void h5_unflatten(const h5_shape *shape, size_t flat, hsize_t index[H5S_MAX_RANK]);
/* The multi-index of flat (row-major) index `flat`, "[3,4]", into buf. */
void h5_index_format(const h5_shape *shape, size_t flat, char *buf, size_t len);

/* A string attribute of obj (fixed or variable length) into *out
 * (malloc'd), or *out = NULL when obj has no such attribute. */
int h5_get_attr_string(hid_t obj, const char *name, char **out);
/* A numeric attribute as double; *found false when absent. */
int h5_get_attr_double(hid_t obj, const char *name, double *out, bool *found);
/* Copy every attribute of src onto dst, whatever its type and shape, each
 * named prefix + its name ("" keeps the names; "o0_" keeps the -O0 build's
 * provenance beside the -O3 build's in an envelope baseline). */
int h5_copy_attributes(hid_t src, hid_t dst, const char *prefix);
/* Copy dataset `name` with its attributes from src into dst as `dst_name`
 * (intermediate groups created), chunked and deflate-compressed when this
 * HDF5 has the filter (baselines live in git). */
int h5_copy_dataset_compressed(hid_t src, const char *name, hid_t dst, const char *dst_name);

#endif
