/* Drawing a results folder: data files, gnuplot scripts from the templates
 * in plots/, and the figures, all in RESULTS/plots/. */
#ifndef HARNESS_PLOT_H
#define HARNESS_PLOT_H

#include <stddef.h>

#include "gnuplot.h" /* plot_file_stem, plot_gnuplot_quoted */
#include "reference.h"
#include "selection.h"
#include "strv.h"

/* The speedup references: "VARIANT/BACKEND[,...]" when given, else the
 * plots.reference of the results folder's spec.yaml; empty when neither
 * says (the speedup figure and column are then left out). */
int plot_reference(const char *results_dir, const char *given, speedup_refs *refs);
/* Draws every figure the (selected: NULL for all) results support in each
 * format ("png", "svg", "pdf") and lists the images written in *written and
 * in plots/index.txt. */
int plot_results(const char *results_file, const char *reference, const selection *select, const strv *formats,
                 strv *written);
/* plots/index.txt of a results folder (malloc'd): the list plot_results wrote. */
char *plot_index_path(const char *results_file);

/* The --reference option row that plot and report share. */
#define PLOT_REFERENCE_OPTION(D)                                                                   \
  {.name = "reference", .kind = MAPP_OPT_STRING, .dest = (D), .choices = "V/B[,V/B...]",           \
   .help = "speedup references; each app uses the first its results contain",                      \
   .default_text = "plots.reference of RESULTS/spec.yaml"}

#endif
