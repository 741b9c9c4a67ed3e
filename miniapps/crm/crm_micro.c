/* CPU one-moment microphysics: cell-local conversions, then rain fall
 * sub-cycled by the group's largest fall-speed Courant number. */
#include "crm_cpu.h"

int crm_cpu_micro(crm_state *s, crm_range r) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  CRM_FOR_CKI(r, 0, v->g.nz, v->g.nx) crm_micro_cell(v, c, k, i);
  return MAPP_OK;
}

int crm_cpu_max_fall_cfl(crm_state *s, double *cfl) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  long nx = v->g.nx, nz = v->g.nz, ninst = v->g.ninst;
  double worst = 0.0;
#pragma omp parallel for collapse(3) reduction(max : worst) if (parallel)
  for (long c = 0; c < ninst; ++c)
    for (long k = 0; k < nz; ++k)
      for (long i = 0; i < nx; ++i) worst = crm_max(worst, crm_fall_cfl_cell(v, c, k, i));
  *cfl = worst;
  return MAPP_OK;
}

/* A column per point: the fall is a dependency chain in z. */
int crm_cpu_fall(crm_state *s, crm_range r, int cycles) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  CRM_FOR_CJ(r, v->g.nx) crm_fall_column(v, c, j, cycles);
  return MAPP_OK;
}
