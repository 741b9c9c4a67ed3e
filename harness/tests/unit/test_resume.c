/* Unit tests of job keys, results.jsonl appends and resume (job.c, results.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fsutil.h"
#include "job.h"
#include "mapp_error.h"
#include "results.h"

static const job heat_n2 = {.app = "heat", .variant = "mpi", .backend = "serial", .size = "tiny",
                            .scaling = "weak", .ranks = 2, .threads = 1, .repetition = 1};

static json_t *record_of(const job *j) {
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:{s:f}}", "app", j->app, "variant", j->variant,
                   "backend", j->backend, "size", j->size, "scaling", j->scaling, "ranks", (json_int_t)j->ranks,
                   "threads", (json_int_t)j->threads, "repetition", (json_int_t)j->repetition, "fom", "value", 1.0);
}

static char *temp_path(void) {
  char dir[] = "/tmp/mapp-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  return path_join(dir, "results.jsonl");
}

static void remove_temp(char *path) {
  unlink(path);
  char *dir = path_dirname(path);
  rmdir(dir);
  free(dir);
  free(path);
}

static void record_key_matches_job_key(void **state) {
  (void)state;
  json_t *record = record_of(&heat_n2);
  char *a = job_key(&heat_n2), *b = job_key_of_record(record);
  assert_string_equal(a, b);
  free(a);
  free(b);
  json_decref(record);
}

static void stored_key_wins_over_fields(void **state) {
  (void)state;
  json_t *record = record_of(&heat_n2);
  json_object_set_new(record, "threads", json_integer(1)); /* what a serial backend reports */
  json_object_set_new(record, "key", json_string("heat|mpi|serial|n2|t4|tiny|weak|r1"));
  char *key = job_key_of_record(record);
  assert_string_equal(key, "heat|mpi|serial|n2|t4|tiny|weak|r1");
  free(key);
  json_decref(record);
}

static void keys_differ_in_every_field(void **state) {
  (void)state;
  char *base = job_key(&heat_n2);
  job variants[4] = {heat_n2, heat_n2, heat_n2, heat_n2};
  variants[0].repetition = 0;
  variants[1].threads = 2;
  variants[2].scaling = "strong";
  variants[3].backend = "omp";
  for (int i = 0; i < 4; ++i) {
    char *other = job_key(&variants[i]);
    assert_string_not_equal(base, other);
    free(other);
  }
  free(base);
}

static void record_without_key_fields_has_no_key(void **state) {
  (void)state;
  json_t *record = json_pack("{s:s}", "app", "heat");
  assert_null(job_key_of_record(record));
  json_decref(record);
}

static void stems_name_the_configuration(void **state) {
  (void)state;
  char *stem = job_stem(&heat_n2), *label = job_label(&heat_n2);
  assert_string_equal(stem, "heat-mpi-serial-tiny-weak-n2-t1-r1");
  assert_string_equal(label, "heat mpi/serial n=2 t=1 tiny");
  free(stem);
  free(label);
}

static void appended_records_resume(void **state) {
  (void)state;
  char *path = temp_path();
  job first = heat_n2, second = heat_n2;
  first.repetition = 0;
  json_t *a = record_of(&first), *b = record_of(&second), *records;
  assert_int_equal(results_append(path, a), MAPP_OK);
  assert_int_equal(results_append(path, b), MAPP_OK);
  assert_int_equal(results_load(path, &records), MAPP_OK);
  assert_int_equal(json_array_size(records), 2);
  json_t *done = results_key_set(records);
  char *k1 = job_key(&first), *k2 = job_key(&second);
  assert_non_null(json_object_get(done, k1));
  assert_non_null(json_object_get(done, k2));
  job third = heat_n2;
  third.ranks = 4;
  char *k3 = job_key(&third);
  assert_null(json_object_get(done, k3));
  free(k1);
  free(k2);
  free(k3);
  json_decref(done);
  json_decref(records);
  json_decref(a);
  json_decref(b);
  remove_temp(path);
}

static void torn_last_line_is_dropped(void **state) {
  (void)state;
  char *path = temp_path();
  json_t *a = record_of(&heat_n2), *records;
  assert_int_equal(results_append(path, a), MAPP_OK);
  FILE *f = fopen(path, "a");
  fputs("{\"app\":\"heat\",\"vari", f);
  fclose(f);
  assert_int_equal(results_load(path, &records), MAPP_OK); /* skipped with a warning */
  assert_int_equal(json_array_size(records), 1);
  json_decref(records);
  bool dropped = false;
  assert_int_equal(results_repair_tail(path, &dropped), MAPP_OK);
  assert_true(dropped);
  assert_int_equal(results_append(path, a), MAPP_OK);
  assert_int_equal(results_load(path, &records), MAPP_OK);
  assert_int_equal(json_array_size(records), 2);
  assert_int_equal(results_repair_tail(path, &dropped), MAPP_OK);
  assert_false(dropped);
  json_decref(records);
  json_decref(a);
  remove_temp(path);
}

static void corrupt_line_is_an_input_error(void **state) {
  (void)state;
  char *path = temp_path();
  assert_int_equal(write_text_file(path, "{\"app\":\"heat\"}\nnot json\n{}\n"), MAPP_OK);
  json_t *records;
  mapp_error_clear();
  assert_int_equal(results_load(path, &records), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), ":2:"));
  mapp_error_clear();
  remove_temp(path);
}

/* Entries of one sweep that differ only in flags or label are other jobs:
 * their own keys (resume), stems (files) and labels (progress lines). */
static void flags_and_label_set_jobs_apart(void **state) {
  (void)state;
  strv every5 = {0}, every20 = {0};
  assert_int_equal(strv_push(&every5, "--snapshot-every"), MAPP_OK);
  assert_int_equal(strv_push(&every5, "5"), MAPP_OK);
  assert_int_equal(strv_push(&every20, "--snapshot-every"), MAPP_OK);
  assert_int_equal(strv_push(&every20, "20"), MAPP_OK);
  job plain = heat_n2, a = heat_n2, b = heat_n2, labelled = heat_n2;
  a.extra_args = &every5;
  b.extra_args = &every20;
  labelled.extra_args = &every20;
  labelled.label = "snap20";
  const job *jobs[] = {&plain, &a, &b, &labelled};
  char *keys[4], *stems[4];
  for (int i = 0; i < 4; ++i) {
    keys[i] = job_key(jobs[i]);
    stems[i] = job_stem(jobs[i]);
  }
  for (int i = 0; i < 4; ++i)
    for (int k = i + 1; k < 4; ++k) {
      assert_string_not_equal(keys[i], keys[k]);
      assert_string_not_equal(stems[i], stems[k]);
    }
  char *setting = job_setting(&a);
  assert_string_equal(setting, "--snapshot-every 5");
  free(setting);
  assert_null(job_setting(&plain));
  assert_non_null(strstr(stems[3], "-snap20-r1"));
  char *label = job_label(&labelled);
  assert_non_null(strstr(label, "[snap20]"));
  free(label);
  for (int i = 0; i < 4; ++i) {
    free(keys[i]);
    free(stems[i]);
  }
  strv_free(&every5);
  strv_free(&every20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(record_key_matches_job_key), cmocka_unit_test(stored_key_wins_over_fields),
      cmocka_unit_test(keys_differ_in_every_field), cmocka_unit_test(flags_and_label_set_jobs_apart),
      cmocka_unit_test(record_without_key_fields_has_no_key), cmocka_unit_test(stems_name_the_configuration),
      cmocka_unit_test(appended_records_resume), cmocka_unit_test(torn_last_line_is_dropped),
      cmocka_unit_test(corrupt_line_is_an_input_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
