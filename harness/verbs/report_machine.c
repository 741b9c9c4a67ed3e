/* mapp report, the machine section (report_internal.h): the records'
 * hosts, compilers, flags, build types, revisions and when they ran; cores
 * and GPUs and the oversubscribed runs; retries and timeouts; runs on a
 * simulated cluster; the speedup references. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "fsutil.h"
#include "historydb.h"
#include "mapp_error.h"
#include "report_internal.h"
#include "strv.h"

/* The distinct values of a field over the records, joined ("a, b"). */
static char *distinct(const json_t *records, const char *key) {
  strv seen = {0};
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    const char *v = json_string_value(json_object_get(r, key));
    if (v && !strv_contains(&seen, v) && strv_push(&seen, v) != MAPP_OK) break;
  }
  char *text = seen.count ? strv_join(&seen, ", ") : strdup("unknown");
  strv_free(&seen);
  return text;
}

/* "2 cores, 0 GPUs a node (env local)" per distinct placement, and how many
 * runs used more than that. */
static void write_placement(doc *d, const json_t *records) {
  strv seen = {0};
  size_t i, over = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    over += json_is_true(json_object_get(r, "oversubscribed"));
    const json_t *p = json_object_get(r, "placement");
    if (!p) continue;
    const char *env = json_string_value(json_object_get(r, "env"));
    char *text = str_printf("%lld cores, %lld GPUs a node (env %s%s)", json_integer_value(json_object_get(p, "cores_per_node")),
                            json_integer_value(json_object_get(p, "gpus_per_node")), env ? env : "?",
                            json_is_true(json_object_get(p, "scheduler")) ? ", batch" : "");
    if (text && !strv_contains(&seen, text)) strv_push(&seen, text);
    free(text);
  }
  char *joined = seen.count ? strv_join(&seen, "; ") : NULL;
  doc_cell(d, "cores and GPUs");
  doc_cell(d, "%s", joined ? joined : "not recorded");
  doc_row_end(d);
  doc_cell(d, "oversubscribed runs");
  doc_cell(d, "%zu of %zu (ranks x threads beyond the cores given, or ranks sharing a GPU; hollow in the figures)",
           over, json_array_size(records));
  doc_row_end(d);
  free(joined);
  strv_free(&seen);
}

/* Runs launched more than once (retries:): the flaky configurations, those
 * whose run passed only after a retry, and the timeouts. */
static void write_retries(doc *d, const json_t *records) {
  strv flaky = {0};
  size_t i, retried = 0, timeouts = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    size_t attempts = json_array_size(json_object_get(r, "attempts"));
    const char *outcome = json_string_value(json_object_get(r, "outcome"));
    timeouts += outcome && strcmp(outcome, "timeout") == 0;
    if (attempts < 2) continue;
    ++retried;
    char *config = historydb_config_name(r); /* "heat mpi/serial tiny weak n1 t1" */
    if (config && outcome && strcmp(outcome, "ok") == 0 && !strv_contains(&flaky, config)) strv_push(&flaky, config);
    free(config);
  }
  char *listed = flaky.count ? strv_join(&flaky, ", ") : NULL;
  doc_cell(d, "retried runs");
  doc_cell(d, "%zu of %zu launched more than once (retries); %zu flaky configuration%s (passed only after a retry)%s%s; "
           "%zu timed out", retried, json_array_size(records), flaky.count, flaky.count == 1 ? "" : "s",
           listed ? ": " : "", listed ? listed : "", timeouts);
  doc_row_end(d);
  free(listed);
  strv_free(&flaky);
}

/* Runs on a simulated cluster: their figures are predictions, in series of
 * their own (the setting "simulated:ENV"), on the platforms they name. */
static void write_predictions(doc *d, const json_t *records) {
  strv platforms = {0};
  size_t i, simulated = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    if (!json_is_true(json_object_get(r, "simulated"))) continue;
    ++simulated;
    const json_t *sim = json_object_get(r, "simulation");
    char *text = str_printf("%s (env %s)", json_text_or(sim, "platform", "-"), json_text_or(sim, "env", "-"));
    if (text && !strv_contains(&platforms, text)) strv_push(&platforms, text);
    free(text);
  }
  if (simulated) {
    char *listed = strv_join(&platforms, "; ");
    doc_cell(d, "predictions");
    doc_cell(d, "%zu of %zu runs simulated by SimGrid SMPI on %s: their figures are predictions, not measurements, "
             "in series of their own (setting simulated:ENV)", simulated, json_array_size(records), listed ? listed : "?");
    doc_row_end(d);
    free(listed);
  }
  strv_free(&platforms);
}

/* When the records ran: the earliest and latest start time any of them
 * states (ISO 8601 UTC, so text order is time order); a record without one
 * (a run that never started, a launcher's stand-in) is left out. */
static void write_span(doc *d, const json_t *records) {
  const char *from = NULL, *to = NULL;
  size_t i, dated = 0;
  const json_t *r;
  json_array_foreach(records, i, r) {
    const char *t = json_string_value(json_object_get(r, "time"));
    if (!t || !*t) continue;
    ++dated;
    if (!from || strcmp(t, from) < 0) from = t;
    if (!to || strcmp(t, to) > 0) to = t;
  }
  doc_cell(d, "ran");
  if (!dated) doc_cell(d, "no record states when it ran");
  else if (dated < json_array_size(records))
    doc_cell(d, "%s to %s (%zu of %zu records state a time)", from, to, dated, json_array_size(records));
  else doc_cell(d, "%s to %s", from, to);
  doc_row_end(d);
}

void report_write_machine(doc *d, const json_t *records, const speedup_refs *refs) {
  static const char *const rows[][2] = {{"hosts", "host"}, {"compilers", "compiler"}, {"flags", "flags"},
                                        {"build types", "build_type"}, {"git revisions", "git_revision"}};
  doc_heading(d, 2, "Machine");
  doc_table_plain(d, "ll");
  doc_cell(d, "records");
  doc_cell(d, "%zu", json_array_size(records));
  doc_row_end(d);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    char *values = distinct(records, rows[i][1]);
    doc_cell(d, "%s", rows[i][0]);
    doc_cell(d, "%s", values ? values : "?");
    doc_row_end(d);
    free(values);
  }
  write_span(d, records);
  write_placement(d, records);
  write_retries(d, records);
  write_predictions(d, records);
  char *listed = speedup_refs_format(refs);
  if (refs->count > 1) {
    doc_cell(d, "speedup references");
    doc_cell(d, "%s (each app: the first its results contain)", listed ? listed : "?");
  } else {
    doc_cell(d, "speedup reference");
    doc_cell(d, "%s", refs->count && listed ? listed : "none given");
  }
  doc_row_end(d);
  doc_table_end(d);
  free(listed);
}
