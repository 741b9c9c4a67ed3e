/* The performance history in a CI summary (mdsummary.h): `mapp history
 * check --format markdown`, and the part of `mapp report --format
 * markdown` that says what got slower or faster across commits. Both
 * write what history_judge (history.h) answered: each change point with
 * its 95 % interval and its series' latest verdict, each inconclusive
 * series with why. */
#ifndef HARNESS_HISTORY_SUMMARY_H
#define HARNESS_HISTORY_SUMMARY_H

#include <jansson.h>
#include <stddef.h>

#include "history.h"
#include "mdsummary.h"
#include "verdict.h"

/* The smallest slowdown that counts unless a verb is told otherwise (5 %). */
#define HISTORY_DEFAULT_THRESHOLD 0.05

/* One series as history_judge judged it. */
typedef struct {
  const history_series *series;
  history_judgement judgement;   /* its change points are freed by history_judged_free */
  const verdict_summary *latest; /* the verdict of its latest revision's repetitions */
} history_judged;

void history_judged_free(history_judged *items, size_t n);

/* Why an inconclusive series is so, on one line, into text ("3 revisions,
 * too few to judge (needs 4)", "the noise (4.0 % a revision) hides a 5 %
 * step: ..."); what `history check` prints after "inconclusive CONFIG: ". */
void history_inconclusive_text(const history_series *s, const history_judgement *j, double threshold, char *text,
                               size_t len);

/* `mapp history check --format markdown`: the totals, every change point of
 * items[n] (SLOWER first) with its interval and latest verdict, each
 * inconclusive series and why, and a link line to report_url (NULL: how
 * to publish the history's site), into *text (malloc'd). */
int history_summary_check(const char *db_path, const history_judged *items, size_t n, double threshold,
                          const char *report_url, char **text);

/* The report's "Across commits" section: the series of the records'
 * configurations in the history beside the results folder dir
 * (history_path_beside), judged at threshold, their change points. A
 * missing history is a line saying so; one that cannot be read a warning
 * on stderr and a line, not a failed report. */
int history_summary_report(md_summary *m, const char *dir, const json_t *records, double threshold);

#endif
