/* mapp compare OLD NEW: configuration by configuration, whether NEW is
 * slower than OLD beyond a threshold with significance (ratio of medians,
 * Mann-Whitney U), the same within it, or inconclusive where the noise
 * hides the answer (perfstats.h). Exit 1 on a regression; runs of two
 * systems are an A/B of them, never a regression. */
#include <string.h>

#include "mapp_error.h"
#include "mdsummary.h"
#include "perfcompare.h"
#include "selection.h"
#include "verbs.h"

int verb_compare(int argc, char **argv) {
  double threshold = 0.05, alpha = 0.05;
  const char *junit = NULL, *format = "text", *report_url = NULL;
  selection select = {0};
  const mapp_option opts[] = {
      {.name = "threshold", .kind = MAPP_OPT_DOUBLE, .dest = &threshold, .dmin = 0.0, .dmax = 0.99,
       .help = "slowdown of the median figure of merit that counts (0.05: 5 %)"},
      {.name = "alpha", .kind = MAPP_OPT_DOUBLE, .dest = &alpha, .dmin = 1e-9, .dmax = 0.5,
       .help = "significance level of the two-sided Mann-Whitney U test"},
      {.name = "junit", .kind = MAPP_OPT_STRING, .dest = &junit,
       .help = "also write the comparison as JUnit XML to this file (a SLOWER configuration is a failure)"},
      MD_FORMAT_OPTION(&format),
      MD_REPORT_URL_OPTION(&report_url, "NEW's report.html"),
      SELECTION_OPTIONS(&select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("compare", "OLD NEW",
                          "Compare two results folders (or results.jsonl files) configuration by configuration:\n"
                          "the ratio of median figures of merit NEW/OLD with its 95 % interval (Hodges-Lehmann/\n"
                          "Moses), the p-value of a Mann-Whitney U test over the repetitions (~: normal\n"
                          "approximation), the change the repetitions could detect (alpha, 80 % power), each\n"
                          "side's verdict (stable, noisy, too-short, disturbed) and the answer: SLOWER or faster\n"
                          "beyond --threshold with p < --alpha, same when the interval excludes a --threshold\n"
                          "change, else inconclusive. Exit 1 when a configuration is SLOWER. A configuration\n"
                          "whose OLD and NEW runs come from different systems (the record's system, else its\n"
                          "host) is an A/B of the two machines, named in the system column, never SLOWER.\n"
                          "--format markdown: a summary for CI instead of the table (under 60,000 characters).",
                          opts, 2, 2, false, argc, argv, &args);
  perf_compare_output output = {.markdown = strcmp(format, "markdown") == 0, .report_url = report_url};
  if (status == MAPP_OK && !args.help_shown)
    status = perf_compare_results(args.cli.positional[0], args.cli.positional[1], threshold, alpha,
                                  &select, junit, &output);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
