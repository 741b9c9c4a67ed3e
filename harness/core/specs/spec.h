/* Sweep specifications (the YAML files in harness/sweeps):
 *
 *   name: quick                       # results go to <out>/<name>/
 *   description: ...
 *   repetitions: 2                    # default 1; or auto (measure.h: min_time, precision,
 *                                     # max_repetitions, max_seconds; an entry may say its own)
 *   check: required                   # answers against baselines: required | optional | none
 *                                     # (default optional; an entry may say its own)
 *   weak_reference: true              # weak jobs on n > 1 ranks of a rank-invariant app are also
 *                                     # compared with their problem solved on 1 rank (--weak-ranks n;
 *                                     # consistency.h); default false, an entry may say its own
 *   runs:                             # each entry is a product of its lists
 *     - app: heat                     # required
 *       variants: [mpi]               # default: every variant the app lists
 *       backends: [serial]            # default: [serial]
 *       ranks: [1, 2, 4]              # required
 *       threads: [1]                  # default: [1]
 *       sizes: [tiny]                 # default: [tiny]
 *       scaling: weak                 # weak | strong (default strong)
 *       args: ["--steps", "50"]       # extra app flags (optional; "{run}" is the run's path stem)
 *       label: steps50                # optional name of this entry's setting (default: its args)
 *       gpus: 1                       # GPUs per rank a batch job asks for (default 1 on cuda, else 0)
 *       check: none                   # this entry's own check: (required fails a run with no baseline)
 *       case: small-steps200          # the baseline case of a custom problem ("-weakN" appended
 *                                     # under weak scaling on N > 1 ranks, as for presets)
 *       matrix:                       # optional: app flags swept as one more product
 *         --instances: [64, 512]      # every combination is a job; its values are
 *         --iterations: [0, 100]      # recorded as `params` ({instances: 64, ...})
 *   plots:                            # speedup references, in order of preference:
 *     reference: [{variant: mpi, backend: serial}, {variant: percrm, backend: serial}]
 *                                     # each app uses the first its results contain
 *                                     # (a single {variant, backend} map is a list of one)
 *     figures:                        # figures of any axis (figures.h), each per app:
 *       - name: metg                  #   APP-metg.png
 *         x: iterations               #   ranks | threads | size | a matrix parameter
 *         y: app_data.efficiency      #   fom | efficiency | speedup | a record field path
 *         logx: true                  #   log axes (default false)
 *         series: [variant, backend]  #   record fields that make a series (this default)
 *         app: subgraph               #   optional: one app only
 *         title: ...                  #   optional
 *         where: {label: [a, b]}      #   optional: only records whose field (path or matrix
 *                                     #   parameter) has this value, or one of these
 *     tables:                         # tables in report.md and plots/APP-NAME.csv (tables.h):
 *       - name: metg                  #   plots/subgraph-metg.csv (letters, digits, '.', '_', '-')
 *         title: METG per width       #   optional heading (default: the name)
 *         columns: [label, variant, backend, app_data.width, app_data.metg_us]
 *                                     #   record fields, dotted paths or matrix parameters
 *         value: app_data.metg_us     #   optional, one or a list of columns: numbers shown as
 *                                     #   median (min–max) over the records of a row; the
 *                                     #   other columns make the rows
 *         where: {label: [metg-w2, metg-w16]}  # optional, as for figures
 *         app: subgraph               #   optional: one app's section only
 *     ratios:                         # one kind of run over another on one machine (ratios.h):
 *       - name: node-equivalent       #   each side's best configuration (median fom), paired
 *         numerator: {label: gpu}     #   only where every `same` field agrees (default host);
 *         denominator: {label: cpu}   #   a side that did not run there is reported missing
 *         same: [host, instances]     #   optional
 *         app: crm                    #   optional: one app's section only
 *         title: ...                  #   optional
 *         note: ...                   #   optional: printed under the ratio
 */
#ifndef HARNESS_SPEC_H
#define HARNESS_SPEC_H

#include <jansson.h>
#include <stddef.h>

#include "apps.h"
#include "figures.h"
#include "job.h"
#include "measure.h"
#include "ratios.h"
#include "reference.h"
#include "strv.h"
#include "tables.h"

/* One combination of an entry's matrix (an entry without one has a single
 * combination: its args, no params). */
typedef struct {
  strv args;      /* the entry's args, then this combination's flags and values */
  json_t *params; /* {"instances": 64, ...} (NULL without a matrix) */
  char *text;     /* "instances=64 iterations=100" (NULL without a matrix) */
} spec_combo;

typedef struct {
  char *app;
  strv variants; /* empty: all of the app's */
  strv backends, sizes, args;
  long *ranks, *threads;
  size_t nranks, nthreads;
  long gpus; /* GPUs per rank; -1: one on the cuda backend, none elsewhere */
  char *scaling;
  char *label; /* optional: names what sets this entry apart (file names, report rows) */
  check_mode check; /* the entry's check:, else the spec's */
  bool weak_reference; /* the entry's weak_reference:, else the spec's */
  char *case_name;  /* optional: the baseline case of a custom problem (case:) */
  char *answer_of;  /* optional, a peer's entry: the label of the mini-app's entry whose answers its own are
                       checked against (answer_of:; default: its own setting) */
  strv matrix_flags;      /* "--instances", ... */
  strv *matrix_values;    /* per flag, its values */
  spec_combo *combos;     /* the product of the matrix, at least one */
  size_t ncombos;
  measure_spec measure;   /* min_time, repetitions (the spec's unless the entry says its own) */
} spec_run;

typedef struct {
  char *name, *description, *origin;
  long repetitions;      /* the spec's (measure.repetitions); an entry may say its own */
  measure_spec measure;  /* the spec's min_time, repetitions, precision and budget (measure.h) */
  check_mode check; /* check: the default of the entries (optional when absent) */
  bool weak_reference; /* weak_reference: the default of the entries (false when absent) */
  spec_run *runs;
  size_t nruns;
  speedup_refs reference; /* empty: no speedup figure or column */
  figure_spec *figures;   /* plots.figures: the spec's own figures */
  size_t nfigures;
  table_spec *tables;     /* plots.tables: the spec's own tables */
  size_t ntables;
  ratio_spec *ratios;     /* plots.ratios: one kind of run over another, same machine */
  size_t nratios;
} sweep_spec;

int spec_load(const char *path, sweep_spec *spec);
int spec_parse_string(const char *text, const char *origin, sweep_spec *spec);
void spec_free(sweep_spec *spec);

/* One job of an expanded sweep and whether this build can run it. */
typedef struct {
  job job;
  const measure_spec *measure; /* its entry's */
  combo_status combo;
  bool bitwise_ranks; /* the app's answers agree across rank counts (consistency.h) */
  bool weak_reference; /* its entry's weak_reference: (consistency.h) */
  const char *peer_of; /* the mini-app whose answer of the same configuration it is checked against, or NULL */
  const char *answer_of; /* the setting of that configuration, where the entry names another (answer_of:) */
  bool peer_target;    /* a program of the spec is a peer of this app: its answers are kept for it */
} sweep_job;

typedef struct {
  sweep_job *items;
  size_t count;
} sweep_jobs;

/* The jobs of a spec in run order: repetition outermost, so slow drift of
 * the machine spreads evenly over the configurations instead of biasing
 * whichever ran last. `apps` holds the --list of every app the spec names
 * (in any order); an app absent from it, an unknown variant or an unknown
 * backend name is an input error. Jobs point into spec and apps. */
int spec_expand(const sweep_spec *spec, const app_info *apps, size_t napps, sweep_jobs *jobs);
void sweep_jobs_free(sweep_jobs *jobs);

#endif
