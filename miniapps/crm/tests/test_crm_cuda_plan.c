/* The CUDA backend's launch plan (crm_cuda_plan.h), without a device:
 * blocks per thread-per-point launch, and the staged row kernels' rows per
 * block, shared memory and the fallback when not one row fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "crm_cuda_plan.h"
#include "crm_kernel.h"

static void point_launches_round_up_to_whole_blocks(void **state) {
  (void)state;
  assert_int_equal(crm_cuda_blocks(0), 0); /* nothing to launch */
  assert_int_equal(crm_cuda_blocks(1), 1);
  assert_int_equal(crm_cuda_blocks(CRM_CUDA_BLOCK), 1);
  assert_int_equal(crm_cuda_blocks(CRM_CUDA_BLOCK + 1), 2);
  assert_int_equal(crm_cuda_blocks(4096L * 52 * 64), 4096L * 52 * 64 / CRM_CUDA_BLOCK);
}

/* The production CRM (64 columns): forcing stages 3 fields a row and a
 * crm_forcing, 3 x 65 x 8 + 24 = 1584 bytes: 31 rows fit 48 KiB, so a block
 * takes the cap of 16; 4096 CRMs x 50 levels are 12800 blocks. */
static void production_rows_stage_sixteen_a_block(void **state) {
  (void)state;
  size_t row = crm_cuda_staged_row_bytes(64, 3, sizeof(crm_forcing));
  assert_int_equal(row, 3 * 65 * 8 + 24);
  crm_cuda_rows_launch l = crm_cuda_plan_rows(64, 4096L * 50, 3, sizeof(crm_forcing));
  assert_int_equal(l.rows_per_block, CRM_CUDA_STAGE_ROWS);
  assert_int_equal(l.blocks, 4096L * 50 / 16);
  assert_int_equal(l.shared_bytes, 16 * row);
  assert_true(l.shared_bytes <= CRM_CUDA_STAGE_BYTES);
}

/* Long rows fit fewer a block, the last block partly filled. */
static void long_rows_fit_fewer_and_round_up(void **state) {
  (void)state;
  crm_cuda_rows_launch l = crm_cuda_plan_rows(1023, 100, 4, 0); /* 4 x 1024 x 8 = 32 KiB a row */
  assert_int_equal(l.rows_per_block, 1);
  assert_int_equal(l.blocks, 100);
  l = crm_cuda_plan_rows(511, 101, 4, 0); /* 16 KiB a row: 3 fit */
  assert_int_equal(l.rows_per_block, 3);
  assert_int_equal(l.blocks, 34);
  assert_int_equal(l.shared_bytes, 3 * 16384);
}

/* Not one row in 48 KiB: the thread-per-row kernel, no shared memory. */
static void rows_beyond_shared_memory_fall_back(void **state) {
  (void)state;
  crm_cuda_rows_launch l = crm_cuda_plan_rows(2048, 1000, 4, 0);
  assert_int_equal(l.rows_per_block, 0);
  assert_int_equal(l.shared_bytes, 0);
  assert_int_equal(l.blocks, crm_cuda_blocks(1000));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(point_launches_round_up_to_whole_blocks),
      cmocka_unit_test(production_rows_stage_sixteen_a_block),
      cmocka_unit_test(long_rows_fit_fewer_and_round_up),
      cmocka_unit_test(rows_beyond_shared_memory_fall_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
