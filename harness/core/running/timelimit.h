/* The time limit of each launch of a sweep (measure.h's time_limit): the
 * entry's own, else 10x the longest earlier run of the same configuration
 * (at least 60 s) where the sweep's folder or the history holds one
 * (earlier.h), else an hour. */
#ifndef HARNESS_TIMELIMIT_H
#define HARNESS_TIMELIMIT_H

#include "sweep_setup.h"

/* Sets job.time_limit of every job of the setup whose entry gives none,
 * from the earlier runs of results_dir and the history beside it. */
int time_limits_apply(const char *results_dir, sweep_setup *setup);
/* The limit a job without a given one gets from its longest earlier run
 * (0: none). */
double time_limit_default(double longest_earlier_s);

#endif
