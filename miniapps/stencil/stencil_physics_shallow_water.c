/* The shallow-water program's physics: a depth bump on a beta plane with
 * walls; its arguments (spacing, time step from the gravity-wave Courant
 * number, Coriolis, damping), initial states (bump, rest, geostrophic) and
 * invariants (mass, rest, geostrophic balance). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"

/* Physical constants of the test case. */
#define MEAN_DEPTH 100.0 /* m */
#define GRAVITY 9.81
#define SPACING 1.0e5 /* m */
#define F0 1.0e-4
#define BETA 2.0e-12
#define DAMPING 0.02 /* nu dt / dx^2 */

/* Bounds of the invariants (measured, with margin; see README.md). */
#define MASS_BOUND 1e-12        /* relative change of the total mass: round-off */
#define GEOSTROPHIC_BOUND 0.05  /* max |h - h0| over the bump's height */

static void arguments(stencil_state *s) {
  stencil_args *a = &s->args;
  double c = sqrt(GRAVITY * MEAN_DEPTH);
  a->dx = a->dy = SPACING;
  a->dt = s->cfg.cfl * SPACING / c;
  a->g = GRAVITY, a->f0 = F0, a->beta = BETA;
  a->nu = DAMPING * SPACING * SPACING / a->dt;
  a->rdx = 1.0 / a->dx;
  a->rdy = 1.0 / a->dy;
}

/* h, u and v are the table's first three fields (its state). */
static double depth(const stencil_state *s, long k) { return s->state_fields[0][k]; }
static double abs_velocity(const stencil_state *s, long k) {
  double u = fabs(s->state_fields[1][k]), v = fabs(s->state_fields[2][k]);
  return u > v ? u : v;
}
static double depth_change(const stencil_state *s, long k) { return fabs(s->state_fields[0][k] - s->initial[k]); }

/* The analytic depth of the bump (global coordinates in cells). */
static double bump_depth(const stencil_config *c, double x, double y) {
  double cx = 0.5 * (double)c->nx, cy = 0.5 * (double)c->ny;
  double sigma = 0.1 * (double)(c->nx < c->ny ? c->nx : c->ny);
  double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
  return MEAN_DEPTH * (1.0 + c->amplitude * exp(-0.5 * r2 / (sigma * sigma)));
}

static double coriolis_at(const stencil_args *a, double y_cells) {
  return a->f0 + a->beta * (y_cells - 0.5 * (double)a->ny) * a->dy;
}

/* Initial state from global indices only, so any layout starts the same. */
static int initialise(stencil_state *s) {
  const stencil_config *c = &s->cfg;
  const stencil_args *a = &s->args;
  double *h = stencil_state_field(s, "h"), *u = stencil_state_field(s, "u"), *v = stencil_state_field(s, "v");
  if (!h || !u || !v) return mapp_fail(MAPP_ERR_INPUT, "program %s has no state fields h, u and v", s->program.name);
  for (long j = 0; j < a->ly; ++j)
    for (long i = 0; i < a->lx; ++i) {
      long k = a->origin + j * a->stride + i, gi = a->i0 + i, gj = a->j0 + j;
      double x = (double)gi + 0.5, y = (double)gj + 0.5; /* cell centre, in cells */
      h[k] = c->init == STENCIL_INIT_REST ? MEAN_DEPTH : bump_depth(c, x, y);
      u[k] = v[k] = 0.0;
      if (c->init == STENCIL_INIT_GEOSTROPHIC) {
        /* f u = -g dh/dy on the west face, f v = g dh/dx on the south face */
        double xw = (double)gi, ys = (double)gj;
        double dhdy = (bump_depth(c, xw, y + 0.5) - bump_depth(c, xw, y - 0.5)) / a->dy;
        double dhdx = (bump_depth(c, x + 0.5, ys) - bump_depth(c, x - 0.5, ys)) / a->dx;
        u[k] = gi == 0 ? 0.0 : -a->g * dhdy / coriolis_at(a, y);
        v[k] = gj == 0 ? 0.0 : a->g * dhdx / coriolis_at(a, ys);
      }
    }
  /* test hook: a NaN in the initial wind, for the --check nan test */
  const char *brk = s->cfg.brk;
  if (brk && !strcmp(brk, "nan") && s->cfg.nx / 2 >= a->i0 && s->cfg.nx / 2 < a->i0 + a->lx &&
      s->cfg.ny / 2 >= a->j0 && s->cfg.ny / 2 < a->j0 + a->ly)
    u[a->origin + (s->cfg.ny / 2 - a->j0) * a->stride + (s->cfg.nx / 2 - a->i0)] = NAN;
  return stencil_reduce(s, MPI_SUM, depth, &s->conserved0[0]);
}

static void apply_break(stencil_state *s, const char *b) {
  const stencil_args *a = &s->args;
  double *h = stencil_state_field(s, "h"), *u = stencil_state_field(s, "u");
  long k = a->origin + (a->ly / 2) * a->stride + a->lx / 2;
  if (!strcmp(b, "mass")) h[k] *= 1.0 + 1e-9;
  if (!strcmp(b, "rest")) u[k] += 1e-300;
  if (!strcmp(b, "geostrophic")) h[k] += 2 * GEOSTROPHIC_BOUND * s->cfg.amplitude * 100.0;
  if (!strcmp(b, "answer")) h[k] = nextafter(h[k], 1e300);
}

static int verify(mapp_run *run, stencil_state *s) {
  double mass, vmax, change;
  MAPP_TRY(stencil_reduce(s, MPI_SUM, depth, &mass));
  MAPP_TRY(stencil_reduce(s, MPI_MAX, abs_velocity, &vmax));
  MAPP_TRY(stencil_reduce(s, MPI_MAX, depth_change, &change));
  mapp_run_check(run, "finite", isfinite(mass) && isfinite(vmax) && isfinite(change), isfinite(vmax) ? 0.0 : 1.0, 0.0);
  double drift = fabs(mass - s->conserved0[0]) / s->conserved0[0];
  mapp_run_check(run, "mass-conservation", drift <= MASS_BOUND, drift, MASS_BOUND);
  if (s->cfg.init == STENCIL_INIT_REST) {
    double worst = vmax > change ? vmax : change;
    mapp_run_check(run, "rest-stays-at-rest", worst == 0.0, worst, 0.0);
  }
  if (s->cfg.init == STENCIL_INIT_GEOSTROPHIC) {
    double rel = change / (s->cfg.amplitude * 100.0);
    mapp_run_check(run, "geostrophic-steady", rel <= GEOSTROPHIC_BOUND, rel, GEOSTROPHIC_BOUND);
  }
  return MAPP_OK;
}

const stencil_physics stencil_physics_shallow_water = {
    .inits = "bump|rest|geostrophic",
    .arguments = arguments,
    .initialise = initialise,
    .verify = verify,
    .apply_break = apply_break,
};
