/* JUnit XML (junit.h), a run's record as a case (junit_add_record): its
 * names, outcome (junit_judge.c), properties and, when it did not pass,
 * the details and the log's last lines; and one case per configuration of
 * a sweep's records (junit_add_configurations). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "job.h"
#include "junit.h"
#include "junit_internal.h"
#include "mapp_error.h"
#include "stats.h"
#include "strv.h"
#include "verdict.h"

/* Enough of a failed run's log to see why without opening it. */
enum { LOG_TAIL_LINES = 40, LOG_TAIL_BYTES = 16384 };

static int push_record_property(record_case *rc, const char *name, char *value) {
  if (!value) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory listing the properties of a record");
  int status = push_property(&rc->prop_names, &rc->prop_values, name, value);
  free(value);
  return status;
}

static int push_integer_property(record_case *rc, const json_t *record, const char *field) {
  const json_t *v = json_object_get(record, field);
  if (!json_is_integer(v)) return MAPP_OK;
  return push_record_property(rc, field, str_printf("%lld", (long long)json_integer_value(v)));
}

/* The statistics' verdict: a string, or an object naming it ("kind"). */
static const char *verdict_of(const json_t *record) {
  const json_t *v = json_object_get(record, "verdict");
  if (!v) v = json_object_get(json_object_get(record, "timing"), "verdict");
  if (json_is_string(v)) return json_string_value(v);
  const char *fields[] = {"kind", "verdict", "name", "status"};
  for (size_t i = 0; json_is_object(v) && i < sizeof fields / sizeof fields[0]; ++i)
    if (json_is_string(json_object_get(v, fields[i]))) return json_string_value(json_object_get(v, fields[i]));
  return NULL;
}

/* The figure of merit and its unit, the verdict, repetitions and attempts,
 * each when the record has it. */
static int record_properties(const json_t *record, record_case *rc) {
  const json_t *fom = json_object_get(record, "fom");
  const json_t *value = json_object_get(fom, "value");
  if (json_is_number(value)) MAPP_TRY(push_record_property(rc, "fom", str_printf("%.6g", json_number_value(value))));
  const char *unit = text_at(fom, NULL, "name");
  if (unit) MAPP_TRY(push_record_property(rc, "fom_unit", strdup(unit)));
  const char *verdict = verdict_of(record);
  if (verdict) MAPP_TRY(push_record_property(rc, "verdict", strdup(verdict)));
  MAPP_TRY(push_integer_property(rc, record, "repetitions"));
  const json_t *attempts = json_object_get(record, "attempts");
  if (json_is_array(attempts)) /* one entry per launch (retries) */
    return push_record_property(rc, "attempts", str_printf("%zu", json_array_size(attempts)));
  return push_integer_property(rc, record, "attempts");
}

/* Where the last LOG_TAIL_LINES lines of text begin. */
static size_t tail_start(const char *text, size_t n) {
  size_t from = n > 0 && text[n - 1] == '\n' ? n - 1 : n;
  for (int lines = 0; from > 0; --from)
    if (text[from - 1] == '\n' && ++lines == LOG_TAIL_LINES) break;
  return from;
}

/* The last lines of a log (from its last LOG_TAIL_BYTES), or why it cannot
 * be read: a log that is gone never stops the report. */
static int append_log_tail(text_buf *t, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return text_printf(t, "(no log to show: %s)\n", strerror(errno));
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  bool cut = size > LOG_TAIL_BYTES;
  char buf[LOG_TAIL_BYTES + 1];
  size_t n = fseek(f, cut ? size - LOG_TAIL_BYTES : 0, SEEK_SET) == 0 ? fread(buf, 1, LOG_TAIL_BYTES, f) : 0;
  fclose(f);
  buf[n] = '\0';
  for (size_t i = 0; i < n; ++i)
    if (buf[i] == '\0') buf[i] = '\x01'; /* XML cannot hold NUL either: shown as U+FFFD like other controls */
  if (n == 0) return text_puts(t, "(the log is empty)\n");
  size_t from = tail_start(buf, n);
  if (cut && from == 0) from = strcspn(buf, "\n") + (buf[strcspn(buf, "\n")] == '\n'); /* drop the cut line */
  MAPP_TRY(text_puts(t, "--- the end of the log ---\n"));
  MAPP_TRY(text_puts(t, buf + from));
  return n > 0 && buf[n - 1] != '\n' ? text_puts(t, "\n") : MAPP_OK;
}

/* What a reader needs to act on a failed run: the message, the log, the
 * command that reproduces the run, the bless command of a missing
 * baseline, and the log's tail. */
static int record_details(const json_t *record, const record_case *rc, char **details) {
  text_buf t = {0};
  const char *log = text_at(record, NULL, "log"), *launch = text_at(record, NULL, "launch");
  const char *bless = text_at(record, "baseline", "bless");
  int status = text_printf(&t, "%s\n", rc->message ? rc->message : "");
  if (status == MAPP_OK && log) status = text_printf(&t, "log: %s\n", log);
  if (status == MAPP_OK && launch) status = text_printf(&t, "reproduce: %s\n", launch);
  if (status == MAPP_OK && bless && rc->type && strcmp(rc->type, "missing-baseline") == 0)
    status = text_printf(&t, "bless: %s\n", bless);
  if (status == MAPP_OK && log && rc->status != JUNIT_SKIPPED) status = append_log_tail(&t, log);
  if (status != MAPP_OK) free(t.data);
  *details = status == MAPP_OK ? t.data : NULL;
  return status;
}

static int record_names(const json_t *record, record_case *rc) {
  char *key = job_key_of_record(record);
  if (!key)
    return mapp_fail(MAPP_ERR_INPUT, "a record without a key or app, variant, backend, size, scaling, ranks and "
                                     "threads cannot be named as a JUnit case");
  int status = junit_names_of_key(key, &rc->classname, &rc->name);
  free(key);
  return status;
}

static void record_case_free(record_case *rc) {
  free(rc->message);
  free(rc->classname);
  free(rc->name);
  strv_free(&rc->prop_names);
  strv_free(&rc->prop_values);
}

static int add_record_case(junit_suite *s, const json_t *record, record_case *rc) {
  MAPP_TRY(record_names(record, rc));
  junit_judge_record(record, rc);
  if (rc->status != JUNIT_PASS && !rc->message) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory judging a record");
  MAPP_TRY(record_properties(record, rc));
  char *details = NULL;
  if (rc->status != JUNIT_PASS) MAPP_TRY(record_details(record, rc, &details));
  junit_property *props = calloc(rc->prop_names.count + 1, sizeof *props);
  if (!props) {
    free(details);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory listing the properties of a record");
  }
  for (size_t i = 0; i < rc->prop_names.count; ++i)
    props[i] = (junit_property){rc->prop_names.items[i], rc->prop_values.items[i]};
  junit_case c = {.classname = rc->classname, .name = rc->name, .time_s = number_at(record, "elapsed_s", 0),
                  .status = rc->status, .type = rc->type, .message = rc->message, .details = details,
                  .properties = props, .property_count = rc->prop_names.count};
  int status = junit_add_case(s, &c);
  free(props);
  free(details);
  return status;
}

int junit_add_record(junit_suite *s, const json_t *record) {
  if (!json_is_object(record)) return mapp_fail(MAPP_ERR_INPUT, "a JUnit case needs a record (a JSON object)");
  record_case rc = {0};
  int status = add_record_case(s, record, &rc);
  record_case_free(&rc);
  return status;
}

/* ---------------------------------------------------------------- configurations */

/* The record that stands for a configuration's runs (a new reference):
 * its first failed run, else its last; the median figure of merit of its
 * passed runs (stats_median) and the sum of their seconds. */
static json_t *configuration_record(const char *config, const json_t *runs) {
  size_t n = json_array_size(runs), passed = 0, i;
  const json_t *first_failed = NULL, *r;
  double seconds = 0.0, *foms = malloc((n + 1) * sizeof *foms);
  if (!foms) return NULL;
  json_array_foreach(runs, i, r) {
    record_case rc = {0};
    junit_judge_record(r, &rc);
    const json_t *value = json_object_get(json_object_get(r, "fom"), "value");
    if (rc.status != JUNIT_PASS && !first_failed) first_failed = r;
    if (rc.status == JUNIT_PASS && json_is_number(value)) foms[passed++] = json_number_value(value);
    record_case_free(&rc);
    seconds += number_at(r, "elapsed_s", 0);
  }
  double median = passed ? stats_median(foms, passed) : NAN;
  free(foms);
  json_t *out = json_deep_copy(first_failed ? first_failed : json_array_get(runs, n - 1));
  if (!out) return NULL;
  json_object_set_new(out, "key", json_string(config));
  json_object_set_new(out, "repetitions", json_integer((json_int_t)n));
  json_object_set_new(out, "elapsed_s", json_real(seconds));
  json_t *fom = json_object_get(out, "fom");
  if (json_is_object(fom) && !isnan(median)) json_object_set_new(fom, "value", json_real(median));
  /* The statistics' verdict on the runs (stable, noisy, too-short, disturbed, oversubscribed). */
  verdict_summary verdict;
  if (verdict_of_records(runs, 0.0, &verdict) == MAPP_OK)
    json_object_set_new(out, "verdict", json_string(verdict_name(verdict.kind)));
  else
    mapp_error_clear();
  return out;
}

int junit_add_configurations(junit_suite *s, const json_t *records) {
  json_t *groups = json_object(); /* configuration key -> its runs, in first-seen order */
  if (!groups) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    char *key = job_key_of_record(r), *config = key ? job_configuration_key(key) : NULL;
    if (!config) status = mapp_fail(MAPP_ERR_INPUT, "record %zu has no key to name its JUnit case", i + 1);
    json_t *runs = config ? json_object_get(groups, config) : NULL;
    if (config && !runs) json_object_set_new(groups, config, runs = json_array());
    if (runs) json_array_append(runs, (json_t *)r);
    free(config);
    free(key);
    if (status != MAPP_OK) break;
  }
  const char *config;
  json_t *runs;
  json_object_foreach(groups, config, runs) {
    if (status != MAPP_OK) break;
    json_t *record = configuration_record(config, runs);
    status = record ? junit_add_record(s, record) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    json_decref(record);
  }
  json_decref(groups);
  return status;
}
