/* `mapp compare` and `mapp check --perf`: two results, configuration by
 * configuration, judged with perfstats.h's comparison. */
#ifndef HARNESS_PERFCOMPARE_H
#define HARNESS_PERFCOMPARE_H

#include <stdbool.h>

#include "perfstats.h"
#include "selection.h"

/* How perf_compare_results prints: its table, or with markdown a CI
 * summary (mdsummary.h: the totals, every configuration slower or faster
 * with its ratio's interval and both sides' verdicts, those not judged
 * and why, and a link line to report_url, else to NEW's report.html). */
typedef struct {
  bool markdown;
  const char *report_url;
} perf_compare_output;

/* mapp compare's work: OLD and NEW results (folders or .jsonl files; the
 * records select keeps, NULL for all) configuration by configuration, a
 * table on stdout (output NULL: the table; else as it says) with each
 * side's verdict (verdict.h); MAPP_ERR_VERIFY
 * when one is SLOWER. junit_path (NULL: none): the same as JUnit XML, a
 * case per configuration, a failure of type "slowdown" for SLOWER, skipped
 * where there is nothing to compare. A configuration whose OLD and NEW
 * records name different systems (results_system_of) is an A/B of the
 * systems: both named, its answer "A/B: ...", never SLOWER nor a failure. */
int perf_compare_results(const char *old_path, const char *new_path, double threshold, double alpha,
                         const selection *select, const char *junit_path, const perf_compare_output *output);

#endif
