/* How a sweep measures each configuration: how long its timed phase runs
 * and how often it is repeated. A spec says it at the top, an entry may say
 * its own (the rest inherited):
 *
 *   min_time: 0.05          # seconds: the app repeats its timed phase until the timed runs last
 *                           # this long together (--min-time; Google Benchmark's min_time)
 *   repetitions: auto       # or N; auto: repeat until the median is precise, within a budget
 *   precision: 2%           # auto: the 95 % interval of the median within +-2 % (a bare number is %)
 *   max_repetitions: 30     # auto: at most this many runs of one configuration
 *   max_seconds: 600        # auto: and at most this many seconds of its runs (elapsed, summed)
 *   time_limit: 300         # seconds one launch may take: then its whole process tree is stopped
 *                           # (SIGTERM, SIGKILL 5 s later) and the run is a timeout. Default: 10x
 *                           # the longest earlier run of the configuration, at least 60 s, where
 *                           # an earlier record exists (the results folder, the history: earlier.h); else 3600
 *   retries: 1              # launch again a run that failed outside the app's verdict (an exit
 *                           # other than 0, 1 and 2, a signal, a launcher that failed before the
 *                           # app wrote its record, a timeout); never a wrong answer. Default 0
 *
 * `repetitions: auto` starts every such configuration with
 * VERDICT_MEDIAN_CI_MIN_N runs (the fewest that give a 95 % interval of a
 * median), then adds one run per round to each configuration still short
 * of its precision and within its budget, round after round, so repeats of
 * one configuration are interleaved with the others' and a slow spell of
 * the machine falls on many configurations, not on one. */
#ifndef HARNESS_MEASURE_H
#define HARNESS_MEASURE_H

#include <stdbool.h>

#include "yamlutil.h"

typedef struct {
  double min_time;       /* seconds; 0: one run of the timed phase */
  long repetitions;      /* fixed count, or the first round's under auto */
  bool auto_repetitions; /* repeat until precise (or out of budget) */
  double precision;      /* a fraction: 0.02 is +-2 % */
  long max_repetitions;
  double max_seconds;
  double time_limit;     /* seconds a launch may take; 0: not given (the default rule applies) */
  long retries;          /* launches again after a failure outside the app's verdict */
} measure_spec;

#define MEASURE_DEFAULT_MAX_REPETITIONS 30
#define MEASURE_DEFAULT_MAX_SECONDS 600.0

/* The defaults: one repetition, no min_time, precision 5 %. */
measure_spec measure_defaults(void);
/* Reads the keys above from m over `inherited` (the spec's for an entry). */
int measure_parse(const yaml_map *m, const measure_spec *inherited, measure_spec *out);

/* The measurement keys, for the spec's lists of allowed keys. */
#define MEASURE_KEYS "min_time", "repetitions", "precision", "max_repetitions", "max_seconds", "time_limit", "retries"
/* The time limit without a given one and without an earlier run. */
#define MEASURE_DEFAULT_TIME_LIMIT 3600.0
/* With an earlier run: this many times its elapsed time, at least the floor. */
#define MEASURE_TIME_LIMIT_FACTOR 10.0
#define MEASURE_TIME_LIMIT_FLOOR 60.0

#endif
