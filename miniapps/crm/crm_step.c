/* The CRM step and the global step, for every variant and backend.
 *
 * The two variants differ in one thing: how many instances each phase's
 * loop nests (CPU) or kernels (CUDA) cover. `percrm` runs each phase once
 * per instance, the loop over instances outside the CRM code's loop nests;
 * `batched` runs it once over the whole group, the instance index inside,
 * or once per chunk of --chunk CRMs (E3SM's PCOLS: the columns one call
 * hands the CRM). The phases keep their order (each phase over every chunk
 * before the next phase) and the group reductions still cover the group,
 * so the per-point arithmetic and its order are the same for every block
 * size, hence bit for bit. (E3SM runs the whole CRM on one chunk before
 * the next, with the chunk as the sub-cycling group: that order changes
 * the answer whenever sub-cycle counts differ between chunks.)
 *
 * Sub-cycling follows the report: the group's worst CRM sets the count and
 * every CRM obeys it, which keeps a single control flow (one kernel
 * sequence) for the group. The group is what the driver's reduction spans
 * (all ranks by default, so answers do not depend on the rank count). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "crm.h"
#include "crm_kernel.h"

static crm_range block_from(const crm_state *s, long first) {
  long left = s->g.ninst - first;
  return (crm_range){first, left < s->chunk ? left : s->chunk};
}
/* Runs `call` (which names the range r) on each block of s->chunk CRMs. */
#define CRM_EACH_BLOCK(s, call)                                                                    \
  for (crm_range r = block_from(s, 0); r.count > 0; r = block_from(s, r.first + r.count)) MAPP_TRY(call)

static int group_max(crm_state *s, double *values, int n) {
  return s->group_max ? s->group_max(s->group_ctx, values, n) : MAPP_OK;
}

/* --------------------------------------------------------------- NaN guard */

static const char *const guarded_names[CRM_GUARDED_FIELDS] = {"u", "w", "t", "qt", "qp"};

/* Key of a point, ordered by field, global instance, level, column, so the
 * group agrees on the first bad point with one max-reduction of 2^53 - key. */
#define CRM_KEY_TOP 9007199254740992.0 /* 2^53: keys below it are exact */

static int report_nonfinite(const crm_state *s, double key, long global_instances) {
  long rows = s->g.rows, nx = s->g.nx, k = (long)key;
  long i = k % nx, level = k / nx % rows, gc = k / nx / rows % global_instances;
  int f = (int)(k / nx / rows / global_instances);
  long step = s->crm_step;
  return mapp_fail(MAPP_ERR_VERIFY,
                   "non-finite %s in CRM %ld (global index), level %ld, x column %ld, after CRM step "
                   "%ld (global step %ld)",
                   guarded_names[f], gc, level, i, step, (step - 1) / s->cfg.crm_steps + 1);
}

static int guard(crm_state *s) {
  long where;
  MAPP_TRY(s->ops->first_nonfinite(s, &where));
  long N = crm_field_size(&s->g), G = s->cfg.instances;
  double bad = -1.0;
  if (where >= 0) {
    long f = where / N, n = where % N, c = n / s->g.stride;
    bad = CRM_KEY_TOP - ((double)(f * G + s->first + c) * (double)s->g.stride + (double)(n % s->g.stride));
  }
  MAPP_TRY(group_max(s, &bad, 1));
  return bad < 0.0 ? MAPP_OK : report_nonfinite(s, CRM_KEY_TOP - bad, G);
}

/* ------------------------------------------------------------- sub-cycling */

/* This rank's worst cell: its Courant number, key and wind speed (host view). */
static void worst_cell(const crm_state *s, double *cfl, double *key, double *speed) {
  const crm_view *v = &s->host;
  *cfl = -1.0;
  *key = *speed = -1.0;
  for (long c = 0; c < s->g.ninst; ++c)
    for (long k = 0; k < s->g.nz; ++k)
      for (long i = 0; i < s->g.nx; ++i) {
        double here = crm_cfl_cell(v, s->cfg.dt, c, k, i);
        if (here <= *cfl) continue;
        long n = crm_ix(&s->g, c, k, i);
        *cfl = here;
        *key = (double)(s->first + c) * (double)s->g.stride + (double)(k * s->g.nx + i);
        *speed = fmax(fmax(fabs(v->u[n]), fabs(v->u[crm_east(&s->g, n, i)])),
                      fmax(fabs(v->w[n]), fabs(v->w[n + s->g.nx])));
      }
}

/* Too many sub-cycles: every rank names the same CRM, the group's worst
 * (three one-value reductions, on this error path only). */
static int too_many_cycles(crm_state *s, long cycles) {
  MAPP_TRY(s->ops->to_host(s, CRM_SYNC_ALL));
  double cfl, key, speed;
  worst_cell(s, &cfl, &key, &speed);
  double worst = cfl, holder, named;
  MAPP_TRY(group_max(s, &worst, 1));
  holder = cfl == worst ? key : -1.0;
  MAPP_TRY(group_max(s, &holder, 1));
  named = holder == key ? speed : -1.0;
  MAPP_TRY(group_max(s, &named, 1));
  long k = (long)holder;
  return mapp_fail(MAPP_ERR_INPUT,
                   "CRM %ld (global index) needs %ld sub-cycles, more than %d: a wind of %.4g m/s at "
                   "level %ld, x column %ld gives a Courant number of %.3g at dt %g s",
                   k / s->g.stride, cycles, CRM_MAX_CYCLES, named, k % s->g.stride / s->g.nx,
                   k % s->g.nx, worst, s->cfg.dt);
}

/* A non-finite Courant number comes from a non-finite field: name it. */
static int nonfinite_rate(crm_state *s, const char *what, double value) {
  MAPP_TRY(guard(s));
  return mapp_fail(MAPP_ERR_VERIFY, "the %s Courant number is %g at CRM step %ld", what, value, s->crm_step);
}

static int dynamics_cycles(crm_state *s, int *cycles) {
  double cfl;
  MAPP_TRY(s->ops->max_cfl(s, &cfl));
  MAPP_TRY(group_max(s, &cfl, 1));
  if (!isfinite(cfl)) return nonfinite_rate(s, "dynamics", cfl);
  long n = cfl > CRM_CFL_MAX ? (long)ceil(cfl / CRM_CFL_MAX) : 1;
  if (n > CRM_MAX_CYCLES) return too_many_cycles(s, n);
  *cycles = (int)n;
  if (*cycles > s->max_cycles) s->max_cycles = *cycles;
  return MAPP_OK;
}

/* Physical fall speeds stay below ~15 m/s; thousands of sub-cycles mean
 * a broken rain field, not weather. */
static int fall_cycles(crm_state *s, int *cycles) {
  double cfl;
  MAPP_TRY(s->ops->max_fall_cfl(s, &cfl));
  MAPP_TRY(group_max(s, &cfl, 1));
  if (!isfinite(cfl) || cfl > 1000.0 * CRM_FALL_CFL_MAX) return nonfinite_rate(s, "rain fall", cfl);
  *cycles = cfl > CRM_FALL_CFL_MAX ? (int)ceil(cfl / CRM_FALL_CFL_MAX) : 1;
  if (*cycles > s->max_fall_cycles) s->max_fall_cycles = *cycles;
  return MAPP_OK;
}

/* Adams-Bashforth weights for the next sub-step of length dt: the history
 * restarts (Euler, AB2, then AB3) whenever the sub-step length changes. */
static crm_ab next_ab(crm_state *s, double dt) {
  static const double weights[3][3] = {{1.0, 0.0, 0.0}, {1.5, -0.5, 0.0}, {23.0 / 12, -16.0 / 12, 5.0 / 12}};
  if (dt != s->ab_dt) s->ab_order = 0;
  s->ab_dt = dt;
  if (s->ab_order < 3) ++s->ab_order;
  s->ab_slot = (s->ab_slot + 2) % 3; /* the previous newest becomes slot[1] */
  crm_ab ab = {.dt = dt, .slot = {s->ab_slot, (s->ab_slot + 1) % 3, (s->ab_slot + 2) % 3}};
  memcpy(ab.a, weights[s->ab_order - 1], sizeof ab.a);
  return ab;
}

/* ------------------------------------------------------------------ steps */

static int dynamics(crm_state *s, double dt) {
  const crm_ops *o = s->ops;
  crm_ab ab = next_ab(s, dt);
  CRM_EACH_BLOCK(s, o->means(s, r));
  CRM_EACH_BLOCK(s, o->momentum(s, r, &ab));
  CRM_EACH_BLOCK(s, o->pressure(s, r, dt));
  CRM_EACH_BLOCK(s, o->advect(s, r, dt));
  return MAPP_OK;
}

/* The rest of the model's CPU time (--host-work-us per column per global
 * step), a CRM step's share of it: spent by this rank's thread right after
 * the step's dynamics is issued, so on cuda it overlaps those kernels (as
 * the dycore and the other physics run on the host while the GPU works),
 * and on the CPU backends it runs between the CRM's phases. A spin on the
 * clock: CPU time, not sleep. */
static void host_work(crm_state *s) {
  if (!(s->exec.host_work_us > 0)) return;
  double seconds = s->exec.host_work_us * 1e-6 * (double)s->g.ninst / (double)s->cfg.crm_steps;
  double start = mapp_now(), end = start + seconds, now = start;
  while (now < end) now = mapp_now();
  s->host_work_s += now - start;
}

int crm_step(crm_state *s) {
  const crm_ops *o = s->ops;
  if (s->cfg.forcing) CRM_EACH_BLOCK(s, o->forcing(s, r));
  int cycles = 1, falls = 1;
  MAPP_TRY(dynamics_cycles(s, &cycles));
  for (int cycle = 0; cycle < cycles; ++cycle) MAPP_TRY(dynamics(s, s->cfg.dt / cycles));
  host_work(s);
  CRM_EACH_BLOCK(s, o->micro(s, r));
  MAPP_TRY(fall_cycles(s, &falls));
  CRM_EACH_BLOCK(s, o->fall(s, r, falls));
  ++s->crm_step;
  return guard(s);
}

int crm_project(crm_state *s) {
  const crm_view *v = &s->host;
  /* the current velocities become the prediction the projection corrects */
  MAPP_TRY(s->ops->to_host(s, CRM_SYNC_ALL));
  memcpy(v->us, v->u, sizeof(double) * (size_t)crm_field_size(&s->g));
  memcpy(v->ws, v->w, sizeof(double) * (size_t)crm_field_size(&s->g));
  MAPP_TRY(s->ops->to_device(s, CRM_SYNC_ALL));
  CRM_EACH_BLOCK(s, s->ops->pressure(s, r, s->cfg.dt));
  return s->ops->to_host(s, CRM_SYNC_ALL);
}

/* Level means of t, qt, u and the mean surface rain of each instance. */
static int diagnose(crm_state *s, double sign, double *tend, double *rain) {
  MAPP_TRY(s->ops->level_means(s, (crm_range){0, s->g.ninst}));
  MAPP_TRY(s->ops->to_host(s, CRM_SYNC_DIAG));
  const crm_view *v = &s->host;
  long M = s->g.ninst * s->g.rows;
  for (long q = 0; q < 3 * M; ++q) tend[q] += sign * v->mean[q]; /* t, qt, u are the first three means */
  for (long c = 0; c < s->g.ninst; ++c) {
    double sum = 0.0;
    for (long i = 0; i < s->g.nx; ++i) sum += v->precip[c * s->g.nx + i];
    rain[c] += sign * sum / (double)s->g.nx;
  }
  return MAPP_OK;
}

int crm_global_step(crm_state *s, double *tend, double *rain) {
  const crm_view *v = &s->host;
  long M = s->g.ninst * s->g.rows;
  double span = s->cfg.dt * (double)s->cfg.crm_steps;
  memset(tend, 0, sizeof(double) * 3 * (size_t)M);
  memset(rain, 0, sizeof(double) * (size_t)s->g.ninst);
  MAPP_TRY(diagnose(s, -1.0, tend, rain));
  for (long n = 0; n < s->cfg.crm_steps; ++n) MAPP_TRY(crm_step(s));
  MAPP_TRY(diagnose(s, 1.0, tend, rain));
  /* What the global model takes: the CRM's change beyond the large-scale
   * forcing; its column then holds the CRM mean (the nudging target). */
  for (long q = 0; q < 3 * M; ++q) {
    v->col[q] = v->mean[q];
    tend[q] = tend[q] / span - (q < 2 * M ? v->ls[q] : 0.0);
  }
  for (long c = 0; c < s->g.ninst; ++c) rain[c] /= span;
  return s->ops->to_device(s, CRM_SYNC_COLUMNS);
}
