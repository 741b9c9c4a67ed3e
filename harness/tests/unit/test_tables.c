/* Spec tables (tables.c) from synthetic records: rows grouped by the key
 * columns, value columns as median (min–max) over a row's records, where
 * with a list of values, matrix parameters as columns, a missing field as
 * "-", and no matching record as no rows. Cells are compared as the exact
 * strings the report prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error.h"
#include "tables.h"

static json_t *record(const char *label, const char *variant, long width, double metg, long iterations) {
  return json_pack("{s:s,s:s,s:s,s:s,s:i,s:s,s:{s:I},s:{s:I,s:f}}", "app", "subgraph", "label", label, "variant",
                   variant, "backend", "threads", "exit_code", 0, "size", "small", "params", "iterations",
                   (json_int_t)iterations, "app_data", "width", (json_int_t)width, "metg_us", metg);
}

/* metg-w2 and metg-w16 for two variants, three repetitions each, plus
 * records the table must leave out: another label, another app, a failed run. */
static json_t *metg_records(void) {
  json_t *r = json_array();
  const double eager_w2[] = {0.55, 0.48, 0.51}, subgraph_w2[] = {0.20, 0.22, 0.21};
  for (int rep = 0; rep < 3; ++rep) {
    json_array_append_new(r, record("metg-w2", "eager", 2, eager_w2[rep], 0));
    json_array_append_new(r, record("metg-w2", "subgraph", 2, subgraph_w2[rep], 0));
    json_array_append_new(r, record("metg-w16", "eager", 16, 12.0 + rep, 0));
    json_array_append_new(r, record("metg-w16", "subgraph", 16, 1234.4 + 1000.0 * rep, 0));
    json_array_append_new(r, record("granularity", "eager", 16, 99.0, 100));
  }
  json_t *other = record("metg-w2", "eager", 2, 1e9, 0);
  json_object_set_new(other, "app", json_string("heat"));
  json_array_append_new(r, other);
  json_t *failed = record("metg-w2", "eager", 2, 1e9, 0);
  json_object_set_new(failed, "exit_code", json_integer(1));
  json_array_append_new(r, failed);
  return r;
}

static table_spec metg_table(void) {
  table_spec t = {.name = (char *)"metg"};
  const char *columns[] = {"label", "variant", "backend", "app_data.width", "app_data.metg_us"};
  for (size_t c = 0; c < sizeof columns / sizeof *columns; ++c) strv_push(&t.columns, columns[c]);
  strv_push(&t.values, "app_data.metg_us");
  strv_push(&t.where_fields, "label");
  strv_push(&t.where_values, "metg-w2");
  strv_push(&t.where_fields, "label");
  strv_push(&t.where_values, "metg-w16");
  return t;
}

static void free_table(table_spec *t) {
  strv_free(&t->columns);
  strv_free(&t->values);
  strv_free(&t->where_fields);
  strv_free(&t->where_values);
}

static void expect_cell(const table_spec *t, const table_data *d, size_t row, size_t column, const char *want) {
  char cell[128];
  table_cell_text(t, &d->rows[row], column, cell, sizeof cell);
  if (strcmp(cell, want) != 0) fail_msg("row %zu column %zu: got '%s', want '%s'", row, column, cell, want);
}

static void groups_rows_with_median_and_range(void **state) {
  (void)state;
  json_t *r = metg_records();
  table_spec t = metg_table();
  table_data d;
  assert_int_equal(table_collect(r, &t, "subgraph", &d), MAPP_OK);
  assert_int_equal(d.count, 4); /* two labels x two variants; granularity, heat and the failed run left out */
  expect_cell(&t, &d, 0, 0, "metg-w2");
  expect_cell(&t, &d, 0, 1, "eager");
  expect_cell(&t, &d, 0, 2, "threads");
  expect_cell(&t, &d, 0, 3, "2");
  expect_cell(&t, &d, 0, 4, "0.51 (0.48\u20130.55)");
  expect_cell(&t, &d, 1, 4, "0.21 (0.2\u20130.22)");
  expect_cell(&t, &d, 2, 0, "metg-w16");
  expect_cell(&t, &d, 2, 3, "16");
  expect_cell(&t, &d, 2, 4, "13 (12\u201314)");
  expect_cell(&t, &d, 3, 4, "2234 (1234\u20133234)"); /* whole numbers from 1000 up, not 2.23e+03 */
  assert_int_equal(d.rows[0].runs, 3);
  assert_float_equal(d.rows[0].stats[4].median, 0.51, 1e-12);
  assert_float_equal(d.rows[0].stats[4].low, 0.48, 1e-12);
  assert_float_equal(d.rows[0].stats[4].high, 0.55, 1e-12);
  assert_int_equal(d.absent.count, 0);
  table_data_free(&d);
  free_table(&t);
  json_decref(r);
}

static void where_with_one_value_and_a_parameter_column(void **state) {
  (void)state;
  json_t *r = metg_records();
  table_spec t = {.name = (char *)"g"};
  strv_push(&t.columns, "variant");
  strv_push(&t.columns, "iterations"); /* a matrix parameter (params.iterations) */
  strv_push(&t.columns, "app_data.metg_us");
  strv_push(&t.values, "app_data.metg_us");
  strv_push(&t.where_fields, "label");
  strv_push(&t.where_values, "granularity");
  table_data d;
  assert_int_equal(table_collect(r, &t, "subgraph", &d), MAPP_OK);
  assert_int_equal(d.count, 1);
  expect_cell(&t, &d, 0, 1, "100");
  expect_cell(&t, &d, 0, 2, "99 (99\u201399)");
  table_data_free(&d);
  free_table(&t);
  json_decref(r);
}

static void a_missing_field_is_a_dash(void **state) {
  (void)state;
  json_t *r = json_array();
  json_array_append_new(r, record("metg-w2", "eager", 2, 0.5, 0));
  json_t *bare = record("metg-w2", "subgraph", 2, 0.5, 0);
  json_object_del(bare, "app_data"); /* a run that recorded no METG */
  json_array_append_new(r, bare);
  table_spec t = metg_table();
  strv_push(&t.columns, "app_data.typo");
  table_data d;
  assert_int_equal(table_collect(r, &t, "subgraph", &d), MAPP_OK);
  assert_int_equal(d.count, 2);
  expect_cell(&t, &d, 0, 4, "0.5"); /* one record: no range */
  expect_cell(&t, &d, 1, 3, "-");
  expect_cell(&t, &d, 1, 4, "-");
  expect_cell(&t, &d, 0, 5, "-");
  assert_int_equal(d.absent.count, 1);
  assert_string_equal(d.absent.items[0], "app_data.typo");
  table_data_free(&d);
  free_table(&t);
  json_decref(r);
}

static void no_matching_record_is_no_rows(void **state) {
  (void)state;
  json_t *r = metg_records();
  table_spec t = metg_table();
  table_data d;
  assert_int_equal(table_collect(r, &t, "crm", &d), MAPP_OK);
  assert_int_equal(d.count, 0);
  table_data_free(&d);
  strv_push(&t.where_fields, "variant"); /* label in (w2, w16) and variant nope: nothing */
  strv_push(&t.where_values, "nope");
  assert_int_equal(table_collect(r, &t, "subgraph", &d), MAPP_OK);
  assert_int_equal(d.count, 0);
  table_data_free(&d);
  free_table(&t);
  json_decref(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(groups_rows_with_median_and_range),
      cmocka_unit_test(where_with_one_value_and_a_parameter_column),
      cmocka_unit_test(a_missing_field_is_a_dash),
      cmocka_unit_test(no_matching_record_is_no_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
