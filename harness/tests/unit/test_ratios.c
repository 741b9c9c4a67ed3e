/* Spec ratios (ratios.c) from synthetic records: each side's best
 * configuration by median, sides paired only on the same host (a GPU run
 * on one machine never meets a CPU run of another), a side that did not
 * run on a host left empty (the report says "missing"), and records of
 * another app, another label or a failed run left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "ratios.h"

static json_t *record(const char *host, const char *label, const char *backend, long ranks, long threads, double fom) {
  return json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:i,s:{s:f}}", "app", "crm", "host", host, "label", label, "variant",
                   "batched", "backend", backend, "ranks", (json_int_t)ranks, "threads", (json_int_t)threads,
                   "exit_code", 0, "fom", "value", fom);
}

/* Host a: the CPU in two configurations (2 x 1 the better), the GPU at
 * 6 ranks; host b: the CPU only. Noise a ratio must leave out: another
 * app, another label, a failed run. */
static json_t *node_records(void) {
  json_t *r = json_array();
  const double cpu11[] = {10, 11, 12}, cpu21[] = {18, 20, 22}, gpu[] = {150, 160, 170};
  for (int rep = 0; rep < 3; ++rep) {
    json_array_append_new(r, record("a", "cpu", "omp", 1, 1, cpu11[rep]));
    json_array_append_new(r, record("a", "cpu", "omp", 2, 1, cpu21[rep]));
    json_array_append_new(r, record("a", "gpu", "cuda", 6, 1, gpu[rep]));
    json_array_append_new(r, record("b", "cpu", "omp", 1, 2, 7.0 + rep));
  }
  json_t *heat = record("b", "gpu", "cuda", 1, 1, 1e9);
  json_object_set_new(heat, "app", json_string("heat"));
  json_array_append_new(r, heat);
  json_array_append_new(r, record("b", "gpu-host-work", "cuda", 1, 1, 1e9));
  json_t *failed = record("b", "gpu", "cuda", 1, 1, 1e9);
  json_object_set_new(failed, "exit_code", json_integer(1));
  json_array_append_new(r, failed);
  return r;
}

static ratio_spec node_ratio(void) {
  ratio_spec s = {.name = (char *)"node"};
  strv_push(&s.num_fields, "label");
  strv_push(&s.num_values, "gpu");
  strv_push(&s.den_fields, "label");
  strv_push(&s.den_values, "cpu");
  strv_push(&s.same, "host");
  return s;
}

static void free_ratio(ratio_spec *s) {
  strv_free(&s->num_fields);
  strv_free(&s->num_values);
  strv_free(&s->den_fields);
  strv_free(&s->den_values);
  strv_free(&s->same);
}

static void best_configurations_paired_by_host(void **unused) {
  (void)unused;
  json_t *records = node_records();
  ratio_spec s = node_ratio();
  ratio_data d;
  assert_int_equal(ratio_collect(records, &s, "crm", &d), MAPP_OK);
  assert_int_equal(d.count, 2);
  assert_string_equal(d.rows[0].key, "host=a");
  assert_string_equal(d.rows[0].num.config, "batched/cuda 6 x 1 gpu");
  assert_true(d.rows[0].num.median == 160 && d.rows[0].num.low == 150 && d.rows[0].num.high == 170);
  assert_string_equal(d.rows[0].den.config, "batched/omp 2 x 1 cpu");
  assert_true(d.rows[0].den.median == 20 && d.rows[0].den.runs == 3);
  assert_string_equal(d.rows[1].key, "host=b");
  assert_null(d.rows[1].num.config); /* no GPU run on b: the noise was left out */
  assert_string_equal(d.rows[1].den.config, "batched/omp 1 x 2 cpu");
  assert_true(d.rows[1].den.median == 8);
  ratio_data_free(&d);
  free_ratio(&s);
  json_decref(records);
}

static void no_side_is_no_rows(void **unused) {
  (void)unused;
  json_t *records = node_records();
  ratio_spec s = node_ratio();
  strv_free(&s.num_values);
  strv_free(&s.den_values);
  strv_push(&s.num_values, "tpu");
  strv_push(&s.den_values, "fpga");
  ratio_data d;
  assert_int_equal(ratio_collect(records, &s, "crm", &d), MAPP_OK);
  assert_int_equal(d.count, 0);
  ratio_data_free(&d);
  free_ratio(&s);
  json_decref(records);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(best_configurations_paired_by_host),
      cmocka_unit_test(no_side_is_no_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
