/* Sizes from user input (issue 14): products that overflow, zero-byte
 * allocations and requests beyond memory are input errors naming the
 * numbers, never a wrapped size or a NULL that looks like success. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "mapp_pool.h"

static void products_that_fit(void **state) {
  (void)state;
  size_t out = 1;
  assert_int_equal(mapp_size_mul(4096, 4096, &out, "grid"), MAPP_OK);
  assert_int_equal(out, 4096u * 4096u);
  assert_int_equal(mapp_size_mul(0, SIZE_MAX, &out, "grid"), MAPP_OK);
  assert_int_equal(out, 0);
  assert_int_equal(mapp_size_mul(SIZE_MAX, 1, &out, "grid"), MAPP_OK);
  assert_true(out == SIZE_MAX);
}

/* heat --rows 4294967294 --cols 4294967294: (rows + 2) x (cols + 2) is 2^64. */
static void products_that_wrap(void **state) {
  (void)state;
  size_t out = 1;
  mapp_error_clear();
  assert_int_equal(mapp_size_mul((size_t)4294967296u, (size_t)4294967296u, &out, "the heat grid"), MAPP_ERR_INPUT);
  assert_int_equal(out, 0);
  assert_non_null(strstr(mapp_error_message(), "the heat grid: 4294967296 x 4294967296 overflows"));
  mapp_error_clear();
  assert_int_equal(mapp_size_mul(SIZE_MAX / 2 + 1, 2, &out, "x"), MAPP_ERR_INPUT);
  mapp_error_clear();
}

static void zero_bytes_is_not_success(void **state) {
  (void)state;
  void *p = (void *)&p;
  mapp_error_clear();
  assert_int_equal(mapp_alloc(&p, 0, "the grid"), MAPP_ERR_INPUT);
  assert_null(p);
  assert_non_null(strstr(mapp_error_message(), "the grid: 0 bytes"));
  mapp_error_clear();
  assert_int_equal(mapp_calloc(&p, 0, sizeof(double), "the grid"), MAPP_ERR_INPUT);
  mapp_error_clear();
}

/* Beyond physical memory: an input error naming the bytes, and the 64-byte
 * rounding of a near-SIZE_MAX request must not wrap into a small block. */
static void beyond_memory(void **state) {
  (void)state;
  void *p = NULL;
  mapp_error_clear();
  assert_int_equal(mapp_alloc(&p, SIZE_MAX - 10, "the grid"), MAPP_ERR_INPUT);
  assert_null(p);
  assert_non_null(strstr(mapp_error_message(), "bytes of memory"));
  mapp_error_clear();
  assert_int_equal(mapp_calloc(&p, SIZE_MAX / 4, 8, "the grid"), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "overflows"));
  mapp_error_clear();
  assert_int_equal(mapp_size_fits_memory((size_t)1 << 62, "the grid"), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "4611686018427387904 bytes"));
  mapp_error_clear();
  mapp_pool pool;
  assert_int_equal(mapp_pool_init(&pool, SIZE_MAX - 1), MAPP_ERR_INPUT);
  mapp_error_clear();
}

static void ordinary_allocations(void **state) {
  (void)state;
  double *p = NULL;
  assert_int_equal(mapp_calloc((void **)&p, 1000, sizeof *p, "x"), MAPP_OK);
  assert_non_null(p);
  assert_true(((uintptr_t)p % 64) == 0);
  assert_true(p[999] == 0.0);
  free(p);
  assert_int_equal(mapp_alloc((void **)&p, 1, "x"), MAPP_OK);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(products_that_fit), cmocka_unit_test(products_that_wrap),
      cmocka_unit_test(zero_bytes_is_not_success), cmocka_unit_test(beyond_memory),
      cmocka_unit_test(ordinary_allocations)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
