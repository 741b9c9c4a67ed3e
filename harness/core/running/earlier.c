#include "earlier.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>

#include "fsutil.h"
#include "history.h"
#include "historydb.h"
#include "job.h"
#include "mapp_error.h"
#include "results.h"

/* Adds each record that exited 0 with an elapsed time under its
 * configuration key. */
static int add_runs(const json_t *records, json_t *by_config) {
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    const char *key = json_string_value(json_object_get(r, "key"));
    const json_t *elapsed = json_object_get(r, "elapsed_s");
    if (!key || !json_is_number(elapsed) || json_integer_value(json_object_get(r, "exit_code")) != 0) continue;
    char *config = job_configuration_key(key);
    if (!config) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    json_t *list = json_object_get(by_config, config);
    if (!list) json_object_set_new(by_config, config, list = json_array());
    double cores = (double)json_integer_value(json_object_get(r, "ranks")) *
                   (double)json_integer_value(json_object_get(r, "threads"));
    json_array_append_new(list, json_pack("[f, f]", json_number_value(elapsed), cores));
    free(config);
  }
  return MAPP_OK;
}

static int add_file_runs(const char *path, json_t *by_config) {
  json_t *records = NULL;
  int status = results_load(path, &records);
  if (status == MAPP_OK) status = add_runs(records, by_config);
  json_decref(records);
  return status;
}

/* Every results*.jsonl of the folder (the current one and those moved aside). */
static int add_folder_runs(const char *results_dir, json_t *by_config) {
  char *pattern = path_join(results_dir, "results*.jsonl");
  if (!pattern) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  glob_t found = {0};
  int status = MAPP_OK;
  if (glob(pattern, 0, NULL, &found) == 0)
    for (size_t i = 0; status == MAPP_OK && i < found.gl_pathc; ++i) status = add_file_runs(found.gl_pathv[i], by_config);
  globfree(&found);
  free(pattern);
  return status;
}

/* The records of the setup's apps in the history beside the results root,
 * when there is one; one that cannot be read is a warning. */
static void add_history_runs(const sweep_setup *setup, const char *results_dir, json_t *by_config) {
  char *root = path_dirname(results_dir), *path = root ? history_path_beside(root) : NULL;
  history_db *db = NULL;
  int status = path && path_exists(path) ? historydb_open(path, false, &db) : MAPP_OK;
  for (size_t i = 0; db && status == MAPP_OK && i < setup->napps; ++i) {
    json_t *records = NULL;
    status = historydb_records_of(db, setup->apps[i].name, &records);
    if (status == MAPP_OK) status = add_runs(records, by_config);
    json_decref(records);
  }
  if (status != MAPP_OK) {
    fprintf(stderr, "mapp: warning: %s; earlier runs from the results folder only\n", mapp_error_message());
    mapp_error_clear();
  }
  historydb_close(db);
  free(path);
  free(root);
}

int earlier_runs_load(const char *results_dir, const sweep_setup *setup, json_t **by_config) {
  *by_config = json_object();
  if (!*by_config) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = add_folder_runs(results_dir, *by_config);
  if (status == MAPP_OK) add_history_runs(setup, results_dir, *by_config);
  return status;
}
