/* What a results folder's answers were checked against: per app, how many
 * configurations ran, how many were compared with a stored baseline, how
 * many with the same sweep's 1-rank answer (consistency.h), and how many
 * with neither. A configuration is a record's key without its repetition. */
#ifndef HARNESS_COVERAGE_H
#define HARNESS_COVERAGE_H

#include <jansson.h>

#include "doc.h"

typedef struct {
  const char *app; /* points into the records */
  size_t configurations, baseline, consistency, unchecked;
} app_coverage;

typedef struct {
  app_coverage *apps; /* in the order the apps first occur */
  size_t count;
  json_t *unchecked; /* the configurations no run of which was compared, as keys */
} coverage_table;

int coverage_collect(const json_t *records, coverage_table *table);
void coverage_table_free(coverage_table *table);

/* The report's coverage section: a row per app, then the unchecked
 * configurations by key. */
void coverage_write(doc *d, const coverage_table *table);
/* The baselines that check: required runs found missing, each with the
 * `mapp bless` command that makes it (nothing when none is missing). */
void coverage_write_missing(doc *d, const json_t *records);

#endif
