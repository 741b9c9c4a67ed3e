/* snapshots unit tests through the API (cmocka), on any rank count,
 * continued from test_snapshots.c: checksums that catch a flipped bit,
 * the revolve schedule's order, the sizes; the placement for reverse
 * reading (exact split points: the latest on the device, the earliest on
 * disk), and the store's device tier driven through a host-memory
 * stand-in for the CUDA device operations: the same split as the plan,
 * the same bits, one pool, and a corrupted device copy that the
 * comparison catches. */
#include "test_snapshots_lib.h"

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
      cmocka_unit_test(test_checksum),  cmocka_unit_test(test_revolve_schedule),
      cmocka_unit_test(test_sizes),     cmocka_unit_test(test_placement),
      cmocka_unit_test(test_device_tier),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  MPI_Finalize();
  return failed;
}
