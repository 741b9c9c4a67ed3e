/* The stencil bodies of the shallow-water step, written once.
 *
 * Both modes compile these same static inline functions: the eager
 * interpreter (stencil_eager.c) wraps each in its own loop, and the
 * generated translation unit of the orchestrated modes #includes this very
 * file (its content is part of the cache key) and calls them inside fused
 * loops. Since every point's arithmetic is the same function with the same
 * operation order, and both are compiled with -ffp-contract=off, the two
 * modes agree bit for bit.
 *
 * Self-contained on purpose: no libmapp, no MPI, so a generated program
 * needs nothing but this header and a C compiler.
 *
 * Grid: finite volume on an Arakawa C grid. Every field is a padded array of
 * (ly + 2 HALO) rows of (lx + 2 HALO) doubles, row-major; local index (i, j)
 * is element origin + j * stride + i. Cell (i, j) holds h; u[j][i] lives on
 * its west face (x = i - 1/2), v[j][i] on its south face (y = j - 1/2);
 * corner quantities (vorticity, potential vorticity) at (i - 1/2, j - 1/2).
 *
 * A call macro ST_CALL_<name>(P, V) names a body's call with its inputs:
 * P(n) is input n as an array (read at offsets around k), V(n) its value at
 * the point (an array element, or in generated code a local the array was
 * demoted to). The names a, k, s, gi, gj must be in scope: the arguments,
 * the point's element index, the row stride, its global cell indices. */
#ifndef STENCIL_KERNELS_H
#define STENCIL_KERNELS_H

#include <math.h>
#include <stdio.h>

#define ST_HALO 3

/* Bodies are host functions in C; the CUDA program defines ST_DEVICE as
 * __host__ __device__ before including this header. */
#ifndef ST_DEVICE
#define ST_DEVICE
#endif

/* Before the inner loop of a fused group, whose fusion rules exclude any
 * dependence between iterations: no run-time alias checks needed. */
#if defined(__clang__)
#define ST_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define ST_IVDEP _Pragma("GCC ivdep")
#else
#define ST_IVDEP
#endif

ST_DEVICE static inline long st_max(long x, long y) { return x > y ? x : y; }
ST_DEVICE static inline long st_min(long x, long y) { return x < y ? x : y; }

/* Everything that depends on the decomposition or the physics is here, an
 * argument of the step, never a constant of generated code: a program built
 * on one layout runs correctly on another (the seed's scalar-inlining
 * pitfall). */
typedef struct {
  long nx, ny;     /* global cells */
  long lx, ly;     /* this rank's interior cells */
  long i0, j0;     /* global index of local cell (0, 0) */
  long stride;     /* padded row length, lx + 2 ST_HALO */
  long origin;     /* element of local cell (0, 0) in a padded array */
  double dx, dy;   /* grid spacing (m) */
  double rdx, rdy; /* their reciprocals: bodies multiply, a division costs ~4x more */
  double dt;       /* time step (s) */
  double g;        /* gravity (m/s^2) */
  double f0, beta; /* Coriolis f = f0 + beta * y, y the global cell-centre coordinate (m) */
  double nu;       /* divergence damping coefficient (m^2/s) */
  /* 3-D fields are nz levels of padded planes: element origin + kz plane +
   * j stride + i. A 2-D program has nz 1. */
  long nz;         /* levels */
  long plane;      /* elements of one padded level */
  double kappa;    /* vertical diffusivity over the thickness scale, dt kappa / dp^2 (vertical program) */
  double mix;      /* fraction exchanged between neighbouring levels by the remap pass */
} stencil_args;

/* ---- debug passes (the seed's PACE_DACE_DEBUG), shared by both modes ---- */

enum { ST_CHECK_NONE = 0, ST_CHECK_NAN = 1, ST_CHECK_NEGATIVE = 2 };

/* The first failed check of a step; ranks agree on it after the step, so a
 * failing rank never leaves the others waiting in a halo exchange. */
typedef struct {
  int failed;
  int kind; /* ST_CHECK_NAN or ST_CHECK_NEGATIVE */
  const char *stencil, *field;
  long gi, gj;
  double value;
} stencil_failure;

/* What the host hands a step: the halo-exchange callback into libmapp, the
 * step number and where debug passes report. */
typedef struct stencil_hooks {
  int (*halo)(void *ctx, const int *fields, int nfields); /* 0 on success */
  void *halo_ctx;
  long step;
  long trace_gi, trace_gj; /* --trace point (global), when traced */
  int progress_rank0;      /* print progress on this rank */
  stencil_failure failure;
  void *out; /* FILE * for trace and progress lines (stdout) */
} stencil_hooks;

/* Scans the box [i_lo, i_hi) x [j_lo, j_hi) (local) of a written field and
 * records the first NaN or negative value. */
static inline void st_debug_scan(const stencil_args *a, stencil_hooks *hk, int kind, const char *stencil,
                                 const char *field, const double *x, long i_lo, long i_hi, long j_lo,
                                 long j_hi) {
  if (hk->failure.failed) return;
  for (long j = j_lo; j < j_hi; ++j)
    for (long i = i_lo; i < i_hi; ++i) {
      const double value = x[a->origin + j * a->stride + i];
      const int bad = kind == ST_CHECK_NAN ? value != value : value < 0.0;
      if (bad) {
        hk->failure = (stencil_failure){1, kind, stencil, field, a->i0 + i, a->j0 + j, value};
        return;
      }
    }
}

/* --trace: the field's value at the traced point, when this rank holds it. */
static inline void st_debug_trace(const stencil_args *a, const stencil_hooks *hk, const char *stencil,
                                  const char *field, const double *x) {
  const long i = hk->trace_gi - a->i0, j = hk->trace_gj - a->j0;
  if (i < 0 || i >= a->lx || j < 0 || j >= a->ly) return;
  fprintf((FILE *)hk->out, "trace step %ld %s: %s(%ld,%ld) = %.17g\n", hk->step, stencil, field, hk->trace_gi,
          hk->trace_gj, x[a->origin + j * a->stride + i]);
}

/* --progress: each stencil as it runs (rank 0). */
static inline void st_debug_progress(const stencil_hooks *hk, const char *stencil) {
  if (hk->progress_rank0) fprintf((FILE *)hk->out, "progress step %ld %s\n", hk->step, stencil);
}

/* ---- the bodies ---- */

/* Divergence at cell centres. */
ST_DEVICE static inline double st_divergence(const stencil_args *a, const double *u, const double *v, long k, long s) {
  return (u[k + 1] - u[k]) * a->rdx + (v[k + s] - v[k]) * a->rdy;
}
#define ST_CALL_divergence(P, V) st_divergence(a, P(0), P(1), k, s)

/* Kinetic energy per unit mass at cell centres, from the four faces. */
ST_DEVICE static inline double st_kinetic_energy(const double *u, const double *v, long k, long s) {
  return 0.25 * (u[k] * u[k] + u[k + 1] * u[k + 1] + v[k] * v[k] + v[k + s] * v[k + s]);
}
#define ST_CALL_kinetic_energy(P, V) st_kinetic_energy(P(0), P(1), k, s)

/* Relative vorticity at the cell's south-west corner. */
ST_DEVICE static inline double st_vorticity(const stencil_args *a, const double *u, const double *v, long k, long s) {
  return (v[k] - v[k - 1]) * a->rdx - (u[k] - u[k - s]) * a->rdy;
}
#define ST_CALL_vorticity(P, V) st_vorticity(a, P(0), P(1), k, s)
/* Free-slip walls: no vorticity on the wall lines (horizontal regions). */
#define ST_CALL_wall_vorticity(P, V) 0.0

/* The minmod-limited slope of the middle value: the smaller one-sided
 * difference, 0 at extrema (selects only, no division, no branch). */
ST_DEVICE static inline double st_limited_slope(double left, double centre, double right) {
  const double dl = centre - left, dr = right - centre;
  const double smaller = fabs(dl) < fabs(dr) ? dl : dr;
  return dl * dr > 0.0 ? smaller : 0.0;
}

/* Upwind, slope-limited value of q on the face between q[k - d] and q[k]
 * (d = 1 across x, d = s across y), for a face velocity w. */
ST_DEVICE static inline double st_upwind_face(const double *q, double w, long k, long d) {
  /* both candidates, then a select: branch-free, so loops vectorise */
  const double from_left = q[k - d] + 0.5 * st_limited_slope(q[k - 2 * d], q[k - d], q[k]);
  const double from_right = q[k] - 0.5 * st_limited_slope(q[k - d], q[k], q[k + d]);
  return w >= 0.0 ? from_left : from_right;
}
#define ST_CALL_h_face_x(P, V) st_upwind_face(P(0), V(1), k, 1)
#define ST_CALL_h_face_y(P, V) st_upwind_face(P(0), V(1), k, s)

/* Mass flux through a face: velocity times the face's depth. */
ST_DEVICE static inline double st_mass_flux(double w, double h_face) { return w * h_face; }
#define ST_CALL_flux_x(P, V) st_mass_flux(V(0), V(1))
#define ST_CALL_flux_y(P, V) st_mass_flux(V(0), V(1))

/* Flux-form advection of the depth: x first, then y (splitting). */
ST_DEVICE static inline double st_advect_x(const stencil_args *a, double h, const double *fx, long k) {
  return h - a->dt * a->rdx * (fx[k + 1] - fx[k]);
}
ST_DEVICE static inline double st_advect_y(const stencil_args *a, double h, const double *fy, long k, long s) {
  return h - a->dt * a->rdy * (fy[k + s] - fy[k]);
}
#define ST_CALL_advect_x(P, V) st_advect_x(a, V(0), P(1), k)
#define ST_CALL_advect_y(P, V) st_advect_y(a, V(0), P(1), k, s)

/* Depth at the cell's south-west corner. */
ST_DEVICE static inline double st_h_at_corner(const double *h, long k, long s) {
  return 0.25 * (h[k] + h[k - 1] + h[k - s] + h[k - s - 1]);
}
#define ST_CALL_h_at_corners(P, V) st_h_at_corner(P(0), k, s)

/* Potential vorticity (zeta + f) / h at the corner; f from the global row,
 * so the offset j0 is an argument, not a constant. */
ST_DEVICE static inline double st_potential_vorticity(const stencil_args *a, double zeta, double h_corner, long gj) {
  const double f = a->f0 + a->beta * ((double)gj - 0.5 - 0.5 * (double)a->ny) * a->dy;
  return (zeta + f) / h_corner;
}
#define ST_CALL_potential_vorticity(P, V) st_potential_vorticity(a, V(0), V(1), gj)

/* Momentum (mass) fluxes on the faces: velocity times the mean depth. */
ST_DEVICE static inline double st_face_mass_flux(double w, const double *h, long k, long d) {
  return w * (0.5 * (h[k] + h[k - d]));
}
#define ST_CALL_mass_flux_u(P, V) st_face_mass_flux(V(0), P(1), k, 1)
#define ST_CALL_mass_flux_v(P, V) st_face_mass_flux(V(0), P(1), k, s)

/* Bernoulli function g h + K. */
ST_DEVICE static inline double st_bernoulli(const stencil_args *a, double h, double ke) { return a->g * h + ke; }
#define ST_CALL_bernoulli(P, V) st_bernoulli(a, V(0), V(1))

/* Coriolis (potential-vorticity) terms: + q V averaged onto u faces,
 * - q U averaged onto v faces. */
ST_DEVICE static inline double st_coriolis_u(const double *q, const double *vm, long k, long s) {
  return 0.5 * (q[k] + q[k + s]) * (0.25 * (vm[k - 1] + vm[k] + vm[k + s - 1] + vm[k + s]));
}
ST_DEVICE static inline double st_coriolis_v(const double *q, const double *um, long k, long s) {
  return -(0.5 * (q[k] + q[k + 1]) * (0.25 * (um[k - s] + um[k] + um[k - s + 1] + um[k + 1])));
}
#define ST_CALL_coriolis_u(P, V) st_coriolis_u(P(0), P(1), k, s)
#define ST_CALL_coriolis_v(P, V) st_coriolis_v(P(0), P(1), k, s)

/* Divergence damping: nu times the gradient of the divergence. */
ST_DEVICE static inline double st_damping(const stencil_args *a, const double *div, long k, long d, double rspacing) {
  return a->nu * (div[k] - div[k - d]) * rspacing;
}
#define ST_CALL_damping_u(P, V) st_damping(a, P(0), k, 1, a->rdx)
#define ST_CALL_damping_v(P, V) st_damping(a, P(0), k, s, a->rdy)

/* Tendencies: Coriolis minus the Bernoulli gradient plus damping. */
ST_DEVICE static inline double st_tendency(double coriolis, const double *b, long k, long d, double rspacing, double damping) {
  return coriolis - (b[k] - b[k - d]) * rspacing + damping;
}
#define ST_CALL_tendency_u(P, V) st_tendency(V(0), P(1), k, 1, a->rdx, V(2))
#define ST_CALL_tendency_v(P, V) st_tendency(V(0), P(1), k, s, a->rdy, V(2))

/* Forward update of a velocity. */
ST_DEVICE static inline double st_update(const stencil_args *a, double w, double tendency) { return w + a->dt * tendency; }
#define ST_CALL_update_u(P, V) st_update(a, V(0), V(1))
#define ST_CALL_update_v(P, V) st_update(a, V(0), V(1))
/* No flow through the walls (horizontal regions on the wall faces). */
#define ST_CALL_wall_velocity(P, V) 0.0

/* ---- ghost cells beyond the walls (horizontal regions) ----
 * Mirrors about a wall: even for a quantity centred across the wall's
 * normal (h, and the tangential velocity), odd for the normal velocity on
 * faces (which is 0 on the wall itself). */
enum { ST_KEEP = 0, ST_EVEN_LO, ST_EVEN_HI, ST_ODD_LO, ST_ODD_HI };

/* Offset (in cells) from global index g to its mirror image; n cells. */
ST_DEVICE static inline long st_mirror_delta(int kind, long g, long n) {
  switch (kind) {
  case ST_EVEN_LO: return -1 - 2 * g;        /* about the face at -1/2 */
  case ST_EVEN_HI: return 2 * n - 1 - 2 * g; /* about the face at n - 1/2 */
  case ST_ODD_LO: return -2 * g;             /* about face 0 */
  case ST_ODD_HI: return 2 * n - 2 * g;      /* about face n */
  default: return 0;
  }
}

ST_DEVICE static inline double st_mirror(const stencil_args *a, const double *q, long k, long s, long gi, long gj, int kx,
                               int ky) {
  const int odd = (kx == ST_ODD_LO || kx == ST_ODD_HI) + (ky == ST_ODD_LO || ky == ST_ODD_HI);
  if ((kx == ST_ODD_HI && gi == a->nx) || (ky == ST_ODD_HI && gj == a->ny)) return 0.0; /* the wall face */
  const double image = q[k + st_mirror_delta(kx, gi, a->nx) + s * st_mirror_delta(ky, gj, a->ny)];
  return odd % 2 ? -image : image;
}
/* h: even in both directions. */
#define ST_CALL_ghost_h_w(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_LO, ST_KEEP)
#define ST_CALL_ghost_h_e(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_HI, ST_KEEP)
#define ST_CALL_ghost_h_s(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_KEEP, ST_EVEN_LO)
#define ST_CALL_ghost_h_n(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_KEEP, ST_EVEN_HI)
#define ST_CALL_ghost_h_sw(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_LO, ST_EVEN_LO)
#define ST_CALL_ghost_h_se(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_HI, ST_EVEN_LO)
#define ST_CALL_ghost_h_nw(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_LO, ST_EVEN_HI)
#define ST_CALL_ghost_h_ne(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_HI, ST_EVEN_HI)
/* u: odd across x (normal), even across y. */
#define ST_CALL_ghost_u_w(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_ODD_LO, ST_KEEP)
#define ST_CALL_ghost_u_e(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_ODD_HI, ST_KEEP)
#define ST_CALL_ghost_u_s(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_KEEP, ST_EVEN_LO)
#define ST_CALL_ghost_u_n(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_KEEP, ST_EVEN_HI)
#define ST_CALL_ghost_u_sw(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_ODD_LO, ST_EVEN_LO)
#define ST_CALL_ghost_u_se(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_ODD_HI, ST_EVEN_LO)
#define ST_CALL_ghost_u_nw(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_ODD_LO, ST_EVEN_HI)
#define ST_CALL_ghost_u_ne(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_ODD_HI, ST_EVEN_HI)
/* v: even across x, odd across y (normal). */
#define ST_CALL_ghost_v_w(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_LO, ST_KEEP)
#define ST_CALL_ghost_v_e(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_HI, ST_KEEP)
#define ST_CALL_ghost_v_s(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_KEEP, ST_ODD_LO)
#define ST_CALL_ghost_v_n(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_KEEP, ST_ODD_HI)
#define ST_CALL_ghost_v_sw(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_LO, ST_ODD_LO)
#define ST_CALL_ghost_v_se(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_HI, ST_ODD_LO)
#define ST_CALL_ghost_v_nw(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_LO, ST_ODD_HI)
#define ST_CALL_ghost_v_ne(P, V) st_mirror(a, P(0), k, s, gi, gj, ST_EVEN_HI, ST_ODD_HI)

/* Every body with a call macro, for the eager kernels (one X per body). */
#define ST_BODIES(X)                                                                               \
  X(divergence) X(kinetic_energy) X(vorticity) X(wall_vorticity) X(h_face_x) X(h_face_y)           \
  X(flux_x) X(flux_y) X(advect_x) X(advect_y) X(h_at_corners) X(potential_vorticity)               \
  X(mass_flux_u) X(mass_flux_v) X(bernoulli) X(coriolis_u) X(coriolis_v) X(damping_u)              \
  X(damping_v) X(tendency_u) X(tendency_v) X(update_u) X(update_v) X(wall_velocity)                \
  X(ghost_h_w) X(ghost_h_e) X(ghost_h_s) X(ghost_h_n) X(ghost_h_sw) X(ghost_h_se) X(ghost_h_nw)    \
  X(ghost_h_ne) X(ghost_u_w) X(ghost_u_e) X(ghost_u_s) X(ghost_u_n) X(ghost_u_sw) X(ghost_u_se)    \
  X(ghost_u_nw) X(ghost_u_ne) X(ghost_v_w) X(ghost_v_e) X(ghost_v_s) X(ghost_v_n) X(ghost_v_sw)    \
  X(ghost_v_se) X(ghost_v_nw) X(ghost_v_ne)

#endif
