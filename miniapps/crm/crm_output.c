/* The answer of a crm run in HDF5: final CRM fields, the last global
 * step's tendencies, surface rain and cloud water path, each with the
 * global instance index as its first dimension (one slab per rank). */
#include <stdlib.h>

#include "crm.h"

typedef struct {
  const char *name;
  const double *data;
  int ndims;
  long dims[3]; /* after the instance dimension */
  long stride;  /* doubles between instances */
} crm_output_field;

static int write_all(const crm_state *s, hid_t file, const crm_output_field *fields, int n, long answered) {
  for (int f = 0; f < n; ++f) {
    long count = s->g.ninst, first = count ? s->first : answered;
    mapp_h5_slab slab = {.ndims = fields[f].ndims + 1, .global_dims = {answered},
                         .first = first, .count = count, .stride = fields[f].stride};
    for (int d = 0; d < fields[f].ndims; ++d) slab.global_dims[d + 1] = fields[f].dims[d];
    MAPP_TRY(mapp_h5_write_field(file, fields[f].name, &slab, fields[f].data));
  }
  return MAPP_OK;
}

static int write_attributes(const crm_state *s, hid_t file) {
  MAPP_TRY(mapp_h5_attr_long(file, "nx", s->g.nx));
  MAPP_TRY(mapp_h5_attr_long(file, "nz", s->g.nz));
  MAPP_TRY(mapp_h5_attr_long(file, "crm_steps", s->cfg.crm_steps));
  MAPP_TRY(mapp_h5_attr_double(file, "dx", s->cfg.dx));
  MAPP_TRY(mapp_h5_attr_double(file, "dz", s->cfg.dz));
  return mapp_h5_attr_double(file, "dt", s->cfg.dt);
}

int crm_write_output(const crm_state *s, MPI_Comm comm, const char *path, const double *tend,
                     const double *rain, long answered, const mapp_record *rec) {
  const crm_view *v = &s->host;
  const crm_grid *g = &s->g;
  long N = g->ninst * g->stride, M = g->ninst * g->rows, S = g->stride, R = g->rows;
  double *cwp;
  MAPP_TRY(mapp_alloc((void **)&cwp, sizeof(double) * (size_t)(g->ninst * g->nx + 1), "cloud water path"));
  crm_cloud_water_path(s, cwp);
  const crm_output_field fields[] = {
      {"u", v->u, 2, {g->nz, g->nx}, S},
      {"w", v->w, 2, {g->nz + 1, g->nx}, S},
      {"t", v->scal, 2, {g->nz, g->nx}, S},
      {"qt", v->scal + N, 2, {g->nz, g->nx}, S},
      {"qp", v->scal + 2 * N, 2, {g->nz, g->nx}, S},
      {"qc", v->qc, 2, {g->nz, g->nx}, S},
      {"tend_t", tend, 1, {g->nz}, R},
      {"tend_qt", tend + M, 1, {g->nz}, R},
      {"tend_u", tend + 2 * M, 1, {g->nz}, R},
      {"precip_acc", v->precip, 1, {g->nx}, g->nx},
      {"cwp", cwp, 1, {g->nx}, g->nx},
      {"rain", rain, 0, {0}, 1},
  };
  hid_t file;
  int status = mapp_h5_create(comm, path, &file);
  if (status == MAPP_OK) {
    status = write_all(s, file, fields, (int)(sizeof fields / sizeof fields[0]), answered);
    if (status == MAPP_OK) status = mapp_h5_write_provenance(file, comm, rec);
    if (status == MAPP_OK) status = write_attributes(s, file);
    int closed = mapp_h5_close(file);
    if (status == MAPP_OK) status = closed;
  }
  free(cwp);
  return status;
}
