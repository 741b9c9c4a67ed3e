/* snapshots unit tests through the API (cmocka), on any rank count:
 *   the dot test of the adjoint for space orders 2, 4, 8 (2-D) and 4 (3-D),
 *     and that it fails for a deliberately non-symmetric (test-only) stencil;
 *   the Taylor test of the gradient (O(h) and O(h^2) over 5 halvings), and
 *     that it fails for a deliberately scaled gradient;
 *   the gradient bit for bit equal across layer settings, threads, prefetch
 *     depths, zstd and revolve checkpointing, and that the comparison fails
 *     for a lossy (zfp) store, whose error stays within its stated bound;
 *   (the store's placement, device tier, checksums, the revolve schedule
 *   and the sizes are in test_snapshots_store.c). */
#include "test_snapshots_lib.h"

static double global_dot(const double *a, const double *b, long n) {
  double s = 0.0;
  for (long i = 0; i < n; i++) s += a[i] * b[i];
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

/* A deterministic pseudo-random value in [-1, 1) per global index. */
static double hash_value(unsigned long i) {
  unsigned long x = i * 0x9E3779B97F4A7C15ul + 0x632BE59BD9B4E019ul;
  x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ul, x ^= x >> 29;
  return (double)(x >> 11) / (double)(1ul << 52) - 1.0;
}

/* Relative mismatch of <F s, y> and <s, F^T y>. */
static double dot_test(const snap_config *cfg, const snap_ops *ops) {
  snap_problem p;
  assert_int_equal(snap_problem_create(MPI_COMM_WORLD, cfg, &p), MAPP_OK);
  snap_engine *e;
  assert_int_equal(snap_engine_create(&e, &p, ops), MAPP_OK);
  const snap_grid *g = &p.grid;
  /* The data: this rank's receivers, nt x nrec_local. */
  long n = g->interior, nl = p.nrec_local, nd = cfg->nt * nl;
  size_t values = snap_rec_values(&p);
  double *m = malloc(sizeof(double) * n), *s = malloc(sizeof(double) * n), *fs = malloc(sizeof(double) * values);
  double *y = malloc(sizeof(double) * values), *fty = malloc(sizeof(double) * n);
  snap_model_smooth(&p, m);
  for (long i = 0; i < n; i++) s[i] = hash_value((unsigned long)(g->first * g->n[1] * g->n[2] + i));
  for (long k = 0; k < cfg->nt; k++) /* by the global (time, receiver) index: the same y on any rank count */
    for (long r = 0; r < nl; r++) y[k * nl + r] = hash_value(1000003ul + (unsigned long)(k * p.nrec + p.rec_first + r));
  assert_int_equal(snap_engine_set_model(e, m), MAPP_OK);
  snap_source src = {.wavelet = p.wavelet, .field = s};
  assert_int_equal(snap_forward(e, &src, fs, NULL, NULL), MAPP_OK);
  assert_int_equal(snap_adjoint(e, y, NULL, NULL, fty, NULL), MAPP_OK);
  double lhs = global_dot(fs, y, nd);
  double rhs = global_dot(s, fty, n);
  free(m), free(s), free(fs), free(y), free(fty);
  snap_engine_free(e);
  snap_problem_free(&p);
  return fabs(lhs - rhs) / fmax(fabs(lhs), fabs(rhs));
}

static void test_dot(void **unused) {
  (void)unused;
  int orders[3] = {2, 4, 8};
  for (int o = 0; o < 3; o++) {
    snap_config c = small_config(2, orders[o]);
    double err = dot_test(&c, &snap_cpu_ops);
    print_message("dot test 2-D space order %d: relative mismatch %.3e\n", orders[o], err);
    assert_true(err < 1e-12);
  }
  snap_config c = small_config(3, 4);
  double err = dot_test(&c, &snap_cpu_ops);
  print_message("dot test 3-D space order 4: relative mismatch %.3e\n", err);
  assert_true(err < 1e-12);
}

/* Test-only break: an upwind term makes the stencil non-symmetric, so the
 * same update run backwards is no longer the transpose. */
static void broken_step(const snap_grid *g, const snap_coeffs *k, double *next, const double *cur, const double *prev) {
  snap_cpu_ops.step(g, k, next, cur, prev);
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++)
      for (long z = 0; z < g->n[2]; z++) {
        long at = snap_index(g, i, j, z);
        next[at] += 0.05 * (cur[at + 1] - cur[at]);
      }
}

static void test_dot_detects_broken_adjoint(void **unused) {
  (void)unused;
  snap_ops broken = snap_cpu_ops;
  broken.step = broken_step;
  snap_config c = small_config(2, 4);
  double err = dot_test(&c, &broken);
  print_message("dot test with a non-symmetric stencil: relative mismatch %.3e (must exceed 1e-12)\n", err);
  assert_true(err > 1e-6);
}

/* True when |J(m + h dm) - J(m)| halves and |... - h <g, dm>| quarters
 * (within 25 %) over 5 halvings of h. */
static bool taylor(fixture *f, const double *grad) {
  long n = f->p.grid.interior;
  double J0, gdm = global_dot(grad, f->dm, n), h = 0.25, prev1 = 0, prev2 = 0;
  double *m = malloc(sizeof(double) * n);
  assert_int_equal(snap_objective(f->e, f->m0, f->obs, &J0), MAPP_OK);
  bool ok = true;
  for (int k = 0; k < 6; k++, h /= 2) {
    for (long i = 0; i < n; i++) m[i] = f->m0[i] + h * f->dm[i];
    double J;
    assert_int_equal(snap_objective(f->e, m, f->obs, &J), MAPP_OK);
    double e1 = fabs(J - J0), e2 = fabs(J - J0 - h * gdm);
    if (k > 0) {
      double r1 = prev1 / e1, r2 = prev2 / e2;
      print_message("taylor h=%.4g: first-order ratio %.3f (2), second-order ratio %.3f (4)\n", h, r1, r2);
      if (fabs(r1 - 2.0) > 0.5 || fabs(r2 - 4.0) > 1.0) ok = false;
    }
    prev1 = e1, prev2 = e2;
  }
  free(m);
  return ok;
}

static void test_taylor(void **unused) {
  (void)unused;
  fixture f;
  snap_config c = small_config(2, 4);
  fixture_open(&f, &c);
  snap_strategy st = {.mode = SNAP_MODE_MEMORY};
  snap_result res;
  gradient_with(&f, &st, f.grad, &res);
  assert_true(res.objective > 0);
  assert_true(taylor(&f, f.grad));
  /* Deliberate break (test only): a gradient 5 % too large fails. */
  for (long i = 0; i < f.p.grid.interior; i++) f.grad[i] *= 1.05;
  print_message("with the gradient scaled by 1.05 (must fail):\n");
  assert_false(taylor(&f, f.grad));
  fixture_close(&f);
}

static void test_layers_bitwise(void **unused) {
  (void)unused;
  fixture f;
  snap_config c = small_config(2, 4);
  fixture_open(&f, &c);
  long n = f.p.grid.interior;
  size_t snap = (size_t)n * 8, all = snap * (size_t)c.nt;
  snap_result ref_res, res;
  reference_gradient(&f, &ref_res);
  double *g = malloc(sizeof(double) * n);
  struct {
    const char *name;
    unsigned layers;
    size_t host;
    snap_compression comp;
    int threads, depth;
    bool in_place; /* the step writes host snapshots into their ring slots */
    bool uring;    /* disk transfers through io_uring (plain calls where the kernel refuses it) */
  } cases[] = {
      {"host", 2u, all, SNAP_COMP_NONE, 1, 2, false, false},
      {"disk", 4u, 0, SNAP_COMP_NONE, 1, 2, false, false},
      {"disk-host, host holds a third", 6u, all / 3, SNAP_COMP_NONE, 1, 2, false, false},
      {"disk-host, 3 writers, depth 1", 6u, all / 5, SNAP_COMP_NONE, 3, 1, false, false},
      {"disk-host, depth 8", 6u, all / 2, SNAP_COMP_NONE, 2, 8, false, false},
      {"disk-host zstd", 6u, all / 4, SNAP_COMP_ZSTD, 2, 3, false, false},
      {"host zstd", 2u, all, SNAP_COMP_ZSTD, 1, 2, false, false},
      {"host in place", 2u, all, SNAP_COMP_NONE, 1, 2, true, false},
      {"disk-host in place, a third", 6u, all / 3, SNAP_COMP_NONE, 1, 2, true, false},
      {"disk-host in place, 3 writers", 6u, all / 5, SNAP_COMP_NONE, 3, 1, true, false},
      {"disk-host in place, one slot", 6u, snap + 64, SNAP_COMP_NONE, 2, 4, true, false},
      {"disk in place (no ring)", 4u, 0, SNAP_COMP_NONE, 1, 2, true, false},
      {"disk-host zstd, in place asked", 6u, all / 4, SNAP_COMP_ZSTD, 2, 3, true, false},
      {"disk, io_uring", 4u, 0, SNAP_COMP_NONE, 1, 2, false, true},
      {"disk-host in place, io_uring, 3 writers", 6u, all / 5, SNAP_COMP_NONE, 3, 3, true, true},
      {"disk-host zstd, io_uring", 6u, all / 4, SNAP_COMP_ZSTD, 2, 3, false, true},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    snap_strategy st = {.mode = SNAP_MODE_STREAM, .store = stream_config(cases[k].layers, cases[k].host, 1ul << 34)};
    st.store.compression = cases[k].comp, st.store.io_threads = cases[k].threads, st.store.prefetch_depth = cases[k].depth;
    st.store.in_place = cases[k].in_place, st.store.uring = cases[k].uring;
    gradient_with(&f, &st, g, &res);
    print_message("%-40s host %ld, disk %ld snapshots, ratio %.2f%s: %s\n", cases[k].name, res.store.count[1],
                  res.store.count[2], (double)res.store.raw_bytes / (double)res.store.stored_bytes,
                  cases[k].uring && !res.store.uring ? " (io_uring refused here: plain calls)" : "",
                  memcmp(g, f.grad, sizeof(double) * n) ? "DIFFERS" : "bit for bit");
    assert_reference(&f, g, &res, &ref_res);
    if (cases[k].layers == 6u) assert_true(res.store.count[2] > 0 && res.store.count[1] > 0);
    if (cases[k].comp == SNAP_COMP_NONE) { /* raw: the host/disk split is the plan's, in place or not */
      size_t budget[SNAP_NLAYERS] = {0, cases[k].host, 1ul << 34};
      snap_placement pl;
      snap_placement_plan(cases[k].layers, budget, snap, c.nt, &pl);
      assert_int_equal(res.store.count[SNAP_LAYER_HOST], pl.count[SNAP_LAYER_HOST]);
      assert_int_equal(res.store.count[SNAP_LAYER_DISK], pl.count[SNAP_LAYER_DISK]);
      assert_true(res.store.peak_bytes[SNAP_LAYER_HOST] <= cases[k].host);
    }
  }
  /* A host layer too small, nothing below it: the forward stops with an
   * input error naming the snapshot (staged or in place), never hangs. */
  for (int in_place = 0; in_place < 2; in_place++) {
    snap_strategy st = {.mode = SNAP_MODE_STREAM, .store = stream_config(2u, 3 * snap + 64, 0)};
    st.store.in_place = in_place;
    snap_store *store;
    assert_int_equal(snap_store_create(&store, &st.store, &f.p.grid, &f.p.cfg, c.nt), MAPP_OK);
    int status = snap_gradient(f.e, &st, store, f.m0, f.obs, g, f.rec, f.uf, &res);
    print_message("host layer of 3 snapshots, %s: %s\n", in_place ? "in place" : "staged", mapp_error_message());
    assert_int_equal(status, MAPP_ERR_INPUT);
    assert_non_null(strstr(mapp_error_message(), "snapshot layers are full at snapshot 4 of"));
    snap_store_destroy(store);
  }
  int slots[3] = {1, 4, (int)c.nt};
  for (int k = 0; k < 3; k++) {
    snap_strategy st = {.mode = SNAP_MODE_REVOLVE, .checkpoints = slots[k]};
    gradient_with(&f, &st, g, &res);
    print_message("revolve with %3d checkpoints: %ld forward steps (factor %.2f)\n", slots[k], res.forward_steps,
                  (double)res.forward_steps / c.nt);
    assert_memory_equal(g, f.grad, sizeof(double) * n);
  }
  /* The comparison can fail: zfp is lossy. Its error stays within the
   * bound its tolerance states. */
  snap_strategy st = {.mode = SNAP_MODE_STREAM, .store = stream_config(6u, all / 3, 1ul << 34)};
  st.store.compression = SNAP_COMP_ZFP, st.store.zfp_tolerance = 1e-6;
  gradient_with(&f, &st, g, &res);
  double err = 0, gmax = 0;
  for (long i = 0; i < n; i++) err = fmax(err, fabs(g[i] - f.grad[i])), gmax = fmax(gmax, fabs(f.grad[i]));
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &gmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  print_message("zfp 1e-6: ratio %.2f, max error %.3e (%.2e of max |g|), bound %.3e\n",
                (double)res.store.raw_bytes / (double)res.store.stored_bytes, err, err / gmax, res.zfp_bound);
  assert_true(memcmp(g, f.grad, sizeof(double) * n) != 0);
  assert_true(err <= res.zfp_bound);
  free(g);
  fixture_close(&f);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot),
      cmocka_unit_test(test_dot_detects_broken_adjoint),
      cmocka_unit_test(test_taylor),
      cmocka_unit_test(test_layers_bitwise),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  MPI_Finalize();
  return failed;
}
