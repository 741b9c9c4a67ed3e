/* The vertical program's physics: layers of thickness dp carrying a tracer
 * q in a closed box, stirred by a fixed non-divergent wind (from a stream
 * function zero on the walls) and mixed vertically. Its arguments, initial
 * states (a tracer bump, or a constant tracer) and invariants: tracer mass
 * and thickness conserved to round-off, a constant tracer staying
 * constant, and the residual of the vertical solve. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"
#include "stencil_bodies_vertical.h"

#define SPACING 1.0e5   /* m */
#define MEAN_DP 100.0   /* layer thickness */
#define WIND 10.0       /* largest wind speed (m/s) */
#define DIFFUSION 0.5   /* kappa / dp (kappa holding dt): a strongly coupled system */
#define MIX 0.1         /* remap exchange fraction */

/* Bounds (measured, with margin; docs/stencil-programs.md). */
#define MASS_BOUND 1e-12     /* relative change of tracer mass and thickness */
#define CONSTANT_BOUND 1e-13 /* largest |q - 1| of a constant tracer */
#define RESIDUAL_BOUND 1e-12 /* largest |A x - d| / |d| of the solve */

static void arguments(stencil_state *s) {
  stencil_args *a = &s->args;
  a->dx = a->dy = SPACING;
  a->rdx = a->rdy = 1.0 / SPACING;
  a->dt = s->cfg.cfl * SPACING / WIND;
  a->kappa = DIFFUSION * MEAN_DP;
  a->mix = MIX;
}

/* Global position (cells) of the centre, relative to the box's. */
static double bump(const stencil_config *c, double x, double y) {
  double sigma = 0.15 * (double)(c->nx < c->ny ? c->nx : c->ny);
  double dx = x - 0.5 * (double)c->nx, dy = y - 0.5 * (double)c->ny;
  return exp(-0.5 * (dx * dx + dy * dy) / (sigma * sigma));
}

/* The stream function at corner (gi, gj) of level kz: zero on the walls. */
static double stream(const stencil_state *s, long gi, long gj, long kz) {
  const double pi = 3.14159265358979323846;
  double amplitude = WIND * s->args.dy * (double)s->cfg.ny / pi * (1.0 - 0.5 * (double)kz / (double)s->args.nz);
  return amplitude * sin(pi * (double)gi / (double)s->cfg.nx) * sin(pi * (double)gj / (double)s->cfg.ny);
}

static int initialise(stencil_state *s) {
  const stencil_args *a = &s->args;
  double *q = stencil_state_field(s, "q"), *dp = stencil_state_field(s, "dp");
  double *u = stencil_state_field(s, "u"), *v = stencil_state_field(s, "v");
  if (!q || !dp || !u || !v)
    return mapp_fail(MAPP_ERR_INPUT, "program %s has no state fields q, dp, u and v", s->program.name);
  for (long kz = 0; kz < a->nz; ++kz)
    for (long j = 0; j < a->ly; ++j)
      for (long i = 0; i < a->lx; ++i) {
        long k = a->origin + kz * a->plane + j * a->stride + i, gi = a->i0 + i, gj = a->j0 + j;
        double b = bump(&s->cfg, (double)gi + 0.5, (double)gj + 0.5), level = (double)kz / (double)a->nz;
        dp[k] = MEAN_DP * (1.0 + 0.3 * b * (1.0 - level));
        q[k] = s->cfg.init == STENCIL_INIT_CONSTANT ? 1.0 : s->cfg.amplitude * b * level;
        u[k] = -(stream(s, gi, gj + 1, kz) - stream(s, gi, gj, kz)) / a->dy;
        v[k] = (stream(s, gi + 1, gj, kz) - stream(s, gi, gj, kz)) / a->dx;
      }
  /* test hook: a NaN in the bottom level's wind, for the --check nan test */
  const char *brk = s->cfg.brk;
  long ci = s->cfg.nx / 2 - a->i0, cj = s->cfg.ny / 2 - a->j0;
  if (brk && !strcmp(brk, "nan") && ci >= 0 && ci < a->lx && cj >= 0 && cj < a->ly)
    u[a->origin + cj * a->stride + ci] = NAN;
  return MAPP_OK;
}

static double tracer_mass(const stencil_state *s, long k) { return s->state_fields[0][k] * s->state_fields[1][k]; }
static double thickness(const stencil_state *s, long k) { return s->state_fields[1][k]; }
static double off_one(const stencil_state *s, long k) { return fabs(s->state_fields[0][k] - 1.0); }

/* Set by the "residual" break: the checked system's right-hand side made
 * to differ from the solved one's. */
static double residual_skew = 0.0;

/* The vertical solve of one column (dp, r; nz levels, contiguous) by the
 * program's own bodies, and the largest |A x - d| / |d| of its answer
 * (g, cp, dd, x: scratch of nz). */
static double column_residual(const stencil_args *args, const double *dp, const double *r, double *g, double *cp,
                              double *dd, double *x) {
  stencil_args col = *args;
  col.plane = 1; /* a contiguous column */
  const stencil_args *a = &col;
  const long top = a->nz - 1;
  const double *in[5];
#define COL_P(n) in[n]
#define COL_V(n) in[n][k]
  for (long k = 0; k < top; ++k) {
    in[0] = dp;
    g[k] = ST_CALL_coupling(COL_P, COL_V);
  }
  for (long k = 0; k <= top; ++k) {
    in[0] = dp, in[1] = g, in[2] = cp;
    if (k < top) cp[k] = k == 0 ? ST_CALL_sweep_c_bottom(COL_P, COL_V) : ST_CALL_sweep_c(COL_P, COL_V);
    in[0] = r, in[1] = dp, in[2] = g, in[3] = cp, in[4] = dd;
    dd[k] = k == 0 ? ST_CALL_sweep_d_bottom(COL_P, COL_V) : k == top ? ST_CALL_sweep_d_top(COL_P, COL_V)
                                                                     : ST_CALL_sweep_d(COL_P, COL_V);
  }
  for (long k = top; k >= 0; --k) {
    in[0] = dd, in[1] = cp, in[2] = x;
    x[k] = k == top ? ST_CALL_solve_top(COL_P, COL_V) : ST_CALL_solve(COL_P, COL_V);
  }
#undef COL_P
#undef COL_V
  double worst = 0.0;
  for (long k = 0; k <= top; ++k) {
    double lo = k > 0 ? g[k - 1] : 0.0, up = k < top ? g[k] : 0.0;
    double ax = (dp[k] + lo + up) * x[k] - (k > 0 ? lo * x[k - 1] : 0.0) - (k < top ? up * x[k + 1] : 0.0);
    double d = dp[k] * r[k] * (1.0 + residual_skew);
    double rel = fabs(ax - d) / fabs(d > 0 || d < 0 ? d : 1.0);
    if (!(rel <= worst)) worst = rel;
  }
  return worst;
}

/* The solve applied to every column of the final state (r = q). */
static int solve_residual(stencil_state *s, double *out) {
  const stencil_args *a = &s->args;
  double *buf = NULL, worst = 0.0;
  MAPP_TRY(mapp_calloc((void **)&buf, (size_t)(6 * a->nz), sizeof(double), "a column"));
  double *dp = buf, *r = buf + a->nz, *g = buf + 2 * a->nz, *cp = buf + 3 * a->nz, *dd = buf + 4 * a->nz;
  double *x = buf + 5 * a->nz;
  const double *q = s->state_fields[0], *thick = s->state_fields[1];
  for (long j = 0; j < a->ly; ++j)
    for (long i = 0; i < a->lx; ++i) {
      for (long kz = 0; kz < a->nz; ++kz) {
        long k = a->origin + kz * a->plane + j * a->stride + i;
        dp[kz] = thick[k], r[kz] = q[k];
      }
      double rel = column_residual(a, dp, r, g, cp, dd, x);
      if (!(rel <= worst)) worst = rel;
    }
  free(buf);
  MAPP_MPI(MPI_Allreduce(&worst, out, 1, MPI_DOUBLE, MPI_MAX, s->comm));
  return MAPP_OK;
}

static void apply_break(stencil_state *s, const char *b) {
  const stencil_args *a = &s->args;
  double *q = s->state_fields[0];
  long k = a->origin + (a->nz / 2) * a->plane + (a->ly / 2) * a->stride + a->lx / 2;
  if (!strcmp(b, "mass")) q[k] *= 1.0 + 1e-9;
  if (!strcmp(b, "constant")) q[k] += 1e-12;
  if (!strcmp(b, "answer")) q[k] = nextafter(q[k], 1e300);
  if (!strcmp(b, "residual")) residual_skew = 1e-9;
}

static int verify(mapp_run *run, stencil_state *s) {
  double mass, dp, residual;
  MAPP_TRY(stencil_reduce(s, MPI_SUM, tracer_mass, &mass));
  MAPP_TRY(stencil_reduce(s, MPI_SUM, thickness, &dp));
  MAPP_TRY(solve_residual(s, &residual));
  mapp_run_check(run, "finite", isfinite(mass) && isfinite(dp), isfinite(mass) ? 0.0 : 1.0, 0.0);
  double drift = s->conserved0[0] != 0.0 ? fabs(mass - s->conserved0[0]) / fabs(s->conserved0[0]) : fabs(mass);
  mapp_run_check(run, "tracer-mass-conservation", drift <= MASS_BOUND, drift, MASS_BOUND);
  double dp_drift = fabs(dp - s->conserved0[1]) / s->conserved0[1];
  mapp_run_check(run, "thickness-conservation", dp_drift <= MASS_BOUND, dp_drift, MASS_BOUND);
  mapp_run_check(run, "solve-residual", residual <= RESIDUAL_BOUND, residual, RESIDUAL_BOUND);
  if (s->cfg.init == STENCIL_INIT_CONSTANT) {
    double worst;
    MAPP_TRY(stencil_reduce(s, MPI_MAX, off_one, &worst));
    mapp_run_check(run, "constant-stays-constant", worst <= CONSTANT_BOUND, worst, CONSTANT_BOUND);
  }
  return MAPP_OK;
}

static int initialise_and_sum(stencil_state *s) {
  MAPP_TRY(initialise(s));
  MAPP_TRY(stencil_reduce(s, MPI_SUM, tracer_mass, &s->conserved0[0]));
  return stencil_reduce(s, MPI_SUM, thickness, &s->conserved0[1]);
}

const stencil_physics stencil_physics_vertical = {
    .inits = "bump|constant",
    .arguments = arguments,
    .initialise = initialise_and_sum,
    .verify = verify,
    .apply_break = apply_break,
};
