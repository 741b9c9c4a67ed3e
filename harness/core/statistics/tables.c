#include "tables.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "mapp_error.h"
#include "stats.h"

void table_spec_free(table_spec *t) {
  free(t->name);
  free(t->app);
  free(t->title);
  strv_free(&t->columns);
  strv_free(&t->values);
  strv_free(&t->where_fields);
  strv_free(&t->where_values);
  *t = (table_spec){0};
}

bool table_is_value(const table_spec *t, size_t column) {
  return strv_contains(&t->values, t->columns.items[column]);
}

/* ------------------------------------------------------------ gathering */

/* A row's samples while gathering: per column, the numbers of its records. */
typedef struct {
  double **numbers;
  size_t *counts;
} row_samples;

typedef struct {
  const table_spec *t;
  table_data *d;
  row_samples *samples; /* parallel to d->rows */
  size_t capacity;
} gathering;

static void row_free(table_row *row) {
  strv_free(&row->keys);
  free(row->stats);
}

static void samples_free(row_samples *s, size_t ncolumns) {
  for (size_t c = 0; s->numbers && c < ncolumns; ++c) free(s->numbers[c]);
  free(s->numbers);
  free(s->counts);
}

/* The record's key texts: each key column's value, "-" where it has none. */
static int record_keys(const json_t *r, const table_spec *t, strv *keys) {
  for (size_t c = 0; c < t->columns.count; ++c) {
    char number[32];
    const char *text = figure_value_text(figure_field(r, t->columns.items[c]), number, sizeof number);
    MAPP_TRY(strv_push(keys, table_is_value(t, c) ? "" : text && *text ? text : "-"));
  }
  return MAPP_OK;
}

static table_row *find_row(const table_data *d, const strv *keys) {
  for (size_t i = 0; i < d->count; ++i) {
    bool same = true;
    for (size_t c = 0; c < keys->count && same; ++c) same = !strcmp(d->rows[i].keys.items[c], keys->items[c]);
    if (same) return &d->rows[i];
  }
  return NULL;
}

/* A new row with these keys (taken over), its samples empty. */
static int add_row(gathering *g, strv *keys, table_row **row) {
  size_t ncolumns = g->t->columns.count;
  if (g->d->count == g->capacity) {
    size_t cap = g->capacity ? 2 * g->capacity : 16;
    table_row *rows = realloc(g->d->rows, cap * sizeof *rows);
    if (rows) g->d->rows = rows;
    row_samples *samples = rows ? realloc(g->samples, cap * sizeof *samples) : NULL;
    if (!samples) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting table '%s'", g->t->name);
    g->samples = samples;
    g->capacity = cap;
  }
  row_samples *s = &g->samples[g->d->count];
  *s = (row_samples){calloc(ncolumns, sizeof *s->numbers), calloc(ncolumns, sizeof *s->counts)};
  table_row *fresh = &g->d->rows[g->d->count];
  *fresh = (table_row){.keys = *keys, .stats = calloc(ncolumns, sizeof *fresh->stats)};
  *keys = (strv){0};
  ++g->d->count;
  if (!s->numbers || !s->counts || !fresh->stats)
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting table '%s'", g->t->name);
  *row = fresh;
  return MAPP_OK;
}

static int add_number(row_samples *s, size_t column, double x) {
  double *grown = realloc(s->numbers[column], (s->counts[column] + 1) * sizeof *grown);
  if (!grown) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory collecting a table");
  s->numbers[column] = grown;
  grown[s->counts[column]++] = x;
  return MAPP_OK;
}

/* One selected record into its row: the row found or made by its keys,
 * the numbers of its value columns added to the row's samples. */
static int add_record(gathering *g, const json_t *r, bool *seen) {
  const table_spec *t = g->t;
  strv keys = {0};
  table_row *row = NULL;
  int status = record_keys(r, t, &keys);
  if (status == MAPP_OK && !(row = find_row(g->d, &keys))) status = add_row(g, &keys, &row);
  strv_free(&keys);
  MAPP_TRY(status);
  ++row->runs;
  row_samples *s = &g->samples[row - g->d->rows];
  for (size_t c = 0; c < t->columns.count; ++c) {
    const json_t *v = figure_field(r, t->columns.items[c]);
    if (v && !json_is_null(v)) seen[c] = true;
    if (table_is_value(t, c) && json_is_number(v)) MAPP_TRY(add_number(s, c, json_number_value(v)));
  }
  return MAPP_OK;
}

/* Median, min and max of each value column of each row. */
static void summarise(gathering *g) {
  for (size_t i = 0; i < g->d->count; ++i)
    for (size_t c = 0; c < g->t->columns.count; ++c) {
      size_t n = g->samples[i].counts[c];
      double *x = g->samples[i].numbers[c];
      if (n == 0) continue;
      double median = stats_median(x, n); /* sorts them */
      g->d->rows[i].stats[c] = (table_stat){median, x[0], x[n - 1], n};
    }
}

int table_collect(const json_t *records, const table_spec *t, const char *app, table_data *out) {
  *out = (table_data){0};
  gathering g = {.t = t, .d = out};
  bool *seen = calloc(t->columns.count + 1, sizeof *seen);
  int status = seen ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    if (status != MAPP_OK) break;
    if (figure_selected(r, app, &t->where_fields, &t->where_values)) status = add_record(&g, r, seen);
  }
  if (status == MAPP_OK) summarise(&g);
  for (size_t c = 0; status == MAPP_OK && out->count && c < t->columns.count; ++c)
    if (!seen[c]) status = strv_push(&out->absent, t->columns.items[c]);
  for (size_t k = 0; k < out->count; ++k) samples_free(&g.samples[k], t->columns.count);
  free(g.samples);
  free(seen);
  if (status != MAPP_OK) table_data_free(out);
  return status;
}

void table_data_free(table_data *d) {
  for (size_t i = 0; i < d->count; ++i) row_free(&d->rows[i]);
  free(d->rows);
  strv_free(&d->absent);
  *d = (table_data){0};
}

/* ------------------------------------------------------------ cells */

/* Three significant digits, whole numbers from 1000 up to 10 million
 * (1234, not 1.23e+03). */
static void format_number(double x, char *buf, size_t len) {
  if (isfinite(x) && fabs(x) >= 999.5 && fabs(x) < 1e7) snprintf(buf, len, "%.0f", x);
  else snprintf(buf, len, "%.3g", x);
}

void table_cell_text(const table_spec *t, const table_row *row, size_t column, char *buf, size_t len) {
  if (!table_is_value(t, column)) {
    snprintf(buf, len, "%s", row->keys.items[column]);
    return;
  }
  const table_stat *s = &row->stats[column];
  if (s->count == 0) {
    snprintf(buf, len, "-");
    return;
  }
  char median[32], low[32], high[32];
  format_number(s->median, median, sizeof median);
  if (s->count == 1) {
    snprintf(buf, len, "%s", median);
    return;
  }
  format_number(s->low, low, sizeof low);
  format_number(s->high, high, sizeof high);
  snprintf(buf, len, "%s (%s\u2013%s)", median, low, high);
}
