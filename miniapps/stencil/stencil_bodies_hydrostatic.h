/* The stencil bodies of the hydrostatic program
 * (stencil_program_hydrostatic.c), written once for eager and the
 * generated programs.
 *
 * Levels are layers numbered from the model top down, as FV3 numbers them:
 * level 0 is the top layer, nz - 1 the one on the surface. dp is a layer's
 * pressure thickness, p the pressure at its upper interface, z the height
 * of that interface above the surface, and scale_height the layer's
 * R T / g (the unit of z). */
#ifndef STENCIL_BODIES_HYDROSTATIC_H
#define STENCIL_BODIES_HYDROSTATIC_H

#include "stencil_kernels.h"

#define ST_HYDROSTATIC_PTOP 0.3       /* pressure at the model top, in dp's unit */
#define ST_HYDROSTATIC_SMOOTHING 0.125 /* of the del-2 smoothing: at most 1/4 keeps every weight >= 0 */

/* dp smoothed in flux form, with no flux through the walls: a positive dp
 * stays positive, and each level's total is conserved to round-off. */
ST_DEVICE static inline double st_smooth(const stencil_args *a, const double *x, long k, long s, long gi, long gj) {
  const double east = gi + 1 < a->nx ? x[k + 1] - x[k] : 0.0;
  const double west = gi > 0 ? x[k] - x[k - 1] : 0.0;
  const double north = gj + 1 < a->ny ? x[k + s] - x[k] : 0.0;
  const double south = gj > 0 ? x[k] - x[k - s] : 0.0;
  return x[k] + ST_HYDROSTATIC_SMOOTHING * ((east - west) + (north - south));
}
#define ST_CALL_smooth(P, V) st_smooth(a, P(0), k, s, gi, gj)

/* Pressure at the upper interfaces, from the top down (FV3's pe):
 * p = ptop on the top layer, then the layer above's p plus its dp
 * (inputs: p, dp). */
#define ST_CALL_pressure_top(P, V) ST_HYDROSTATIC_PTOP
#define ST_CALL_pressure(P, V) (P(0)[k - a->plane] + P(1)[k - a->plane])

/* Height of the upper interfaces, from the surface up (FV3's hydrostatic
 * gz): a layer is scale_height ln(p below / p above) deep, its lower
 * interface's p being p + dp (inputs: scale_height, p, dp; z of the layer
 * below). The surface is at z = 0. */
ST_DEVICE static inline double st_layer_depth(double scale_height, double p, double dp) {
  return scale_height * log((p + dp) / p);
}
#define ST_CALL_height_surface(P, V) st_layer_depth(V(0), V(1), V(2))
#define ST_CALL_height(P, V) (P(3)[k + a->plane] + st_layer_depth(V(0), V(1), V(2)))

#define ST_CALL_copy(P, V) V(0)

/* Every body with a call macro, for the eager kernels (one X per body). */
#define ST_BODIES_HYDROSTATIC(X) X(smooth) X(pressure_top) X(pressure) X(height_surface) X(height) X(copy)

#endif
