/* What the pieces of `mapp report` share, not part of any API: what the
 * report is written from, two helpers, and the sections that report.c
 * puts in order: the machine (report_machine.c), each app
 * (report_apps.c), the failed runs (report_failures.c); and the summary
 * for CI (report_summary.c). */
#ifndef HARNESS_REPORT_INTERNAL_H
#define HARNESS_REPORT_INTERNAL_H

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "coverage.h"
#include "doc.h"
#include "headline.h"
#include "model.h"
#include "jsonutil.h"
#include "reference.h"
#include "spec.h"
#include "stats.h"
#include "strv.h"

typedef struct {
  const char *dir, *name, *description;
  const speedup_refs *refs;
  const strv *images;
  const sweep_spec *spec; /* the results folder's spec.yaml (its tables); NULL without one */
  const model_set *models; /* RESULTS/models.json (mapp model); empty without one */
  const char *env_path;    /* --env: whose app path the apps' --list (their headlines) is asked on */
} report_context;

/* Text as one CSV field: quoted (quotes doubled) where it holds a comma, quote or line break. */
static inline void csv_text(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; ++s) fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
  fputc('"', f);
}

/* The machine: hosts, compilers, revisions, when it ran, placement,
 * retries, predictions and the speedup references. */
void report_write_machine(doc *d, const json_t *records, const speedup_refs *refs);
/* An app's table, the spec's tables for it and its figures. */
int report_write_app(doc *d, const report_context *ctx, const group_table *t, const json_t *records, const char *app);
/* What the app's runs made besides their answers (artifacts). */
void report_write_artifacts(doc *d, const char *app, const json_t *records, const char *dir);
/* The runs that did not pass, with their commands and log tails. */
void report_write_failures(doc *d, const json_t *records, const char *dir);
/* What failed in a run ("verification", "exit code", ...), NULL when it passed. */
const char *report_failure_of(const json_t *r);

/* --format markdown: the summary for CI (mdsummary.h) into *text
 * (malloc'd), its link line to report_url, else to html_path. */
int report_summary(const report_context *ctx, const group_table *t, const headline_sources *headlines,
                   const coverage_table *coverage, const json_t *records, const char *html_path,
                   const char *report_url, char **text);

#endif
