/* `mapp sweep --dry-run` and `mapp submit --dry-run`: the jobs a spec
 * would run, before anything runs or is written. A row per job: its key,
 * app, variant, backend, ranks, threads, GPUs per rank, size, matrix
 * parameters and repetition; the nodes its environment needs; the baseline
 * its answer is checked against and whether that file exists (a missing
 * one under check: required is a failure the real run would report); and
 * the estimated core-seconds (the median elapsed time x ranks x threads)
 * of earlier records of the same configuration: in the history beside the
 * results root (history.h) and in the results folder (results.jsonl and
 * the results-*.jsonl moved aside), "-" where none exist. Totals follow. */
#ifndef HARNESS_DRYRUN_H
#define HARNESS_DRYRUN_H

#include <stdio.h>

#include "sweep_setup.h"

/* results_dir: OUT/<name> (it need not exist). */
int dry_run_print(const sweep_setup *setup, const char *results_dir, FILE *out);

#endif
