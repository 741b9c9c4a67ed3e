/* snapshots unit tests through the API (cmocka), on any rank count:
 *   the dot test of the adjoint for space orders 2, 4, 8 (2-D) and 4 (3-D),
 *     and that it fails for a deliberately non-symmetric (test-only) stencil;
 *   the Taylor test of the gradient (O(h) and O(h^2) over 5 halvings), and
 *     that it fails for a deliberately scaled gradient;
 *   the gradient bit for bit equal across layer settings, threads, prefetch
 *     depths, zstd and revolve checkpointing, and that the comparison fails
 *     for a lossy (zfp) store, whose error stays within its stated bound;
 *   checksums that catch a flipped bit, and the revolve schedule's order;
 *   the placement for reverse reading (exact split points: the latest on
 *     the device, the earliest on disk), and the store's device tier driven
 *     through a host-memory stand-in for the CUDA device operations: the
 *     same split as the plan, the same bits, one pool, and a corrupted
 *     device copy that the comparison catches. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "snapshots.h"

static snap_config small_config(int dims, int so) {
  snap_config c = {.dims = dims, .n = {48, dims == 3 ? 24 : 1, 40}, .space_order = so, .nt = 160, .save_every = 1,
                   .h = 10.0, .f0 = 15.0, .nbl = 8};
  if (dims == 3) c.n[0] = 28, c.n[2] = 28, c.nt = 60;
  return c;
}

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

typedef struct {
  snap_problem p;
  snap_engine *e;
  double *m0, *obs, *grad, *rec, *uf, *dm;
} fixture;

static void fixture_open(fixture *f, const snap_config *cfg) {
  memset(f, 0, sizeof *f);
  assert_int_equal(snap_problem_create(MPI_COMM_WORLD, cfg, &f->p), MAPP_OK);
  assert_int_equal(snap_engine_create(&f->e, &f->p, &snap_cpu_ops), MAPP_OK);
  long n = f->p.grid.interior, nd = (long)snap_rec_values(&f->p); /* this rank's receivers */
  f->m0 = malloc(sizeof(double) * n), f->grad = malloc(sizeof(double) * n), f->uf = malloc(sizeof(double) * n);
  f->dm = malloc(sizeof(double) * n);
  f->obs = malloc(sizeof(double) * nd), f->rec = malloc(sizeof(double) * nd);
  snap_model_true(&f->p, f->m0);
  assert_int_equal(snap_engine_set_model(f->e, f->m0), MAPP_OK);
  snap_source src = {.wavelet = f->p.wavelet};
  assert_int_equal(snap_forward(f->e, &src, f->obs, NULL, NULL), MAPP_OK);
  snap_model_smooth(&f->p, f->m0);
  const snap_grid *g = &f->p.grid;
  /* dm: a smooth bump below the source, 10 % of m. */
  for (long i = 0; i < g->n[0]; i++)
    for (long j = 0; j < g->n[1]; j++)
      for (long z = 0; z < g->n[2]; z++) {
        double dx = (double)(g->first + i) - g->global[0] / 2.0, dz = (double)z - g->global[2] * 0.4;
        long at = (i * g->n[1] + j) * g->n[2] + z;
        f->dm[at] = 0.1 * f->m0[at] * exp(-(dx * dx + dz * dz) / 40.0);
      }
}

static void fixture_close(fixture *f) {
  free(f->m0), free(f->obs), free(f->grad), free(f->rec), free(f->uf), free(f->dm);
  snap_engine_free(f->e);
  snap_problem_free(&f->p);
}

static void gradient_with(fixture *f, snap_strategy *st, double *grad, snap_result *res) {
  snap_store *store = NULL;
  if (st->mode != SNAP_MODE_REVOLVE)
    assert_int_equal(snap_store_create(&store, &st->store, &f->p.grid, &f->p.cfg, f->p.cfg.nt / f->p.cfg.save_every),
                     MAPP_OK);
  int status = snap_gradient(f->e, st, store, f->m0, f->obs, grad, f->rec, f->uf, res);
  if (status) print_message("gradient failed: %s\n", mapp_error_message());
  assert_int_equal(status, MAPP_OK);
  snap_store_destroy(store);
}

/* The in-memory gradient of the fixture's problem, into f->grad: the
 * reference every streamed setting must equal bit for bit. */
static void reference_gradient(fixture *f, snap_result *ref) {
  snap_strategy memory = {.mode = SNAP_MODE_MEMORY};
  gradient_with(f, &memory, f->grad, ref);
}

/* A gradient bit for bit the reference's, with the reference's objective. */
static void assert_reference(const fixture *f, const double *g, const snap_result *res, const snap_result *ref) {
  assert_memory_equal(g, f->grad, sizeof(double) * (size_t)f->p.grid.interior);
  assert_true(res->objective == ref->objective);
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

static snap_store_config stream_config(unsigned layers, size_t host, size_t disk) {
  return (snap_store_config){.layers = layers, .budget = {0, host, disk}, .compression = SNAP_COMP_NONE,
                             .zstd_level = 1, .io_threads = 1, .prefetch_depth = 2, .disk_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                             .direct_io = true, .prog = "test-snapshots"};
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

/* Exact split points of snap_placement_plan: 300 snapshots of 38400 bytes
 * (the tiny preset's), 150 device slots of 256 bytes, 600 host blocks of 64,
 * disk blocks padded to 40960 (4 KiB). */
static void expect_plan(unsigned layers, size_t dev, size_t host, size_t disk, size_t bytes, long nsnap, long n_dev,
                        long n_host, long n_disk, long unplaced) {
  size_t budget[SNAP_NLAYERS] = {dev, host, disk};
  snap_placement pl;
  snap_placement_plan(layers, budget, bytes, nsnap, &pl);
  print_message("layers %u budgets %zu/%zu/%zu: device %ld [%ld..), host %ld [%ld..), disk %ld [%ld..), no room %ld\n",
                layers, dev, host, disk, pl.count[0], pl.first[0], pl.count[1], pl.first[1], pl.count[2], pl.first[2],
                pl.unplaced);
  assert_int_equal(pl.count[SNAP_LAYER_DEVICE], n_dev);
  assert_int_equal(pl.count[SNAP_LAYER_HOST], n_host);
  assert_int_equal(pl.count[SNAP_LAYER_DISK], n_disk);
  assert_int_equal(pl.unplaced, unplaced);
  /* The device keeps the latest, the host the ones before, the disk the
   * earliest placed; the ranges tile [unplaced, nsnap). */
  assert_int_equal(pl.first[SNAP_LAYER_DEVICE], nsnap - n_dev);
  assert_int_equal(pl.first[SNAP_LAYER_HOST], nsnap - n_dev - n_host);
  assert_int_equal(pl.first[SNAP_LAYER_DISK], unplaced);
  assert_int_equal(unplaced + n_disk + n_host + n_dev, nsnap);
}

static void test_placement(void **unused) {
  (void)unused;
  const size_t b = 38400, big = (size_t)1 << 40;
  assert_int_equal(snap_layer_block_bytes(SNAP_LAYER_DEVICE, b), 38400);
  assert_int_equal(snap_layer_block_bytes(SNAP_LAYER_HOST, b), 38400);
  assert_int_equal(snap_layer_block_bytes(SNAP_LAYER_DISK, b), 40960);
  assert_int_equal(snap_layer_block_bytes(SNAP_LAYER_DEVICE, 1000), 1024);
  assert_int_equal(snap_layer_block_bytes(SNAP_LAYER_HOST, 1000), 1024);
  assert_int_equal(snap_layer_block_bytes(SNAP_LAYER_DISK, 1000), 4096);
  assert_int_equal(snap_layer_block_bytes(SNAP_LAYER_HOST, 1032), 1088);
  assert_int_equal(snap_layer_block_bytes(SNAP_LAYER_DEVICE, 1032), 1280); /* 256, not 128 or 64 */
  /* Three tiers: snapshots 200..299 on the device, 150..199 on the host,
   * 0..149 on disk (a budget a byte short of a block holds one less). */
  expect_plan(7u, 100 * b + 1000, 51 * b - 1, big, b, 300, 100, 50, 150, 0);
  /* Everything fits on the device: nothing leaves it. */
  expect_plan(7u, 300 * b, big, big, b, 300, 300, 0, 0, 0);
  expect_plan(1u, big, 0, 0, b, 300, 300, 0, 0, 0);
  expect_plan(3u, 300 * b, 5 * b, 0, b, 300, 300, 0, 0, 0);
  /* Zero device budget: the host takes the latest, the disk the rest. */
  expect_plan(7u, 0, 40 * b, big, b, 300, 0, 40, 260, 0);
  expect_plan(3u, 0, big, 0, b, 300, 0, 300, 0, 0);
  /* A layer outside the set gets nothing, whatever its budget. */
  expect_plan(6u, big, 40 * b, big, b, 300, 0, 40, 260, 0);
  expect_plan(2u, big, big, big, b, 300, 0, 300, 0, 0);
  /* Disk blocks are 4 KiB-padded: ten raw snapshots' bytes hold nine. */
  expect_plan(4u, 0, 0, 10 * b, b, 10, 0, 0, 9, 1);
  expect_plan(4u, 0, 0, 10 * 40960, b, 10, 0, 0, 10, 0);
  /* Too small (the app refuses these, or recomputes with --recompute):
   * the earliest snapshots have no room. */
  expect_plan(1u, 299 * b, big, big, b, 300, 299, 0, 0, 1);
  expect_plan(3u, 100 * b, 50 * b, big, b, 300, 100, 50, 0, 150);
  expect_plan(7u, 100 * b, 50 * b, 149 * 40960 + 40959, b, 300, 100, 50, 149, 1);
  expect_plan(7u, 0, 0, 0, b, 300, 0, 0, 0, 300);
  /* No snapshots: nothing anywhere. */
  expect_plan(7u, big, big, big, b, 0, 0, 0, 0, 0);
}

/* A host-memory stand-in for the CUDA device tier (snap_cuda.cu's
 * device_ops): the CPU backend's fields are host memory, so a "device"
 * put packs the field into the slot and the imaging reads it in place
 * (snap_cpu_ops.image_in_place). It counts what the store asks of it. */
static struct {
  long allocs, frees, puts, gets, waits;
  size_t pool_bytes;
  uintptr_t pool, first_get; /* addresses, compared after the pool is gone */
  bool corrupt; /* test-only break: every put stores a perturbed snapshot */
} fake;

static int fake_available(size_t *bytes) {
  *bytes = (size_t)1 << 30;
  return MAPP_OK;
}
static int fake_pool_alloc(size_t bytes, void **pool) {
  fake.allocs++, fake.pool_bytes = bytes;
  *pool = malloc(bytes);
  fake.pool = (uintptr_t)*pool;
  return *pool ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "fake pool of %zu bytes", bytes);
}
static void fake_pool_free(void *pool) {
  fake.frees++;
  free(pool);
}
static int fake_put(const snap_grid *g, const double *field, double *slot) {
  snap_pack(g, field, slot);
  if (fake.corrupt) slot[g->interior / 2] += 1e-3;
  fake.puts++;
  return MAPP_OK;
}
static int fake_wait(void) {
  fake.waits++;
  return MAPP_OK;
}
static int fake_get(const double *slot, const double **snapshot) {
  if (!fake.gets++) fake.first_get = (uintptr_t)slot;
  *snapshot = slot;
  return MAPP_OK;
}
static const snap_device_ops fake_device = {fake_available, fake_pool_alloc, fake_pool_free,
                                            fake_put,       fake_wait,       fake_get};

static void test_device_tier(void **unused) {
  (void)unused;
  fixture f;
  snap_config c = small_config(2, 4);
  fixture_open(&f, &c);
  long n = f.p.grid.interior, nsnap = c.nt;
  size_t raw = (size_t)n * 8, slot = snap_layer_block_bytes(SNAP_LAYER_DEVICE, raw),
         host_block = snap_layer_block_bytes(SNAP_LAYER_HOST, raw);
  snap_result ref_res, res;
  reference_gradient(&f, &ref_res);
  double *g = malloc(sizeof(double) * n);
  struct {
    const char *name;
    unsigned layers;
    long dev_slots, host_blocks; /* budgets in whole blocks (disk: plenty) */
    snap_compression comp;
    int threads, depth;
    long n_dev, n_host, n_disk;  /* the split expected */
  } cases[] = {
      {"disk-host-device", 7u, 40, 30, SNAP_COMP_NONE, 1, 2, 40, 30, 90},
      {"disk-host-device, 3 writers, depth 1", 7u, 25, 50, SNAP_COMP_NONE, 3, 1, 25, 50, 85},
      {"disk-host-device, 3 on device, depth 8", 7u, 3, 20, SNAP_COMP_NONE, 2, 8, 3, 20, 137},
      {"host-device", 3u, 100, 1000, SNAP_COMP_NONE, 1, 2, 100, 60, 0},
      {"host-device, zstd on the host", 3u, 70, 1000, SNAP_COMP_ZSTD, 2, 3, 70, 90, 0},
      {"device (all fit)", 1u, 160, 0, SNAP_COMP_NONE, 1, 2, 160, 0, 0},
      {"disk-host-device, no device budget", 7u, 0, 30, SNAP_COMP_NONE, 1, 2, 0, 30, 130},
  };
  /* Each case staged and with the host snapshots written in place. */
  for (size_t run = 0; run < 2 * (sizeof cases / sizeof cases[0]); run++) {
    size_t k = run / 2;
    bool in_place = run % 2;
    memset(&fake, 0, sizeof fake);
    snap_strategy st = {.mode = SNAP_MODE_STREAM,
                        .store = stream_config(cases[k].layers, (size_t)cases[k].host_blocks * host_block, 1ul << 34)};
    st.store.budget[SNAP_LAYER_DEVICE] = (size_t)cases[k].dev_slots * slot;
    st.store.device = &fake_device;
    st.store.compression = cases[k].comp, st.store.io_threads = cases[k].threads;
    st.store.prefetch_depth = cases[k].depth, st.store.in_place = in_place;
    snap_placement plan;
    snap_placement_plan(st.store.layers, st.store.budget, raw, nsnap, &plan);
    gradient_with(&f, &st, g, &res);
    print_message("%-40s %-8s device %ld, host %ld, disk %ld (plan %ld/%ld/%ld), %ld puts, %ld gets: %s\n",
                  cases[k].name, in_place ? "in place" : "staged", res.store.count[0], res.store.count[1],
                  res.store.count[2], plan.count[0], plan.count[1], plan.count[2], fake.puts, fake.gets, memcmp(g, f.grad, sizeof(double) * n) ? "DIFFERS" : "bit for bit");
    assert_reference(&f, g, &res, &ref_res);
    /* The store's split is the plan's, and the plan's the one expected. */
    assert_int_equal(res.store.count[SNAP_LAYER_DEVICE], cases[k].n_dev);
    assert_int_equal(res.store.count[SNAP_LAYER_HOST], cases[k].n_host);
    assert_int_equal(res.store.count[SNAP_LAYER_DISK], cases[k].n_disk);
    if (cases[k].comp == SNAP_COMP_NONE)
      for (int l = 0; l < SNAP_NLAYERS; l++) assert_int_equal(res.store.count[l], plan.count[l]);
    else
      assert_int_equal(res.store.count[SNAP_LAYER_DEVICE], plan.count[SNAP_LAYER_DEVICE]);
    /* One pool sized to the device's share, one put and one in-place get
     * per device snapshot; the adjoint's first read is the latest snapshot,
     * in the pool's last slot. */
    bool any = cases[k].n_dev > 0;
    assert_int_equal(fake.allocs, any ? 1 : 0);
    assert_int_equal(fake.frees, any ? 1 : 0);
    assert_true(fake.pool_bytes == (size_t)cases[k].n_dev * slot);
    assert_true(res.store.peak_bytes[SNAP_LAYER_DEVICE] == (size_t)cases[k].n_dev * slot);
    assert_int_equal(fake.puts, cases[k].n_dev);
    assert_int_equal(fake.gets, cases[k].n_dev);
    assert_int_equal(fake.waits, any ? 1 : 0);
    if (any) assert_true(fake.first_get == fake.pool + (size_t)(cases[k].n_dev - 1) * slot);
  }
  /* The comparison can fail: a device tier that stores a perturbed copy
   * changes the gradient. */
  memset(&fake, 0, sizeof fake);
  fake.corrupt = true;
  snap_strategy st = {.mode = SNAP_MODE_STREAM, .store = stream_config(7u, 30 * host_block, 1ul << 34)};
  st.store.budget[SNAP_LAYER_DEVICE] = 40 * slot, st.store.device = &fake_device;
  gradient_with(&f, &st, g, &res);
  print_message("device tier storing perturbed copies (must differ): %s\n",
                memcmp(g, f.grad, sizeof(double) * n) ? "differs" : "BIT FOR BIT");
  assert_true(memcmp(g, f.grad, sizeof(double) * n) != 0);
  fake.corrupt = false;
  /* A store reused (the bench's reset) keeps its pool and its split. */
  memset(&fake, 0, sizeof fake);
  snap_store *store;
  assert_int_equal(snap_store_create(&store, &st.store, &f.p.grid, &f.p.cfg, nsnap), MAPP_OK);
  for (int run = 0; run < 2; run++) {
    if (run) assert_int_equal(snap_store_reset(store), MAPP_OK);
    assert_int_equal(snap_gradient(f.e, &st, store, f.m0, f.obs, g, f.rec, f.uf, &res), MAPP_OK);
    assert_memory_equal(g, f.grad, sizeof(double) * n);
    assert_int_equal(res.store.count[SNAP_LAYER_DEVICE], 40);
  }
  snap_store_destroy(store);
  assert_int_equal(fake.allocs, 1);
  assert_int_equal(fake.puts, 80);
  /* Refusals: a device-only budget that cannot hold every snapshot, and
   * the device layer without device operations (a build without CUDA). */
  snap_store_config only = stream_config(1u, 0, 0);
  only.device = &fake_device, only.budget[SNAP_LAYER_DEVICE] = (size_t)(nsnap - 1) * slot;
  mapp_error_clear();
  assert_int_equal(snap_store_create(&store, &only, &f.p.grid, &f.p.cfg, nsnap), MAPP_ERR_INPUT);
  print_message("device-only, one slot short: %s\n", mapp_error_message());
  snap_store_destroy(store);
  only.budget[SNAP_LAYER_DEVICE] = (size_t)nsnap * slot, only.device = NULL;
  mapp_error_clear();
  assert_int_equal(snap_store_create(&store, &only, &f.p.grid, &f.p.cfg, nsnap), MAPP_ERR_INPUT);
  print_message("device layer without device operations: %s\n", mapp_error_message());
  snap_store_destroy(store);
  mapp_error_clear();
  free(g);
  fixture_close(&f);
}

static void test_checksum(void **unused) {
  (void)unused;
  double a[100];
  for (int i = 0; i < 100; i++) a[i] = i * 0.5;
  uint64_t c = snap_checksum(a, sizeof a);
  unsigned char *bytes = (unsigned char *)a;
  for (size_t b = 0; b < sizeof a; b += 97) {
    bytes[b] ^= 0x10;
    assert_true(snap_checksum(a, sizeof a) != c);
    bytes[b] ^= 0x10;
  }
  assert_true(snap_checksum(a, sizeof a) == c);
}

/* Every adjoint step once, in reverse order, each at the forward state it
 * needs; the cost of all-slots is nt, of fewer more. */
static void test_revolve_schedule(void **unused) {
  (void)unused;
  long nts[4] = {1, 7, 100, 1000};
  int slots[4] = {1, 2, 5, 40};
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      snap_schedule s;
      assert_int_equal(snap_revolve_schedule(nts[a], slots[b], &s), MAPP_OK);
      long next = nts[a], at = 0, held[64];
      for (int k = 0; k < 64; k++) held[k] = -1;
      for (long i = 0; i < s.n; i++) {
        if (s.a[i].kind == SNAP_ACT_ADVANCE) at = s.a[i].step;
        if (s.a[i].kind == SNAP_ACT_TAKESHOT) held[s.a[i].slot] = s.a[i].step;
        /* a restore reads a slot that holds that step (or the initial state) */
        if (s.a[i].kind == SNAP_ACT_RESTORE) {
          assert_true(s.a[i].step == 0 || held[s.a[i].slot] == s.a[i].step);
          at = s.a[i].step;
        }
        if (s.a[i].kind == SNAP_ACT_ADJOINT) {
          assert_int_equal(s.a[i].step, next);
          assert_int_equal(at, next);
          next--;
        }
      }
      assert_int_equal(next, 0);
      assert_true(s.forward_steps >= nts[a]);
      snap_schedule_free(&s);
    }
  assert_int_equal(snap_revolve_cost(100, 100), 100);
  /* The fewest forward steps under the engine's cost model, from an
   * exhaustive search done apart (revolve's largest-step rule gives 19, 80,
   * 358 and 1078). */
  assert_int_equal(snap_revolve_cost(10, 2), 18);
  assert_int_equal(snap_revolve_cost(30, 3), 72);
  assert_int_equal(snap_revolve_cost(100, 4), 320);
  assert_int_equal(snap_revolve_cost(300, 10), 812);
  assert_true(snap_revolve_cost(100, 3) > 100);
  assert_true(snap_revolve_cost(100, 3) < 100 * 101 / 2);
  print_message("revolve cost for 1000 steps: 10 slots %ld, 40 slots %ld\n", snap_revolve_cost(1000, 10),
                snap_revolve_cost(1000, 40));
}

static void test_sizes(void **unused) {
  (void)unused;
  size_t b;
  assert_int_equal(snap_parse_size("2GiB", &b), MAPP_OK);
  assert_true(b == 2ul << 30);
  assert_int_equal(snap_parse_size("512MiB", &b), MAPP_OK);
  assert_true(b == 512ul << 20);
  assert_int_equal(snap_parse_size("4096", &b), MAPP_OK);
  assert_true(b == 4096);
  mapp_error_clear();
  assert_int_equal(snap_parse_size("2XB", &b), MAPP_ERR_INPUT);
  mapp_error_clear();
  assert_int_equal(snap_parse_size("lots", &b), MAPP_ERR_INPUT);
  mapp_error_clear();
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot),       cmocka_unit_test(test_dot_detects_broken_adjoint),
      cmocka_unit_test(test_taylor),    cmocka_unit_test(test_layers_bitwise),
      cmocka_unit_test(test_checksum),  cmocka_unit_test(test_revolve_schedule),
      cmocka_unit_test(test_sizes),     cmocka_unit_test(test_placement),
      cmocka_unit_test(test_device_tier),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  MPI_Finalize();
  return failed;
}
