/* mapp compare OLD NEW: configuration by configuration, whether NEW is
 * slower than OLD beyond a threshold with significance (ratio of medians,
 * bootstrap interval, Mann-Whitney U). Exit 1 on a regression. */
#include "mapp_error.h"
#include "perfstats.h"
#include "selection.h"
#include "verbs.h"

int verb_compare(int argc, char **argv) {
  double threshold = 0.05, alpha = 0.05;
  selection select = {0};
  const mapp_option opts[] = {
      {.name = "threshold", .kind = MAPP_OPT_DOUBLE, .dest = &threshold, .dmin = 0.0, .dmax = 0.99,
       .help = "slowdown of the median figure of merit that counts (0.05: 5 %)"},
      {.name = "alpha", .kind = MAPP_OPT_DOUBLE, .dest = &alpha, .dmin = 1e-9, .dmax = 0.5,
       .help = "significance level of the two-sided Mann-Whitney U test"},
      SELECTION_OPTIONS(&select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("compare", "OLD NEW",
                          "Compare two results folders (or results.jsonl files) configuration by configuration:\n"
                          "the ratio of median figures of merit NEW/OLD with a 95 % bootstrap interval and the\n"
                          "p-value of a Mann-Whitney U test over the repetitions (~: normal approximation).\n"
                          "Exit 1 when a configuration is slower beyond --threshold with p < --alpha.",
                          opts, 2, 2, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown)
    status = perf_compare_results(args.cli.positional[0], args.cli.positional[1], threshold, alpha,
                                  &select);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
