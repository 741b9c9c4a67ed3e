/* mapp plot RESULTS: the figures of a results folder (plot.h). */
#include <stdio.h>

#include "gnuplot.h"
#include "mapp_error.h"
#include "plot.h"
#include "results.h"
#include "selection.h"
#include "verbs.h"

int verb_plot(int argc, char **argv) {
  const char *reference = NULL, *format = "png,svg";
  selection select = {0};
  const mapp_option opts[] = {
      PLOT_REFERENCE_OPTION(&reference),
      {.name = "format", .kind = MAPP_OPT_STRING, .dest = &format, .choices = "png,svg,pdf",
       .help = "image formats, comma separated"},
      SELECTION_OPTIONS(&select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("plot", "RESULTS_DIR|RESULTS.jsonl",
                          "Draw weak-scaling efficiency, speedup over the reference, strong-scaling speedup and\n"
                          "each app's figure of merit against the rank count, into RESULTS/plots/.",
                          opts, 1, 1, false, argc, argv, &args);
  strv formats = {0}, written = {0};
  char *results_file = NULL;
  if (status == MAPP_OK && !args.help_shown) status = gnuplot_formats_parse(format, &formats);
  if (status == MAPP_OK && !args.help_shown && !(results_file = results_file_of(args.cli.positional[0])))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !args.help_shown) status = plot_results(results_file, reference, &select, &formats, &written);
  for (size_t i = 0; status == MAPP_OK && i < written.count; ++i) printf("%s\n", written.items[i]);
  if (status == MAPP_OK && !args.help_shown && written.count == 0) printf("no figures: the results hold no timed runs\n");
  free(results_file);
  strv_free(&formats);
  strv_free(&written);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
