/* The history's series (historydb.h): its records read back per
 * configuration and revision, and the times that order them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "historydb_internal.h"
#include "mapp_error.h"
#include "stats.h"

/* ---------------------------------------------------------------- time */

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil): timegm is not POSIX. */
static long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400;
  long yoe = y - era * 400;
  long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool history_parse_time(const char *text, double *seconds) {
  int y, mo, d, h, mi, used = 0;
  double s;
  if (!text || sscanf(text, "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &s, &used) != 6) return false;
  const char *zone = text + used;
  double offset = 0.0;
  if (zone[0] == '+' || zone[0] == '-') {
    int oh, om;
    if (sscanf(zone + 1, "%2d:%2d", &oh, &om) != 2) return false;
    offset = (zone[0] == '+' ? 1.0 : -1.0) * (3600.0 * oh + 60.0 * om);
  } else if (zone[0] != 'Z' && zone[0] != '\0') {
    return false;
  }
  *seconds = 86400.0 * (double)days_from_civil(y, mo, d) + 3600.0 * h + 60.0 * mi + s - offset;
  return true;
}

/* ---------------------------------------------------------------- series */

static const char series_sql[] =
    "SELECT r.config, r.app, r.fom_name, r.revision, v.commit_date, r.time, r.fom_value,"
    " r.variant, r.backend, r.size, r.scaling, coalesce(r.setting, ''), r.ranks, r.threads, r.system"
    " FROM records r LEFT JOIN revisions v ON v.revision = r.revision"
    " WHERE coalesce(r.exit_code, 0) = 0 AND r.fom_value IS NOT NULL"
    " ORDER BY r.config, r.revision";

/* The repetitions of the revision being read. */
typedef struct {
  double *values;
  size_t count, capacity;
} sample;

static int sample_push(sample *s, double v) {
  if (s->count == s->capacity) {
    size_t grown = s->capacity ? 2 * s->capacity : 16;
    double *values = realloc(s->values, grown * sizeof *values);
    if (!values) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading the history");
    s->values = values;
    s->capacity = grown;
  }
  s->values[s->count++] = v;
  return MAPP_OK;
}

static char *column_text(sqlite3_stmt *stmt, int column) {
  const unsigned char *text = sqlite3_column_text(stmt, column);
  return text ? strdup((const char *)text) : NULL;
}

static void point_free(history_point *p) {
  free(p->revision);
  free(p->commit_date);
  free(p->time);
}

static void series_free(history_series *s) {
  for (size_t i = 0; i < s->count; ++i) point_free(&s->points[i]);
  free(s->points);
  char *texts[] = {s->config, s->app, s->variant, s->backend, s->size, s->scaling, s->setting, s->system, s->fom_name};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i) free(texts[i]);
}

void history_series_set_free(history_series_set *set) {
  for (size_t i = 0; i < set->count; ++i) series_free(&set->items[i]);
  free(set->items);
  *set = (history_series_set){0};
}

static int grow(void **items, size_t count, size_t size) {
  /* capacity doubles at powers of two */
  if (count & (count - 1) && count) return MAPP_OK;
  void *grown = realloc(*items, (count ? 2 * count : 1) * size);
  if (!grown) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading the history");
  *items = grown;
  return MAPP_OK;
}

static int new_series(history_series_set *set, sqlite3_stmt *stmt) {
  MAPP_TRY(grow((void **)&set->items, set->count, sizeof *set->items));
  history_series *s = &set->items[set->count++];
  *s = (history_series){.config = column_text(stmt, 0), .app = column_text(stmt, 1), .fom_name = column_text(stmt, 2),
                        .variant = column_text(stmt, 7), .backend = column_text(stmt, 8), .size = column_text(stmt, 9),
                        .scaling = column_text(stmt, 10), .setting = column_text(stmt, 11),
                        .ranks = (long)sqlite3_column_int64(stmt, 12), .threads = (long)sqlite3_column_int64(stmt, 13),
                        .system = column_text(stmt, 14)};
  /* A record without app, variant, ... has NULL there; the key said "?". */
  char **texts[] = {&s->app, &s->variant, &s->backend, &s->size, &s->scaling, &s->setting, &s->system};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i)
    if (!*texts[i]) *texts[i] = strdup("?");
  return s->config && s->setting && s->system ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading the history");
}

static int new_point(history_series *s, sqlite3_stmt *stmt) {
  MAPP_TRY(grow((void **)&s->points, s->count, sizeof *s->points));
  history_point *p = &s->points[s->count++];
  *p = (history_point){.revision = column_text(stmt, 3), .commit_date = column_text(stmt, 4)};
  if (!s->fom_name) s->fom_name = column_text(stmt, 2);
  return p->revision ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading the history");
}

/* The earliest run's time of the point (ISO strings of one format sort by time). */
static void note_time(history_point *p, sqlite3_stmt *stmt) {
  const char *t = (const char *)sqlite3_column_text(stmt, 5);
  if (!t || (p->time && strcmp(p->time, t) <= 0)) return;
  free(p->time);
  p->time = strdup(t);
}

static void finish_point(history_point *p, sample *s) {
  p->runs = s->count;
  p->min = p->max = s->values[0];
  for (size_t i = 1; i < s->count; ++i) p->min = fmin(p->min, s->values[i]), p->max = fmax(p->max, s->values[i]);
  p->median = stats_median(s->values, s->count);
  double when = 0.0;
  if (!history_parse_time(p->commit_date, &when)) history_parse_time(p->time, &when);
  p->order = when;
  s->count = 0;
}

static int by_order(const void *pa, const void *pb) {
  const history_point *a = pa, *b = pb;
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  int c = strcmp(a->time ? a->time : "", b->time ? b->time : "");
  return c ? c : strcmp(a->revision, b->revision);
}

static int read_series(history_db *db, sqlite3_stmt *stmt, history_series_set *set) {
  sample s = {0};
  int status = MAPP_OK, rc;
  history_series *cur = NULL;
  while (status == MAPP_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const char *config = (const char *)sqlite3_column_text(stmt, 0), *revision = (const char *)sqlite3_column_text(stmt, 3);
    bool same_config = cur && strcmp(cur->config, config) == 0;
    bool same_revision = same_config && strcmp(cur->points[cur->count - 1].revision, revision) == 0;
    if (cur && !same_revision) finish_point(&cur->points[cur->count - 1], &s);
    if (!same_config) status = new_series(set, stmt);
    if (status != MAPP_OK) break;
    cur = &set->items[set->count - 1];
    if (!same_revision) status = new_point(cur, stmt);
    if (status == MAPP_OK) status = sample_push(&s, sqlite3_column_double(stmt, 6));
    if (status == MAPP_OK) note_time(&cur->points[cur->count - 1], stmt);
  }
  if (status == MAPP_OK && rc != SQLITE_DONE) status = historydb_sql_fail(db, rc, "read the series");
  if (status == MAPP_OK && cur) finish_point(&cur->points[cur->count - 1], &s);
  free(s.values);
  for (size_t i = 0; status == MAPP_OK && i < set->count; ++i)
    qsort(set->items[i].points, set->items[i].count, sizeof(history_point), by_order);
  return status;
}

static int read_totals(history_db *db, history_series_set *set) {
  long long records, revisions, systems;
  MAPP_TRY(historydb_sql_integer(db, "SELECT count(*) FROM records", &records));
  MAPP_TRY(historydb_sql_integer(db, "SELECT count(DISTINCT revision) FROM records", &revisions));
  MAPP_TRY(historydb_sql_integer(db, "SELECT count(DISTINCT system) FROM records", &systems));
  set->records = (size_t)records;
  set->revisions = (size_t)revisions;
  set->systems = (size_t)systems;
  return MAPP_OK;
}

int historydb_series(history_db *db, history_series_set *set) {
  *set = (history_series_set){0};
  if (db->empty) return MAPP_OK;
  /* One read transaction: the series and totals of one state of the file,
   * whatever an add is doing meanwhile. */
  MAPP_TRY(historydb_sql_exec(db, "BEGIN", "read the history"));
  sqlite3_stmt *stmt;
  int status = historydb_sql_prepare(db, series_sql, &stmt, "read the series");
  if (status == MAPP_OK) {
    status = read_series(db, stmt, set);
    sqlite3_finalize(stmt);
  }
  if (status == MAPP_OK) status = read_totals(db, set);
  sqlite3_exec(db->sql, status == MAPP_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
  if (status != MAPP_OK) history_series_set_free(set);
  return status;
}
