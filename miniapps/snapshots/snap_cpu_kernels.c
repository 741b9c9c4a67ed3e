/* The host backend's portable row kernels (snap_cpu_rows.h): the update
 * of a row (and of a pair of 2-D rows) for each stencil radius and
 * dimension, damped and undamped, and the adjoint's imaging along a row;
 * snap_cpu.c walks the grid with them. */
#include "snap_cpu_rows.h"
#include "snapshots.h"

/* Rows of the update along z (contiguous), one function per stencil
 * radius and dimension, so the radius loop unrolls and the row vectorises
 * with the stencil's weights and shape known. Each point is snap_update,
 * the same expression in the same order whatever the vector width (its
 * fused multiply-adds are explicit fma calls, and nothing else is
 * contracted: ISO C's default here), so every clone gives the same bits.
 * The AVX-512 clone, else the FMA one (AVX with FMA3: 256-bit), is chosen
 * at load time where the CPU has it (GCC's target_clones); the default
 * clone runs everywhere else, with the C library's fma (correct, slow).
 * Against a multiply and an add, the fused step took 10-25 % less time
 * per forward step (space order 8, 2-D 600 x 200 and 3-D 100^3, 1 thread,
 * the minima of 5 repetitions in 3 interleaved rounds of
 * `mapp-snapshots-bench`).
 * The 3-D rows have no AVX-512 clone: on the Xeon VM the 256-bit FMA
 * clone's forward took 0.47-0.50 s where the AVX-512 one took 0.59-0.75
 * (3-D 100^3, 150 steps, space order 8, 1 thread, each run's fastest of
 * 1.5 s of passes, 4 alternating rounds; a second set: 0.61-0.69 against
 * 0.68-0.97). In 2-D neither width led in the same rounds.
 * Where the CPU has AVX-512, the whole vectors of a row run by the kernels
 * of snap_cpu_avx512.c instead (the z neighbours shifted in registers,
 * not loaded again: 2-D 1.3x faster a step); these clones take the rest
 * (a row's last points when it is not whole vectors) and every CPU
 * without it. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(MAPP_NO_TARGET_CLONES)
#define SNAP_ROW_CLONES __attribute__((target_clones("avx512f", "fma", "default")))
#define SNAP_ROW_CLONES_3D __attribute__((target_clones("fma", "default")))
#else
#define SNAP_ROW_CLONES
#define SNAP_ROW_CLONES_3D
#endif

/* The update of n points of a row in place (row_fn, snap_cpu_rows.h):
 * each point reads its own old value before writing it and no other point
 * reads it, so a step streams one field less than writing a third array
 * would (no read for ownership of a line only the write needs). Each
 * kernel comes twice: DAMPED, and for the points where the damping is 0
 * (most of the grid), the update without r (snap_update_undamped: the
 * same bits, two operations fewer of about 22 at space order 8, and no
 * damping read). */
#define SNAP_POINT(DAMPED, CUR, PREV, Z, S0, S1, RADIUS, W, DAMPING, INV_A)                                         \
  ((DAMPED) ? snap_update(CUR, PREV, Z, S0, S1, 1, RADIUS, W, snap_ratio((DAMPING)[Z], (INV_A)[Z]), (INV_A)[Z])       \
            : snap_update_undamped(CUR, PREV, Z, S0, S1, 1, RADIUS, W, (INV_A)[Z]))

#define SNAP_ROW(NAME, RADIUS, THREE_D, CLONES, DAMPED)                                                            \
  CLONES static void NAME(double *restrict field, const double *restrict cur,                                      \
                          const double *restrict damping, const double *restrict inv_a, long n, long s0,           \
                          long s1, const double *restrict w) {                                                     \
    double wk[SNAP_MAX_RADIUS + 1];                                                                                \
    for (int r = 0; r <= SNAP_MAX_RADIUS; r++) wk[r] = w[r];                                                       \
    const long sy = (THREE_D) ? s1 : 0;                                                                            \
    if ((THREE_D) && sy == 0) __builtin_unreachable(); /* a 3-D grid's y stride: folds the kernel's 2-D test */    \
    for (long z = 0; z < n; z++) field[z] = SNAP_POINT(DAMPED, cur, field, z, s0, sy, RADIUS, wk, damping, inv_a); \
  }
/* row_SHAPE (damped) and calm_SHAPE (undamped). */
#define SNAP_ROWS(SHAPE, RADIUS, THREE_D, CLONES)                                                                  \
  SNAP_ROW(row_##SHAPE, RADIUS, THREE_D, CLONES, 1)                                                                \
  SNAP_ROW(calm_##SHAPE, RADIUS, THREE_D, CLONES, 0)
SNAP_ROWS(r1_2d, 1, 0, SNAP_ROW_CLONES)
SNAP_ROWS(r2_2d, 2, 0, SNAP_ROW_CLONES)
SNAP_ROWS(r4_2d, 4, 0, SNAP_ROW_CLONES)
SNAP_ROWS(r1_3d, 1, 1, SNAP_ROW_CLONES_3D)
SNAP_ROWS(r2_3d, 2, 1, SNAP_ROW_CLONES_3D)
SNAP_ROWS(r4_3d, 4, 1, SNAP_ROW_CLONES_3D)

/* Two neighbouring 2-D rows (x and x + 1, `pair` apart) at once, in place
 * in `a` and `b` (separate pointers: the adjoint computes into L1
 * buffers). They share the loads of the rows between them (6 of a row's 9
 * along x at space order 8): 1.15-1.2x faster than a row at a time, in L1.
 * In 3-D, pairs of y rows were 1.15-1.3x slower than single rows (more
 * streams in flight than the prefetchers follow), so 3-D runs rows alone. */
#define SNAP_ROW_PAIR(NAME, RADIUS, DAMPED)                                                                        \
  SNAP_ROW_CLONES static void NAME(double *restrict a, double *restrict b, const double *restrict cur,             \
                                   const double *restrict damping_a, const double *restrict damping_b,            \
                                   const double *restrict inv_a, long pair, long n, long s0,                      \
                                   const double *restrict w) {                                                    \
    double wk[SNAP_MAX_RADIUS + 1];                                                                               \
    for (int r = 0; r <= SNAP_MAX_RADIUS; r++) wk[r] = w[r];                                                      \
    const double *restrict cur_b = cur + pair, *restrict inv_a_b = inv_a + pair;                                  \
    for (long z = 0; z < n; z++) {                                                                                \
      a[z] = SNAP_POINT(DAMPED, cur, a, z, s0, 0, RADIUS, wk, damping_a, inv_a);                                  \
      b[z] = SNAP_POINT(DAMPED, cur_b, b, z, s0, 0, RADIUS, wk, damping_b, inv_a_b);                              \
    }                                                                                                             \
  }
/* rows_rR_2d (damped) and calm_rows_rR_2d (undamped). */
#define SNAP_ROW_PAIRS(RADIUS)                                                                                     \
  SNAP_ROW_PAIR(rows_r##RADIUS##_2d, RADIUS, 1)                                                                    \
  SNAP_ROW_PAIR(calm_rows_r##RADIUS##_2d, RADIUS, 0)
SNAP_ROW_PAIRS(1)
SNAP_ROW_PAIRS(2)
SNAP_ROW_PAIRS(4)

snap_row_kernels snap_cpu_kernels_for(const snap_grid *g) {
  static const row_fn ones[2][2][3] = {{{row_r1_2d, row_r2_2d, row_r4_2d}, {row_r1_3d, row_r2_3d, row_r4_3d}},
                                       {{calm_r1_2d, calm_r2_2d, calm_r4_2d}, {calm_r1_3d, calm_r2_3d, calm_r4_3d}}};
  static const row_pair_fn twos[2][3] = {{rows_r1_2d, rows_r2_2d, rows_r4_2d},
                                         {calm_rows_r1_2d, calm_rows_r2_2d, calm_rows_r4_2d}};
  int r = g->radius == 1 ? 0 : g->radius == 2 ? 1 : 2, d = g->dims == 3;
  snap_row_kernels k;
  for (int calm = 0; calm < 2; calm++) {
    k.one[calm] = ones[calm][d][r], k.two[calm] = d ? NULL : twos[calm][r];
    k.wide_one[calm] = d ? snap_wide_row_3d(g->radius, !calm) : NULL;
    k.wide_two[calm] = d ? NULL : snap_wide_row_pair_2d(g->radius, !calm);
  }
  return k;
}

SNAP_ROW_CLONES void snap_image_row(double *restrict grad, const double *restrict u, const double *restrict next,
                                      const double *restrict cur, const double *restrict prev, long n) {
  for (long z = 0; z < n; z++) grad[z] += snap_image(u[z], next[z], cur[z], prev[z]);
}

void snap_abs_d2_row(double *abs_d2, const double *next, const double *cur, const double *prev, long n) {
  for (long z = 0; z < n; z++) abs_d2[z] += __builtin_fabs(next[z] - 2.0 * cur[z] + prev[z]);
}

SNAP_ROW_CLONES void snap_image_row_in_place(double *restrict grad, const double *restrict u,
                                               const double *restrict next, const double *restrict cur,
                                               double *restrict field, long n) {
  for (long z = 0; z < n; z++) {
    double value = next[z];
    grad[z] += snap_image(u[z], value, cur[z], field[z]);
    field[z] = value;
  }
}
