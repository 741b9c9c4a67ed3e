/* The CUDA backend's host-side plan (snap_cuda_plan.h), without a device:
 * the grid-stride launch geometry, and the staging ring that carries
 * snapshots and injection values to the device (which slot, and when the
 * slot's previous transfer must be waited for). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "snap_cuda_plan.h"

static void blocks_cover_the_points_within_the_grid_cap(void **state) {
  (void)state;
  assert_int_equal(snap_cuda_blocks(0), 1); /* a launch of 0 blocks is an error */
  assert_int_equal(snap_cuda_blocks(1), 1);
  assert_int_equal(snap_cuda_blocks(SNAP_CUDA_THREADS), 1);
  assert_int_equal(snap_cuda_blocks(SNAP_CUDA_THREADS + 1), 2);
  assert_int_equal(snap_cuda_blocks(800L * 120), 375);
  assert_int_equal(snap_cuda_blocks(100L * 1000 * 1000), SNAP_CUDA_MAX_BLOCKS); /* the loop strides the rest */
}

/* Double buffering: the first two transfers take fresh slots; from the
 * third on, each refills the slot used two transfers before, after
 * waiting for that transfer. */
static void the_ring_alternates_and_waits_only_on_reuse(void **state) {
  (void)state;
  snap_staging_ring r;
  snap_staging_init(&r, SNAP_CUDA_STAGING_SLOTS);
  const int slot[] = {0, 1, 0, 1, 0};
  const int reuse[] = {0, 0, 1, 1, 1};
  for (int i = 0; i < 5; i++) {
    snap_staging_use u = snap_staging_take(&r);
    assert_int_equal(u.slot, slot[i]);
    assert_int_equal(u.reuse, reuse[i]);
  }
}

static void a_ring_has_at_least_one_slot(void **state) {
  (void)state;
  snap_staging_ring r;
  snap_staging_init(&r, 0);
  snap_staging_use first = snap_staging_take(&r), second = snap_staging_take(&r);
  assert_int_equal(first.slot, 0);
  assert_false(first.reuse);
  assert_int_equal(second.slot, 0);
  assert_true(second.reuse);
}

/* Over a long adjoint, a slot is never refilled while another transfer
 * since its last use is still unwaited: exactly nslots - 1 transfers lie
 * between two uses of one slot. */
static void a_slot_comes_back_after_every_other_slot(void **state) {
  (void)state;
  for (int n = 1; n <= 4; n++) {
    snap_staging_ring r;
    long last[4] = {-1, -1, -1, -1};
    snap_staging_init(&r, n);
    for (long t = 0; t < 600; t++) {
      snap_staging_use u = snap_staging_take(&r);
      assert_int_equal(u.reuse, last[u.slot] >= 0);
      if (u.reuse) assert_int_equal(t - last[u.slot], n);
      last[u.slot] = t;
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(blocks_cover_the_points_within_the_grid_cap),
      cmocka_unit_test(the_ring_alternates_and_waits_only_on_reuse),
      cmocka_unit_test(a_ring_has_at_least_one_slot),
      cmocka_unit_test(a_slot_comes_back_after_every_other_slot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
