/* The loop bodies every crm variant and backend shares, written once over
 * (instance c, level k, column i) indices, so percrm, batched, serial, omp
 * and CUDA run the same arithmetic in the same order per point and agree
 * bit for bit across CPU variants (CUDA differs only where nvcc contracts
 * to FMA or cuFFT rounds differently from FFTW: the envelope test's job).
 *
 * Grid (Arakawa C, uniform dz): u[c][k][i] on the west face of cell (k, i);
 * w[c][k][i] on the bottom face of cell (k, i), k = 0..nz, zero at the
 * surface (k = 0) and the lid (k = nz); scalars at cell centres. Profiles
 * are [c][k]: rho and the pressure at centres, rhof at w faces.
 *
 * Bodies branch on boundaries inside the innermost loop rather than
 * splitting loop nests, as the report did, so each nest is one rectangular
 * collapsed loop (one kernel on the GPU). */
#ifndef CRM_KERNEL_H
#define CRM_KERNEL_H

#include <math.h>

#include "crm.h"

#ifdef __CUDACC__
#define CRM_HD static inline __host__ __device__
#else
#define CRM_HD static inline
#endif

#define CRM_PI 3.14159265358979323846
/* Physical constants (SI). CRM_GRAV and CRM_ACCR_RATE may be predefined
 * only by the test build that plants a bug in them (tests/CMakeLists.txt:
 * the envelope must catch a change of 1e-6); the shipped build never does. */
#ifndef CRM_GRAV
#define CRM_GRAV 9.81
#endif
#define CRM_CP 1004.0
#define CRM_RD 287.0
#define CRM_LV 2.5e6
#define CRM_EPS 0.622
#define CRM_P00 1.0e5
#define CRM_PSFC 1.0e5
/* Eddy viscosity for momentum (m^2/s): the sub-grid closure, kept constant. */
#define CRM_KM 20.0
/* Adams-Bashforth 3 with centred advection is stable to a Courant number
 * of about 0.72; SAM and the report sub-cycle at 0.7, at most 4 times. */
#define CRM_CFL_MAX 0.7
#define CRM_MAX_CYCLES 4
/* The rain fall is upwind, stable to 1; keep a margin. */
#define CRM_FALL_CFL_MAX 0.9
/* Kessler-type warm rain. */
#define CRM_AUTO_RATE 1.0e-3 /* 1/s */
#define CRM_QC0 1.0e-3       /* kg/kg autoconversion threshold */
#ifndef CRM_ACCR_RATE
#define CRM_ACCR_RATE 2.2    /* 1/s per (kg/kg)^0.875 */
#endif
#define CRM_EVAP_RATE 1.0e-6 /* kg/kg/s at unit deficit and 1 g/m^3 rain */

/* max and min as selects: libm's fmax/fmin drop a NaN operand, and their
 * IEEE rules keep GCC from inlining them (they were 10% of a step as
 * calls). These return `a` unless `b` is strictly beyond it, so a NaN in
 * `a` propagates (write the value first, the bound second): a clamp never
 * hides a NaN from the guard. */
CRM_HD double crm_max(double a, double b) { return b > a ? b : a; }
CRM_HD double crm_min(double a, double b) { return b < a ? b : a; }

/* ---------------------------------------------------------------- indices */

CRM_HD long crm_ix(const crm_grid *g, long c, long k, long i) { return (c * g->rows + k) * g->nx + i; }
CRM_HD long crm_px(const crm_grid *g, long c, long k) { return c * g->rows + k; }
/* Periodic neighbours of index n (at column i) in x. */
CRM_HD long crm_west(const crm_grid *g, long n, long i) { return i > 0 ? n - 1 : n + g->nx - 1; }
CRM_HD long crm_east(const crm_grid *g, long n, long i) { return i + 1 < g->nx ? n + 1 : n + 1 - g->nx; }
CRM_HD long crm_field_size(const crm_grid *g) { return g->ninst * g->stride; }

/* Mean of a row of nx values, summed as deviations from the first: a
 * horizontally uniform row gets exactly its value back, so a resting
 * state has exactly zero buoyancy, and the sum loses less to round-off. */
CRM_HD double crm_row_mean(const double *row, long nx) {
  double x0 = row[0], s = 0.0;
  for (long i = 0; i < nx; ++i) s += row[i] - x0;
  return x0 + s / (double)nx;
}

/* ---------------------------------------------------------- thermodynamics */

CRM_HD double crm_esat(double T) { return 611.2 * exp(17.67 * (T - 273.15) / (T - 29.65)); }
CRM_HD double crm_qsat(double T, double p) {
  double es = crm_esat(T);
  return CRM_EPS * es / crm_max(p - es, 0.01 * p);
}

/* Temperature from the liquid-water static energy t = T + g z / cp - L (qc + qp) / cp. */
CRM_HD double crm_temperature(double t, double qc, double qp, double z) {
  return t - CRM_GRAV * z / CRM_CP + CRM_LV / CRM_CP * (qc + qp);
}

/* Saturation adjustment: the cloud water qc >= 0 such that the vapour
 * qt - qc is saturated at T = T0 + L qc / cp (or qc = 0 below saturation),
 * by a fixed number of Newton steps so every point does the same work. */
CRM_HD double crm_saturation_adjust(double t, double qt, double qp, double z, double p) {
  double T0 = crm_temperature(t, 0.0, qp, z);
  if (qt <= crm_qsat(T0, p)) return 0.0;
  double T = T0;
  for (int it = 0; it < 4; ++it) {
    double qs = crm_qsat(T, p), d = T - 29.65;
    double dqs = qs * 17.67 * 243.5 / (d * d);
    T -= (T - T0 - CRM_LV / CRM_CP * (qt - qs)) / (1.0 + CRM_LV / CRM_CP * dqs);
  }
  return crm_max(qt - crm_qsat(T, p), 0.0);
}

/* Density potential temperature of cell (c, k, i). */
CRM_HD double crm_theta_rho(const crm_view *v, long c, long k, long i) {
  long n = crm_ix(&v->g, c, k, i), p = crm_px(&v->g, c, k), N = crm_field_size(&v->g);
  double t = v->scal[n], qt = v->scal[N + n], qp = v->scal[2 * N + n], qc = v->qc[n];
  double T = crm_temperature(t, qc, qp, v->zc[p]);
  return T / v->exner[p] * (1.0 + 0.608 * (qt - qc) - qc - qp);
}

/* Element of level mean `which` (CRM_MEAN_*) of instance c, level k. */
CRM_HD long crm_mean_ix(const crm_grid *g, int which, long c, long k) {
  return (long)which * g->ninst * g->rows + crm_px(g, c, k);
}

CRM_HD double crm_buoyancy(const crm_view *v, long c, long k, long i) {
  double mean = v->mean[crm_mean_ix(&v->g, CRM_MEAN_THR, c, k)];
  return CRM_GRAV * (crm_theta_rho(v, c, k, i) - mean) / mean;
}

/* Level mean of theta_rho (a partial reduction per instance and level):
 * crm_row_mean's arithmetic, in its order, on values computed on the fly
 * (the GPU stages them in a row and calls crm_row_mean: the same answer). */
CRM_HD void crm_mean_theta_rho(const crm_view *v, long c, long k) {
  double x0 = crm_theta_rho(v, c, k, 0), s = 0.0;
  for (long i = 0; i < v->g.nx; ++i) s += crm_theta_rho(v, c, k, i) - x0;
  v->mean[crm_mean_ix(&v->g, CRM_MEAN_THR, c, k)] = x0 + s / (double)v->g.nx;
}

/* Level means of t, qt, u and qp from their rows (the field's own, or
 * copies staged by the GPU). */
CRM_HD void crm_store_level_means(const crm_view *v, long c, long k, const double *t, const double *qt,
                                  const double *u, const double *qp) {
  const crm_grid *g = &v->g;
  v->mean[crm_mean_ix(g, CRM_MEAN_T, c, k)] = crm_row_mean(t, g->nx);
  v->mean[crm_mean_ix(g, CRM_MEAN_QT, c, k)] = crm_row_mean(qt, g->nx);
  v->mean[crm_mean_ix(g, CRM_MEAN_U, c, k)] = crm_row_mean(u, g->nx);
  v->mean[crm_mean_ix(g, CRM_MEAN_QP, c, k)] = crm_row_mean(qp, g->nx);
}

CRM_HD void crm_level_means(const crm_view *v, long c, long k) {
  long n = crm_ix(&v->g, c, k, 0), N = crm_field_size(&v->g);
  crm_store_level_means(v, c, k, v->scal + n, v->scal + N + n, v->u + n, v->scal + 2 * N + n);
}

/* ------------------------------------------------------------------ forcing */

/* Large-scale forcing plus nudging of the level mean toward the column,
 * applied uniformly along the level, for one CRM step. The water it adds
 * (qt is kept >= 0) is recorded per level for the water budget.
 *
 * In three pieces so that the GPU, which stages a level's rows in shared
 * memory to read them coalesced, runs the same arithmetic in the same
 * order: the increments from the rows' means (rows may be copies), the
 * update of one point, and the water added along the row, summed in
 * column order. */
typedef struct {
  double dt_t, dt_q, dt_u;
} crm_forcing;

CRM_HD crm_forcing crm_forcing_of(const crm_view *v, long c, long k, const double *t, const double *qt,
                                  const double *u) {
  const crm_grid *g = &v->g;
  long p = crm_px(g, c, k), M = g->ninst * g->rows;
  double relax = v->dt / v->nudge_tau;
  crm_forcing f;
  f.dt_t = v->dt * v->ls[p] - relax * (crm_row_mean(t, g->nx) - v->col[p]);
  f.dt_q = v->dt * v->ls[M + p] - relax * (crm_row_mean(qt, g->nx) - v->col[M + p]);
  f.dt_u = -relax * (crm_row_mean(u, g->nx) - v->col[2 * M + p]);
  return f;
}

/* The forced point; returns the water it added. */
CRM_HD double crm_force_point(const crm_forcing *f, double *t, double *qt, double *u) {
  double q = crm_max(*qt + f->dt_q, 0.0), added = q - *qt;
  *qt = q;
  *t += f->dt_t;
  *u += f->dt_u;
  return added;
}

/* The water the forcing adds along a row of qt (before the update), in
 * column order, into the level's budget. */
CRM_HD void crm_force_budget(const crm_view *v, long c, long k, const crm_forcing *f, const double *qt) {
  double added = 0.0;
  for (long i = 0; i < v->g.nx; ++i) {
    double t = 0.0, q = qt[i], u = 0.0;
    added += crm_force_point(f, &t, &q, &u);
  }
  long p = crm_px(&v->g, c, k);
  v->source[p] += v->rho[p] * v->dz * added;
}

CRM_HD void crm_force_level(const crm_view *v, long c, long k) {
  const crm_grid *g = &v->g;
  long n0 = crm_ix(g, c, k, 0), N = crm_field_size(g);
  double *t = v->scal + n0, *qt = v->scal + N + n0, *u = v->u + n0;
  crm_forcing f = crm_forcing_of(v, c, k, t, qt, u);
  crm_force_budget(v, c, k, &f, qt);
  for (long i = 0; i < g->nx; ++i) crm_force_point(&f, &t[i], &qt[i], &u[i]);
}

/* ---------------------------------------------------------------- dynamics */

/* Courant number of cell (c, k, i): both directions summed, so the
 * positive-definite scalar advection's upwind part stays positive. */
CRM_HD double crm_cfl_cell(const crm_view *v, double dt, long c, long k, long i) {
  long n = crm_ix(&v->g, c, k, i), e = crm_east(&v->g, n, i), nx = v->g.nx;
  return crm_max(fabs(v->u[n]), fabs(v->u[e])) * dt / v->dx +
         crm_max(fabs(v->w[n]), fabs(v->w[n + nx])) * dt / v->dz;
}

/* Tendency of u on the west face of cell (c, k, i), k < nz: second-order
 * flux-form advection (anelastic, rho-weighted vertical fluxes) and
 * diffusion with free slip at the surface and lid. */
CRM_HD double crm_tend_u(const crm_view *v, long c, long k, long i) {
  const crm_grid *g = &v->g;
  long nx = g->nx, n = crm_ix(g, c, k, i), wn = crm_west(g, n, i), en = crm_east(g, n, i);
  long p = crm_px(g, c, k);
  const double *u = v->u, *w = v->w;
  double ue = 0.5 * (u[n] + u[en]), uw = 0.5 * (u[wn] + u[n]);
  double adv = -(ue * ue - uw * uw) / v->dx;
  double top = k + 1 < g->nz ? v->rhof[p + 1] * 0.5 * (w[n + nx] + w[wn + nx]) * 0.5 * (u[n] + u[n + nx]) : 0.0;
  double bot = k > 0 ? v->rhof[p] * 0.5 * (w[n] + w[wn]) * 0.5 * (u[n - nx] + u[n]) : 0.0;
  adv -= (top - bot) / (v->rho[p] * v->dz);
  double up = k + 1 < g->nz ? u[n + nx] : u[n], down = k > 0 ? u[n - nx] : u[n];
  double diff = CRM_KM * ((u[en] - 2.0 * u[n] + u[wn]) / (v->dx * v->dx) +
                          (up - 2.0 * u[n] + down) / (v->dz * v->dz));
  return adv + diff;
}

/* Tendency of w on the bottom face of cell (c, k, i), 0 < k < nz:
 * advection, buoyancy against the level means, diffusion. */
CRM_HD double crm_tend_w(const crm_view *v, long c, long k, long i) {
  const crm_grid *g = &v->g;
  long nx = g->nx, n = crm_ix(g, c, k, i), wn = crm_west(g, n, i), en = crm_east(g, n, i);
  long p = crm_px(g, c, k);
  const double *u = v->u, *w = v->w;
  double fw = 0.5 * (u[n - nx] + u[n]) * 0.5 * (w[wn] + w[n]);
  double fe = 0.5 * (u[en - nx] + u[en]) * 0.5 * (w[n] + w[en]);
  double wa = 0.5 * (w[n] + w[n + nx]), wb = 0.5 * (w[n - nx] + w[n]);
  double adv = -(fe - fw) / v->dx - (v->rho[p] * wa * wa - v->rho[p - 1] * wb * wb) / (v->rhof[p] * v->dz);
  double b = 0.5 * (crm_buoyancy(v, c, k - 1, i) + crm_buoyancy(v, c, k, i));
  double diff = CRM_KM * ((w[en] - 2.0 * w[n] + w[wn]) / (v->dx * v->dx) +
                          (w[n + nx] - 2.0 * w[n] + w[n - nx]) / (v->dz * v->dz));
  return adv + b + diff;
}

/* Both momentum components at (c, k, i), k = 0..nz in one nest (the
 * report's merged kernels): the tendency goes to the newest history slot
 * and the Adams-Bashforth step to us/ws, the velocities before projection. */
CRM_HD void crm_momentum_face(const crm_view *v, const crm_ab *ab, long c, long k, long i) {
  long n = crm_ix(&v->g, c, k, i), nz = v->g.nz;
  if (k < nz) {
    double tu = crm_tend_u(v, c, k, i);
    v->tend_u[ab->slot[0]][n] = tu;
    v->us[n] = v->u[n] + ab->dt * (ab->a[0] * tu + ab->a[1] * v->tend_u[ab->slot[1]][n] +
                                   ab->a[2] * v->tend_u[ab->slot[2]][n]);
  }
  if (k > 0 && k < nz) {
    double tw = crm_tend_w(v, c, k, i);
    v->tend_w[ab->slot[0]][n] = tw;
    v->ws[n] = v->w[n] + ab->dt * (ab->a[0] * tw + ab->a[1] * v->tend_w[ab->slot[1]][n] +
                                   ab->a[2] * v->tend_w[ab->slot[2]][n]);
  } else {
    v->ws[n] = 0.0; /* rigid surface and lid */
  }
}

/* ---------------------------------------------------------------- pressure */

/* Anelastic divergence (1/rho) div(rho v) of cell (c, k, i), k < nz. */
CRM_HD double crm_divergence(const crm_view *v, const double *u, const double *w, long c, long k, long i) {
  long n = crm_ix(&v->g, c, k, i), e = crm_east(&v->g, n, i), p = crm_px(&v->g, c, k), nx = v->g.nx;
  return (u[e] - u[n]) / v->dx + (v->rhof[p + 1] * w[n + nx] - v->rhof[p] * w[n]) / (v->rho[p] * v->dz);
}

/* Right-hand side of the Poisson equation, row k < nz (rows beyond nz
 * are zero padding the FFT also transforms). */
CRM_HD void crm_pressure_rhs(const crm_view *v, long c, long k, long i) {
  v->phi[crm_ix(&v->g, c, k, i)] = crm_divergence(v, v->us, v->ws, c, k, i);
}

/* Off-diagonals of the vertical operator of row k (zero across the
 * surface and the lid: no flux there). */
CRM_HD double crm_poisson_lower(const crm_view *v, long c, long k) {
  long p = crm_px(&v->g, c, k);
  return k > 0 ? v->rhof[p] / (v->rho[p] * v->dz * v->dz) : 0.0;
}
CRM_HD double crm_poisson_upper(const crm_view *v, long c, long k) {
  long p = crm_px(&v->g, c, k);
  return k + 1 < v->g.nz ? v->rhof[p + 1] / (v->rho[p] * v->dz * v->dz) : 0.0;
}

/* Thomas factorisation of wavenumber m >= 1 of instance c (time
 * invariant: computed once at set-up, so the cosines and divisions leave
 * the time loop, as the report did with its pressure kernel). */
CRM_HD void crm_poisson_factor(const crm_view *v, long c, long m) {
  const crm_grid *g = &v->g;
  double cprev = 0.0;
  for (long k = 0; k < g->nz; ++k) {
    long q = (c * g->rows + k) * g->nk + m;
    double a = crm_poisson_lower(v, c, k), up = crm_poisson_upper(v, c, k);
    double inv = 1.0 / (-a - up - v->lambda[m] - a * cprev);
    v->lu_c[q] = up * inv;
    v->lu_inv[q] = inv;
    cprev = v->lu_c[q];
  }
}

/* Solve wavenumber m of instance c in place in the spectrum (scale: the
 * 1/nx of the unnormalised inverse FFT and the 1/dt of the projection).
 * m = 0, the horizontal mean, is singular (pressure is defined up to a
 * constant): its flux form integrates upward as a prefix sum in z. */
CRM_HD void crm_poisson_solve(const crm_view *v, double dt, long c, long m) {
  const crm_grid *g = &v->g;
  double scale = 1.0 / (dt * (double)g->nx);
  double *s = v->spec;
  long q0 = (c * g->rows) * g->nk + m;
  if (m == 0) {
    double flux[2] = {0.0, 0.0}, phi[2] = {0.0, 0.0};
    for (long k = 0; k < g->nz; ++k) {
      long q = q0 + k * g->nk, p = crm_px(g, c, k);
      for (int r = 0; r < 2; ++r) {
        flux[r] += v->rho[p] * v->dz * v->dz * s[2 * q + r] * scale;
        s[2 * q + r] = phi[r];
        if (k + 1 < g->nz) phi[r] += flux[r] / v->rhof[p + 1];
      }
    }
    return;
  }
  double prev[2] = {0.0, 0.0};
  for (long k = 0; k < g->nz; ++k) { /* forward: d'_k = (d_k - a_k d'_{k-1}) / pivot_k */
    long q = q0 + k * g->nk;
    double a = crm_poisson_lower(v, c, k);
    for (int r = 0; r < 2; ++r) prev[r] = s[2 * q + r] = (s[2 * q + r] * scale - a * prev[r]) * v->lu_inv[q];
  }
  for (long k = g->nz - 2; k >= 0; --k) { /* back: x_k = d'_k - c'_k x_{k+1} */
    long q = q0 + k * g->nk;
    for (int r = 0; r < 2; ++r) prev[r] = s[2 * q + r] -= v->lu_c[q] * prev[r];
  }
}

/* Velocity correction u = u* - dt grad(phi) at (c, k, i), k = 0..nz. */
CRM_HD void crm_pressure_correct(const crm_view *v, double dt, long c, long k, long i) {
  const crm_grid *g = &v->g;
  long n = crm_ix(g, c, k, i), nx = g->nx;
  if (k < g->nz) v->u[n] = v->us[n] - dt * (v->phi[n] - v->phi[crm_west(g, n, i)]) / v->dx;
  v->w[n] = k > 0 && k < g->nz ? v->ws[n] - dt * (v->phi[n] - v->phi[n - nx]) / v->dz : 0.0;
}

/* ------------------------------------------------------- scalar advection */
/* Forward in time, flux form: a first-order upwind (low-order) flux plus a
 * Lax-Wendroff antidiffusive flux limited so that no cell sends out more
 * than its low-order content (a positive-definite flux limiter, as WRF's).
 * Fluxes are rho-weighted, so sum(rho phi) changes only by round-off. */

/* West x-face and bottom z-face fluxes of cell (k, i) of scalar sc, k = 0..nz. */
CRM_HD void crm_scalar_fluxes(const crm_view *v, double dt, int sc, long c, long k, long i) {
  const crm_grid *g = &v->g;
  long n = crm_ix(g, c, k, i), off = (long)sc * crm_field_size(g), p = crm_px(g, c, k), nx = g->nx;
  const double *phi = v->scal + off;
  if (k < g->nz) {
    double cx = v->u[n] * dt / v->dx, L = phi[crm_west(g, n, i)], R = phi[n];
    double low = crm_max(cx, 0.0) * L + crm_min(cx, 0.0) * R;
    double high = cx * (0.5 * (L + R) - 0.5 * cx * (R - L));
    v->flux_x[off + n] = v->rho[p] * low;
    v->anti_x[off + n] = v->rho[p] * (high - low);
  }
  if (k > 0 && k < g->nz) {
    double cz = v->w[n] * dt / v->dz, L = phi[n - nx], R = phi[n];
    double low = crm_max(cz, 0.0) * L + crm_min(cz, 0.0) * R;
    double high = cz * (0.5 * (L + R) - 0.5 * cz * (R - L));
    v->flux_z[off + n] = v->rhof[p] * low;
    v->anti_z[off + n] = v->rhof[p] * (high - low);
  } else {
    v->flux_z[off + n] = v->anti_z[off + n] = 0.0;
  }
}

/* Low-order update of cell (k, i), k < nz, and the fraction of its
 * outgoing antidiffusive flux it can afford. */
CRM_HD void crm_scalar_limit(const crm_view *v, int sc, long c, long k, long i) {
  const crm_grid *g = &v->g;
  long n = crm_ix(g, c, k, i), off = (long)sc * crm_field_size(g), nx = g->nx;
  long o = off + n, e = off + crm_east(g, n, i);
  double rho = v->rho[crm_px(g, c, k)];
  double low = v->scal[o] - (v->flux_x[e] - v->flux_x[o] + v->flux_z[o + nx] - v->flux_z[o]) / rho;
  double out = crm_max(v->anti_x[e], 0.0) - crm_min(v->anti_x[o], 0.0) + crm_max(v->anti_z[o + nx], 0.0) -
               crm_min(v->anti_z[o], 0.0);
  double have = crm_max(low, 0.0) * rho;
  v->low[o] = low;
  v->limit[o] = out > have ? have / out : 1.0;
}

/* Antidiffusive flux through a face, scaled by its donor cell's limit. */
CRM_HD double crm_limited(double anti, double limit_minus, double limit_plus) {
  return anti * (anti > 0.0 ? limit_minus : limit_plus);
}

/* Final update of cell (k, i), k < nz. */
CRM_HD void crm_scalar_update(const crm_view *v, int sc, long c, long k, long i) {
  const crm_grid *g = &v->g;
  long n = crm_ix(g, c, k, i), off = (long)sc * crm_field_size(g), nx = g->nx;
  long o = off + n, e = off + crm_east(g, n, i), wn = off + crm_west(g, n, i);
  const double *A = v->anti_x, *Z = v->anti_z, *lim = v->limit;
  double east = crm_limited(A[e], lim[o], lim[e]), west = crm_limited(A[o], lim[wn], lim[o]);
  double top = k + 1 < g->nz ? crm_limited(Z[o + nx], lim[o], lim[o + nx]) : 0.0;
  double bot = k > 0 ? crm_limited(Z[o], lim[o - nx], lim[o]) : 0.0;
  v->scal[o] = v->low[o] - (east - west + top - bot) / v->rho[crm_px(g, c, k)];
}

/* ------------------------------------------------------------ microphysics */

/* Saturation adjustment, autoconversion, accretion and rain evaporation at
 * cell (c, k, i), k < nz, over one CRM step. Each exchange moves water
 * between qt and qp with one subtraction and one addition, and t (with
 * qc + qp inside it) is unchanged by every phase change. */
CRM_HD void crm_micro_cell(const crm_view *v, long c, long k, long i) {
  const crm_grid *g = &v->g;
  long n = crm_ix(g, c, k, i), p = crm_px(g, c, k), N = crm_field_size(g);
  double t = v->scal[n], qt = v->scal[N + n], qp = v->scal[2 * N + n];
  double z = v->zc[p], pres = v->pres[p], rho = v->rho[p];
  double rain = crm_max(qp, 0.0); /* advection leaves round-off negatives; pow must not see them */
  double qc = crm_saturation_adjust(t, qt, qp, z, pres);
  double conv = crm_min((CRM_AUTO_RATE * crm_max(qc - CRM_QC0, 0.0) + CRM_ACCR_RATE * qc * pow(rain, 0.875)) * v->dt, qc);
  double T = crm_temperature(t, qc, qp, z), qv = qt - qc, qs = crm_qsat(T, pres);
  double deficit = crm_max(1.0 - qv / qs, 0.0);
  double evap = crm_min(CRM_EVAP_RATE * deficit * pow(1.0e3 * rho * rain, 0.525) * v->dt,
                     crm_min(rain, crm_max(qs - qv, 0.0)));
  double moved = conv - evap; /* qt -> qp */
  v->scal[N + n] = qt - moved;
  v->scal[2 * N + n] = qp + moved;
  v->qc[n] = qc - conv;
}

/* Rain fall speed (Kessler), m/s. */
CRM_HD double crm_fall_speed(const crm_view *v, long c, long k, double qp) {
  long p = crm_px(&v->g, c, k), p0 = crm_px(&v->g, c, 0);
  return qp > 0.0 ? 36.34 * pow(1.0e-3 * v->rho[p] * qp, 0.1364) * sqrt(v->rho[p0] / v->rho[p]) : 0.0;
}

CRM_HD double crm_fall_cfl_cell(const crm_view *v, long c, long k, long i) {
  double qp = v->scal[2 * crm_field_size(&v->g) + crm_ix(&v->g, c, k, i)];
  return crm_fall_speed(v, c, k, qp) * v->dt / v->dz;
}

/* Rain fall of column (c, i) in `cycles` upwind sub-steps, bottom up in
 * place (each cell reads its own and the cell above's old values). Moving
 * rain at fixed T changes t by -L dqp / cp; what leaves the lowest cell
 * accumulates as surface precipitation. */
CRM_HD void crm_fall_column(const crm_view *v, long c, long i, int cycles) {
  const crm_grid *g = &v->g;
  long N = crm_field_size(g), nx = g->nx;
  double dt = v->dt / cycles, *t = v->scal, *qp = v->scal + 2 * N;
  for (int cyc = 0; cyc < cycles; ++cyc) {
    long n = crm_ix(g, c, 0, i);
    double out = v->rho[crm_px(g, c, 0)] * crm_fall_speed(v, c, 0, qp[n]) * qp[n];
    v->precip[c * nx + i] += out * dt;
    for (long k = 0; k < g->nz; ++k, n += nx) {
      long p = crm_px(g, c, k);
      double in = k + 1 < g->nz ? v->rho[p + 1] * crm_fall_speed(v, c, k + 1, qp[n + nx]) * qp[n + nx] : 0.0;
      double dq = dt * (in - out) / (v->rho[p] * v->dz);
      qp[n] += dq;
      t[n] -= CRM_LV / CRM_CP * dq;
      out = in;
    }
  }
}

/* --------------------------------------------------------------- NaN guard */

/* u, w, t, qt, qp as one index space: field f, element n of its array. */
#define CRM_GUARDED_FIELDS 5
CRM_HD const double *crm_guarded_field(const crm_view *v, int f) {
  return f == 0 ? v->u : f == 1 ? v->w : v->scal + (long)(f - 2) * crm_field_size(&v->g);
}

#endif
