#include "coverage.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
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

/* Each configuration's checks over all its runs, {config: bits}; configs
 * lists them in order of appearance, each with its first record's index. */
static int tally_configurations(const json_t *records, json_t *checks, json_t *configs) {
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
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

static void write_unchecked(FILE *f, const coverage_table *table) {
  size_t i;
  const json_t *key;
  json_array_foreach(table->unchecked, i, key) fprintf(f, "%s`%s`", i ? ", " : "Unchecked: ", json_string_value(key));
  if (json_array_size(table->unchecked)) fprintf(f, ".\n\n");
}

void coverage_write_markdown(FILE *f, const coverage_table *table) {
  fprintf(f, "## Coverage\n\n| app | configurations | checked against a baseline | checked for consistency | "
             "unchecked |\n|---|--:|--:|--:|--:|\n");
  for (size_t i = 0; i < table->count; ++i) {
    const app_coverage *a = &table->apps[i];
    fprintf(f, "| %s | %zu | %zu | %zu | %s%zu%s |\n", a->app, a->configurations, a->baseline, a->consistency,
            a->unchecked ? "**" : "", a->unchecked, a->unchecked ? "**" : "");
  }
  fprintf(f, "\nA configuration is checked against a baseline when its answer was compared with "
             "`baselines/APP/CASE.h5`, and for consistency when an app whose answer does not depend on the rank "
             "count had its n-rank answer compared bit for bit with the same sweep's 1-rank answer.\n\n");
  write_unchecked(f, table);
}

void coverage_write_missing(FILE *f, const json_t *records) {
  json_t *listed = json_object();
  size_t i, shown = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    const json_t *base = json_object_get(r, "baseline");
    const char *file = json_string_value(json_object_get(base, "file"));
    const char *bless = json_string_value(json_object_get(base, "bless"));
    if (!listed || !bless || !file || json_object_get(listed, file)) continue;
    json_object_set_new(listed, file, json_true());
    if (shown++ == 0)
      fprintf(f, "## Baselines to bless\n\nThese runs must be checked (`check: required`) and their baseline is "
                 "missing; each command writes one (state the reason):\n\n");
    fprintf(f, "- `%s`:\n\n  ```sh\n  %s\n  ```\n\n", file, bless);
  }
  json_decref(listed);
}
