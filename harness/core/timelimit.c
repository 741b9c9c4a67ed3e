#include "timelimit.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "job.h"
#include "mapp_error.h"
#include "results.h"

double time_limit_default(double longest_earlier_s) {
  if (longest_earlier_s <= 0) return MEASURE_DEFAULT_TIME_LIMIT;
  double limit = MEASURE_TIME_LIMIT_FACTOR * longest_earlier_s;
  return limit > MEASURE_TIME_LIMIT_FLOOR ? limit : MEASURE_TIME_LIMIT_FLOOR;
}

/* The longest run of each configuration in one file, into longest (a JSON
 * object: configuration key -> seconds). A run stopped at its limit says
 * nothing of how long the run takes, and is left out. */
static int longest_runs_of(const char *path, json_t *longest) {
  json_t *records;
  MAPP_TRY(results_load(path, &records));
  size_t i;
  json_t *r;
  json_array_foreach(records, i, r) {
    const char *outcome = json_string_value(json_object_get(r, "outcome"));
    double elapsed = json_number_value(json_object_get(r, "elapsed_s"));
    char *key = job_key_of_record(r), *config = key ? job_configuration_key(key) : NULL;
    if (config && elapsed > 0 && !(outcome && strcmp(outcome, "timeout") == 0) &&
        elapsed > json_number_value(json_object_get(longest, config)))
      json_object_set_new(longest, config, json_real(elapsed));
    free(config);
    free(key);
  }
  json_decref(records);
  return MAPP_OK;
}

static bool is_results_file(const char *name) {
  size_t n = strlen(name);
  return strncmp(name, "results", 7) == 0 && n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

static int longest_runs(const char *dir, json_t *longest) {
  DIR *d = opendir(dir);
  if (!d) return MAPP_OK; /* a first sweep: no earlier runs */
  int status = MAPP_OK;
  for (struct dirent *e; status == MAPP_OK && (e = readdir(d));) {
    if (!is_results_file(e->d_name)) continue;
    char *path = path_join(dir, e->d_name);
    status = path ? longest_runs_of(path, longest) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(path);
  }
  closedir(d);
  return status;
}

int time_limits_apply(const char *dir, sweep_jobs *jobs) {
  json_t *longest = json_object();
  if (!longest) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = longest_runs(dir, longest);
  for (size_t i = 0; status == MAPP_OK && i < jobs->count; ++i) {
    job *j = &jobs->items[i].job;
    if (j->time_limit > 0) continue;
    char *key = job_key(j), *config = key ? job_configuration_key(key) : NULL;
    if (!config) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    else j->time_limit = time_limit_default(json_number_value(json_object_get(longest, config)));
    free(config);
    free(key);
  }
  json_decref(longest);
  return status;
}
