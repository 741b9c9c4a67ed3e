#include "execute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baseline.h"
#include "fsutil.h"
#include "launch.h"
#include "mapp_error.h"
#include "mapp_record.h"

/* The record of a run whose app wrote none (it failed before the end): the
 * job's own description, so the failure is still recorded and resumable. */
static json_t *stand_in_record(const job *j) {
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:n, s:I, s:I, s:{s:s}}", "schema", MAPP_RECORD_SCHEMA,
                   "app", j->app, "variant", j->variant, "backend", j->backend, "size", j->size, "scaling",
                   j->scaling, "case", "ranks", (json_int_t)j->ranks, "threads", (json_int_t)j->threads,
                   "verification", "status", "none");
}

/* The app's record when it wrote a readable one, else the stand-in. */
static json_t *load_record(const job *j, const job_files *files) {
  json_error_t err;
  json_t *record = path_exists(files->result) ? json_load_file(files->result, 0, &err) : NULL;
  if (record && json_is_object(record)) return record;
  json_decref(record);
  return stand_in_record(j);
}

static bool verification_failed(const json_t *record, int exit_code) {
  const char *verdict = json_string_value(json_object_get(json_object_get(record, "verification"), "status"));
  return exit_code == MAPP_ERR_VERIFY || (verdict && strcmp(verdict, "fail") == 0);
}

static job_outcome classify(const json_t *record, int exit_code) {
  if (exit_code != 0 && exit_code != MAPP_ERR_VERIFY) return OUTCOME_FAIL_EXIT;
  if (verification_failed(record, exit_code)) return OUTCOME_FAIL_VERIFY;
  const char *base = json_string_value(json_object_get(json_object_get(record, "baseline"), "status"));
  if (base && strcmp(base, "fail") == 0) return OUTCOME_FAIL_BASELINE;
  return OUTCOME_OK;
}

static int add_harness_fields(json_t *record, const job *j, const execute_options *opt, const char *launch,
                              const proc_outcome *proc) {
  char *key = job_key(j);
  if (!key) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(record, "key", json_string(key));
  free(key);
  char *setting = job_setting(j);
  json_object_set_new(record, "setting", setting ? json_string(setting) : json_null());
  json_object_set_new(record, "label", j->label ? json_string(j->label) : json_null());
  if (j->reference) json_object_set_new(record, "reference", json_string(j->reference));
  if (j->params) json_object_set(record, "params", (json_t *)j->params);
  free(setting);
  json_object_set_new(record, "sweep", opt->sweep ? json_string(opt->sweep) : json_null());
  json_object_set_new(record, "repetition", j->repetition >= 0 ? json_integer(j->repetition) : json_null());
  json_object_set_new(record, "launch", json_string(launch));
  json_object_set_new(record, "elapsed_s", json_real(proc->elapsed_s));
  json_object_set_new(record, "exit_code", json_integer(proc->exit_code));
  return MAPP_OK;
}

/* An answer that passed needs no keeping in a sweep: sweeps of large sizes
 * would fill the disk with answers nobody reads. */
static void drop_output_if_passed(json_t *record, const job_files *files, const execute_options *opt,
                                  job_outcome outcome) {
  if (opt->keep_output || outcome != OUTCOME_OK) return;
  unlink(files->output);
  json_object_set_new(record, "output", json_null());
}

int job_judge(const job *j, const job_files *files, const char *launch, const proc_outcome *proc,
              const execute_options *opt, job_result *res) {
  *res = (job_result){.exit_code = proc->exit_code, .elapsed_s = proc->elapsed_s};
  res->record = load_record(j, files);
  if (!res->record) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  MAPP_TRY(add_harness_fields(res->record, j, opt, launch, proc));
  json_t *base = NULL;
  bool answered = proc->exit_code == 0 || proc->exit_code == MAPP_ERR_VERIFY;
  if (opt->check_baseline && answered)
    MAPP_TRY(baseline_check_run(res->record, files->output, &res->baseline, &base));
  else
    base = json_pack("{s:s, s:n}", "status", "none", "file");
  json_object_set_new(res->record, "baseline", base);
  res->outcome = classify(res->record, proc->exit_code);
  /* The report's table of failures points at what the run printed. */
  json_object_set_new(res->record, "log", json_string(files->log));
  drop_output_if_passed(res->record, files, opt, res->outcome);
  return MAPP_OK;
}

/* Files of an earlier run with the same stem would be mistaken for this one's. */
static void remove_stale_files(const job_files *files) {
  unlink(files->output);
  unlink(files->result);
  unlink(files->log);
}

int job_execute(const harness_env *env, const job *j, const job_files *files, const execute_options *opt,
                job_result *res) {
  *res = (job_result){0};
  remove_stale_files(files);
  strv argv = {0}, names = {0}, values = {0};
  char *launch = NULL;
  int status = launch_command(env, j, files, &argv);
  if (status == MAPP_OK) status = launch_variables(env, j, &names, &values);
  if (status == MAPP_OK && !(launch = strv_join_shell(&argv))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  proc_outcome proc;
  proc_request req = {.argv = &argv, .env_names = &names, .env_values = &values, .log_path = files->log};
  if (status == MAPP_OK) status = proc_run(&req, &proc);
  if (status == MAPP_OK) status = job_judge(j, files, launch, &proc, opt, res);
  if (status == MAPP_OK && env->name) json_object_set_new(res->record, "env", json_string(env->name));
  free(launch);
  strv_free(&argv);
  strv_free(&names);
  strv_free(&values);
  return status;
}

void job_outcome_text(const job_result *res, char *buf, size_t len) {
  switch (res->outcome) {
  case OUTCOME_OK: snprintf(buf, len, "ok"); break;
  case OUTCOME_FAIL_EXIT: snprintf(buf, len, "FAIL (exit %d)", res->exit_code); break;
  case OUTCOME_FAIL_VERIFY: snprintf(buf, len, "FAIL (verify)"); break;
  case OUTCOME_FAIL_BASELINE: snprintf(buf, len, "FAIL (baseline)"); break;
  }
}

int job_exit_status(const job_result *res) {
  switch (res->outcome) {
  case OUTCOME_OK: return MAPP_OK;
  case OUTCOME_FAIL_VERIFY:
  case OUTCOME_FAIL_BASELINE: return MAPP_ERR_VERIFY;
  case OUTCOME_FAIL_EXIT: return res->exit_code == MAPP_ERR_INPUT ? MAPP_ERR_INPUT : MAPP_ERR_SYSTEM;
  }
  return MAPP_ERR_SYSTEM;
}

void job_result_free(job_result *res) {
  json_decref(res->record);
  compare_report_free(&res->baseline);
  *res = (job_result){0};
}
