/* The row kernels at AVX-512 with the z neighbours shifted out of
 * registers: each row is read as aligned vectors, and the vectors of its
 * points r before and after (r = 1..radius) are formed from three of
 * them (valignq), not loaded unaligned. The compiler's vectorised loop
 * loads each of those 2 x radius neighbours again, across a cache line
 * for all but one; here a row costs one aligned load per vector.
 * 2-D 600 x 200, space order 8, a forward step with nothing saved: 0.88
 * ns a point against 1.16 for the compiler's pair kernel (the fastest of
 * 4 passes of 1000 steps, one thread, the Xeon VM).
 * Each point is snap_update's (snap_kernel.h) operation for operation:
 * the same sums in the same grouping, the same fused multiply-adds, so
 * the same bits (snapshots.baseline.* checks them against the portable
 * kernels' answers). */
#include <stdlib.h>

#include "snap_cpu_rows.h"
#include "snap_kernel.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(MAPP_NO_TARGET_CLONES)
#include <immintrin.h>

#define WIDE __attribute__((target("avx512f")))
#define WIDE_INLINE __attribute__((target("avx512f"), always_inline)) static inline

/* The vector of the points r after those of `mid` (its lanes r..7, then
 * `hi`'s 0..r-1), and r before (`lo`'s 8-r..7, then `mid`'s 0..7-r). The
 * shift is an immediate: a switch the constant radius folds. */
#define SHIFT(HI, LO, R) _mm512_castsi512_pd(_mm512_alignr_epi64(_mm512_castpd_si512(HI), _mm512_castpd_si512(LO), R))
WIDE_INLINE __m512d after(__m512d mid, __m512d hi, int r) {
  switch (r) {
  case 1: return SHIFT(hi, mid, 1);
  case 2: return SHIFT(hi, mid, 2);
  case 3: return SHIFT(hi, mid, 3);
  default: return SHIFT(hi, mid, 4);
  }
}
WIDE_INLINE __m512d before(__m512d lo, __m512d mid, int r) {
  switch (r) {
  case 1: return SHIFT(mid, lo, 7);
  case 2: return SHIFT(mid, lo, 6);
  case 3: return SHIFT(mid, lo, 5);
  default: return SHIFT(mid, lo, 4);
  }
}

/* A row's three vectors around the points computed: z - 8, z, z + 8. */
typedef struct {
  __m512d lo, mid, hi;
} window;

/* snap_laplacian for 8 points: (dims x w0) x u, then radius by radius
 * the x pair plus the z pair (plus the y pair in 3-D), in one fma. */
WIDE_INLINE __m512d laplacian(const double *c, window v, long s0, long s1, int radius, const __m512d *w) {
  __m512d lap = _mm512_mul_pd(w[0], v.mid);
  for (int r = 1; r <= radius; r++) {
    __m512d x = _mm512_add_pd(_mm512_load_pd(c + r * s0), _mm512_load_pd(c - r * s0));
    __m512d pair = _mm512_add_pd(x, _mm512_add_pd(after(v.mid, v.hi, r), before(v.lo, v.mid, r)));
    if (s1) pair = _mm512_add_pd(pair, _mm512_add_pd(_mm512_load_pd(c + r * s1), _mm512_load_pd(c - r * s1)));
    lap = _mm512_fmadd_pd(w[r], pair, lap);
  }
  return lap;
}

/* snap_update (damped) or snap_update_undamped for 8 points: `field`
 * holds their u^{k-2}. */
WIDE_INLINE __m512d update(const double *c, window v, const double *field, const double *damping, const double *inv_a,
                           long s0, long s1, int radius, const __m512d *w, bool damped) {
  __m512d ia = _mm512_load_pd(inv_a), lap = laplacian(c, v, s0, s1, radius, w);
  __m512d change = _mm512_sub_pd(v.mid, _mm512_load_pd(field));
  if (!damped) return _mm512_fmadd_pd(ia, lap, _mm512_add_pd(change, v.mid));
  __m512d ratio = _mm512_sub_pd(_mm512_set1_pd(1.0), _mm512_mul_pd(_mm512_load_pd(damping), ia));
  return _mm512_fmadd_pd(ia, lap, _mm512_fmadd_pd(ratio, change, v.mid));
}

/* The weights as vectors, w[0] times the number of axes (snap_laplacian's
 * first product, formed as it forms it). */
WIDE_INLINE void broadcast_weights(const double *w, bool three_d, __m512d *out) {
  out[0] = _mm512_set1_pd((three_d ? 3.0 : 2.0) * w[0]);
  for (int r = 1; r <= SNAP_MAX_RADIUS; r++) out[r] = _mm512_set1_pd(w[r]);
}

WIDE_INLINE window first_window(const double *c) {
  return (window){.lo = _mm512_load_pd(c - SNAP_WIDE), .mid = _mm512_load_pd(c), .hi = _mm512_setzero_pd()};
}

WIDE_INLINE window slide(window v) { return (window){.lo = v.mid, .mid = v.hi}; }

/* The 2-D pair: rows a and b, their current fields `pair` apart. */
WIDE_INLINE void pair_2d(double *restrict a, double *restrict b, const double *restrict cur,
                         const double *restrict damping_a, const double *restrict damping_b,
                         const double *restrict inv_a, long pair, long n, long s0, const double *restrict w,
                         int radius, bool damped) {
  __m512d wv[SNAP_MAX_RADIUS + 1];
  broadcast_weights(w, false, wv);
  const double *cur_b = cur + pair, *inv_a_b = inv_a + pair;
  window va = first_window(cur), vb = first_window(cur_b);
  for (long z = 0; z < n; z += SNAP_WIDE) {
    va.hi = _mm512_load_pd(cur + z + SNAP_WIDE), vb.hi = _mm512_load_pd(cur_b + z + SNAP_WIDE);
    __m512d na = update(cur + z, va, a + z, damping_a + z, inv_a + z, s0, 0, radius, wv, damped);
    __m512d nb = update(cur_b + z, vb, b + z, damping_b + z, inv_a_b + z, s0, 0, radius, wv, damped);
    _mm512_store_pd(a + z, na), _mm512_store_pd(b + z, nb);
    va = slide(va), vb = slide(vb);
  }
}

/* The 3-D row: x stride s0, y stride s1. */
WIDE_INLINE void row_3d(double *restrict field, const double *restrict cur, const double *restrict damping,
                        const double *restrict inv_a, long n, long s0, long s1, const double *restrict w, int radius,
                        bool damped) {
  __m512d wv[SNAP_MAX_RADIUS + 1];
  broadcast_weights(w, true, wv);
  window v = first_window(cur);
  for (long z = 0; z < n; z += SNAP_WIDE) {
    v.hi = _mm512_load_pd(cur + z + SNAP_WIDE);
    _mm512_store_pd(field + z, update(cur + z, v, field + z, damping + z, inv_a + z, s0, s1, radius, wv, damped));
    v = slide(v);
  }
}

/* One function per radius and damping, so each unrolls with its radius
 * known. */
#define WIDE_KERNELS(R)                                                                                            \
  WIDE static void pair_r##R##_damped(double *restrict a, double *restrict b, const double *restrict cur,          \
                                      const double *restrict da, const double *restrict db,                        \
                                      const double *restrict ia, long pair, long n, long s0, const double *restrict w) { \
    pair_2d(a, b, cur, da, db, ia, pair, n, s0, w, R, true);                                                       \
  }                                                                                                                \
  WIDE static void pair_r##R##_calm(double *restrict a, double *restrict b, const double *restrict cur,            \
                                    const double *restrict da, const double *restrict db,                          \
                                    const double *restrict ia, long pair, long n, long s0, const double *restrict w) { \
    pair_2d(a, b, cur, da, db, ia, pair, n, s0, w, R, false);                                                      \
  }                                                                                                                \
  WIDE static void row_r##R##_damped(double *restrict f, const double *restrict cur, const double *restrict d,     \
                                     const double *restrict ia, long n, long s0, long s1, const double *restrict w) { \
    row_3d(f, cur, d, ia, n, s0, s1, w, R, true);                                                                  \
  }                                                                                                                \
  WIDE static void row_r##R##_calm(double *restrict f, const double *restrict cur, const double *restrict d,       \
                                   const double *restrict ia, long n, long s0, long s1, const double *restrict w) {  \
    row_3d(f, cur, d, ia, n, s0, s1, w, R, false);                                                                 \
  }
WIDE_KERNELS(1)
WIDE_KERNELS(2)
WIDE_KERNELS(4)

/* AVX-512 where the CPU has it, unless MAPP_SNAP_PORTABLE_ROWS is set (the
 * tests compare the two kernels' answers bit for bit on one machine). */
static bool wide_available(void) {
  static int available = -1;
  if (available < 0) {
    const char *portable = getenv("MAPP_SNAP_PORTABLE_ROWS");
    available = __builtin_cpu_supports("avx512f") && !(portable && *portable && *portable != '0');
  }
  return available;
}

static int radius_slot(int radius) { return radius == 1 ? 0 : radius == 2 ? 1 : radius == 4 ? 2 : -1; }

row_pair_fn snap_wide_row_pair_2d(int radius, bool damped) {
  static const row_pair_fn kernels[2][3] = {{pair_r1_calm, pair_r2_calm, pair_r4_calm},
                                            {pair_r1_damped, pair_r2_damped, pair_r4_damped}};
  int slot = radius_slot(radius);
  return wide_available() && slot >= 0 ? kernels[damped][slot] : NULL;
}

row_fn snap_wide_row_3d(int radius, bool damped) {
  static const row_fn kernels[2][3] = {{row_r1_calm, row_r2_calm, row_r4_calm},
                                       {row_r1_damped, row_r2_damped, row_r4_damped}};
  int slot = radius_slot(radius);
  return wide_available() && slot >= 0 ? kernels[damped][slot] : NULL;
}

#else

row_pair_fn snap_wide_row_pair_2d(int radius, bool damped) { return (void)radius, (void)damped, NULL; }
row_fn snap_wide_row_3d(int radius, bool damped) { return (void)radius, (void)damped, NULL; }

#endif
