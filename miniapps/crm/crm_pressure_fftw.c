/* CPU pressure: the anelastic projection. The divergence of the predicted
 * velocity is transformed by a real FFT in x per level (FFTW), each
 * wavenumber solved by Thomas in z with its precomputed factorisation (the
 * mean mode by prefix sums), transformed back, and its gradient removed.
 *
 * FFTW's plans are batched: one plan execution transforms every row of a
 * block of CRMs (the rows of a rank are uniformly strided: instance-major,
 * `rows` rows per instance): the whole group for `batched`, one instance
 * for `percrm`, --chunk instances (and a plan for the shorter last block)
 * otherwise, each executed on its block's slab. Every plan is made with
 * FFTW_ESTIMATE and no SIMD codelets, which makes each transform the same
 * scalar arithmetic whatever the batch or thread count: variants, chunk
 * sizes and rank counts then agree bit for bit. */
#include <omp.h>

#include "crm_cpu.h"

static fftw_plan plan(const crm_state *s, long instances, bool forward) {
  const crm_grid *g = &s->g;
  fftw_iodim64 dim = {.n = g->nx, .is = 1, .os = 1};
  fftw_iodim64 batch = {.n = instances * g->rows, .is = forward ? g->nx : g->nk, .os = forward ? g->nk : g->nx};
  unsigned flags = FFTW_ESTIMATE | FFTW_NO_SIMD;
  fftw_complex *spec = (fftw_complex *)s->host.spec;
  return forward ? fftw_plan_guru64_dft_r2c(1, &dim, 1, &batch, s->host.phi, spec, flags)
                 : fftw_plan_guru64_dft_c2r(1, &dim, 1, &batch, spec, s->host.phi, flags);
}

int crm_cpu_pressure_plans(crm_state *s) {
  static bool threads_ready = false;
  crm_cpu *b = crm_cpu_of(s);
  if (!threads_ready && !fftw_init_threads()) return mapp_fail(MAPP_ERR_SYSTEM, "fftw_init_threads failed");
  threads_ready = true;
  fftw_plan_with_nthreads(b->parallel ? omp_get_max_threads() : 1);
  long tail = s->g.ninst % s->chunk;
  b->forward_chunk = plan(s, s->chunk, true);
  b->inverse_chunk = plan(s, s->chunk, false);
  if (!b->forward_chunk || !b->inverse_chunk)
    return mapp_fail(MAPP_ERR_SYSTEM, "FFTW could not plan a real FFT of %ld points x %ld rows", s->g.nx,
                     s->chunk * s->g.rows);
  if (tail == 0) return MAPP_OK;
  b->forward_tail = plan(s, tail, true);
  b->inverse_tail = plan(s, tail, false);
  if (!b->forward_tail || !b->inverse_tail)
    return mapp_fail(MAPP_ERR_SYSTEM, "FFTW could not plan a real FFT of %ld points x %ld rows", s->g.nx,
                     tail * s->g.rows);
  return MAPP_OK;
}

void crm_cpu_pressure_release(crm_state *s) {
  crm_cpu *b = crm_cpu_of(s);
  fftw_plan plans[] = {b->forward_chunk, b->inverse_chunk, b->forward_tail, b->inverse_tail};
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; ++i)
    if (plans[i]) fftw_destroy_plan(plans[i]);
}

/* The rows of block r (a chunk, or the shorter last block), with the
 * plan of its size on its slab. Instance slabs are 64-byte aligned (rows
 * is a multiple of 4), as the new-array execute interface requires. */
static void transform(const crm_state *s, crm_range r, bool forward) {
  const crm_cpu *b = crm_cpu_of(s);
  double *x = s->host.phi + r.first * s->g.stride;
  fftw_complex *y = (fftw_complex *)s->host.spec + r.first * s->g.cstride;
  bool whole = r.count == s->chunk;
  if (forward) fftw_execute_dft_r2c(whole ? b->forward_chunk : b->forward_tail, x, y);
  else fftw_execute_dft_c2r(whole ? b->inverse_chunk : b->inverse_tail, y, x);
}

int crm_cpu_pressure(crm_state *s, crm_range r, double dt) {
  const crm_view *v = &s->host;
  const bool parallel = crm_cpu_of(s)->parallel;
  long nx = v->g.nx, nz = v->g.nz;
  /* Rows nz.. of the FFT batch are padding: zero, so the transform of
   * scratch left by other phases cannot turn into NaN or denormals. */
  CRM_FOR_CKI(r, 0, v->g.rows, nx) {
    if (k < nz) crm_pressure_rhs(v, c, k, i);
    else v->phi[crm_ix(&v->g, c, k, i)] = 0.0;
  }
  transform(s, r, true);
  CRM_FOR_CJ(r, v->g.nk) crm_poisson_solve(v, dt, c, j);
  transform(s, r, false);
  CRM_FOR_CKI(r, 0, nz + 1, nx) crm_pressure_correct(v, dt, c, k, i);
  return MAPP_OK;
}
