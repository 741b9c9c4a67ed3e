/* Test-only: bugs planted into mapp-crm without touching its code. Linked
 * with -Wl,--wrap=crm_run_create into a copy of mapp-crm (main.c and the
 * library); MAPP_CRM_PLANT picks the bug, wrapped around the backend's ops
 * table after the run is created:
 *   advection  the scalar advection of CRM step 3 is skipped;
 *   forcing    the first CRM of each rank gets no forcing or nudging.
 * The constant bugs (gravity, accretion rate off by 1e-6) are builds of
 * the library with those constants predefined (tests/CMakeLists.txt). The
 * envelope test (crm.envelope.*) must see every one of them fail. */
#include <stdlib.h>
#include <string.h>

#include "crm.h"

int __real_crm_run_create(mapp_run *run, const crm_config *cfg, const crm_columns *cols, const crm_run_options *opt,
                          void **state);

static crm_ops planted_ops;
static const crm_ops *shipped_ops;

static int advect_but_step_3(crm_state *s, crm_range r, double dt) {
  return s->crm_step == 3 ? MAPP_OK : shipped_ops->advect(s, r, dt);
}

/* The ranges a backend sees cover one CRM (percrm) or all (batched): drop
 * the rank's first CRM from either. */
static int forcing_but_first_crm(crm_state *s, crm_range r) {
  if (r.first == 0) ++r.first, --r.count;
  return r.count > 0 ? shipped_ops->forcing(s, r) : MAPP_OK;
}

int __wrap_crm_run_create(mapp_run *run, const crm_config *cfg, const crm_columns *cols, const crm_run_options *opt,
                          void **state) {
  MAPP_TRY(__real_crm_run_create(run, cfg, cols, opt, state));
  const char *plant = getenv("MAPP_CRM_PLANT");
  if (!plant || !*plant) return MAPP_OK;
  crm_state *s = &((crm_run *)*state)->s;
  shipped_ops = s->ops;
  planted_ops = *s->ops;
  if (strcmp(plant, "advection") == 0) planted_ops.advect = advect_but_step_3;
  else if (strcmp(plant, "forcing") == 0) planted_ops.forcing = forcing_but_first_crm;
  else return mapp_fail(MAPP_ERR_INPUT, "MAPP_CRM_PLANT: unknown bug '%s' (advection, forcing)", plant);
  s->ops = &planted_ops;
  return MAPP_OK;
}
