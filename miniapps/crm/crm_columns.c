/* Global-model columns that drive the CRMs: synthetic soundings (the
 * standalone-test workflow of the report, in place of E3SM's dumped
 * samples) and their HDF5 form, one dataset per field of shape
 * (columns, levels). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crm.h"
#include "crm_kernel.h"

static const char *const column_fields[] = {"t", "qt", "u", "t_ls", "qt_ls"};
enum { NCOLUMN_FIELDS = 5 };

static double **column_field(crm_columns *c, int f) {
  double **all[NCOLUMN_FIELDS] = {&c->t, &c->qt, &c->u, &c->t_ls, &c->qt_ls};
  return all[f];
}

int crm_columns_alloc(crm_columns *c, long count, long nz, long first) {
  memset(c, 0, sizeof *c);
  c->count = count;
  c->nz = nz;
  c->first = first;
  size_t n = (size_t)(count > 0 ? count : 1) * (size_t)crm_rows(nz);
  for (int f = 0; f < NCOLUMN_FIELDS; ++f)
    MAPP_TRY(mapp_calloc((void **)column_field(c, f), n, sizeof(double), "the global-model columns"));
  return MAPP_OK;
}

int crm_columns_copy(const crm_columns *from, crm_columns *to) {
  MAPP_TRY(crm_columns_alloc(to, from->count, from->nz, from->first));
  size_t bytes = sizeof(double) * (size_t)(from->count > 0 ? from->count : 1) * (size_t)crm_rows(from->nz);
  for (int f = 0; f < NCOLUMN_FIELDS; ++f)
    memcpy(*column_field(to, f), *column_field((crm_columns *)from, f), bytes);
  return MAPP_OK;
}

void crm_columns_free(crm_columns *c) {
  for (int f = 0; f < NCOLUMN_FIELDS; ++f) {
    free(*column_field(c, f));
    *column_field(c, f) = NULL;
  }
}

/* Temperature of the sounding at height z (K). */
static double sounding_temperature(crm_sounding kind, double z, double exner, double warm) {
  if (kind == CRM_SOUNDING_DRY_STABLE) return (300.0 + 3.0e-3 * z) * exner;
  if (kind == CRM_SOUNDING_DRY_NEUTRAL) return 300.0 * exner;
  return fmax(300.0 + warm - 6.5e-3 * z, 202.5 + warm); /* tropical: tropopause near 15 km */
}

/* Relative humidity of the tropical sounding: nearly saturated boundary layer,
 * drying aloft, nearly dry above the tropopause. */
static double relative_humidity(double z, double scale) {
  return z < 15000.0 ? fmax(0.95 * (1.0 - 0.8 * z / 15000.0), 0.05) * scale : 1.0e-3;
}

/* One column: temperature consistent with its own hydrostatic pressure
 * (three fixed-point passes: the dry soundings are defined in theta). */
static void synthesize_one(crm_columns *c, long j, crm_sounding kind, double dz, double wind,
                           double *pres, double *rho, double *exner) {
  long nz = c->nz, p0 = j * crm_rows(nz);
  unsigned long long gi = (unsigned long long)(c->first + j) * 16u;
  double warm = 0.5 * crm_hash_unit(gi), moist = 1.0 + 0.05 * crm_hash_unit(gi + 1);
  double shear = 1.0 + 0.2 * crm_hash_unit(gi + 2), u0 = 5.0 * crm_hash_unit(gi + 3);
  double cool = 1.0 + 0.3 * crm_hash_unit(gi + 4), wet = 1.0 + 0.3 * crm_hash_unit(gi + 5);
  bool tropical = kind == CRM_SOUNDING_TROPICAL;
  double *t = c->t + p0, *qt = c->qt + p0;
  for (long k = 0; k < nz; ++k) exner[k] = 1.0 - 6.5e-3 * (k + 0.5) * dz / 300.0;
  for (int pass = 0; pass < 3; ++pass) {
    for (long k = 0; k < nz; ++k) {
      double z = (k + 0.5) * dz, T = sounding_temperature(kind, z, exner[k], tropical ? warm : 0.0);
      qt[k] = tropical ? relative_humidity(z, moist) * crm_qsat(T, pass ? pres[k] : CRM_PSFC * exner[k]) : 0.0;
      t[k] = T + CRM_GRAV * z / CRM_CP;
    }
    crm_reference_profile(t, qt, nz, dz, pres, rho, exner);
  }
  for (long k = 0; k < nz; ++k) {
    double z = (k + 0.5) * dz;
    c->u[p0 + k] = wind + (tropical ? u0 + 0.5e-3 * z * shear : 0.0);
    /* radiative cooling of 1.5 K/day below the tropopause, moisture
     * convergence in the boundary layer */
    c->t_ls[p0 + k] = tropical && z < 15000.0 ? -1.5 / 86400.0 * cool : 0.0;
    c->qt_ls[p0 + k] = tropical ? 2.0e-8 * exp(-z / 2000.0) * wet : 0.0;
  }
}

int crm_columns_synthesize(crm_columns *c, crm_sounding kind, double dz, double wind) {
  double *work;
  MAPP_TRY(mapp_alloc((void **)&work, 3 * (size_t)c->nz * sizeof(double), "sounding work space"));
  for (long j = 0; j < c->count; ++j) synthesize_one(c, j, kind, dz, wind, work, work + c->nz, work + 2 * c->nz);
  free(work);
  return MAPP_OK;
}

static mapp_h5_slab column_slab(const crm_columns *c, long global_count) {
  return (mapp_h5_slab){.ndims = 2, .global_dims = {global_count, c->nz}, .first = c->first,
                        .count = c->count, .stride = crm_rows(c->nz)};
}

int crm_columns_write(MPI_Comm comm, const char *path, const crm_columns *c, long global_count, double dz) {
  hid_t file;
  MAPP_TRY(mapp_h5_create(comm, path, &file));
  mapp_h5_slab slab = column_slab(c, global_count);
  int status = MAPP_OK;
  for (int f = 0; status == MAPP_OK && f < NCOLUMN_FIELDS; ++f)
    status = mapp_h5_write_field(file, column_fields[f], &slab, *column_field((crm_columns *)c, f));
  if (status == MAPP_OK) status = mapp_h5_attr_string(file, "app", "crm-columns");
  if (status == MAPP_OK) status = mapp_h5_attr_double(file, "dz", dz);
  int closed = mapp_h5_close(file);
  return status != MAPP_OK ? status : closed;
}

/* The file's shape against the run's: the first mismatch is an input error. */
static int check_shape(hid_t file, const char *path, long global_count, long nz) {
  for (int f = 0; f < NCOLUMN_FIELDS; ++f) {
    int ndims;
    long dims[MAPP_H5_MAX_RANK];
    MAPP_TRY(mapp_h5_field_shape(file, column_fields[f], &ndims, dims));
    if (ndims != 2 || dims[0] != global_count || dims[1] != nz)
      return mapp_fail(MAPP_ERR_INPUT,
                       "'%s' holds %s of %ld columns x %ld levels; this run needs %ld columns x %ld levels",
                       path, column_fields[f], dims[0], ndims > 1 ? dims[1] : 0, global_count, nz);
  }
  return MAPP_OK;
}

/* Finite and physical: a bad column is bad input, not a NaN mid-run. */
static int check_values(const crm_columns *c, const char *path) {
  long rows = crm_rows(c->nz);
  for (long j = 0; j < c->count; ++j)
    for (long k = 0; k < c->nz; ++k) {
      long p = j * rows + k;
      if (!(c->t[p] > 100.0 && c->t[p] < 1000.0) || !(c->qt[p] >= 0.0 && c->qt[p] < 0.1) ||
          !isfinite(c->u[p]) || !isfinite(c->t_ls[p]) || !isfinite(c->qt_ls[p]))
        return mapp_fail(MAPP_ERR_INPUT, "'%s': column %ld level %ld is out of range (t %g K, qt %g, u %g)",
                         path, c->first + j, k, c->t[p], c->qt[p], c->u[p]);
    }
  return MAPP_OK;
}

int crm_columns_read(MPI_Comm comm, const char *path, long global_count, long nz, crm_columns *c) {
  hid_t file;
  MAPP_TRY(mapp_h5_open_read(comm, path, &file));
  int status = check_shape(file, path, global_count, nz);
  mapp_h5_slab slab = column_slab(c, global_count);
  for (int f = 0; status == MAPP_OK && f < NCOLUMN_FIELDS; ++f)
    status = mapp_h5_read_field(file, column_fields[f], &slab, *column_field(c, f));
  int closed = mapp_h5_close(file);
  MAPP_TRY(status);
  MAPP_TRY(closed);
  return check_values(c, path);
}
