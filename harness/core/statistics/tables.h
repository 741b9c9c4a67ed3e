/* Tables a sweep spec asks for (`plots: tables:`): chosen record fields as
 * columns, one row per distinct combination of the key columns, and the
 * value columns summarised over the records of the row (the repetitions)
 * by their median with min and max. Records are chosen and fields read as
 * figures do (figures.h: figure_selected, figure_field); report.c writes
 * the result into report.md and plots/APP-NAME.csv. */
#ifndef HARNESS_TABLES_H
#define HARNESS_TABLES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

typedef struct {
  char *name;    /* file stem part: plots/APP-NAME.csv */
  char *app;     /* only this app's section (NULL: every app's) */
  char *title;   /* the table's heading (NULL: its name) */
  strv columns;  /* field paths or matrix parameters, in order */
  strv values;   /* the columns summarised as numbers; the others are the row's key */
  strv where_fields, where_values; /* as figure_spec's */
} table_spec;

void table_spec_free(table_spec *t);
/* Whether column c of t is a value column. */
bool table_is_value(const table_spec *t, size_t column);

typedef struct {
  double median, low, high;
  size_t count; /* records of the row with a number in this column */
} table_stat;

typedef struct {
  strv keys;         /* per column: the key's text ("-" where the records lack it); "" in value columns */
  table_stat *stats; /* per column; only value columns' are used */
  size_t runs;       /* records in this row */
} table_row;

typedef struct {
  table_row *rows; /* in the order their first record came */
  size_t count;
  strv absent;     /* columns that no selected record has */
} table_data;

/* The rows of table t for `app` from records (other apps' records, runs
 * that did not exit 0 and records not matching `where` are left out). No
 * matching record gives no rows, not an error. */
int table_collect(const json_t *records, const table_spec *t, const char *app, table_data *out);
void table_data_free(table_data *d);

/* The text of a cell: a key's text, or for a value column the median and,
 * over more than one record, min–max: "0.51 (0.48–0.55)"; "-" without a
 * number. */
void table_cell_text(const table_spec *t, const table_row *row, size_t column, char *buf, size_t len);

#endif
