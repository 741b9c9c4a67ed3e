/* The CUDA backend against the CPU: async and --sync launches agree bit
 * for bit, percrm and batched kernels agree with the serial CPU answer to
 * rounding (cuFFT and FMA contraction round differently from FFTW and GCC),
 * water is conserved, NaNs are named, --chunk blocks (and the shorter last
 * block) agree with the whole group. Skipped (77) without a GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "crm.h"
#include "crm_kernel.h"

static int make_state_n(const crm_exec *exec, bool forcing, long instances, crm_state *s) {
  crm_config cfg;
  crm_columns cols;
  MAPP_TRY(crm_config_preset("tiny", &cfg));
  cfg.nx = 32;
  cfg.nz = 28;
  cfg.dz = crm_default_dz(cfg.nz);
  cfg.instances = instances;
  cfg.forcing = forcing;
  MAPP_TRY(crm_columns_alloc(&cols, cfg.instances, cfg.nz, 0));
  int status = crm_columns_synthesize(&cols, CRM_SOUNDING_TROPICAL, cfg.dz, 0.0);
  if (status == MAPP_OK) status = crm_state_create(&cfg, &cols, exec, s);
  crm_columns_free(&cols);
  return status;
}

static int make_state_exec(const crm_exec *exec, bool forcing, crm_state *s) {
  return make_state_n(exec, forcing, 2, s);
}

static int make_state(crm_variant variant, mapp_backend backend, bool sync, bool forcing, crm_state *s) {
  crm_exec exec = {.variant = variant, .backend = backend, .sync = sync};
  return make_state_exec(&exec, forcing, s);
}

static void run_steps(crm_state *s, long steps) {
  for (long n = 0; n < steps; ++n) assert_int_equal(crm_step(s), MAPP_OK);
  assert_int_equal(s->ops->to_host(s, CRM_SYNC_ALL), MAPP_OK);
}

/* ||a - b|| / ||b|| over the interior of a field. */
static double rel_diff(const crm_state *a, const crm_state *b, const double *fa, const double *fb, long rows) {
  double num = 0.0, den = 0.0;
  for (long c = 0; c < a->g.ninst; ++c)
    for (long k = 0; k < rows; ++k)
      for (long i = 0; i < a->g.nx; ++i) {
        long n = crm_ix(&a->g, c, k, i);
        num += (fa[n] - fb[n]) * (fa[n] - fb[n]);
        den += fb[n] * fb[n];
      }
  (void)b;
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static void test_sync_is_async(void **unused) {
  (void)unused;
  crm_state a, b;
  assert_int_equal(make_state(CRM_VARIANT_BATCHED, MAPP_BACKEND_CUDA, false, true, &a), MAPP_OK);
  assert_int_equal(make_state(CRM_VARIANT_BATCHED, MAPP_BACKEND_CUDA, true, true, &b), MAPP_OK);
  run_steps(&a, 200);
  run_steps(&b, 200);
  size_t bytes = sizeof(double) * (size_t)crm_field_size(&a.g);
  assert_memory_equal(a.host.u, b.host.u, bytes);
  assert_memory_equal(a.host.scal, b.host.scal, CRM_NSCALAR * bytes);
  crm_state_free(&a);
  crm_state_free(&b);
}

/* --alloc per-phase and --memory managed run the same kernels in the same
 * order on other memory: the pool's answer bit for bit. The counters see
 * every launch and host synchronisation; per-phase allocation adds none
 * of the latter (stream-ordered). A chunk of one CRM (more launches, FFT
 * plans of another batch) agrees to cuFFT's rounding. */
static void test_alloc_memory_chunk(void **unused) {
  (void)unused;
  crm_state ref, other;
  crm_exec pool = {.variant = CRM_VARIANT_BATCHED, .backend = MAPP_BACKEND_CUDA};
  assert_int_equal(make_state_exec(&pool, true, &ref), MAPP_OK);
  run_steps(&ref, 50);
  assert_true(ref.launches > 50 * 10);
  assert_true(ref.host_syncs >= 50 * 3);
  size_t bytes = sizeof(double) * (size_t)crm_field_size(&ref.g);
  crm_exec variants[] = {pool, pool, pool};
  variants[0].alloc = CRM_ALLOC_PER_PHASE;
  variants[1].memory = CRM_MEMORY_MANAGED;
  variants[2].chunk = 1;
  for (int v = 0; v < 3; ++v) {
    assert_int_equal(make_state_exec(&variants[v], true, &other), MAPP_OK);
    run_steps(&other, 50);
    if (v < 2) {
      assert_memory_equal(ref.host.u, other.host.u, bytes);
      assert_memory_equal(ref.host.scal, other.host.scal, CRM_NSCALAR * bytes);
      assert_int_equal(ref.host_syncs, other.host_syncs);
    } else {
      assert_true(other.launches > ref.launches);
      assert_true(rel_diff(&other, &ref, other.host.u, ref.host.u, ref.g.nz) < 1e-12);
    }
    crm_state_free(&other);
  }
  crm_state_free(&ref);
}

/* --chunk 3 of 7 CRMs: two blocks of 3 and a last block of 1, each phase's
 * kernels launched per block and the last block's FFTs by its own cuFFT
 * plan; the whole group's answer to cuFFT's rounding (a plan of another
 * batch may round differently; the CPU's agree bit for bit). */
static void test_chunk_tail(void **unused) {
  (void)unused;
  crm_state ref, other;
  crm_exec all = {.variant = CRM_VARIANT_BATCHED, .backend = MAPP_BACKEND_CUDA}, chunked = all;
  chunked.chunk = 3;
  assert_int_equal(make_state_n(&all, true, 7, &ref), MAPP_OK);
  assert_int_equal(make_state_n(&chunked, true, 7, &other), MAPP_OK);
  assert_int_equal(ref.chunk, 7);
  assert_int_equal(other.chunk, 3);
  run_steps(&ref, 50);
  run_steps(&other, 50);
  assert_true(other.launches > ref.launches);
  double du = rel_diff(&other, &ref, other.host.u, ref.host.u, ref.g.nz);
  double dt = rel_diff(&other, &ref, other.host.scal, ref.host.scal, ref.g.nz);
  print_message("chunks of 3 of 7 against the whole group after 50 steps: u %.2g t %.2g\n", du, dt);
  assert_true(du < 1e-12 && dt < 1e-12);
  crm_state_free(&other);
  crm_state_free(&ref);
}

static void test_matches_cpu(void **unused) {
  (void)unused;
  crm_state cpu, gpu;
  assert_int_equal(make_state(CRM_VARIANT_BATCHED, MAPP_BACKEND_SERIAL, false, true, &cpu), MAPP_OK);
  run_steps(&cpu, 20);
  const crm_variant variants[] = {CRM_VARIANT_BATCHED, CRM_VARIANT_PERCRM};
  for (int v = 0; v < 2; ++v) {
    assert_int_equal(make_state(variants[v], MAPP_BACKEND_CUDA, false, true, &gpu), MAPP_OK);
    run_steps(&gpu, 20);
    long N = crm_field_size(&cpu.g);
    double du = rel_diff(&gpu, &cpu, gpu.host.u, cpu.host.u, cpu.g.nz);
    double dw = rel_diff(&gpu, &cpu, gpu.host.w, cpu.host.w, cpu.g.nz);
    double dt = rel_diff(&gpu, &cpu, gpu.host.scal, cpu.host.scal, cpu.g.nz);
    double dq = rel_diff(&gpu, &cpu, gpu.host.scal + N, cpu.host.scal + N, cpu.g.nz);
    print_message("%s vs serial after 20 steps: u %.2g w %.2g t %.2g qt %.2g\n",
                  v ? "percrm" : "batched", du, dw, dt, dq);
    assert_true(du < 1e-8 && dw < 1e-8 && dt < 1e-12 && dq < 1e-10);
    crm_state_free(&gpu);
  }
  crm_state_free(&cpu);
}

static void test_water_conserved(void **unused) {
  (void)unused;
  crm_state s;
  assert_int_equal(make_state(CRM_VARIANT_BATCHED, MAPP_BACKEND_CUDA, false, false, &s), MAPP_OK);
  double before[2], after[2];
  crm_water_budget(&s, before);
  run_steps(&s, 1200);
  crm_water_budget(&s, after);
  for (int c = 0; c < 2; ++c) assert_true(fabs(after[c] - before[c]) / before[c] < 1e-13);
  crm_state_free(&s);
}

static void test_nan_guard(void **unused) {
  (void)unused;
  crm_state s;
  assert_int_equal(make_state(CRM_VARIANT_BATCHED, MAPP_BACKEND_CUDA, false, true, &s), MAPP_OK);
  run_steps(&s, 2);
  s.host.scal[crm_field_size(&s.g) + crm_ix(&s.g, 1, 3, 5)] = NAN;
  assert_int_equal(s.ops->to_device(&s, CRM_SYNC_ALL), MAPP_OK);
  mapp_error_clear();
  assert_int_equal(crm_step(&s), MAPP_ERR_VERIFY);
  print_message("%s\n", mapp_error_message());
  assert_non_null(strstr(mapp_error_message(), "in CRM 1 "));
  crm_state_free(&s);
}

int main(void) {
  if (mapp_cuda_device_count() == 0) {
    printf("no CUDA device: skipped\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sync_is_async), cmocka_unit_test(test_matches_cpu),
      cmocka_unit_test(test_water_conserved), cmocka_unit_test(test_nan_guard),
      cmocka_unit_test(test_alloc_memory_chunk),
      cmocka_unit_test(test_chunk_tail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
