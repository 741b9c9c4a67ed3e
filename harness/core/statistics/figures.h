/* Figures a sweep spec asks for (`plots: figures:`): any x (ranks,
 * threads, size, or a matrix parameter), any y (the figure of merit, weak
 * efficiency, speedup over a reference variant, or a record field such as
 * app_data.metg_us), log axes, series by variant/backend/setting. This
 * file turns records into the series of one figure; plot.c draws them. */
#ifndef HARNESS_FIGURES_H
#define HARNESS_FIGURES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "reference.h"
#include "strv.h"

typedef struct {
  char *name;   /* file stem part: APP-NAME.png */
  char *app;    /* only this app's records (NULL: one figure per app) */
  char *x;      /* "ranks", "threads", "size", a field path ("app_data.granularity_us") or a params name */
  char *y;      /* "fom", "efficiency", "speedup" or a field path ("app_data.metg_us") */
  char *title;  /* NULL: made from the axes */
  bool logx, logy;
  strv series;  /* record fields that make a series: variant, backend, setting, size, ... */
  strv where_fields, where_values; /* only records whose field (path) has this value (figure_selected) */
} figure_spec;

void figure_spec_free(figure_spec *f);

/* ---- record fields, shared with the spec's tables (tables.h) */

/* The value at a dotted field path ("app_data.metg_us", "ranks"), else the
 * matrix parameter of that name (params.NAME); NULL when neither is there. */
const json_t *figure_field(const json_t *record, const char *path);
/* A value as a label or table cell: a string as it is, an integer in full,
 * a real as %g, true/false; NULL for null, objects and lists. */
const char *figure_value_text(const json_t *v, char *buf, size_t len);
/* A path as a spec may write it: names of letters, digits, '_' and '-'
 * joined by single dots ("app_data.metg_us", "block-rows"). */
bool figure_path_valid(const char *path);
/* Whether a record counts for `app`: its app, exit code 0, and every
 * `where` field equal to one of the values given for it (a field given
 * several times, as `where: {label: [a, b]}` gives it, matches any). */
bool figure_selected(const json_t *record, const char *app, const strv *where_fields, const strv *where_values);

typedef struct {
  double x, y, low, high; /* median of the repetitions and their min, max */
  bool oversubscribed;    /* a repetition used more cores or GPUs than it was given */
} figure_point;

typedef struct {
  char *label;           /* "batched/omp" */
  figure_point *points;  /* in increasing x */
  size_t count;
} figure_series;

typedef struct {
  figure_series *series;
  size_t count;
  bool categorical;      /* x is text (size): points' x are 0, 1, ... */
  strv categories;       /* their names, in first-seen order */
  char *reference;       /* speedup: "variant/backend" measured against */
} figure_data;

/* The series of figure f for `app` from records (those of other apps, and
 * runs that did not exit 0, and records not matching `where`, are skipped;
 * so are records without x or y, unless no record has them: that is an
 * input error naming the field). refs: speedup references in order
 * of preference (the first whose variant/backend the app's records hold);
 * when none matches, the first variant/backend of the records. A record
 * missing x or y is an input error naming the field. */
int figure_collect(const json_t *records, const figure_spec *f, const char *app, const speedup_refs *refs,
                   figure_data *out);
void figure_data_free(figure_data *d);

#endif
