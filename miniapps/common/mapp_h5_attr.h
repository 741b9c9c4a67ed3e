/* HDF5 attributes: scalar strings, doubles and longs written on a file,
 * group or dataset, and string attributes read back. Serial, so the harness
 * uses them too: it links them built against serial HDF5 (mapp_h5_serial in
 * CMakeLists.txt), the mini-apps against their HDF5 through mapp_h5.h, which
 * has every rank of an answer being written agree on each attribute write
 * (the guard below). */
#ifndef MAPP_H5_ATTR_H
#define MAPP_H5_ATTR_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>

int mapp_h5_attr_string(hid_t obj, const char *name, const char *value);
int mapp_h5_attr_double(hid_t obj, const char *name, double value);
int mapp_h5_attr_long(hid_t obj, const char *name, long value);
/* Reads a string attribute into buf (truncated to len); input error if absent. */
int mapp_h5_read_attr_string(hid_t obj, const char *name, char *buf, size_t len);

/* Internal to libmapp: files written by several ranks together (mapp_h5.c)
 * decide around each attribute write. mapp_h5.c installs its guard when it
 * creates such a file; objects the guard does not know are written plainly,
 * and without a guard every write is plain. */
typedef struct {
  /* Before a write on obj: true when this rank writes it (*label: the file's
   * name for messages); false to skip the write and return *status. */
  bool (*begin)(hid_t obj, int *status, const char **label);
  /* After this rank's write: the status to return (agreed by the ranks). */
  int (*end)(hid_t obj, int status);
} mapp_h5_attr_guard;
void mapp_h5_attr_set_guard(const mapp_h5_attr_guard *guard);

#endif
