/* Unit tests of libmapp's serial pieces: CLI, splits and blocks, pool, records,
 * the core-to-core round trip. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <sched.h>

#include "mapp.h"
#include "mapp_latency.h"

typedef struct {
  long n;
  double x;
  const char *name, *mode;
  bool verbose;
} cli_dest;

static int parse_cli(cli_dest *d, int argc, char **argv) {
  const mapp_option opts[] = {
      {.name = "n", .kind = MAPP_OPT_LONG, .dest = &d->n, .min = 1, .max = 100, .help = "count"},
      {.name = "x", .kind = MAPP_OPT_DOUBLE, .dest = &d->x, .dmin = 0, .dmax = 1, .help = "fraction"},
      {.name = "name", .kind = MAPP_OPT_STRING, .dest = &d->name, .help = "name"},
      {.name = "mode", .kind = MAPP_OPT_CHOICE, .dest = &d->mode, .choices = "fast|slow", .help = "mode"},
      {.name = "verbose", .kind = MAPP_OPT_FLAG, .dest = &d->verbose, .help = "talk"},
      MAPP_OPTION_END,
  };
  mapp_cli_result r;
  mapp_error_clear();
  int status = mapp_cli_parse("test", "unit test", opts, false, argc, argv, &r);
  mapp_cli_free(&r);
  return status;
}

static void cli_accepts_good_values(void **state) {
  (void)state;
  cli_dest d = {.n = 5, .mode = "fast"};
  char *argv[] = {"test", "--n", "7", "--x=0.25", "--name", "abc", "--mode", "slow", "--verbose"};
  assert_int_equal(parse_cli(&d, 9, argv), MAPP_OK);
  assert_int_equal(d.n, 7);
  assert_true(d.x == 0.25);
  assert_string_equal(d.name, "abc");
  assert_string_equal(d.mode, "slow");
  assert_true(d.verbose);
}

static void cli_rejects_bad_input(void **state) {
  (void)state;
  cli_dest d = {0};
  char *zero[] = {"test", "--n", "0"};
  assert_int_equal(parse_cli(&d, 3, zero), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "--n"));
  char *junk[] = {"test", "--n", "7x"};
  assert_int_equal(parse_cli(&d, 3, junk), MAPP_ERR_INPUT);
  char *unknown[] = {"test", "--bogus"};
  assert_int_equal(parse_cli(&d, 2, unknown), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "--bogus"));
  char *choice[] = {"test", "--mode", "medium"};
  assert_int_equal(parse_cli(&d, 3, choice), MAPP_ERR_INPUT);
  char *missing[] = {"test", "--name"};
  assert_int_equal(parse_cli(&d, 2, missing), MAPP_ERR_INPUT);
  char *nan[] = {"test", "--x", "nan"};
  assert_int_equal(parse_cli(&d, 3, nan), MAPP_ERR_INPUT);
  char *positional[] = {"test", "stray"};
  assert_int_equal(parse_cli(&d, 2, positional), MAPP_ERR_INPUT);
}

static void choice_matches_whole_words(void **state) {
  (void)state;
  assert_true(mapp_choice_valid("serial|omp|cuda", "omp"));
  assert_false(mapp_choice_valid("serial|omp|cuda", "om"));
  assert_false(mapp_choice_valid("serial|omp|cuda", "serial|omp"));
}

static void split_even_covers_everything(void **state) {
  (void)state;
  for (long n = 0; n < 40; ++n)
    for (int parts = 1; parts < 9; ++parts) {
      long next = 0, lo = n, hi = 0;
      for (int i = 0; i < parts; ++i) {
        mapp_range r = mapp_split_even(n, parts, i);
        assert_int_equal(r.first, next);
        next += r.count;
        lo = r.count < lo ? r.count : lo;
        hi = r.count > hi ? r.count : hi;
      }
      assert_int_equal(next, n);
      assert_true(hi - lo <= 1);
    }
}

static void blocking_handles_remainders(void **state) {
  (void)state;
  mapp_blocking b;
  assert_int_equal(mapp_blocking_init(&b, 100, 120, 16, 16), MAPP_OK);
  assert_int_equal(b.nbr, 7);
  assert_int_equal(b.nbc, 8);
  assert_int_equal(mapp_block_row_range(&b, 6).count, 4);
  assert_int_equal(mapp_block_col_range(&b, 7).count, 8);
  assert_int_equal(mapp_blocking_init(&b, 10, 10, 11, 2), MAPP_ERR_INPUT);
  assert_int_equal(mapp_blocking_init(&b, 0, 10, 1, 1), MAPP_ERR_INPUT);
  mapp_blocking_init(&b, 100, 120, 16, 16);
  mapp_row_share s;
  long covered = 0;
  for (int r = 0; r < 3; ++r) {
    assert_int_equal(mapp_share_block_rows(&b, r, 3, &s), MAPP_OK);
    assert_int_equal(s.cells.first, covered);
    covered += s.cells.count;
  }
  assert_int_equal(covered, 100);
  assert_int_equal(mapp_share_block_rows(&b, 0, 8, &s), MAPP_ERR_INPUT);
}

static void pool_is_a_stack(void **state) {
  (void)state;
  mapp_pool pool;
  void *a, *b, *c;
  assert_int_equal(mapp_pool_init(&pool, 1000), MAPP_OK);
  assert_int_equal(mapp_pool_alloc(&pool, 100, &a), MAPP_OK);
  size_t mark = mapp_pool_mark(&pool);
  assert_int_equal(mapp_pool_alloc(&pool, 100, &b), MAPP_OK);
  assert_true((uintptr_t)b % MAPP_POOL_ALIGN == 0);
  assert_true((char *)b >= (char *)a + 100);
  mapp_pool_release(&pool, mark);
  assert_int_equal(mapp_pool_alloc(&pool, 100, &c), MAPP_OK);
  assert_ptr_equal(b, c);
  assert_int_equal(mapp_pool_alloc(&pool, 10000, &c), MAPP_ERR_SYSTEM);
  mapp_pool_free(&pool);
}

static void record_has_the_schema_fields(void **state) {
  (void)state;
  char *argv[] = {"mapp-test", "--size", "tiny"};
  mapp_record rec = {.app = "test", .variant = "v", .backend = "serial", .size = "tiny",
                     .scaling = "strong", .case_name = "tiny", .ranks = 2, .threads = 1, .steps = 3,
                     .ndims = 1, .dims = {{"cells", 10, 5}}, .fom_name = "cells/s", .fom = 42.0,
                     .bytes_moved = -1, .nchecks = 2, .argc = 3, .argv = argv};
  rec.checks[0] = (mapp_check){"a", 1, 0.0, 0.0};
  rec.checks[1] = (mapp_check){"b", 0, 2.5, 1.0};
  assert_string_equal(mapp_record_verdict(&rec), "fail");
  json_t *o = mapp_record_to_json(&rec);
  assert_non_null(o);
  assert_string_equal(json_string_value(json_object_get(o, "schema")), MAPP_RECORD_SCHEMA);
  assert_int_equal(json_integer_value(json_object_get(o, "ranks")), 2);
  assert_true(json_is_null(json_object_get(o, "bytes_moved")));
  json_t *v = json_object_get(o, "verification");
  assert_string_equal(json_string_value(json_object_get(v, "status")), "fail");
  assert_true(json_real_value(json_object_get(v, "worst_error")) == 2.5);
  assert_string_equal(json_string_value(json_object_get(o, "command")), "mapp-test --size tiny");
  json_t *rows = json_object_get(json_object_get(o, "problem"), "cells");
  assert_int_equal(json_integer_value(json_object_get(rows, "per_rank")), 5);
  json_decref(o);
}

/* A CUDA run's record names its GPU, driver, runtime, nvcc and the
 * architectures compiled for; a CPU run's has no "gpu" at all. */
static void record_carries_gpu_provenance(void **state) {
  (void)state;
  mapp_gpu_info gpu = {.name = "NVIDIA H100 80GB HBM3", .device = 0, .cc_major = 9, .cc_minor = 0,
                       .memory_bytes = 85e9, .driver = "13.0", .runtime = "13.0"};
  mapp_record rec = {.app = "test", .variant = "v", .backend = "cuda", .size = "tiny", .scaling = "strong",
                     .ranks = 1, .threads = 1, .gpus = 1, .bytes_moved = -1};
  json_t *o = mapp_record_to_json(&rec);
  assert_null(json_object_get(o, "gpu"));
  json_decref(o);
  rec.gpu = &gpu;
  o = mapp_record_to_json(&rec);
  json_t *g = json_object_get(o, "gpu");
  assert_non_null(g);
  assert_string_equal(json_string_value(json_object_get(g, "name")), "NVIDIA H100 80GB HBM3");
  assert_string_equal(json_string_value(json_object_get(g, "compute_capability")), "9.0");
  assert_string_equal(json_string_value(json_object_get(g, "driver")), "13.0");
  assert_string_equal(json_string_value(json_object_get(g, "runtime")), "13.0");
  assert_true(json_real_value(json_object_get(g, "memory_bytes")) == 85e9);
  assert_string_equal(json_string_value(json_object_get(g, "nvcc")), mapp_cuda_compiler());
  assert_string_equal(json_string_value(json_object_get(g, "architectures")), mapp_cuda_architectures());
  json_decref(o);
}

static void timers_accumulate(void **state) {
  (void)state;
  mapp_timers t;
  mapp_timers_init(&t);
  mapp_timer_start(&t, MAPP_PHASE_COMPUTE);
  double until = mapp_now() + 0.002;
  while (mapp_now() < until) {
  }
  mapp_timer_stop(&t, MAPP_PHASE_COMPUTE);
  mapp_timer_stop(&t, MAPP_PHASE_IO); /* never started: no effect */
  assert_true(t.total[MAPP_PHASE_COMPUTE] >= 0.002);
  assert_true(t.total[MAPP_PHASE_IO] == 0.0);
}

/* ---- core-to-core round trip ---- */

static void round_trip_is_measured(void **state) {
  (void)state;
  int a, b;
  if (!mapp_two_cpus(&a, &b)) skip();
  double ns = -1.0;
  assert_int_equal(mapp_core_round_trip(a, b, 1000, 3, &ns), MAPP_OK);
  assert_true(ns > 1.0 && ns < 1e6); /* a hand-off and back: more than a cycle, well under a millisecond */
}

static void round_trip_refuses_bad_counts_and_cpus(void **state) {
  (void)state;
  double ns = 0.0;
  assert_int_equal(mapp_core_round_trip(0, 1, 0, 3, &ns), MAPP_ERR_INPUT);
  assert_int_equal(mapp_core_round_trip(0, 1, 10, 0, &ns), MAPP_ERR_INPUT);
  assert_int_equal(mapp_core_round_trip(-1, 1, 10, 3, &ns), MAPP_ERR_INPUT);
  /* a CPU the machine does not have: refused, not a hang */
  mapp_error_clear();
  assert_int_equal(mapp_core_round_trip(0, CPU_SETSIZE - 1, 10, 3, &ns), MAPP_ERR_SYSTEM);
  assert_non_null(strstr(mapp_error_message(), "cannot pin"));
}

static void *two_cpus_when_pinned_to_one(void *out) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  int a, b;
  *(int *)out = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0 ? mapp_two_cpus(&a, &b) : -1;
  return NULL;
}

static void one_cpu_has_no_round_trip(void **state) {
  (void)state;
  int found = -1;
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, two_cpus_when_pinned_to_one, &found), 0);
  pthread_join(t, NULL);
  assert_int_equal(found, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cli_accepts_good_values),  cmocka_unit_test(cli_rejects_bad_input),
      cmocka_unit_test(choice_matches_whole_words), cmocka_unit_test(split_even_covers_everything),
      cmocka_unit_test(blocking_handles_remainders), cmocka_unit_test(pool_is_a_stack),
      cmocka_unit_test(record_has_the_schema_fields), cmocka_unit_test(timers_accumulate),
      cmocka_unit_test(record_carries_gpu_provenance),
      cmocka_unit_test(round_trip_is_measured), cmocka_unit_test(round_trip_refuses_bad_counts_and_cpus),
      cmocka_unit_test(one_cpu_has_no_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
