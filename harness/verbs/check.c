/* mapp check BASELINE CANDIDATE: per field the worst errors, where, the
 * bound and the verdict. */
#include <stdbool.h>
#include <stdio.h>

#include "tolerance.h"
#include "env.h"
#include "perfcompare.h"
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

/* --perf RESULTS: the results against the environment's stored
 * performance references (`perf_references:` in envs/NAME.yaml, a results
 * folder or .jsonl of that machine), as mapp compare judges them. */
static int check_performance(const char *results, const char *env_path, double threshold) {
  harness_env env;
  MAPP_TRY(env_load(env_path, &env));
  int status = env.perf_references ? MAPP_OK
                                   : mapp_fail(MAPP_ERR_INPUT, "%s names no perf_references (a results folder of this "
                                                               "machine to check performance against)", env.origin);
  if (status == MAPP_OK) {
    printf("performance of %s against %s (%s):\n", results, env.perf_references, env.name);
    status = perf_compare_results(env.perf_references, results, threshold, 0.05, NULL, NULL, NULL);
  }
  env_free(&env);
  return status;
}

int verb_check(int argc, char **argv) {
  const char *model = NULL, *env_path = NULL;
  double bound = -1.0, threshold = 0.05;
  bool perf = false;
  const mapp_option opts[] = {
      {.name = "model", .kind = MAPP_OPT_STRING, .dest = &model, .choices = "exact|abs|rel|ulp|envelope",
       .help = "tolerance model", .default_text = "the baseline's 'tolerance' attribute"},
      {.name = "bound", .kind = MAPP_OPT_DOUBLE, .dest = &bound, .dmin = 0.0, .dmax = 1e300,
       .help = "tolerance bound (envelope: the multiple)",
       .default_text = "the baseline's 'tolerance_bound' (envelope: 'envelope_multiple') attribute"},
      {.name = "perf", .kind = MAPP_OPT_FLAG, .dest = &perf,
       .help = "check RESULTS' performance against the environment's perf_references instead"},
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &env_path, .help = "environment (with --perf)",
       .default_text = "envs/local.yaml"},
      {.name = "threshold", .kind = MAPP_OPT_DOUBLE, .dest = &threshold, .dmin = 0.0, .dmax = 0.99,
       .help = "with --perf: the slowdown that fails (0.05: 5 %)"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("check", "BASELINE.h5 CANDIDATE.h5 | --perf RESULTS",
                          "Compare every dataset of a baseline with the candidate's dataset of the same name\n"
                          "(an envelope baseline: with its -O0 answer, within a multiple of the widest member's\n"
                          "distance). Exit 0 when every field is within its tolerance, 1 when one is not, 2 when\n"
                          "the files cannot be compared (missing, unreadable, other shape). With --perf, the\n"
                          "results' figures of merit against the environment's stored references instead.",
                          opts, 1, 2, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown && perf) {
    status = args.cli.positional_count == 1 && !model && bound < 0
                 ? check_performance(args.cli.positional[0], env_path, threshold)
                 : mapp_fail(MAPP_ERR_INPUT, "check --perf takes one RESULTS folder and no --model or --bound");
    verb_args_free(&args);
    return status;
  }
  if (status == MAPP_OK && !args.help_shown && args.cli.positional_count != 2)
    status = mapp_fail(MAPP_ERR_INPUT, "check needs BASELINE.h5 CANDIDATE.h5 (or --perf RESULTS)");
  tolerance_override ovr = {.model_set = model != NULL, .bound_set = bound >= 0, .bound = bound};
  if (status == MAPP_OK && !args.help_shown && model) status = tolerance_parse_model(model, &ovr.model);
  if (status == MAPP_OK && !args.help_shown)
    status = check_files(args.cli.positional[0], args.cli.positional[1], &ovr);
  verb_args_free(&args);
  return status;
}
