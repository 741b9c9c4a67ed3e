/* JUnit XML (junit.h), judging a run's record: skipped, passed, or which
 * failure (timeout, exit, verification, baseline, missing-baseline,
 * consistency), by its "outcome" or, for older records, its fields as
 * job_judge reads them; and the one-line message that says why. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "junit.h"
#include "junit_internal.h"
#include "mapp_error.h"
#include "proc.h"
#include "strv.h"

static bool text_is(const char *text, const char *expected) { return text && strcmp(text, expected) == 0; }

static char *one_line(char *text) {
  if (text) text[strcspn(text, "\n")] = '\0';
  return text;
}

/* "FIELD (MODEL, bound B): worst abs A, V values out of bounds" for the
 * first failing field of a comparison, else its error, else NULL. */
static char *first_failing_field(const json_t *comparison) {
  const char *error = json_string_value(json_object_get(comparison, "error"));
  if (error) return strdup(error);
  size_t i;
  const json_t *f;
  json_array_foreach(json_object_get(comparison, "fields"), i, f) {
    if (!json_is_false(json_object_get(f, "passed"))) continue;
    return str_printf("%s (%s, bound %g): worst abs %g, rel %g, %lld values out of bounds",
                      text_at(f, NULL, "name") ? text_at(f, NULL, "name") : "?",
                      text_at(f, NULL, "model") ? text_at(f, NULL, "model") : "?", number_at(f, "bound", NAN),
                      number_at(f, "worst_abs", NAN), number_at(f, "worst_rel", NAN),
                      (long long)json_integer_value(json_object_get(f, "violations")));
  }
  return NULL;
}

static char *comparison_message(const json_t *record, const char *object, const char *what) {
  const json_t *comparison = json_object_get(record, object);
  char *why = first_failing_field(comparison);
  const char *file = text_at(record, object, "file");
  char *message = str_printf("answer differs from %s%s%s%s%s", what, file ? " " : "", file ? file : "",
                             why ? ": " : "", why ? why : "");
  free(why);
  return one_line(message);
}

/* The names of the failed invariant checks, ", "-joined (malloc'd). */
static char *failed_checks(const json_t *record) {
  strv names = {0};
  size_t i;
  const json_t *c;
  json_array_foreach(json_object_get(json_object_get(record, "verification"), "checks"), i, c) {
    const char *name = text_at(c, NULL, "name");
    if (json_is_false(json_object_get(c, "passed")) && name && strv_push(&names, name) != MAPP_OK) break;
  }
  char *text = strv_join(&names, ", ");
  strv_free(&names);
  return text;
}

static char *verification_message(const json_t *record) {
  char *checks = failed_checks(record);
  double worst = number_at(json_object_get(record, "verification"), "worst_error", NAN);
  char worst_text[64] = "";
  if (!isnan(worst)) snprintf(worst_text, sizeof worst_text, " (worst error %g)", worst);
  char *message = str_printf("verification failed%s%s%s", worst_text, checks && checks[0] ? ": " : "",
                             checks ? checks : "");
  free(checks);
  return message;
}

static char *exit_message(const json_t *record, long exit_code) {
  const char *state = text_at(record, NULL, "scheduler_state");
  if (exit_code == -1 && state) return str_printf("the batch job ended without this run's status (Slurm: %s)", state);
  const char *app = text_at(record, NULL, "app"), *log = text_at(record, NULL, "log");
  char *prog = app ? str_printf("mapp-%s", app) : NULL;
  char *said = prog && log ? proc_log_error(log, prog) : NULL;
  char signal_text[48] = "";
  if (exit_code > 128 && exit_code < 128 + 65) snprintf(signal_text, sizeof signal_text, " (signal %ld)", exit_code - 128);
  char *message = str_printf("exit code %ld%s%s%s", exit_code, signal_text, said ? ": " : "", said ? said : "");
  free(prog);
  free(said);
  return one_line(message);
}

static char *timeout_message(const json_t *record) {
  if (text_is(text_at(record, NULL, "scheduler_state"), "TIMEOUT"))
    return strdup("timed out: the batch job ran past its time limit (Slurm: TIMEOUT)");
  const json_t *timeout = json_object_get(record, "timeout");
  double limit = number_at(timeout, "limit_s", number_at(record, "time_limit_s", NAN));
  double elapsed = number_at(timeout, "elapsed_s", number_at(record, "elapsed_s", 0));
  char limit_text[64] = "";
  if (!isnan(limit)) snprintf(limit_text, sizeof limit_text, " (limit %g s)", limit);
  return str_printf("timed out after %.2f s%s", elapsed, limit_text);
}

static char *missing_baseline_message(const json_t *record) {
  const char *error = text_at(record, "baseline", "error"), *file = text_at(record, "baseline", "file");
  if (error) return one_line(str_printf("no baseline to check the answer against: %s", error));
  return str_printf("no baseline to check the answer against (check: required)%s%s", file ? ": missing " : "",
                    file ? file : "");
}

static bool is_skipped(const json_t *record) {
  return json_is_true(json_object_get(record, "skipped")) || text_is(text_at(record, NULL, "status"), "skipped");
}

/* "timeout": true or {limit_s, elapsed_s, killed} (job_judge), a "status"
 * of "timeout", or a batch job Slurm stopped at its limit. */
static bool is_timeout(const json_t *record) {
  const json_t *timeout = json_object_get(record, "timeout");
  return json_is_true(timeout) || json_is_object(timeout) || text_is(text_at(record, NULL, "status"), "timeout") ||
         text_is(text_at(record, NULL, "scheduler_state"), "TIMEOUT");
}

static bool verification_failed(const json_t *record, long exit_code) {
  return exit_code == MAPP_ERR_VERIFY || text_is(text_at(record, "verification", "status"), "fail");
}

/* Required and neither passed nor failed: nothing was compared. */
static bool baseline_missing(const json_t *record) {
  const char *status = text_at(record, "baseline", "status");
  return text_is(text_at(record, NULL, "check"), "required") && !text_is(status, "pass") && !text_is(status, "fail");
}

/* The failure kinds, by the names of job_judge's "outcome". */
static const char *const outcome_types[][2] = {
    {"timeout", "timeout"},     {"exit", "exit"},
    {"verify", "verification"}, {"baseline", "baseline"},
    {"unchecked", "missing-baseline"}, {"consistency", "consistency"},
    {"contract", "contract"},
};

/* The kind of failure of a run, NULL when it passed: the record's
 * "outcome" where it names one, else judged from its fields in the order
 * job_judge does (a run that did not finish, its own verification, the
 * baseline, a required baseline missing, the sweep's 1-rank answer), for
 * records written before the outcome was. */
static const char *failure_type(const json_t *record) {
  const char *outcome = text_at(record, NULL, "outcome");
  for (size_t i = 0; outcome && i < sizeof outcome_types / sizeof outcome_types[0]; ++i)
    if (strcmp(outcome, outcome_types[i][0]) == 0) return outcome_types[i][1];
  long exit_code = (long)json_integer_value(json_object_get(record, "exit_code"));
  if (is_timeout(record)) return "timeout";
  if (exit_code != 0 && exit_code != MAPP_ERR_VERIFY) return "exit";
  if (verification_failed(record, exit_code)) return "verification";
  if (text_is(text_at(record, "baseline", "status"), "fail")) return "baseline";
  if (baseline_missing(record)) return "missing-baseline";
  if (text_is(text_at(record, "consistency", "status"), "fail")) return "consistency";
  return NULL;
}

static char *failure_message(const json_t *record, const char *type) {
  long exit_code = (long)json_integer_value(json_object_get(record, "exit_code"));
  if (strcmp(type, "timeout") == 0) return timeout_message(record);
  if (strcmp(type, "exit") == 0) return exit_message(record, exit_code);
  if (strcmp(type, "verification") == 0) return verification_message(record);
  if (strcmp(type, "baseline") == 0) return comparison_message(record, "baseline", "baseline");
  if (strcmp(type, "missing-baseline") == 0) return missing_baseline_message(record);
  if (strcmp(type, "contract") == 0)
    return one_line(str_printf("the program broke the mapp contract: %s", text_at(record, "contract", "error")));
  if (text_at(record, "consistency", "peer_of")) return comparison_message(record, "consistency", "its mini-app's answer");
  return comparison_message(record, "consistency", "the sweep's 1-rank answer");
}

static char *skip_message(const json_t *record) {
  const char *reason = text_at(record, NULL, "reason");
  if (!reason) reason = text_at(record, NULL, "skip_reason");
  return strdup(reason ? reason : "not run");
}

/* A failed launch is an error (the run itself broke), any other failure a
 * failure (it ran, and a check said no). */
void junit_judge_record(const json_t *record, record_case *rc) {
  if (is_skipped(record)) {
    rc->status = JUNIT_SKIPPED;
    rc->message = skip_message(record);
    return;
  }
  rc->type = failure_type(record);
  rc->status = !rc->type ? JUNIT_PASS : strcmp(rc->type, "exit") == 0 ? JUNIT_ERROR : JUNIT_FAILURE;
  if (rc->type) rc->message = failure_message(record, rc->type);
}
