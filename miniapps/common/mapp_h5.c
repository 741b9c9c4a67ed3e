#include "mapp_h5.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapp_build_info.h"
#include "mapp_error_mpi.h"
#include "mapp_h5_io.h"

/* HDF5 prints its own error stack by default; our messages say what failed. */
static void silence_hdf5(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/* ---------------------------------------------------------------- answers being written
 *
 * A file made by mapp_h5_create is written under a temporary name
 * (PATH.partial) and renamed to PATH by mapp_h5_close only when every rank
 * wrote every piece, so a failed run never leaves a file that reads as an
 * answer. Every collective step on it ends with the ranks agreeing on its
 * status (an MPI_Allreduce): a step that failed on one rank (a full disk)
 * fails on all, with the first failing rank's message, so the callers'
 * `if (status == MAPP_OK)` chains take the same branch everywhere and no
 * rank enters a collective the others skip. */
typedef struct {
  hid_t file; /* -1: the slot is free */
  MPI_Comm comm;
  int status; /* agreed: the first failure of a step on any rank */
  char *path, *partial;
} written_file;

#define MAX_WRITTEN_FILES 16
static written_file written[MAX_WRITTEN_FILES];
static bool written_ready;

static written_file *written_find(hid_t file) {
  for (int i = 0; written_ready && i < MAX_WRITTEN_FILES; ++i)
    if (written[i].path && written[i].file == file) return &written[i];
  return NULL;
}

static written_file *written_slot(void) {
  for (int i = 0; i < MAX_WRITTEN_FILES; ++i)
    if (!written_ready || !written[i].path) {
      if (!written_ready)
        for (int k = 0; k < MAX_WRITTEN_FILES; ++k) written[k] = (written_file){.file = -1};
      written_ready = true;
      return &written[i];
    }
  return NULL;
}

static void written_release(written_file *w) {
  free(w->path);
  free(w->partial);
  *w = (written_file){.file = -1};
}

/* Every rank passes its status of a step and gets the worst back; ranks
 * that did not fail take the first failing rank's message, so whichever
 * rank prints names what went wrong. */
static int agree_on(MPI_Comm comm, int status) {
  int worst = status;
  if (MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) worst = MAPP_ERR_SYSTEM;
  if (worst == MAPP_OK) return MAPP_OK;
  int rank, candidate, first = 0;
  MPI_Comm_rank(comm, &rank);
  candidate = status != MAPP_OK ? rank : INT_MAX;
  MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, comm);
  char message[512] = "";
  if (first == INT_MAX) first = 0; /* the reduction itself failed */
  if (rank == first) snprintf(message, sizeof message, "%s", mapp_error_message());
  MPI_Bcast(message, sizeof message, MPI_CHAR, first, comm);
  if (status == MAPP_OK) mapp_fail(worst, "%s", message[0] ? message : "an HDF5 write failed on another rank");
  return worst;
}

int mapp_h5_agree(MPI_Comm comm, int status) { return agree_on(comm, status); }

/* A step on a file being written: skipped (with the agreed failure) once
 * one failed; otherwise its local status agreed over the file's ranks.
 * Files opened for reading, or not by mapp_h5_create, are not agreed on. */
static int agree_step(written_file *w, int status) {
  if (!w) return status;
  status = agree_on(w->comm, status);
  if (status != MAPP_OK && w->status == MAPP_OK) w->status = status;
  return status;
}

/* Attributes (mapp_h5_attr.c) on a file being written: skipped with the
 * agreed failure once a step failed, skipped but agreed on by a rank that
 * does not hold the file, and otherwise written and agreed on. */
static bool attr_begin(hid_t obj, int *status, const char **label) {
  written_file *w = written_find(obj);
  if (!w) return true;
  *label = w->path;
  if (w->status != MAPP_OK) {
    *status = w->status;
    return false;
  }
  if (w->file < 0) {
    *status = agree_step(w, MAPP_OK);
    return false;
  }
  return true;
}

static int attr_end(hid_t obj, int status) { return agree_step(written_find(obj), status); }

static const mapp_h5_attr_guard written_guard = {.begin = attr_begin, .end = attr_end};

static const char *file_label(hid_t file) {
  written_file *w = written_find(file);
  return w ? w->path : "the HDF5 file";
}

static int open_with(MPI_Comm comm, const char *path, const char *name, bool create, hid_t *file) {
  silence_hdf5();
  *file = -1;
  hid_t fapl = mapp_h5_io_file_access(comm);
  if (fapl < 0) return mapp_fail(MAPP_ERR_SYSTEM, "cannot set up HDF5 file access for '%s'", name);
  *file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (*file < 0)
    return mapp_fail(MAPP_ERR_INPUT, "cannot %s HDF5 file '%s'", create ? "create" : "open", name);
  return MAPP_OK;
}

/* Rank 0 looks at the target (the ranks may not share a view of /dev):
 * an existing device, pipe or folder cannot become an HDF5 answer, and
 * writing one through a rename would replace it. */
static int check_target(MPI_Comm comm, const char *path) {
  int rank, kind = 0; /* 0 absent or a regular file, 1 a directory, 2 anything else */
  MPI_Comm_rank(comm, &rank);
  struct stat st;
  if (rank == 0 && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) kind = S_ISDIR(st.st_mode) ? 1 : 2;
  MPI_Bcast(&kind, 1, MPI_INT, 0, comm);
  if (kind == 1) return mapp_fail(MAPP_ERR_INPUT, "cannot write the HDF5 answer '%s': it is a folder", path);
  if (kind == 2)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot write the HDF5 answer '%s': it is a device or pipe, not a regular file",
                     path);
  return MAPP_OK;
}

int mapp_h5_create(MPI_Comm comm, const char *path, hid_t *file) {
  *file = -1;
  mapp_h5_attr_set_guard(&written_guard);
  MAPP_TRY(check_target(comm, path));
  written_file *w = written_slot();
  if (!w) return mapp_fail(MAPP_ERR_SYSTEM, "more than %d HDF5 files open for writing at once", MAX_WRITTEN_FILES);
  size_t len = strlen(path);
  w->path = strdup(path);
  w->partial = malloc(len + sizeof ".partial");
  if (!w->path || !w->partial) {
    written_release(w);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory opening '%s'", path);
  }
  snprintf(w->partial, len + sizeof ".partial", "%s.partial", path);
  w->comm = comm;
  /* A rank that does not hold the file (serial HDF5: all but rank 0) gets
   * an id no HDF5 object has, its own per slot, so written_find tells its
   * files apart. */
  bool holds = mapp_h5_io_holds_file(comm);
  int opened = holds ? open_with(comm, w->partial, path, true, &w->file) : MAPP_OK;
  if (!holds) w->file = -2 - (hid_t)(w - written);
  int status = agree_on(comm, opened);
  if (status != MAPP_OK) {
    /* Open MPI opens collectively, so a failure is every rank's. */
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) unlink(w->partial);
    written_release(w);
    return status;
  }
  *file = w->file;
  return MAPP_OK;
}

int mapp_h5_open_read(MPI_Comm comm, const char *path, hid_t *file) { return open_with(comm, path, path, false, file); }

/* After a failed write: the partial file's data is given back to the disk
 * first (rank 0 truncates it), so that closing, which writes HDF5's
 * metadata, finds room on a full disk. HDF5 1.10 leaves a file whose close
 * failed half-destroyed and crashes on it at MPI_Finalize, so the close must
 * succeed even on this path. */
static void release_space(const written_file *w) {
  int rank;
  MPI_Comm_rank(w->comm, &rank);
  if (rank == 0 && truncate(w->partial, 0) != 0) { /* nothing more to give back */
  }
  MPI_Barrier(w->comm);
}

/* Success: the partial file becomes the answer. Failure: it is removed, and
 * so is an earlier answer under the same name, which this run was asked to
 * replace (H5F_ACC_TRUNC would have destroyed it as well). Rank 0 renames;
 * every rank learns how that went. */
static int publish(const written_file *w, int status) {
  int rank, renamed = 1;
  MPI_Comm_rank(w->comm, &rank);
  if (rank == 0 && status == MAPP_OK) renamed = rename(w->partial, w->path) == 0;
  if (rank == 0 && status != MAPP_OK) {
    unlink(w->partial);
    unlink(w->path);
  }
  MPI_Bcast(&renamed, 1, MPI_INT, 0, w->comm);
  if (status == MAPP_OK && !renamed)
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot rename the finished answer '%s' to '%s'", w->partial, w->path);
  return status;
}

int mapp_h5_close(hid_t file) {
  written_file *w = written_find(file);
  if (!w) return H5Fclose(file) < 0 ? mapp_fail(MAPP_ERR_SYSTEM, "closing an HDF5 file failed") : MAPP_OK;
  int status = w->status;
  if (status != MAPP_OK) release_space(w);
  int closed = file >= 0 && H5Fclose(file) < 0
                   ? mapp_fail(MAPP_ERR_SYSTEM, "finishing the HDF5 answer '%s' failed (its metadata could not be "
                                                "written: disk full or I/O error)", w->path)
                   : MAPP_OK;
  closed = agree_on(w->comm, closed);
  if (status == MAPP_OK) status = closed;
  status = publish(w, status);
  written_release(w);
  return status;
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
int mapp_h5_make_spaces(const mapp_h5_slab *s, hid_t *file_space, hid_t *mem_space) {
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
  if (*file_space >= 0 && *mem_space >= 0) return MAPP_OK;
  if (*file_space >= 0) H5Sclose(*file_space);
  if (*mem_space >= 0) H5Sclose(*mem_space);
  *file_space = *mem_space = -1;
  return mapp_fail(MAPP_ERR_SYSTEM, "HDF5 dataspace creation failed");
}

int mapp_h5_write_field(hid_t file, const char *name, const mapp_h5_slab *slab, const double *data) {
  written_file *w = written_find(file);
  if (w && w->status != MAPP_OK) return w->status;
  /* Checked on every rank before the collective write, so a bad slab on
   * one rank cannot leave the others waiting in it. */
  int status = agree_step(w, check_slab(name, slab));
  if (status != MAPP_OK) return status;
  mapp_h5_target target = {.file = file, .comm = w ? w->comm : MPI_COMM_SELF, .label = file_label(file)};
  return agree_step(w, mapp_h5_io_write(&target, name, slab, data));
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
  MAPP_TRY(mapp_h5_make_spaces(slab, &fspace, &mspace));
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t dxpl = mapp_h5_io_transfer();
  herr_t err = dset < 0 ? -1 : H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, data);
  H5Pclose(dxpl);
  if (dset >= 0) H5Dclose(dset);
  H5Sclose(fspace);
  H5Sclose(mspace);
  return err < 0 ? mapp_fail(MAPP_ERR_SYSTEM, "reading field '%s' failed", name) : MAPP_OK;
}

/* A CUDA run's GPU (rank 0's: attributes are collective, every rank writes
 * the same bytes), driver, runtime, nvcc and the architectures built for. */
static int write_gpu_provenance(hid_t file, MPI_Comm comm, const mapp_gpu_info *mine) {
  mapp_gpu_info g = *mine;
  MAPP_MPI(MPI_Bcast(&g, (int)sizeof g, MPI_BYTE, 0, comm));
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", g.cc_major, g.cc_minor);
  const char *strings[][2] = {{"gpu_name", g.name},       {"gpu_compute_capability", cc},
                              {"gpu_driver", g.driver},   {"gpu_runtime", g.runtime},
                              {"nvcc", mapp_cuda_compiler()}, {"cuda_architectures", mapp_cuda_architectures()}};
  for (size_t i = 0; i < sizeof strings / sizeof strings[0]; ++i)
    MAPP_TRY(mapp_h5_attr_string(file, strings[i][0], strings[i][1]));
  return mapp_h5_attr_double(file, "gpu_memory_bytes", g.memory_bytes);
}

int mapp_h5_write_provenance(hid_t file, MPI_Comm comm, const mapp_record *rec) {
  written_file *w = written_find(file);
  if (w && w->status != MAPP_OK) return w->status; /* agreed: every rank skips the broadcast */
  /* Attributes are collective metadata: every rank must write the same
   * bytes, so the clock is read once. */
  char when[32];
  mapp_utc_now(when, sizeof when);
  MAPP_MPI(MPI_Bcast(when, sizeof when, MPI_CHAR, 0, comm));
  char *command = mapp_command_line(rec->argc, rec->argv);
  int status = agree_step(w, command ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory recording provenance"));
  if (status != MAPP_OK) {
    free(command);
    return status;
  }
  const char *strings[][2] = {
      {"app", rec->app},         {"variant", rec->variant},       {"backend", rec->backend},
      {"size", rec->size},       {"scaling", rec->scaling},       {"case", rec->case_name ? rec->case_name : ""},
      {"git_revision", mapp_git_revision}, {"compiler", MAPP_C_COMPILER}, {"flags", MAPP_C_FLAGS},
      {"build_type", MAPP_BUILD_TYPE},     {"date", when},        {"command", command},
  };
  for (size_t i = 0; status == MAPP_OK && i < sizeof strings / sizeof strings[0]; ++i)
    status = mapp_h5_attr_string(file, strings[i][0], strings[i][1] ? strings[i][1] : "");
  free(command);
  MAPP_TRY(status);
  MAPP_TRY(mapp_h5_attr_long(file, "ranks", rec->ranks));
  MAPP_TRY(mapp_h5_attr_long(file, "threads", rec->threads));
  MAPP_TRY(mapp_h5_attr_long(file, "steps", rec->steps));
  return rec->gpu ? write_gpu_provenance(file, comm, rec->gpu) : MAPP_OK;
}
