/* Unit tests of the JSON Schema subset (core/jsonschema.c) and the
 * contract's checks built on it (core/contract.c), driven by the schema
 * files of docs/schema/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "contract.h"
#include "jsonschema.h"
#include "mapp_error.h"

/* The smallest record the schema accepts: what docs/contract.md shows. */
static const char *const minimal_record =
    "{\"schema\": \"mapp-result/1\", \"app\": \"wrapped\", \"variant\": \"explicit\", \"backend\": \"serial\","
    " \"size\": \"tiny\", \"scaling\": \"strong\", \"case\": \"tiny\", \"ranks\": 1, \"threads\": 1, \"gpus\": 0,"
    " \"steps\": 50, \"problem\": {\"points\": {\"global\": 64, \"per_rank\": 64}},"
    " \"phases\": {\"setup\": {\"max\": 0.001, \"min\": 0.001, \"mean\": 0.001},"
    "            \"compute\": {\"max\": 0.002, \"min\": 0.002, \"mean\": 0.002},"
    "            \"communication\": {\"max\": 0, \"min\": 0, \"mean\": 0},"
    "            \"io\": {\"max\": 0.003, \"min\": 0.003, \"mean\": 0.003}},"
    " \"wall_s\": 0.006, \"fom\": {\"name\": \"point-updates/s\", \"value\": 1.6e6}, \"bytes_moved\": 51200,"
    " \"verification\": {\"status\": \"pass\", \"worst_error\": 0,"
    "                   \"checks\": [{\"name\": \"heat-conserved\", \"passed\": true, \"value\": 0, \"bound\": 1e-10}]},"
    " \"host\": \"node1\", \"compiler\": \"GNU 12.2.0\", \"flags\": \"-O2\", \"git_revision\": \"unknown\","
    " \"time\": \"2026-01-31T12:00:00Z\"}";

static json_t *record_with(const char *path, json_t *value) {
  json_t *r = json_loads(minimal_record, 0, NULL);
  assert_non_null(r);
  /* path: "a" or "a.b" or "a.b[0].c" (index 0 only), value NULL: removed */
  char buf[128];
  snprintf(buf, sizeof buf, "%s", path);
  json_t *obj = r;
  char *key = buf;
  for (char *dot; (dot = strchr(key, '.'));) {
    *dot = '\0';
    char *bracket = strstr(key, "[0]");
    if (bracket) *bracket = '\0';
    obj = json_object_get(obj, key);
    if (bracket) obj = json_array_get(obj, 0);
    key = dot + 1;
  }
  if (value) json_object_set_new(obj, key, value);
  else json_object_del(obj, key);
  return r;
}

/* The violation contract_check_record finds in the record (NULL: none). */
static char *violation_of(json_t *record) {
  char *violation = NULL;
  assert_int_equal(contract_check_record(record, "wrapped", "explicit", "serial", &violation), MAPP_OK);
  json_decref(record);
  return violation;
}

static void expect_violation(json_t *record, const char *text) {
  char *violation = violation_of(record);
  if (!violation || !strstr(violation, text)) fail_msg("expected '%s', got '%s'", text, violation ? violation : "(valid)");
  free(violation);
}

static void schemas_load_and_use_only_the_subset(void **state) {
  (void)state;
  json_t *schema = NULL;
  assert_int_equal(contract_schema_load("record", &schema), MAPP_OK);
  assert_non_null(json_object_get(schema, "required"));
  json_decref(schema);
  assert_int_equal(contract_schema_load("list", &schema), MAPP_OK);
  json_decref(schema);
  assert_int_equal(contract_schema_load("nothing", &schema), MAPP_ERR_INPUT);
  mapp_error_clear();
}

static void minimal_record_is_valid(void **state) {
  (void)state;
  assert_null(violation_of(json_loads(minimal_record, 0, NULL)));
  /* optional fields typed when present, unknown ones allowed */
  assert_null(violation_of(record_with("bytes_moved", json_null())));
  assert_null(violation_of(record_with("case", json_null())));
  assert_null(violation_of(record_with("my_own_field", json_string("kept"))));
}

static void wrong_type_names_field_and_value(void **state) {
  (void)state;
  expect_violation(record_with("ranks", json_string("1")),
                   "record field 'ranks' must be an integer, got a string (\"1\")");
  expect_violation(record_with("ranks", json_real(1.0)), "record field 'ranks' must be an integer, got a number (1.0)");
  expect_violation(record_with("bytes_moved", json_string("x")), "field 'bytes_moved' must be a number or null");
  expect_violation(record_with("fom", json_array()), "record field 'fom' must be an object, got an array");
  json_t *not_object = json_array();
  char *violation = NULL;
  assert_int_equal(contract_check_record(not_object, NULL, NULL, NULL, &violation), MAPP_OK);
  assert_string_equal(violation, "record must be an object, got an array");
  free(violation);
  json_decref(not_object);
}

static void missing_fields_name_their_path(void **state) {
  (void)state;
  expect_violation(record_with("fom", NULL), "record lacks required field 'fom'");
  expect_violation(record_with("fom.value", NULL), "record lacks required field 'fom.value'");
  expect_violation(record_with("phases.io", NULL), "record lacks required field 'phases.io'");
  expect_violation(record_with("problem.points.per_rank", NULL), "record lacks required field 'problem.points.per_rank'");
}

static void enum_minimum_items_and_additional(void **state) {
  (void)state;
  expect_violation(record_with("verification.status", json_string("maybe")),
                   "record field 'verification.status' is \"maybe\", not one of \"pass\", \"fail\", \"none\"");
  expect_violation(record_with("schema", json_string("mapp-result/2")), "field 'schema' is \"mapp-result/2\"");
  expect_violation(record_with("ranks", json_integer(0)), "record field 'ranks' is 0, below its minimum 1");
  expect_violation(record_with("verification.checks[0].passed", json_string("yes")),
                   "record field 'verification.checks[0].passed' must be a boolean");
  expect_violation(record_with("problem.points.global", json_string("x")),
                   "record field 'problem.points.global' must be an integer");
  expect_violation(record_with("phases.extra", json_pack("{s:f}", "max", 1.0)),
                   "record lacks required field 'phases.extra.min'");
}

static void record_must_answer_the_run_asked(void **state) {
  (void)state;
  json_t *r = json_loads(minimal_record, 0, NULL);
  char *violation = NULL;
  assert_int_equal(contract_check_record(r, "other", NULL, NULL, &violation), MAPP_OK);
  assert_string_equal(violation, "record field 'app' is \"wrapped\", but the run asked for the program other");
  free(violation);
  assert_int_equal(contract_check_record(r, "wrapped", "explicit", "omp", &violation), MAPP_OK);
  assert_string_equal(violation, "record field 'backend' is \"serial\", but the run asked for backend omp");
  free(violation);
  json_decref(r);
}

static void unknown_keywords_are_refused(void **state) {
  (void)state;
  json_t *schema = json_pack("{s:s, s:{s:{s:s}}}", "type", "object", "properties", "name", "pattern", "^a");
  assert_int_equal(jsonschema_check_schema(schema, "s.json"), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "s.json: schema keyword 'pattern' is not one"));
  mapp_error_clear();
  char *violation = NULL;
  assert_int_equal(jsonschema_validate(schema, schema, "x", &violation), MAPP_ERR_INPUT);
  assert_null(violation);
  mapp_error_clear();
  json_decref(schema);
  schema = json_pack("{s:s}", "type", "integr");
  assert_int_equal(jsonschema_check_schema(schema, "s.json"), MAPP_ERR_INPUT);
  mapp_error_clear();
  json_decref(schema);
}

static void boolean_schemas_and_closed_objects(void **state) {
  (void)state;
  json_t *schema = json_pack("{s:s, s:{s:{s:s}}, s:b}", "type", "object", "properties", "a", "type", "integer",
                             "additionalProperties", 0);
  json_t *ok = json_pack("{s:i}", "a", 1), *extra = json_pack("{s:i, s:i}", "a", 1, "b", 2);
  char *violation = NULL;
  assert_int_equal(jsonschema_validate(schema, ok, "doc", &violation), MAPP_OK);
  assert_null(violation);
  assert_int_equal(jsonschema_validate(schema, extra, "doc", &violation), MAPP_OK);
  assert_string_equal(violation, "doc field 'b' is not allowed here");
  free(violation);
  json_decref(schema);
  json_decref(ok);
  json_decref(extra);
}

static void list_form(void **state) {
  (void)state;
  const char *good = "{\"variants\": [{\"name\": \"v\", \"backends\": [{\"name\": \"serial\", \"built\": true}]}]}";
  const char *cases[][2] = {
      {good, NULL},
      {"{\"variants\": [{\"name\": \"v\", \"backends\": [{\"name\": \"serial\", \"built\": \"yes\"}]}]}",
       "mapp-x --list field 'variants[0].backends[0].built' must be a boolean"},
      {"{\"variants\": [{\"name\": \"v\"}]}", "mapp-x --list lacks required field 'variants[0].backends'"},
      {"{\"variants\": []}", "mapp-x --list printed no variants"},
      {"{\"apps\": 1}", "mapp-x --list lacks required field 'variants'"},
      {"{\"baselines\": \"../etc\", \"variants\": [{\"name\": \"v\", \"backends\": []}]}",
       "mapp-x --list field 'baselines' is \"../etc\", not a plain app name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    json_t *list = json_loads(cases[i][0], 0, NULL);
    char *violation = NULL;
    assert_int_equal(contract_check_list("mapp-x", list, &violation), MAPP_OK);
    if (!cases[i][1]) assert_null(violation);
    else if (!violation || !strstr(violation, cases[i][1]))
      fail_msg("case %zu: expected '%s', got '%s'", i, cases[i][1], violation ? violation : "(valid)");
    free(violation);
    json_decref(list);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(schemas_load_and_use_only_the_subset),
      cmocka_unit_test(minimal_record_is_valid),
      cmocka_unit_test(wrong_type_names_field_and_value),
      cmocka_unit_test(missing_fields_name_their_path),
      cmocka_unit_test(enum_minimum_items_and_additional),
      cmocka_unit_test(record_must_answer_the_run_asked),
      cmocka_unit_test(unknown_keywords_are_refused),
      cmocka_unit_test(boolean_schemas_and_closed_objects),
      cmocka_unit_test(list_form),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
