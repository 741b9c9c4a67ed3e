/* The loop bodies every backend shares, written once: the centred second
 * derivative, the damped acoustic update and the imaging condition. The
 * CPU loops (snap_cpu.c) and the CUDA kernels (snap_cuda.cu) call these
 * per point in the same order, so forward and adjoint, every rank count and
 * every layer setting give the same bits.
 *
 * The discrete system (m = 1/v^2, eta the absorbing-layer damping, L the
 * centred Laplacian with zero values beyond the grid, hence symmetric):
 *   a u^k = (c + L) u^{k-1} - b u^{k-2} + q^{k-1}
 *   a = m/dt^2 + eta/(2 dt), b = m/dt^2 - eta/(2 dt), c = 2 m/dt^2.
 * Its transpose has the same form run backwards in time, so the adjoint is
 * this same update (exact to rounding: the dot test).
 *
 * Since c = a + b, dividing by a leaves two coefficients per point,
 *   u^k = u^{k-1} + r (u^{k-1} - u^{k-2}) + (1/a) L u^{k-1} + q^{k-1}/a,
 * r = b/a (1 outside the absorbing layer). Since b = a - eta/dt,
 * r = 1 - (eta/dt)(1/a): the damping eta is a profile of the depth into
 * the layer, so a backend may hold it as a few rows of eta/dt and read
 * one model array per point (1/a), not two. */
#ifndef SNAP_KERNEL_H
#define SNAP_KERNEL_H

#ifdef __CUDACC__
#define SNAP_HD __host__ __device__
#else
#include <math.h>
#define SNAP_HD
#endif

#define SNAP_MAX_RADIUS 4

/* Centred second-derivative weights for space order 2, 4, 8 (radius 1, 2,
 * 4): w[0] the centre, w[r] the pair at distance r. */
SNAP_HD static inline int snap_stencil_weights(int space_order, double w[SNAP_MAX_RADIUS + 1]) {
  for (int r = 0; r <= SNAP_MAX_RADIUS; r++) w[r] = 0.0;
  switch (space_order) {
  case 2: w[0] = -2.0, w[1] = 1.0; return 1;
  case 4: w[0] = -5.0 / 2.0, w[1] = 4.0 / 3.0, w[2] = -1.0 / 12.0; return 2;
  case 8:
    w[0] = -205.0 / 72.0, w[1] = 8.0 / 5.0, w[2] = -1.0 / 5.0, w[3] = 8.0 / 315.0, w[4] = -1.0 / 560.0;
    return 4;
  default: return 0;
  }
}

/* The Laplacian at padded index i: s0, s1, s2 are the strides of the
 * three axes (s1 = 0 in 2-D: that axis is skipped); w already divided by
 * h^2. The pairs are summed axis by axis, radius by radius, each radius's
 * weight applied in one fused multiply-add (fma: one rounding, the same
 * in C and CUDA; 10-25 % less time per step than a multiply and an add,
 * snap_cpu.c). */
SNAP_HD static inline double snap_laplacian(const double *u, long i, long s0, long s1, long s2, int radius,
                                            const double *w) {
  double lap = (s1 ? 3.0 : 2.0) * w[0] * u[i];
  for (int r = 1; r <= radius; r++) {
    double pair = (u[i + r * s0] + u[i - r * s0]) + (u[i + r * s2] + u[i - r * s2]);
    if (s1) pair += u[i + r * s1] + u[i - r * s1];
    lap = fma(w[r], pair, lap);
  }
  return lap;
}

/* r = b/a from the layer's damping over dt (0 outside the layer, where r
 * is exactly 1) and 1/a: every backend forms it by this expression. */
SNAP_HD static inline double snap_ratio(double damping_over_dt, double inv_a) { return 1.0 - damping_over_dt * inv_a; }

/* One point of the update: next = cur + r (cur - prev) + L cur / a, with
 * the model held as r = b/a and 1/a per point, in two fused
 * multiply-adds. */
SNAP_HD static inline double snap_update(const double *cur, const double *prev, long i, long s0, long s1, long s2,
                                         int radius, const double *w, double ratio, double inv_a) {
  return fma(inv_a, snap_laplacian(cur, i, s0, s1, s2, radius, w), fma(ratio, cur[i] - prev[i], cur[i]));
}

/* snap_update where the damping is zero, the same bits in two
 * operations fewer: there r = 1 - 0 x (1/a) is exactly 1, and
 * fma(1, x, c) rounds x + c once, as x + c does. */
SNAP_HD static inline double snap_update_undamped(const double *cur, const double *prev, long i, long s0, long s1,
                                                  long s2, int radius, const double *w, double inv_a) {
  return fma(inv_a, snap_laplacian(cur, i, s0, s1, s2, radius, w), (cur[i] - prev[i]) + cur[i]);
}

/* The imaging condition at one point: u(t) times the second time
 * difference of the adjoint field (without the -1/dt^2 scale, applied once
 * at the end). */
SNAP_HD static inline double snap_image(double u, double v_next, double v_cur, double v_prev) {
  return u * (v_next - 2.0 * v_cur + v_prev);
}

#endif
