/* How mapp_h5.c's answer files reach the disk; one of two files is linked:
 *  - mapp_h5_mpio.c (the normal build): parallel HDF5 over MPI-IO, every
 *    rank writing its own hyperslab collectively;
 *  - mapp_h5_gather.c (the SimGrid build, MAPP_SIMULATED): serial HDF5,
 *    because parallel HDF5 is compiled against Open MPI, not SMPI; rank 0
 *    gathers the slabs and alone writes the file.
 * Either way the file is the same: one dataset per field, whatever the rank
 * count. Internal to libmapp. */
#ifndef MAPP_H5_IO_H
#define MAPP_H5_IO_H

#include <stdbool.h>

#include "mapp_h5.h"

/* A field write's target: the file (valid only on ranks that hold it), the
 * ranks writing together and the file's name for messages. */
typedef struct {
  hid_t file;
  MPI_Comm comm;
  const char *label;
} mapp_h5_target;

/* The file access property list to open a file with (-1 on failure). */
hid_t mapp_h5_io_file_access(MPI_Comm comm);
/* The transfer property list a rank reads its slab with. */
hid_t mapp_h5_io_transfer(void);
/* Whether this rank of comm opens a file being written (the others take
 * part in every step but touch no HDF5 handle). */
bool mapp_h5_io_holds_file(MPI_Comm comm);
/* Writes the field; collective over t->comm. Returns this rank's status
 * (mapp_h5.c agrees on it). */
int mapp_h5_io_write(const mapp_h5_target *t, const char *name, const mapp_h5_slab *slab, const double *data);

/* From mapp_h5.c, for the two above. */
/* Every rank's status in, the worst out (with the first failing rank's message). */
int mapp_h5_agree(MPI_Comm comm, int status);
/* The file-side selection of the slab and the memory-side one. */
int mapp_h5_make_spaces(const mapp_h5_slab *s, hid_t *file_space, hid_t *mem_space);

#endif
