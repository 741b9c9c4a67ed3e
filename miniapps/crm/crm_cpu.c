/* The CPU backend's operations table; its data lives in the host view. */
#include <stdlib.h>

#include "crm_cpu.h"

static int level_means(crm_state *s, crm_range r) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  CRM_FOR_CJ(r, v->g.nz) crm_level_means(v, c, j);
  return MAPP_OK;
}

/* The lowest index of a non-finite value in the guarded fields, so the
 * report names the same point whatever the thread count. */
static int first_nonfinite(crm_state *s, long *where) {
  const bool parallel = crm_cpu_of(s)->parallel;
  const crm_view *v = &s->host;
  long N = crm_field_size(&v->g), first = CRM_GUARDED_FIELDS * N;
  for (int f = 0; f < CRM_GUARDED_FIELDS && first == CRM_GUARDED_FIELDS * N; ++f) {
    const double *a = crm_guarded_field(v, f);
#pragma omp parallel for reduction(min : first) if (parallel)
    for (long n = 0; n < N; ++n)
      if (!isfinite(a[n]) && f * N + n < first) first = f * N + n;
  }
  *where = first < CRM_GUARDED_FIELDS * N ? first : -1;
  return MAPP_OK;
}

static int nothing_to_move(crm_state *s, int what) {
  (void)s;
  (void)what;
  return MAPP_OK;
}

static void release(crm_state *s) {
  if (!s->backend) return;
  crm_cpu_pressure_release(s);
  free(s->backend);
  s->backend = NULL;
}

static const crm_ops cpu_ops = {
    .name = "cpu",
    .forcing = crm_cpu_forcing,
    .max_cfl = crm_cpu_max_cfl,
    .means = crm_cpu_means,
    .momentum = crm_cpu_momentum,
    .pressure = crm_cpu_pressure,
    .advect = crm_cpu_advect,
    .micro = crm_cpu_micro,
    .max_fall_cfl = crm_cpu_max_fall_cfl,
    .fall = crm_cpu_fall,
    .level_means = level_means,
    .first_nonfinite = first_nonfinite,
    .to_host = nothing_to_move,
    .to_device = nothing_to_move,
    .release = release,
};

int crm_cpu_attach(crm_state *s, bool parallel) {
  crm_cpu *b;
  MAPP_TRY(mapp_calloc((void **)&b, 1, sizeof *b, "the CPU backend"));
  b->parallel = parallel;
  s->backend = b;
  s->ops = &cpu_ops;
  return crm_cpu_pressure_plans(s);
}
