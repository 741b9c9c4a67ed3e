/* mapp export RESULTS --format caliper-json|extrap --out DIR: the records
 * in the formats of the HPC analysis stack (export.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "mapp_error.h"
#include "results.h"
#include "selection.h"
#include "verbs.h"

/* The records of RESULTS that select keeps (new reference in *records). */
int verb_load_records(const char *results, const selection *select, json_t **records) {
  *records = NULL;
  char *file = results_file_of(results);
  int status = file ? results_load(file, records) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && select) status = selection_filter_records(select, *records);
  free(file);
  return status;
}

static int export_formatted(const char *format, const json_t *records, const char *out) {
  strv written = {0}, series = {0}, skipped = {0};
  int status = !strcmp(format, "caliper-json") ? export_caliper_json(records, out, &written)
                                               : export_extrap(records, out, EXPORT_MIN_EXTRAP_POINTS, 0, &written,
                                                               &series, &skipped);
  if (status == MAPP_OK && !strcmp(format, "extrap") && !written.count) {
    char *why = export_skipped_text(&skipped);
    status = mapp_fail(MAPP_ERR_INPUT, "too few rank counts for an Extra-P model (%d at least) in every series: %s",
                       EXPORT_MIN_EXTRAP_POINTS, why ? why : "no usable record");
    free(why);
  }
  for (size_t i = 0; status == MAPP_OK && i < written.count; ++i) printf("%s\n", written.items[i]);
  for (size_t i = 0; status == MAPP_OK && i < skipped.count; ++i)
    printf("left out (fewer than %d rank counts): %s\n", EXPORT_MIN_EXTRAP_POINTS, skipped.items[i]);
  if (status == MAPP_OK) printf("%zu %s file%s in %s\n", written.count, format, written.count == 1 ? "" : "s", out);
  strv_free(&written);
  strv_free(&series);
  strv_free(&skipped);
  return status;
}

int verb_export(int argc, char **argv) {
  const char *format = NULL, *out = NULL;
  selection select = {0};
  const mapp_option opts[] = {
      {.name = "format", .kind = MAPP_OPT_CHOICE, .dest = &format, .choices = "caliper-json|extrap",
       .help = "caliper-json: a Caliper json-split profile per record (Hatchet, Thicket); extrap: Extra-P's text "
               "input, a file per series of at least 5 rank counts"},
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &out, .help = "the folder to write into (made if missing)"},
      SELECTION_OPTIONS(&select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("export", "RESULTS_DIR|RESULTS.jsonl",
                          "Write the records in the formats of the HPC analysis stack: Caliper JSON profiles,\n"
                          "whose call tree is the timed phases (per-rank max, min and mean) and whose globals\n"
                          "are the run's identity (Thicket's metadata), or Extra-P's input, time against the\n"
                          "rank count per series, for `mapp model` or Extra-P itself.",
                          opts, 1, 1, false, argc, argv, &args);
  json_t *records = NULL;
  if (status == MAPP_OK && !args.help_shown && !format)
    status = mapp_fail(MAPP_ERR_INPUT, "--format is required (caliper-json or extrap)");
  if (status == MAPP_OK && !args.help_shown && !out) status = mapp_fail(MAPP_ERR_INPUT, "--out DIR is required");
  if (status == MAPP_OK && !args.help_shown) status = verb_load_records(args.cli.positional[0], &select, &records);
  if (status == MAPP_OK && !args.help_shown) status = export_formatted(format, records, out);
  json_decref(records);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
