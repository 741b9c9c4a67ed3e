/* Answer files through parallel HDF5 (mapp_h5_io.h): every rank opens the
 * file over MPI-IO and writes its own hyperslab in one collective call. */
#include "mapp_h5_io.h"

#include "mapp_error.h"

hid_t mapp_h5_io_file_access(MPI_Comm comm) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 && H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0) {
    H5Pclose(fapl);
    return -1;
  }
  return fapl;
}

hid_t mapp_h5_io_transfer(void) {
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

bool mapp_h5_io_holds_file(MPI_Comm comm) {
  (void)comm;
  return true;
}

int mapp_h5_io_write(const mapp_h5_target *t, const char *name, const mapp_h5_slab *slab, const double *data) {
  hid_t fspace = -1, mspace = -1;
  /* Agreed before the collective create, so a rank that failed here cannot
   * leave the others waiting in it. */
  int status = mapp_h5_agree(t->comm, mapp_h5_make_spaces(slab, &fspace, &mspace));
  if (status != MAPP_OK) return status;
  hid_t dset = H5Dcreate2(t->file, name, H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t dxpl = mapp_h5_io_transfer();
  herr_t err = dset < 0 ? -1 : H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, data);
  H5Pclose(dxpl);
  if (dset >= 0 && H5Dclose(dset) < 0) err = -1;
  H5Sclose(fspace);
  H5Sclose(mspace);
  if (err < 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "writing field '%s' to '%s' failed (disk full or I/O error)", name, t->label);
  return MAPP_OK;
}
