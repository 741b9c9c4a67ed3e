/* How long earlier runs of each configuration took, for what a sweep
 * decides before it runs: the dry run's core-second estimates and the
 * launches' default time limits (timelimit.h). */
#ifndef HARNESS_EARLIER_H
#define HARNESS_EARLIER_H

#include <jansson.h>

#include "sweep_setup.h"

/* The runs that exited 0 with an elapsed time, by configuration key:
 * {config: [[elapsed_s, cores], ...]} (cores: the record's ranks x
 * threads), from every results*.jsonl of results_dir (the sweep's own and
 * the earlier ones a fresh sweep moved aside) and from the history beside
 * the results root for the setup's apps. A history that cannot be read is
 * a warning, not a failure (these are guides). *by_config is new. */
int earlier_runs_load(const char *results_dir, const sweep_setup *setup, json_t **by_config);

#endif
