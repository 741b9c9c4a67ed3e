#include "coverage.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "strv.h"
#include "mapp_error.h"

enum { CHECKED_BASELINE = 1, CHECKED_CONSISTENCY = 2 };

static char *configuration_of(const json_t *record) {
  const char *key = json_string_value(json_object_get(record, "key"));
  return key ? job_configuration_key(key) : NULL;
}

static bool compared(const json_t *record, const char *field) {
  const char *status = json_string_value(json_object_get(json_object_get(record, field), "status"));
  return status && (strcmp(status, "pass") == 0 || strcmp(status, "fail") == 0);
}

static int checks_of(const json_t *record) {
  return (compared(record, "baseline") ? CHECKED_BASELINE : 0) |
         (compared(record, "consistency") ? CHECKED_CONSISTENCY : 0);
}

/* A comparison with a 1-rank answer checks that answer too: its
 * configuration (the verdict's reference_key) gets the consistency bit. */
static int credit_reference(const json_t *record, json_t *checks) {
  if (!compared(record, "consistency")) return MAPP_OK;
  const char *key = json_string_value(json_object_get(json_object_get(record, "consistency"), "reference_key"));
  char *config = key ? job_configuration_key(key) : NULL;
  if (!config) return MAPP_OK;
  int bits = (int)json_integer_value(json_object_get(checks, config)) | CHECKED_CONSISTENCY;
  int failed = json_object_set_new(checks, config, json_integer(bits));
  free(config);
  return failed ? mapp_fail(MAPP_ERR_SYSTEM, "out of memory tallying the checks of the records") : MAPP_OK;
}

/* Each configuration's checks over all its runs, {config: bits}; configs
 * lists them in order of appearance, each with its first record's index. */
static int tally_configurations(const json_t *records, json_t *checks, json_t *configs) {
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    MAPP_TRY(credit_reference(r, checks));
    char *config = configuration_of(r);
    if (!config) continue; /* a record the harness did not write: no key */
    const json_t *seen = json_object_get(checks, config);
    int bits = (int)json_integer_value(seen) | checks_of(r);
    bool failed = !seen && json_array_append_new(configs, json_pack("{s:s, s:I}", "key", config, "first", (json_int_t)i));
    failed = failed || json_object_set_new(checks, config, json_integer(bits));
    free(config);
    if (failed) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory tallying the checks of the records");
  }
  return MAPP_OK;
}

static app_coverage *app_row(coverage_table *t, const char *app) {
  for (size_t i = 0; i < t->count; ++i)
    if (strcmp(t->apps[i].app, app) == 0) return &t->apps[i];
  app_coverage *grown = realloc(t->apps, (t->count + 1) * sizeof *grown);
  if (!grown) return NULL;
  t->apps = grown;
  t->apps[t->count] = (app_coverage){.app = app};
  return &t->apps[t->count++];
}

static int count_configuration(coverage_table *table, const json_t *records, const json_t *checks, const json_t *c) {
  const json_t *first = json_array_get(records, (size_t)json_integer_value(json_object_get(c, "first")));
  const char *app = json_string_value(json_object_get(first, "app"));
  if (!app) return MAPP_OK;
  app_coverage *row = app_row(table, app);
  if (!row) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int bits = (int)json_integer_value(json_object_get(checks, json_string_value(json_object_get(c, "key"))));
  ++row->configurations;
  row->baseline += (bits & CHECKED_BASELINE) != 0;
  row->consistency += (bits & CHECKED_CONSISTENCY) != 0;
  row->unchecked += bits == 0;
  if (bits == 0 && json_array_append(table->unchecked, json_object_get(c, "key")))
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  return MAPP_OK;
}

int coverage_collect(const json_t *records, coverage_table *table) {
  *table = (coverage_table){.unchecked = json_array()};
  json_t *checks = json_object(), *configs = json_array();
  int status = checks && configs && table->unchecked ? tally_configurations(records, checks, configs)
                                                     : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t i;
  const json_t *c;
  json_array_foreach(configs, i, c) {
    if (status == MAPP_OK) status = count_configuration(table, records, checks, c);
  }
  json_decref(checks);
  json_decref(configs);
  if (status != MAPP_OK) coverage_table_free(table);
  return status;
}

void coverage_table_free(coverage_table *table) {
  free(table->apps);
  json_decref(table->unchecked);
  *table = (coverage_table){0};
}

/* "Unchecked: `KEY`, `KEY`." (nothing when every configuration was checked). */
static void write_unchecked(doc *d, const coverage_table *table) {
  strv keys = {0};
  size_t i;
  const json_t *key;
  int status = MAPP_OK;
  json_array_foreach(table->unchecked, i, key) {
    if (status == MAPP_OK) status = strv_pushf(&keys, "`%s`", json_string_value(key));
  }
  char *joined = status == MAPP_OK && keys.count ? strv_join(&keys, ", ") : NULL;
  if (joined) doc_para(d, "Unchecked: %s.", joined);
  else if (keys.count || status != MAPP_OK) doc_para(d, "Unchecked: %zu configurations (out of memory listing them).",
                                                     json_array_size(table->unchecked));
  free(joined);
  strv_free(&keys);
}

void coverage_write(doc *d, const coverage_table *table) {
  doc_heading(d, 2, "Coverage");
  doc_table(d, "lrrrr");
  doc_cell(d, "app");
  doc_cell(d, "configurations");
  doc_cell(d, "checked against a baseline");
  doc_cell(d, "checked for consistency");
  doc_cell(d, "unchecked");
  doc_row_end(d);
  for (size_t i = 0; i < table->count; ++i) {
    const app_coverage *a = &table->apps[i];
    doc_cell(d, "%s", a->app);
    doc_cell(d, "%zu", a->configurations);
    doc_cell(d, "%zu", a->baseline);
    doc_cell(d, "%zu", a->consistency);
    doc_cell(d, a->unchecked ? "**%zu**" : "%zu", a->unchecked);
    doc_row_end(d);
  }
  doc_table_end(d);
  doc_para(d, "A configuration is checked against a baseline when its answer was compared with "
              "`baselines/APP/CASE.h5`, and for consistency when an app whose answer does not depend on the rank "
              "count had its answer compared bit for bit with another rank count's: a strong-scaling n-rank answer "
              "with the same sweep's 1-rank answer (which checks both), a weak one with its global problem solved "
              "on 1 rank (weak_reference), or when a peer (a production system's program, peer_of) had its answer "
              "compared with its mini-app's of the same configuration at the tolerance it states (which checks "
              "both).");
  write_unchecked(d, table);
}

void coverage_write_missing(doc *d, const json_t *records) {
  json_t *listed = json_object();
  size_t i, shown = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    const json_t *base = json_object_get(r, "baseline");
    const char *file = json_string_value(json_object_get(base, "file"));
    const char *bless = json_string_value(json_object_get(base, "bless"));
    if (!listed || !bless || !file || json_object_get(listed, file)) continue;
    json_object_set_new(listed, file, json_true());
    if (shown++ == 0) {
      doc_heading(d, 2, "Baselines to bless");
      doc_para(d, "These runs must be checked (`check: required`) and their baseline is missing; each command "
                  "writes one (state the reason):");
    }
    doc_para(d, "`%s`:", file);
    doc_code(d, "sh", bless);
  }
  json_decref(listed);
}
