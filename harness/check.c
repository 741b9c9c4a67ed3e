/* mapp check BASELINE CANDIDATE: per field the worst errors, where, the
 * bound and the verdict. */
#include <stdio.h>

#include "compare.h"
#include "mapp_error.h"
#include "verbs.h"

static int check_files(const char *baseline, const char *candidate, const tolerance_override *ovr) {
  compare_report report;
  int status = compare_files(baseline, candidate, ovr, &report);
  if (status == MAPP_OK) {
    compare_report_print(&report, stdout);
    printf("%s: %s against %s (%zu field%s)\n", report.passed ? "PASS" : "FAIL", candidate, baseline,
           report.nfields, report.nfields == 1 ? "" : "s");
    status = report.passed ? MAPP_OK : MAPP_ERR_VERIFY;
  }
  compare_report_free(&report);
  return status;
}

int verb_check(int argc, char **argv) {
  const char *model = NULL;
  double bound = -1.0;
  const mapp_option opts[] = {
      {.name = "model", .kind = MAPP_OPT_STRING, .dest = &model, .choices = "exact|abs|rel|ulp|envelope",
       .help = "tolerance model", .default_text = "the baseline's 'tolerance' attribute"},
      {.name = "bound", .kind = MAPP_OPT_DOUBLE, .dest = &bound, .dmin = 0.0, .dmax = 1e300,
       .help = "tolerance bound (envelope: the multiple)",
       .default_text = "the baseline's 'tolerance_bound' (envelope: 'envelope_multiple') attribute"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("check", "BASELINE.h5 CANDIDATE.h5",
                          "Compare every dataset of a baseline with the candidate's dataset of the same name\n"
                          "(an envelope baseline: with its -O0 answer, within a multiple of the -O0/-O3 envelope).\n"
                          "Exit 0 when every field is within its tolerance, 1 when one is not, 2 when the\n"
                          "files cannot be compared (missing, unreadable, other shape).",
                          opts, 2, 2, false, argc, argv, &args);
  tolerance_override ovr = {.model_set = model != NULL, .bound_set = bound >= 0, .bound = bound};
  if (status == MAPP_OK && !args.help_shown && model) status = tolerance_parse_model(model, &ovr.model);
  if (status == MAPP_OK && !args.help_shown)
    status = check_files(args.cli.positional[0], args.cli.positional[1], &ovr);
  verb_args_free(&args);
  return status;
}
