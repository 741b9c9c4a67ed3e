/* crm invariants through the API: rest stays at rest, a warm bubble rises,
 * water is conserved to round-off, the projection leaves a divergence at
 * round-off, percrm and batched (serial and OpenMP) agree bit for bit,
 * --chunk and SYPD at a resolution are checked, and bad grids, too many
 * sub-cycles and NaNs are reported. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "crm.h"
#include "crm_kernel.h"

typedef struct {
  long nx, nz, instances;
  crm_sounding sounding;
  crm_perturb perturb;
  bool forcing;
  double wind;
  crm_variant variant;
  mapp_backend backend;
  long chunk; /* 0: the variant's */
} crm_case;

static crm_case tiny_case(void) {
  return (crm_case){.nx = 16, .nz = 16, .instances = 4, .sounding = CRM_SOUNDING_TROPICAL,
                    .perturb = CRM_PERTURB_NOISE, .forcing = true, .variant = CRM_VARIANT_BATCHED,
                    .backend = MAPP_BACKEND_SERIAL};
}

static int make_state(const crm_case *k, crm_state *s) {
  crm_config cfg;
  crm_columns cols;
  MAPP_TRY(crm_config_preset("tiny", &cfg));
  cfg.nx = k->nx;
  cfg.nz = k->nz;
  cfg.dz = crm_default_dz(k->nz);
  cfg.instances = k->instances;
  cfg.perturb = k->perturb;
  cfg.forcing = k->forcing;
  MAPP_TRY(crm_columns_alloc(&cols, k->instances, k->nz, 0));
  int status = crm_columns_synthesize(&cols, k->sounding, cfg.dz, k->wind);
  crm_exec exec = {.variant = k->variant, .backend = k->backend, .chunk = k->chunk};
  if (status == MAPP_OK) status = crm_state_create(&cfg, &cols, &exec, s);
  crm_columns_free(&cols);
  return status;
}

static void run_steps(crm_state *s, long steps) {
  for (long n = 0; n < steps; ++n) assert_int_equal(crm_step(s), MAPP_OK);
  assert_int_equal(s->ops->to_host(s, CRM_SYNC_ALL), MAPP_OK);
}

static double max_abs(const double *a, long n) {
  double m = 0.0;
  for (long i = 0; i < n; ++i) m = fmax(m, fabs(a[i]));
  return m;
}

/* A dry, stably stratified column at rest, horizontally uniform: zero
 * buoyancy (the level mean of equal values is exact), zero divergence,
 * so the CRM stays exactly at rest. */
static void test_rest_stays_at_rest(void **unused) {
  (void)unused;
  crm_case k = tiny_case();
  k.sounding = CRM_SOUNDING_DRY_STABLE;
  k.perturb = CRM_PERTURB_NONE;
  k.forcing = false;
  crm_state s;
  assert_int_equal(make_state(&k, &s), MAPP_OK);
  run_steps(&s, 50);
  long N = crm_field_size(&s.g);
  assert_true(max_abs(s.host.u, N) <= 1e-12);
  assert_true(max_abs(s.host.w, N) <= 1e-12);
  crm_state_free(&s);
}

/* Height of the centre of the positive temperature anomaly of instance 0. */
static double anomaly_height(const crm_state *s) {
  const crm_view *v = &s->host;
  double mass = 0.0, moment = 0.0;
  for (long k = 0; k < s->g.nz; ++k)
    for (long i = 0; i < s->g.nx; ++i) {
      double a = v->scal[crm_ix(&s->g, 0, k, i)] - v->col[crm_px(&s->g, 0, k)];
      if (a > 0.0) mass += a, moment += a * v->zc[crm_px(&s->g, 0, k)];
    }
  return moment / mass;
}

/* A 2 K bubble at 2 km in a neutral dry atmosphere rises: after 10 min its
 * centre is well above 2 km and updraughts of metres per second exist. */
static void test_bubble_rises(void **unused) {
  (void)unused;
  crm_case k = tiny_case();
  k.nx = 32;
  k.nz = 40;
  k.instances = 1;
  k.sounding = CRM_SOUNDING_DRY_NEUTRAL;
  k.perturb = CRM_PERTURB_BUBBLE;
  k.forcing = false;
  crm_state s;
  assert_int_equal(make_state(&k, &s), MAPP_OK);
  double z0 = anomaly_height(&s);
  run_steps(&s, 60);
  double z1 = anomaly_height(&s), wmax = 0.0;
  for (long n = 0; n < crm_field_size(&s.g); ++n) wmax = fmax(wmax, s.host.w[n]);
  print_message("bubble centre %.0f m -> %.0f m, max w %.2f m/s\n", z0, z1, wmax);
  assert_true(fabs(z0 - 2000.0) < 100.0);
  assert_true(z1 > z0 + 500.0);
  assert_true(wmax > 3.0);
  crm_state_free(&s);
}

/* Without forcing, vapour + cloud + rain + what reached the surface is
 * constant to round-off, through deep convection and rain. */
static void test_water_conserved(void **unused) {
  (void)unused;
  crm_case k = tiny_case();
  k.nx = 32;
  k.nz = 28;
  k.instances = 2;
  k.forcing = false;
  crm_state s;
  assert_int_equal(make_state(&k, &s), MAPP_OK);
  double before[2], after[2];
  crm_water_budget(&s, before);
  run_steps(&s, 1200); /* convection starts after about 700 steps */
  crm_water_budget(&s, after);
  double rain = max_abs(s.host.precip, k.instances * k.nx), worst = 0.0;
  for (int c = 0; c < 2; ++c) worst = fmax(worst, fabs(after[c] - before[c]) / before[c]);
  print_message("surface rain up to %.3g kg/m^2, budget error %.3g\n", rain, worst);
  assert_true(rain > 1e-3); /* the budget was exercised by rain */
  assert_true(worst < 1e-13);
  crm_state_free(&s);
}

/* The projection of a random velocity field is discretely divergence free. */
static void test_projection(void **unused) {
  (void)unused;
  crm_case k = tiny_case();
  crm_state s;
  assert_int_equal(make_state(&k, &s), MAPP_OK);
  for (long c = 0; c < s.g.ninst; ++c)
    for (long kk = 0; kk < s.g.nz; ++kk)
      for (long i = 0; i < s.g.nx; ++i) {
        long n = crm_ix(&s.g, c, kk, i);
        s.host.u[n] = 10.0 * crm_hash_unit((unsigned long long)n);
        s.host.w[n] = kk > 0 ? 5.0 * crm_hash_unit((unsigned long long)n + 777777u) : 0.0;
      }
  double before = crm_relative_divergence(&s);
  assert_int_equal(crm_project(&s), MAPP_OK);
  double after = crm_relative_divergence(&s);
  print_message("relative divergence %.3g -> %.3g\n", before, after);
  assert_true(before > 0.1);
  assert_true(after < 1e-13);
  crm_state_free(&s);
}

static void assert_same_fields(const crm_state *a, const crm_state *b) {
  size_t bytes = sizeof(double) * (size_t)crm_field_size(&a->g);
  assert_memory_equal(a->host.u, b->host.u, bytes);
  assert_memory_equal(a->host.w, b->host.w, bytes);
  assert_memory_equal(a->host.scal, b->host.scal, CRM_NSCALAR * bytes);
  assert_memory_equal(a->host.qc, b->host.qc, bytes);
  assert_memory_equal(a->host.precip, b->host.precip, sizeof(double) * (size_t)(a->g.ninst * a->g.nx));
}

/* percrm == batched, serial == OpenMP, bit for bit, through convection
 * and rain (which the test checks happened). */
static void test_variants_agree(void **unused) {
  (void)unused;
  crm_case k = tiny_case();
  k.nx = 32;
  k.nz = 28;
  k.instances = 2;
  crm_state ref, other;
  assert_int_equal(make_state(&k, &ref), MAPP_OK);
  run_steps(&ref, 1000);
  assert_true(max_abs(ref.host.precip, k.instances * k.nx) > 1e-3);
  const crm_variant variants[] = {CRM_VARIANT_PERCRM, CRM_VARIANT_BATCHED, CRM_VARIANT_PERCRM};
  const mapp_backend backends[] = {MAPP_BACKEND_SERIAL, MAPP_BACKEND_OMP, MAPP_BACKEND_OMP};
  for (int v = 0; v < 3; ++v) {
    k.variant = variants[v];
    k.backend = backends[v];
    assert_int_equal(make_state(&k, &other), MAPP_OK);
    run_steps(&other, 1000);
    assert_same_fields(&ref, &other);
    crm_state_free(&other);
  }
  crm_state_free(&ref);
}

/* --chunk: blocks of 1, 2 and 3 of 7 CRMs (3 leaves a shorter last block,
 * its own FFT plan), and a chunk above the CRM count, give the answer of
 * the whole group as one block, bit for bit, serial and OpenMP. */
static void test_chunks_agree(void **unused) {
  (void)unused;
  crm_case k = tiny_case();
  k.instances = 7;
  crm_state ref, other;
  assert_int_equal(make_state(&k, &ref), MAPP_OK);
  assert_int_equal(ref.chunk, 7);
  run_steps(&ref, 60);
  const long chunks[] = {1, 2, 3, 100};
  const long expected[] = {1, 2, 3, 7};
  for (int c = 0; c < 4; ++c)
    for (int b = 0; b < 2; ++b) {
      k.chunk = chunks[c];
      k.backend = b ? MAPP_BACKEND_OMP : MAPP_BACKEND_SERIAL;
      assert_int_equal(make_state(&k, &other), MAPP_OK);
      assert_int_equal(other.chunk, expected[c]);
      run_steps(&other, 60);
      assert_same_fields(&ref, &other);
      crm_state_free(&other);
    }
  crm_state_free(&ref);
}

/* |got - want| within tol (relative above 1), printed when not. */
static void assert_near(double got, double want, double tol) {
  if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want)))) fail_msg("%.17g is not %.17g within %g", got, want, tol);
}

/* SYPD at --sypd-at neN/NODES: 54 N^2 + 2 columns (ne30: 48,602) over the
 * nodes, 759.4 a node for ne30/64 and ne120/1024 alike; a node running its
 * columns' nx column-steps each CRM step of dt seconds at exactly the rate
 * for one simulated year a wall-clock day gives 1, and the rate scales it.
 * Text that is not neN/NODES is bad input. */
static void test_sypd(void **unused) {
  (void)unused;
  crm_sypd_at at;
  assert_int_equal(crm_sypd_parse("ne30/64", &at), MAPP_OK);
  assert_true(at.ne == 30 && at.nodes == 64);
  assert_near(at.columns_per_node, 48602.0 / 64.0, 1e-12);
  assert_int_equal(crm_sypd_parse("ne120/1024", &at), MAPP_OK);
  assert_near(at.columns_per_node, 777602.0 / 1024.0, 1e-12);
  crm_config cfg = {.dt = 10.0, .nx = 64};
  double year_a_day = 365.0 * at.columns_per_node * 64.0 / 10.0; /* column-steps/s */
  assert_near(crm_sypd(&cfg, &at, year_a_day), 1.0, 1e-12);
  assert_near(crm_sypd(&cfg, &at, 5.0 * year_a_day), 5.0, 1e-12);
  assert_near(crm_sypd(&cfg, &at, 0.0), 0.0, 0.0);
  const char *bad[] = {"ne30", "ne30/0", "ne0/64", "ne30/64x", "30/64", ""};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
    mapp_error_clear();
    assert_int_equal(crm_sypd_parse(bad[b], &at), MAPP_ERR_INPUT);
    assert_non_null(strstr(mapp_error_message(), "--sypd-at"));
  }
}

/* A NaN appearing mid-run stops the run with a verification failure that
 * names the field, the CRM, the position and the step. */
static void test_nan_guard(void **unused) {
  (void)unused;
  crm_case k = tiny_case();
  crm_state s;
  assert_int_equal(make_state(&k, &s), MAPP_OK);
  run_steps(&s, 2);
  s.host.scal[crm_field_size(&s.g) + crm_ix(&s.g, 2, 3, 5)] = NAN; /* qt of CRM 2 */
  mapp_error_clear();
  assert_int_equal(crm_step(&s), MAPP_ERR_VERIFY);
  const char *msg = mapp_error_message();
  print_message("%s\n", msg);
  assert_non_null(strstr(msg, "non-finite"));
  assert_non_null(strstr(msg, "in CRM 2 "));
  assert_non_null(strstr(msg, "level "));
  assert_non_null(strstr(msg, "x column "));
  assert_non_null(strstr(msg, "after CRM step 3"));
  crm_state_free(&s);
}

/* Strong winds sub-cycle; winds needing more than 4 sub-cycles are bad input. */
static void test_sub_cycles(void **unused) {
  (void)unused;
  crm_case k = tiny_case();
  k.wind = 150.0; /* Courant 0.75 + the column's own wind: 2 sub-cycles */
  crm_state s;
  assert_int_equal(make_state(&k, &s), MAPP_OK);
  run_steps(&s, 5);
  assert_int_equal(s.max_cycles, 2);
  crm_state_free(&s);
  k.wind = 1000.0;
  assert_int_equal(make_state(&k, &s), MAPP_OK);
  mapp_error_clear();
  assert_int_equal(crm_step(&s), MAPP_ERR_INPUT);
  print_message("%s\n", mapp_error_message());
  assert_non_null(strstr(mapp_error_message(), "sub-cycles, more than 4"));
  assert_non_null(strstr(mapp_error_message(), "m/s"));
  crm_state_free(&s);
}

static void test_bad_grids(void **unused) {
  (void)unused;
  const long bad[][3] = {{15, 16, 4}, {2, 16, 4}, {16, 2, 4}, {16, 16, 0}}; /* nx, nz, instances */
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
    crm_config cfg;
    assert_int_equal(crm_config_preset("tiny", &cfg), MAPP_OK);
    cfg.nx = bad[b][0];
    cfg.nz = bad[b][1];
    cfg.instances = bad[b][2];
    mapp_error_clear();
    assert_int_equal(crm_config_check(&cfg), MAPP_ERR_INPUT);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rest_stays_at_rest), cmocka_unit_test(test_bubble_rises),
      cmocka_unit_test(test_water_conserved),    cmocka_unit_test(test_projection),
      cmocka_unit_test(test_variants_agree),     cmocka_unit_test(test_chunks_agree),
      cmocka_unit_test(test_nan_guard),         cmocka_unit_test(test_sypd),
      cmocka_unit_test(test_sub_cycles),         cmocka_unit_test(test_bad_grids),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
