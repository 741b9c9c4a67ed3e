/* Choosing part of a sweep or of its results, as ReFrame's -n/-x do:
 * `--only FIELD=GLOB` and `--exclude FIELD=GLOB`, each repeatable.
 *
 * FIELD is app, variant, backend, size, scaling, ranks, threads, gpus,
 * label, or a matrix parameter (`instances`, or `--instances` as the spec
 * writes it); GLOB is a shell pattern (fnmatch). A job or record is kept
 * when, for every field that --only names, one of that field's patterns
 * matches (`--only app=heat --only app=crm` is either app, `--only
 * app=stencil --only ranks=4` the 4-rank stencil jobs), and no --exclude
 * pattern matches. A job with no label or without the matrix parameter has
 * the empty string there. A field no job or record has, and a selection
 * that keeps nothing, are input errors naming the filter. */
#ifndef HARNESS_SELECTION_H
#define HARNESS_SELECTION_H

#include <jansson.h>
#include <stdbool.h>

#include "mapp_cli.h"
#include "spec.h"
#include "strv.h"

typedef struct {
  strv only_fields, only_globs;
  strv exclude_fields, exclude_globs;
} selection;

/* The two options of every verb that selects (the selection is their dest). */
#define SELECTION_OPTIONS(sel)                                                                                        \
  {.name = "only", .kind = MAPP_OPT_CALLBACK, .dest = (sel), .parse = selection_parse_only, .choices = "FIELD=GLOB", \
   .help = "keep only jobs/records whose FIELD matches GLOB (repeatable: OR within a field, AND across fields)",     \
   .default_text = "all"},                                                                                            \
  {.name = "exclude", .kind = MAPP_OPT_CALLBACK, .dest = (sel), .parse = selection_parse_exclude,                    \
   .choices = "FIELD=GLOB", .help = "drop jobs/records whose FIELD matches GLOB (repeatable)", .default_text = "none"}

/* Option callbacks: "FIELD=GLOB" with a non-empty field and pattern. */
int selection_parse_only(const char *text, void *sel);
int selection_parse_exclude(const char *text, void *sel);

bool selection_empty(const selection *sel);
/* A field's value of one item as text (buf holds numbers); *known false
 * where the item lacks that (matrix) field. */
typedef const char *(*selection_value_of)(const void *item, const char *field, char *buf, size_t len, bool *known);
/* keep[i] for each of `count` items `stride` bytes apart, named `noun` in
 * messages; the same input errors as for jobs. */
int selection_mark(const selection *sel, const void *items, size_t count, size_t stride, selection_value_of value,
                   const char *noun, bool *keep);
/* Keeps the selected jobs (in order). */
int selection_filter_jobs(const selection *sel, sweep_jobs *jobs);
/* Keeps the selected records of a JSON array (in order). */
int selection_filter_records(const selection *sel, json_t *records);
/* "--only app=stencil --exclude ranks=4" (malloc'd; "" without filters). */
char *selection_text(const selection *sel);
void selection_free(selection *sel);

#endif
