/* CPU dynamics: forcing, the group's CFL number, buoyancy means, momentum
 * (Adams-Bashforth 3) and positive-definite scalar advection. */
#include "crm_cpu.h"

int crm_cpu_forcing(crm_state *s, crm_range r) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  CRM_FOR_CJ(r, v->g.nz) crm_force_level(v, c, j);
  return MAPP_OK;
}

int crm_cpu_max_cfl(crm_state *s, double *cfl) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  long nx = v->g.nx, nz = v->g.nz, ninst = v->g.ninst;
  double dt = s->cfg.dt, worst = 0.0;
#pragma omp parallel for collapse(3) reduction(max : worst) if (parallel)
  for (long c = 0; c < ninst; ++c)
    for (long k = 0; k < nz; ++k)
      for (long i = 0; i < nx; ++i) worst = crm_max(worst, crm_cfl_cell(v, dt, c, k, i));
  *cfl = worst;
  return MAPP_OK;
}

int crm_cpu_means(crm_state *s, crm_range r) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  CRM_FOR_CJ(r, v->g.nz) crm_mean_theta_rho(v, c, j);
  return MAPP_OK;
}

int crm_cpu_momentum(crm_state *s, crm_range r, const crm_ab *ab) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  CRM_FOR_CKI(r, 0, v->g.nz + 1, v->g.nx) crm_momentum_face(v, ab, c, k, i);
  return MAPP_OK;
}

/* Three nests: fluxes, then each cell's affordable fraction, then the
 * update (each reads its neighbours' results of the nest before). */
int crm_cpu_advect(crm_state *s, crm_range r, double dt) {
  const crm_view *v = &s->host;
  const bool parallel = crm_cpu_of(s)->parallel;
  long nx = v->g.nx, nz = v->g.nz;
  CRM_FOR_SCKI(r, 0, nz + 1, nx) crm_scalar_fluxes(v, dt, sc, c, k, i);
  CRM_FOR_SCKI(r, 0, nz, nx) crm_scalar_limit(v, sc, c, k, i);
  CRM_FOR_SCKI(r, 0, nz, nx) crm_scalar_update(v, sc, c, k, i);
  return MAPP_OK;
}
