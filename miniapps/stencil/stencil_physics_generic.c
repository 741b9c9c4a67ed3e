/* The physics of a program that has no physics file: generic arguments, a
 * smooth initial state for every state field, and one check, every answer
 * finite. What the program computes is checked by the tests every program
 * runs: eager and every orchestrated mode agree bit for bit, on any layout
 * and rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"

#define SPACING 1.0e5 /* m */
#define SPEED 10.0    /* the speed the time step resolves (m/s): dt = cfl x spacing / speed */

/* Every coefficient of stencil_args set, at values of the other programs'
 * order, so a body finds whichever it reads. */
static void arguments(stencil_state *s) {
  stencil_args *a = &s->args;
  a->dx = a->dy = SPACING;
  a->rdx = a->rdy = 1.0 / SPACING;
  a->dt = s->cfg.cfl * SPACING / SPEED;
  a->g = 9.81, a->f0 = 1.0e-4, a->beta = 2.0e-11;
  a->nu = 0.02 * SPACING * SPACING / a->dt; /* nu dt / dx^2 = 0.02 */
  a->kappa = 50.0, a->mix = 0.1;
}

/* The initial value of state field f at global cell (gi, gj), level kz:
 * 1 plus --amplitude times a sum of sines of the global indices and the
 * level (at most 1 in magnitude), a different phase for each field. From
 * global indices only, so every layout and rank count starts bit for bit
 * the same. */
static double smooth_value(const stencil_state *s, int f, long gi, long gj, long kz) {
  const double pi = 3.14159265358979323846;
  double x = 2.0 * pi * ((double)gi + 0.5) / (double)s->cfg.nx;
  double y = 2.0 * pi * ((double)gj + 0.5) / (double)s->cfg.ny;
  double z = pi * ((double)kz + 0.5) / (double)s->args.nz;
  double wave = 0.4 * sin(x + f) + 0.3 * sin(y - 0.5 * f) + 0.3 * sin(x + y + z + 0.7 * f);
  return 1.0 + s->cfg.amplitude * wave;
}

/* Levels a field holds: a 2-D one level 0 only. */
static long levels_of(const stencil_state *s, int f) { return s->program.fields[f].dims == 3 ? s->args.nz : 1; }

static int initialise(stencil_state *s) {
  const stencil_args *a = &s->args;
  for (int f = 0; f < s->program.nstate; ++f)
    for (long kz = 0; kz < levels_of(s, f); ++kz)
      for (long j = 0; j < a->ly; ++j)
        for (long i = 0; i < a->lx; ++i)
          s->state_fields[f][a->origin + kz * a->plane + j * a->stride + i] =
              smooth_value(s, f, a->i0 + i, a->j0 + j, kz);
  /* test hook: a NaN in the first state field at the domain's centre, level
   * 0, for the --check nan test */
  const char *brk = s->cfg.brk;
  long ci = s->cfg.nx / 2 - a->i0, cj = s->cfg.ny / 2 - a->j0;
  if (brk && !strcmp(brk, "nan") && ci >= 0 && ci < a->lx && cj >= 0 && cj < a->ly)
    s->state_fields[0][a->origin + cj * a->stride + ci] = NAN;
  return MAPP_OK;
}

/* Values of the answer (every state field, interior, its levels) that are
 * not finite, over all ranks. */
static int count_not_finite(stencil_state *s, double *out) {
  const stencil_args *a = &s->args;
  double local = 0.0;
  for (int f = 0; f < s->program.nstate; ++f)
    for (long kz = 0; kz < levels_of(s, f); ++kz)
      for (long j = 0; j < a->ly; ++j)
        for (long i = 0; i < a->lx; ++i)
          local += !isfinite(s->state_fields[f][a->origin + kz * a->plane + j * a->stride + i]);
  MAPP_MPI(MPI_Allreduce(&local, out, 1, MPI_DOUBLE, MPI_SUM, s->comm));
  return MAPP_OK;
}

static int verify(mapp_run *run, stencil_state *s) {
  double bad;
  MAPP_TRY(count_not_finite(s, &bad));
  mapp_run_check(run, "finite", bad == 0.0, bad, 0.0);
  return MAPP_OK;
}

/* MAPP_STENCIL_BREAK on rank 0, at its interior's centre, level 0 of the
 * first state field: "nan" fails the finite check, "answer" (one ulp) the
 * agreement and baseline comparisons. */
static void apply_break(stencil_state *s, const char *b) {
  const stencil_args *a = &s->args;
  double *x = &s->state_fields[0][a->origin + (a->ly / 2) * a->stride + a->lx / 2];
  if (!strcmp(b, "nan")) *x = NAN;
  if (!strcmp(b, "answer")) *x = nextafter(*x, 1e300);
}

const stencil_physics stencil_physics_generic = {
    .inits = "bump",
    .arguments = arguments,
    .initialise = initialise,
    .verify = verify,
    .apply_break = apply_break,
};
