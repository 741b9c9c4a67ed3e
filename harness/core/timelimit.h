/* The time limit of each launch of a sweep (measure.h's time_limit): the
 * entry's own, else 10x the longest earlier run of the same configuration
 * (at least 60 s) where the sweep's folder holds one, else an hour. */
#ifndef HARNESS_TIMELIMIT_H
#define HARNESS_TIMELIMIT_H

#include "spec.h"

/* Sets job.time_limit of every job whose entry gives none, from the
 * records of the results*.jsonl files in dir (this sweep's earlier runs and
 * the earlier sweeps a fresh one moved aside); a missing dir means none. */
int time_limits_apply(const char *dir, sweep_jobs *jobs);
/* The limit a job without a given one gets from its longest earlier run
 * (0: none). */
double time_limit_default(double longest_earlier_s);

#endif
