/* `repetitions: auto` (measure.h): after each round of a sweep, the runs
 * the next round adds. A configuration of an auto entry gets one more run
 * while the 95 % interval of its median figure of merit is wider than its
 * precision (verdict_precise), its runs number fewer than max_repetitions
 * and their elapsed seconds sum to less than max_seconds. A configuration
 * with a failed run gets no more: repeating cannot make its figure precise,
 * and the failure is reported already. What stops short of its precision is
 * judged `noisy` by the report, compare and history. */
#ifndef HARNESS_ROUNDS_H
#define HARNESS_ROUNDS_H

#include <stddef.h>

#include "spec.h"

typedef struct {
  size_t precise;       /* auto configurations whose median is precise */
  size_t out_of_budget; /* that stopped at max_repetitions or max_seconds */
  size_t failed;        /* that stopped at a failed run */
} rounds_tally;

/* The next round's jobs of `jobs` (the sweep's first round: their
 * repetition-0 jobs stand for their configurations), judged on the records
 * of results_file; next->count 0 when every auto configuration is done.
 * next's items share jobs' strings: free it with sweep_jobs_free before
 * jobs. */
int rounds_next(const sweep_jobs *jobs, const char *results_file, sweep_jobs *next, rounds_tally *tally);

#endif
