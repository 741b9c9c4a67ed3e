#include "timelimit.h"

#include <stdlib.h>

#include "earlier.h"
#include "job.h"
#include "mapp_error.h"

double time_limit_default(double longest_earlier_s) {
  if (longest_earlier_s <= 0) return MEASURE_DEFAULT_TIME_LIMIT;
  double limit = MEASURE_TIME_LIMIT_FACTOR * longest_earlier_s;
  return limit > MEASURE_TIME_LIMIT_FLOOR ? limit : MEASURE_TIME_LIMIT_FLOOR;
}

/* The longest of a configuration's earlier runs ([[elapsed_s, cores], ...]); 0 for none.
 * Runs stopped at a limit exited non-zero and are not among them. */
static double longest(const json_t *runs) {
  double most = 0.0;
  size_t i;
  const json_t *run;
  json_array_foreach(runs, i, run) {
    double elapsed = json_number_value(json_array_get(run, 0));
    if (elapsed > most) most = elapsed;
  }
  return most;
}

int time_limits_apply(const char *results_dir, sweep_setup *setup) {
  json_t *earlier = NULL;
  int status = earlier_runs_load(results_dir, setup, &earlier);
  for (size_t i = 0; status == MAPP_OK && i < setup->jobs.count; ++i) {
    job *j = &setup->jobs.items[i].job;
    if (j->time_limit > 0) continue;
    char *key = job_key(j), *config = key ? job_configuration_key(key) : NULL;
    if (!config) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    else j->time_limit = time_limit_default(longest(json_object_get(earlier, config)));
    free(config);
    free(key);
  }
  json_decref(earlier);
  return status;
}
