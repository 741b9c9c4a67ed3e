/* The Google Benchmark C bridge end to end: a C function registered through
 * mapp_bench_register runs under Google Benchmark, and its JSON output
 * carries the name, the iterations and the counters the C code set; the
 * STREAM triad is registered and measures a bandwidth.
 *
 * Usage: test_bench_bridge [EXTRA_FLAG...]; extra flags go to
 * mapp_bench_main, whose non-zero status is then the exit status (the
 * bad-flag test passes an unknown flag and expects 2). */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mapp_bench.h"
#include "mapp_error.h"
#include "mapp_stream.h"

#define SUM_N 1024
#define SUM_NAME "bridge/sum/n:1024"

static json_t *report; /* the parsed --benchmark_out file */

/* A C kernel with a custom counter and the triad fraction. */
static void bm_sum(mapp_bench_state *st, void *arg) {
  const double *x = arg;
  long n = mapp_bench_range(st, 0);
  volatile double sink = 0.0;
  while (mapp_bench_keep_running(st)) {
    double s = 0.0;
    for (long i = 0; i < n; ++i) s += x[i];
    sink = s;
  }
  (void)sink;
  int64_t it = mapp_bench_iterations(st);
  mapp_bench_set_items_processed(st, it * n);
  mapp_bench_set_counter(st, "custom", (double)n, MAPP_BENCH_COUNTER_DEFAULT);
  mapp_bench_set_triad_fraction(st, (double)n * sizeof(double));
}

static json_t *find_run(const char *name) {
  size_t i;
  json_t *b;
  json_array_foreach(json_object_get(report, "benchmarks"), i, b) {
    if (strcmp(json_string_value(json_object_get(b, "name")), name) == 0) return b;
  }
  fail_msg("benchmark %s not in the JSON report", name);
  return NULL;
}

static double number(json_t *run, const char *key) {
  json_t *v = json_object_get(run, key);
  if (!json_is_number(v)) fail_msg("%s missing from %s", key, json_string_value(json_object_get(run, "name")));
  return json_number_value(v);
}

static void test_c_benchmark_reported(void **state) {
  (void)state;
  json_t *run = find_run(SUM_NAME);
  assert_string_equal(json_string_value(json_object_get(run, "run_type")), "iteration");
  assert_true(number(run, "iterations") > 0);
  assert_true(number(run, "items_per_second") > 0);
  assert_true(number(run, "custom") == SUM_N);
  assert_true(number(run, "triad_fraction") > 0);
}

static void test_triad_reported(void **state) {
  (void)state;
  /* "/real_time": Google Benchmark's suffix for wall-clock timing */
  json_t *run = find_run("stream/triad/real_time");
  assert_true(number(run, "iterations") > 0);
  assert_true(number(run, "bytes_per_second") > 0);
}

static void test_bad_options_rejected(void **state) {
  (void)state;
  const long pairs[][2] = {{1, 8}};
  mapp_bench_options both = {.nargs = 1, .ninstances = 1, .args = pairs[0], .ranges = pairs};
  assert_int_equal(mapp_bench_register("bad/both", bm_sum, NULL, &both), MAPP_ERR_INPUT);
  mapp_bench_options none = {.nargs = 2};
  assert_int_equal(mapp_bench_register("bad/none", bm_sum, NULL, &none), MAPP_ERR_INPUT);
  assert_int_equal(mapp_bench_register("", bm_sum, NULL, NULL), MAPP_ERR_INPUT);
  mapp_error_clear();
}

/* Registers the benchmarks and runs them into a JSON file. */
static int run_benchmarks(int extra_argc, char **extra_argv, const char *out_path) {
  static double x[SUM_N];
  for (int i = 0; i < SUM_N; ++i) x[i] = 1.0 / (i + 1);
  static const char *const names[] = {"n"};
  static const long args[] = {SUM_N};
  mapp_bench_options opt = {.nargs = 1, .arg_names = names, .ninstances = 1, .args = args};
  MAPP_TRY(mapp_bench_register("bridge/sum", bm_sum, x, &opt));
  MAPP_TRY(mapp_stream_register(0));

  char out_flag[4200];
  snprintf(out_flag, sizeof out_flag, "--benchmark_out=%s", out_path);
  char *argv[16] = {"test_bench_bridge", "--benchmark_min_time=0.01", "--benchmark_format=json",
                    "--benchmark_out_format=json", out_flag};
  int argc = 5;
  for (int i = 0; i < extra_argc && argc < 15; ++i) argv[argc++] = extra_argv[i];
  argv[argc] = NULL;
  return mapp_bench_main(argc, argv);
}

int main(int argc, char **argv) {
  char out_path[] = "/tmp/mapp_bench_bridge_XXXXXX";
  int fd = mkstemp(out_path);
  if (fd < 0) return mapp_report_error(argv[0], mapp_fail(MAPP_ERR_SYSTEM, "mkstemp failed"));
  close(fd);
  int status = run_benchmarks(argc - 1, argv + 1, out_path);
  if (status != MAPP_OK) {
    unlink(out_path);
    return mapp_report_error(argv[0], status);
  }
  json_error_t err;
  report = json_load_file(out_path, 0, &err);
  unlink(out_path);
  if (!report) {
    fprintf(stderr, "%s: cannot parse the benchmark JSON: %s (line %d)\n", argv[0], err.text, err.line);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_c_benchmark_reported),
      cmocka_unit_test(test_triad_reported),
      cmocka_unit_test(test_bad_options_rejected),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  json_decref(report);
  return failed;
}
