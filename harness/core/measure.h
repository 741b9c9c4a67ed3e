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
} measure_spec;

#define MEASURE_DEFAULT_MAX_REPETITIONS 30
#define MEASURE_DEFAULT_MAX_SECONDS 600.0

/* The defaults: one repetition, no min_time, precision 5 %. */
measure_spec measure_defaults(void);
/* Reads the keys above from m over `inherited` (the spec's for an entry). */
int measure_parse(const yaml_map *m, const measure_spec *inherited, measure_spec *out);

/* The measurement keys, for the spec's lists of allowed keys. */
#define MEASURE_KEYS "min_time", "repetitions", "precision", "max_repetitions", "max_seconds"

#endif
