/* Eager's kernels: each body of a program in its own loop. CMake writes one
 * translation unit per program (stencil_eager_<program>.c, from
 * stencil_eager_kernels.c.in) expanding these macros over the program's
 * list of bodies, so two programs may name their bodies alike. Every body
 * gets a kernel over one level (a 2-D call, or a region) and one over
 * levels (a 3-D call); eager picks the one of the call's dimension. */
#ifndef STENCIL_EAGER_KERNELS_H
#define STENCIL_EAGER_KERNELS_H

#include <stddef.h>

#include "stencil_kernels.h"

/* A body over the local box [box[0], box[1]) x [box[2], box[3]). */
typedef void (*st_eager_kernel)(const stencil_args *a, const long box[4], double *const *in, double *out);
/* A body over the box and the levels [box[4], box[5]), each column's levels
 * upwards, or downwards when dir < 0 (a backward call), so a sequential
 * call reads the levels it wrote before. */
typedef void (*st_eager_kernel3)(const stencil_args *a, const long box[6], int dir, double *const *in, double *out);

/* A program's bodies by name, ended by a NULL name. */
typedef struct st_eager_body {
  const char *name;
  st_eager_kernel fn;
  st_eager_kernel3 fn3;
} st_eager_body;

#define ST_EAGER_P(n) in[n]
#define ST_EAGER_V(n) in[n][k]
#define ST_EAGER_KERNEL(name)                                                                      \
  static void eager_##name(const stencil_args *args, const long box[4], double *const *in, double *out) { \
    const stencil_args local_args = *args; /* not aliased by out: scalars stay in registers */       \
    const stencil_args *const a = &local_args;                                                     \
    const long s = a->stride;                                                                      \
    _Pragma("omp parallel for schedule(static)") for (long j = box[2]; j < box[3]; ++j) {          \
      const long gj = a->j0 + j;                                                                   \
      for (long i = box[0]; i < box[1]; ++i) {                                                     \
        const long k = a->origin + j * s + i, gi = a->i0 + i;                                      \
        (void)gi, (void)gj, (void)in;                                                              \
        out[k] = ST_CALL_##name(ST_EAGER_P, ST_EAGER_V);                                           \
      }                                                                                            \
    }                                                                                              \
  }
#define ST_EAGER_KERNEL3(name)                                                                     \
  static void eager3_##name(const stencil_args *args, const long box[6], int dir, double *const *in, double *out) { \
    const stencil_args local_args = *args;                                                         \
    const stencil_args *const a = &local_args;                                                     \
    const long s = a->stride;                                                                      \
    _Pragma("omp parallel for schedule(static)") for (long j = box[2]; j < box[3]; ++j) {          \
      const long gj = a->j0 + j;                                                                   \
      for (long n = 0; n < box[5] - box[4]; ++n) {                                                 \
        const long kz = dir < 0 ? box[5] - 1 - n : box[4] + n;                                     \
        for (long i = box[0]; i < box[1]; ++i) {                                                   \
          const long k = a->origin + kz * a->plane + j * s + i, gi = a->i0 + i;                    \
          (void)gi, (void)gj, (void)in;                                                            \
          out[k] = ST_CALL_##name(ST_EAGER_P, ST_EAGER_V);                                         \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
/* Both kernels of a body, and its entry in the program's list. */
#define ST_EAGER_KERNELS(name) ST_EAGER_KERNEL(name) ST_EAGER_KERNEL3(name)
#define ST_EAGER_ENTRY(name) {#name, eager_##name, eager3_##name},

#endif
