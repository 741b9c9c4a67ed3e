/* The host backend's row kernels (snap_cpu_kernels.c, snap_cpu_avx512.c,
 * walked by snap_cpu.c): the update of n points of a row along z, in
 * place, each point snap_update (snap_kernel.h) in its order, whatever the
 * kernel's vector width. */
#ifndef SNAP_CPU_ROWS_H
#define SNAP_CPU_ROWS_H

#include <stdbool.h>

#include "snapshots.h"

/* The update of n points of a row in place: `field` holds u^{k-2} there
 * and receives u^k; `damping` is the row's eta/dt (snap_fill_layer), from
 * which with 1/a each point forms r (snap_ratio); s1 is the y stride (0 in
 * 2-D). */
typedef void (*row_fn)(double *restrict field, const double *restrict cur, const double *restrict damping,
                       const double *restrict inv_a, long n, long s0, long s1, const double *restrict w);

/* Two neighbouring 2-D rows (x and x + 1, `pair` apart) at once, in place
 * in `a` and `b`. */
typedef void (*row_pair_fn)(double *restrict a, double *restrict b, const double *restrict cur,
                            const double *restrict damping_a, const double *restrict damping_b,
                            const double *restrict inv_a, long pair, long n, long s0, const double *restrict w);

/* The AVX-512 kernels (snap_cpu_avx512.c) of a radius, damped or not, or
 * NULL where the CPU or the compiler has no AVX-512. They take whole
 * vectors only: n a multiple of 8, every pointer on a 64-byte line, and
 * `cur` readable 8 doubles before and after the n points (a padded row's
 * z padding is a line: snap_grid). Each point's operations are
 * snap_update's, in its order: the same bits as the portable kernels. */
#define SNAP_WIDE 8 /* doubles per AVX-512 vector */
row_fn snap_wide_row_3d(int radius, bool damped);
row_pair_fn snap_wide_row_pair_2d(int radius, bool damped);

/* The kernels of a grid's radius and dimension (no pairs in 3-D), [0]
 * damped, [1] undamped; the AVX-512 ones for the whole vectors of the
 * rows where the CPU has them (NULL otherwise): 3-D rows, 2-D pairs. */
typedef struct {
  row_fn one[2], wide_one[2];
  row_pair_fn two[2], wide_two[2];
} snap_row_kernels;
snap_row_kernels snap_cpu_kernels_for(const snap_grid *g);

/* The imaging condition along a row (snap_image per point) into grad; in
 * place, the new values `next` also written over u^{k-2} in `field` in the
 * same pass; and the zfp bound's sum of |second difference| where asked. */
void snap_image_row(double *restrict grad, const double *restrict u, const double *restrict next,
                    const double *restrict cur, const double *restrict prev, long n);
void snap_image_row_in_place(double *restrict grad, const double *restrict u, const double *restrict next,
                             const double *restrict cur, double *restrict field, long n);
void snap_abs_d2_row(double *abs_d2, const double *next, const double *cur, const double *prev, long n);

#endif
