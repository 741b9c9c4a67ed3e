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
#include "doc.h"
#include "gnuplot.h"
#include "historydb.h"
#include "verdict.h"

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

/* What `mapp history check` answers for one series at a threshold (0.05:
 * 5 %), in this order:
 *   SLOWER        a change point the data support as a slowdown of at least
 *                 the threshold: slower, and the 95 % interval of its change
 *                 reaches -threshold (changepoint_judge);
 *   inconclusive  a slower change point too close to an end for a 95 %
 *                 interval; or none found where the series' noise hides a
 *                 step of the threshold: the smallest step it could show
 *                 (detectable, below) is larger; or fewer than 4 revisions;
 *   ok            none of these.
 * detectable: the minimal detectable step between the two halves of the
 * series (the best place for one) at the detector's level (0.01) with 80 %
 * power, from the per-revision noise 1.4826 MAD / sqrt(2) of the successive
 * log-ratios of the medians (robust to the steps themselves; perfstats.h's
 * perf_detectable); steps nearer an end need more. */
typedef enum { HISTORY_OK, HISTORY_SLOWER, HISTORY_INCONCLUSIVE } history_answer;

typedef struct {
  history_answer answer;
  history_changes changes;  /* every change point (free changes.points) */
  size_t slower;            /* change points judged STEP_SLOWER */
  const change_point *undecided; /* the first slower step too short to bound (inconclusive), else NULL */
  double detectable;        /* the smallest step the series could show; INFINITY when too short for any */
  double noise;             /* the per-revision noise it comes from (relative) */
} history_judgement;

int history_judge(const history_series *s, double threshold, history_judgement *out);
/* "ok", "SLOWER", "inconclusive". */
const char *history_answer_name(history_answer answer);

/* The verdict (verdict.h) of each series' latest revision, from its
 * records in the history at db_path, at the default precision:
 * verdicts[i] for set->items[i]. */
int history_latest_verdicts(const char *db_path, const history_series_set *set, verdict_summary *verdicts);

/* "slower" or "faster". */
const char *history_direction(const change_point *c);
/* A change point's 95 % interval in percent, "[-12.0, -8.1]", or
 * "[unbounded]"; returns text. */
char *history_interval_text(const change_point *c, char *text, size_t len);
/* "c66d3fe530dd slower -10.2 % [-12.0, -8.1], ..." or "-" (malloc'd). */
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

/* The configuration keys (historydb_config_key) of records, as the keys
 * of a JSON object (new reference; NULL when out of memory). */
json_t *history_config_keys(const json_t *records);

/* The report's "Performance history" section: for each configuration of
 * `records` with at least 3 revisions in the history beside the results
 * folder `dir`, its trend figure (drawn into dir/plots/) and change points.
 * Nothing when there is no history; a history that cannot be read is a
 * warning on stderr, not a failed report. */
int history_report_section(doc *d, const char *dir, const json_t *records);

#endif
