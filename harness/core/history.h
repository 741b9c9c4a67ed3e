/* The performance history as the other verbs use it: `mapp sweep
 * --history` adds the sweep it finished, `mapp report` shows the trend of
 * each configuration of its folder. The verb itself is verb_history. */
#ifndef HARNESS_HISTORY_H
#define HARNESS_HISTORY_H

#include <jansson.h>
#include <stdio.h>

/* The history beside a results root (OUT/history.sqlite; MAPP_HISTORY
 * overrides it), malloc'd: `mapp sweep --out OUT --history` writes there,
 * and `mapp report OUT/NAME` reads there. */
char *history_path_beside(const char *results_root);

/* Adds the records of results files (folders or .jsonl files) to the
 * history at db_path in one transaction, dating their revisions with the
 * source tree's git; prints one line saying how many were new. */
int history_add_results(const char *db_path, char *const *results, size_t count);

/* The report's "Performance history" section: for each configuration of
 * `records` with at least 3 revisions in the history beside the results
 * folder `dir`, its trend figure (drawn into dir/plots/) and change points.
 * Nothing when there is no history; a history that cannot be read is a
 * warning on stderr, not a failed report. */
int history_report_section(FILE *md, const char *dir, const json_t *records);

#endif
