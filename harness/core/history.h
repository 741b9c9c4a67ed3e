/* The performance history as the verbs use it: `mapp history` reads and
 * writes it, `mapp sweep --history` adds the sweep it finished, `mapp
 * report` shows the trend of each configuration of its folder.
 *
 * Change points are found by E-Divisive means (Matteson & James, JASA
 * 2014, as MongoDB's and Apache Otava/Hunter's CI analysis use it) on each
 * revision's median (changepoint.h): it assumes no noise distribution,
 * finds several steps in one series, and its permutation test with a fixed
 * seed gives the same answer for the same history. */
#ifndef HARNESS_HISTORY_H
#define HARNESS_HISTORY_H

#include <jansson.h>
#include <stdio.h>

#include "changepoint.h"
#include "gnuplot.h"
#include "historydb.h"

#define HISTORY_DEFAULT_PATH "results/history.sqlite"

/* The history beside a results root (OUT/history.sqlite; MAPP_HISTORY
 * overrides it), malloc'd: `mapp sweep --out OUT --history` writes there,
 * and `mapp report OUT/NAME` reads there. */
char *history_path_beside(const char *results_root);

/* Adds the records of results files (folders or .jsonl files) to the
 * history at db_path in one transaction, dating their revisions with the
 * source tree's git; prints one line saying how many were new. */
int history_add_results(const char *db_path, char *const *results, size_t count);

/* Every configuration's series of the history `given` (--db; NULL: the
 * default), *path the file it read (malloc'd). */
int history_load_series(const char *given, history_series_set *set, char **path);

/* The change points of a series (indices into its points; free points). */
typedef struct {
  change_point *points;
  size_t count;
} history_changes;

int history_find_changes(const history_series *s, history_changes *out);
/* "slower" or "faster". */
const char *history_direction(const change_point *c);
/* "c66d3fe530dd slower -10.2 %, ..." or "-" (malloc'd). */
char *history_changes_text(const history_series *s, const history_changes *c);

/* Trend figures: FOM against commit (x labels short hashes), the
 * repetitions' spread as error bars, change points dashed and labelled. */
typedef struct {
  gnuplot_target target; /* where the figures go, their formats, the images drawn */
  const char *db_name;   /* in the title */
  strv stems;            /* stems used, so two keys that reduce to one stem do not overwrite */
} history_trends;

/* One series and its changes, as gnuplot_render hands them to the script. */
typedef struct {
  const history_series *series;
  const history_changes *changes;
} history_trend;

/* Draws history-KEY.{dat,gp,FORMATS} into ctx->target.dir; stem gets the
 * figure's file stem. */
int history_draw_trend(history_trends *ctx, const history_series *s, const history_changes *c, char *stem, size_t len);

/* The report's "Performance history" section: for each configuration of
 * `records` with at least 3 revisions in the history beside the results
 * folder `dir`, its trend figure (drawn into dir/plots/) and change points.
 * Nothing when there is no history; a history that cannot be read is a
 * warning on stderr, not a failed report. */
int history_report_section(FILE *md, const char *dir, const json_t *records);

#endif
