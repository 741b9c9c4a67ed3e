/* The CPU backend (serial and OpenMP): its private data and the collapsed
 * loop nests every CPU phase is written with. One nest covers the
 * instances of the range r: the whole group for `batched` (one parallel
 * region of ninst x nz x nx points), one instance for `percrm` (a region
 * of nz x nx points per instance, the report's "before"). Serial runs the
 * same nests with OpenMP's if clause off, so the two backends are the same
 * code and the same answer. */
#ifndef CRM_CPU_H
#define CRM_CPU_H

#include <fftw3.h>

#include "crm.h"
#include "crm_kernel.h"

typedef struct {
  bool parallel;
  fftw_plan forward_chunk, inverse_chunk; /* a block of s->chunk CRMs: one batched plan */
  fftw_plan forward_tail, inverse_tail;   /* the last block when the chunk does not divide the CRMs */
} crm_cpu;

static inline crm_cpu *crm_cpu_of(const crm_state *s) { return (crm_cpu *)s->backend; }
static inline long crm_end(crm_range r) { return r.first + r.count; }

/* The nests below parallelise when a variable `parallel` in scope is true
 * (a _Pragma string cannot take a macro argument). */

/* (instance, level k in [k0, k1), column) */
#define CRM_FOR_CKI(r, k0, k1, nx)                                                            \
  _Pragma("omp parallel for collapse(3) schedule(static) if(parallel)")                                 \
  for (long c = (r).first; c < crm_end(r); ++c)                                                    \
    for (long k = (k0); k < (k1); ++k)                                                             \
      for (long i = 0; i < (nx); ++i)

/* (scalar, instance, level, column) */
#define CRM_FOR_SCKI(r, k0, k1, nx)                                                           \
  _Pragma("omp parallel for collapse(4) schedule(static) if(parallel)")                                 \
  for (int sc = 0; sc < CRM_NSCALAR; ++sc)                                                         \
    for (long c = (r).first; c < crm_end(r); ++c)                                                  \
      for (long k = (k0); k < (k1); ++k)                                                           \
        for (long i = 0; i < (nx); ++i)

/* (instance, j in [0, n)): a level, a column or a wavenumber per point */
#define CRM_FOR_CJ(r, n)                                                                      \
  _Pragma("omp parallel for collapse(2) schedule(static) if(parallel)")                                 \
  for (long c = (r).first; c < crm_end(r); ++c)                                                    \
    for (long j = 0; j < (n); ++j)

/* Phases (crm_dynamics.c, crm_pressure_fftw.c, crm_micro.c). */
int crm_cpu_forcing(crm_state *s, crm_range r);
int crm_cpu_max_cfl(crm_state *s, double *cfl);
int crm_cpu_means(crm_state *s, crm_range r);
int crm_cpu_momentum(crm_state *s, crm_range r, const crm_ab *ab);
int crm_cpu_advect(crm_state *s, crm_range r, double dt);
int crm_cpu_pressure(crm_state *s, crm_range r, double dt);
int crm_cpu_pressure_plans(crm_state *s);
void crm_cpu_pressure_release(crm_state *s);
int crm_cpu_micro(crm_state *s, crm_range r);
int crm_cpu_max_fall_cfl(crm_state *s, double *cfl);
int crm_cpu_fall(crm_state *s, crm_range r, int cycles);

#endif
