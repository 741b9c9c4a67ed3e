/* The stencil bodies of the vertical program (stencil_program_vertical.c),
 * written once, as stencil_kernels.h's are: eager and the generated
 * program call the same functions, so they agree bit for bit.
 *
 * A 3-D field is nz levels of padded planes; P(n)[k - a->plane] is input n
 * one level down, P(n)[k + a->plane] one level up (k the point's element).
 * Levels are layers of thickness dp (level 0 at the bottom); q is a tracer
 * mixing ratio, so q dp is tracer mass. u and v are fixed winds on the west
 * and south faces, zero on the walls. */
#ifndef STENCIL_BODIES_VERTICAL_H
#define STENCIL_BODIES_VERTICAL_H

#include "stencil_kernels.h"

/* ---- horizontal advection, flux form, per level ---- */

/* Upwind value across a face: the cell the wind comes from. */
ST_DEVICE static inline double st_upwind(double w, double from_low, double from_high) {
  return w > 0.0 ? from_low : from_high;
}
/* Thickness flux through the west (south) face; tracer flux as that flux
 * times the upwind mixing ratio, so a constant tracer has exactly the
 * thickness flux (and stays constant, bit for bit). */
#define ST_CALL_dp_flux_x(P, V) (V(0) * st_upwind(V(0), P(1)[k - 1], V(1)))
#define ST_CALL_dp_flux_y(P, V) (V(0) * st_upwind(V(0), P(1)[k - s], V(1)))
#define ST_CALL_q_flux_x(P, V) (V(0) * st_upwind(V(1), P(2)[k - 1], V(2)))
#define ST_CALL_q_flux_y(P, V) (V(0) * st_upwind(V(1), P(2)[k - s], V(2)))

/* x (at 0) minus the divergence of fluxes fx, fy (inputs 1, 2). */
ST_DEVICE static inline double st_flux_update(const stencil_args *a, double x, const double *fx, const double *fy,
                                              long k, long s) {
  return x - a->dt * a->rdx * (fx[k + 1] - fx[k]) - a->dt * a->rdy * (fy[k + s] - fy[k]);
}
#define ST_CALL_thickness_new(P, V) st_flux_update(a, V(0), P(1), P(2), k, s)
/* tracer mass q dp after advection: the same expression on q dp */
#define ST_CALL_tracer_mass_new(P, V) st_flux_update(a, V(0) * V(1), P(2), P(3), k, s)
#define ST_CALL_mixing_ratio(P, V) (V(0) / V(1))
#define ST_CALL_copy(P, V) V(0)

/* ---- the remap-like pass: conservative exchange between levels ---- */

/* Tracer mass moved from level k to level k + 1 (inputs: q, dp). */
ST_DEVICE static inline double st_level_flux(const stencil_args *a, const double *q, const double *dp, long k) {
  const double thinner = dp[k] < dp[k + a->plane] ? dp[k] : dp[k + a->plane];
  return a->mix * thinner * (q[k] - q[k + a->plane]);
}
/* q after the exchange with the level below (k - 1) and above (k + 1):
 * mass in minus mass out, over the level's thickness. A constant q moves
 * no mass, exactly. Bottom and top have one neighbour each. */
#define ST_CALL_remap_bottom(P, V) (V(0) - st_level_flux(a, P(0), P(1), k) / V(1))
#define ST_CALL_remap(P, V)                                                                        \
  (V(0) + (st_level_flux(a, P(0), P(1), k - a->plane) - st_level_flux(a, P(0), P(1), k)) / V(1))
#define ST_CALL_remap_top(P, V) (V(0) + st_level_flux(a, P(0), P(1), k - a->plane) / V(1))

/* ---- implicit vertical diffusion: a tridiagonal solve per column ---- */

/* dp_k (x_k - r_k) = g_{k+1/2} (x_{k+1} - x_k) - g_{k-1/2} (x_k - x_{k-1}),
 * with the coupling g_{k+1/2} = kappa / (mean thickness of levels k and
 * k + 1), computed once per interface (at level k, for k < nz - 1), and no
 * flux through the bottom and the top:
 *   -g_{k-1/2} x_{k-1} + (dp_k + g_{k-1/2} + g_{k+1/2}) x_k - g_{k+1/2} x_{k+1} = dp_k r_k.
 * Conserves sum dp_k x_k to round-off. Solved by Thomas: a forward sweep
 * (c'_k = -g_{k+1/2} / m_k, d'_k = (dp_k r_k + g_{k-1/2} d'_{k-1}) / m_k,
 * m_k = dp_k + g_{k-1/2} + g_{k+1/2} + g_{k-1/2} c'_{k-1}) and a backward
 * one (x_k = d'_k - c'_k x_{k+1}). */
#define ST_CALL_coupling(P, V) (a->kappa / (0.5 * (V(0) + P(0)[k + a->plane])))
/* m_k: the pivot of row k (g_up 0 on the top row) */
ST_DEVICE static inline double st_pivot(double dp, double g_low, double g_up, double cp_below) {
  return dp + g_low + g_up + g_low * cp_below;
}
/* c' of the bottom and inner rows (inputs dp, g; c' below) */
#define ST_CALL_sweep_c_bottom(P, V) (-V(1) / (V(0) + V(1)))
#define ST_CALL_sweep_c(P, V) (-V(1) / st_pivot(V(0), P(1)[k - a->plane], V(1), P(2)[k - a->plane]))
/* d' of the bottom, inner and top rows (inputs r, dp, g; c', d' below) */
#define ST_CALL_sweep_d_bottom(P, V) (V(1) * V(0) / (V(1) + V(2)))
#define ST_CALL_sweep_d(P, V)                                                                      \
  ((V(1) * V(0) + P(2)[k - a->plane] * P(4)[k - a->plane]) /                                       \
   st_pivot(V(1), P(2)[k - a->plane], V(2), P(3)[k - a->plane]))
#define ST_CALL_sweep_d_top(P, V)                                                                  \
  ((V(1) * V(0) + P(2)[k - a->plane] * P(4)[k - a->plane]) /                                       \
   st_pivot(V(1), P(2)[k - a->plane], 0.0, P(3)[k - a->plane]))
/* x of the top row, and of the rows below it (inputs d', c', x above) */
#define ST_CALL_solve_top(P, V) V(0)
#define ST_CALL_solve(P, V) (V(0) - V(1) * P(2)[k + a->plane])

/* Every body with a call macro, for the eager kernels (one X per body). */
#define ST_BODIES_VERTICAL(X)                                                                      \
  X(dp_flux_x) X(dp_flux_y) X(q_flux_x) X(q_flux_y) X(thickness_new) X(tracer_mass_new)             \
  X(mixing_ratio) X(copy) X(remap_bottom) X(remap) X(remap_top) X(coupling) X(sweep_c_bottom)     \
  X(sweep_c) X(sweep_d_bottom) X(sweep_d) X(sweep_d_top) X(solve_top) X(solve)

#endif
