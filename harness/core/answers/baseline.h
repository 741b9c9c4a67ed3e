/* Baselines: baselines/<app>/<case>.h5, and the verdict of a run against
 * its baseline as the "baseline" object of its record. */
#ifndef HARNESS_BASELINE_H
#define HARNESS_BASELINE_H

#include <jansson.h>

#include "tolerance.h"

/* <baseline dir>/<app>/<case>.h5 (malloc'd; NULL when out of memory). */
char *baseline_path(const char *app, const char *case_name);

/* Checks a run's answer against the baseline of case_name (NULL: a custom
 * problem that names no case) in baselines/APP/, APP being baseline_app
 * (a peer's "baselines", job_baseline_app), else the record's app, at
 * the baseline's tolerance or the one the record states (a peer's
 * baseline_tolerance: {"model": "rel-max", "bound": 1e-11}).
 * *status becomes {"status": S, "file": F, ...} with S
 *   none     no case: nothing to check
 *   missing  the case has no baseline file yet
 *   pass / fail  compared (fail also when the answer is missing or of
 *                another shape, with "error" saying so)
 * and *report holds the per-field results when a comparison ran (the
 * caller frees it). Only system failures are returned as errors. */
int baseline_check_run(const json_t *record, const char *baseline_app, const char *case_name, const char *output,
                       compare_report *report, json_t **status);

/* The tolerance a record states for its answers (a peer's
 * baseline_tolerance) into *ovr, *stated false where it states none; a
 * malformed one is an input error. */
int baseline_stated_tolerance(const json_t *record, tolerance_override *ovr, bool *stated);

#endif
