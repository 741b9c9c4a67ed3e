/* Ratios a sweep spec asks for (`plots: ratios:`): one kind of run over
 * another where both ran on the same machine, e.g. one GPU with the cores
 * that share it over a node's CPU cores (crm-node.yaml). Each side is the
 * records its `where` selects; within a side the records form
 * configurations (variant, backend, ranks x threads, label), and the best
 * one (highest median figure of merit) stands for the side, as "the best
 * ranks x threads" does. Records pair up only where every `same` field
 * (default: host) agrees: a ratio across machines is never formed, and a
 * side that did not run there is reported missing. */
#ifndef HARNESS_RATIOS_H
#define HARNESS_RATIOS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

typedef struct {
  char *name, *app, *title;
  char *note;                          /* a sentence the report prints under the ratio */
  strv num_fields, num_values;         /* numerator: where (as figure_spec's) */
  strv den_fields, den_values;         /* denominator: where */
  strv same;                           /* fields both sides share (host when not given) */
} ratio_spec;

void ratio_spec_free(ratio_spec *r);

/* One side's best configuration where the `same` fields take one value. */
typedef struct {
  char *config;          /* "batched/omp 2 x 1 cpu" (NULL: the side did not run here) */
  double median, low, high;
  size_t runs;
} ratio_side;

typedef struct {
  char *key;             /* "host=n1, instances=133" */
  ratio_side num, den;
} ratio_row;

typedef struct {
  ratio_row *rows;
  size_t count;
} ratio_data;

/* The rows of ratio r for app from records (runs that exited 0), in the
 * order their first record came; no record of either side, no rows. */
int ratio_collect(const json_t *records, const ratio_spec *r, const char *app, ratio_data *out);
void ratio_data_free(ratio_data *d);

#endif
