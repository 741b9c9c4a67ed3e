#include "execute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baseline.h"
#include "contract.h"
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
static json_t *load_record(const job *j, const job_files *files, bool *apps) {
  json_error_t err;
  json_t *record = path_exists(files->result) ? json_load_file(files->result, 0, &err) : NULL;
  *apps = record && json_is_object(record);
  if (*apps) return record;
  json_decref(record);
  return stand_in_record(j);
}

static bool verification_failed(const json_t *record, int exit_code) {
  const char *verdict = json_string_value(json_object_get(json_object_get(record, "verification"), "status"));
  return exit_code == MAPP_ERR_VERIFY || (verdict && strcmp(verdict, "fail") == 0);
}

static job_outcome classify(const json_t *record, const proc_outcome *proc, bool contract_broken) {
  int exit_code = proc->exit_code;
  if (proc->timed_out) return OUTCOME_FAIL_TIMEOUT;
  if (contract_broken) return OUTCOME_FAIL_CONTRACT;
  if (exit_code != 0 && exit_code != MAPP_ERR_VERIFY) return OUTCOME_FAIL_EXIT;
  if (verification_failed(record, exit_code)) return OUTCOME_FAIL_VERIFY;
  const char *base = json_string_value(json_object_get(json_object_get(record, "baseline"), "status"));
  if (base && strcmp(base, "fail") == 0) return OUTCOME_FAIL_BASELINE;
  return OUTCOME_OK;
}

/* A custom problem's size names the preset its flags changed
 * ("custom:small"), so the same flags on two presets stay two series in
 * the report, the plots and the history. */
static int mark_custom_size(json_t *record, const job *j) {
  const char *size = json_string_value(json_object_get(record, "size"));
  if (!size || strcmp(size, "custom") != 0) return MAPP_OK;
  char *marked = str_printf("custom:%s", j->size);
  if (!marked) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(record, "size", json_string(marked));
  free(marked);
  return MAPP_OK;
}

static int add_harness_fields(json_t *record, const job *j, const execute_options *opt, const char *launch,
                              const proc_outcome *proc) {
  MAPP_TRY(mark_custom_size(record, j));
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
  json_object_set_new(record, "time_limit_s", j->time_limit > 0 ? json_real(j->time_limit) : json_null());
  if (proc->timed_out) {
    json_t *timeout = json_pack("{s:f, s:f, s:b}", "limit_s", j->time_limit, "elapsed_s", proc->elapsed_s, "killed",
                                proc->killed);
    if (!timeout) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    json_object_set_new(record, "timeout", timeout);
  }
  return MAPP_OK;
}

/* check: required and nothing was compared: the run fails, and the record
 * says which baseline is missing and the command that writes it. */
static int require_baseline(const job *j, const char *case_name, json_t *base, job_outcome *outcome) {
  const char *status = json_string_value(json_object_get(base, "status"));
  if (strcmp(status, "pass") == 0 || strcmp(status, "fail") == 0) return MAPP_OK;
  *outcome = OUTCOME_FAIL_UNCHECKED;
  if (!case_name) {
    json_object_set_new(base, "error", json_string("check: required, but the run is a custom problem that names no "
                                                   "baseline case (give its sweep entry a case:)"));
    return MAPP_OK;
  }
  char *bless = job_bless_command(j, case_name);
  if (!bless) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(base, "bless", json_string(bless));
  free(bless);
  return MAPP_OK;
}

/* What an answer's record broke, if anything: none written (or not a JSON
 * object) by a program that exited 0, or one the schema refuses or that
 * names another run. An exit 1 without a record is the launcher's failure
 * (retried), and a refused launch's record is not read. */
static int contract_violation(const job *j, const job_files *files, const proc_outcome *proc, const job_result *res,
                              char **violation) {
  *violation = NULL;
  if (proc->timed_out || (proc->exit_code != 0 && proc->exit_code != MAPP_ERR_VERIFY)) return MAPP_OK;
  if (res->app_wrote_record) return contract_check_record(res->record, j->app, j->variant, j->backend, violation);
  if (proc->exit_code != 0) return MAPP_OK;
  *violation = path_exists(files->result) ? str_printf("its record %s is not a JSON object", files->result)
                                          : str_printf("it exited 0 without writing its record (--result %s)",
                                                       files->result);
  return *violation ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* A record that breaks the contract is not half-read: the stand-in takes
 * its place, with what it broke. */
static int refuse_record(const job *j, const job_files *files, char *violation, job_result *res) {
  json_decref(res->record);
  res->contract_error = violation;
  res->record = stand_in_record(j);
  json_t *c = json_pack("{s:s, s:s, s:s}", "status", "fail", "error", violation, "record", files->result);
  if (!res->record || !c) {
    json_decref(c);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  json_object_set_new(res->record, "contract", c);
  return MAPP_OK;
}

void job_drop_passed_output(job_result *res, const job_files *files) {
  if (res->outcome != OUTCOME_OK) return;
  unlink(files->output);
  json_object_set_new(res->record, "output", json_null());
}

int job_judge(const job *j, const job_files *files, const char *launch, const proc_outcome *proc,
              const execute_options *opt, job_result *res) {
  *res = (job_result){.exit_code = proc->exit_code, .elapsed_s = proc->elapsed_s};
  res->record = load_record(j, files, &res->app_wrote_record);
  if (!res->record) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  char *violation = NULL;
  MAPP_TRY(contract_violation(j, files, proc, res, &violation));
  if (violation) MAPP_TRY(refuse_record(j, files, violation, res));
  MAPP_TRY(add_harness_fields(res->record, j, opt, launch, proc));
  bool answered = !proc->timed_out && (proc->exit_code == 0 || proc->exit_code == MAPP_ERR_VERIFY) && !violation;
  char *case_name = NULL;
  int status = job_baseline_case(j, res->record, &case_name);
  json_t *base = NULL;
  if (status == MAPP_OK && opt->check_baseline && answered && j->check != CHECK_NONE)
    status = baseline_check_run(res->record, j->baselines, case_name, files->output, &res->baseline, &base);
  else if (status == MAPP_OK)
    base = json_pack("{s:s, s:n}", "status", "none", "file");
  if (status == MAPP_OK) {
    json_object_set_new(res->record, "baseline", base);
    json_object_set_new(res->record, "check", json_string(check_mode_name(j->check)));
    res->outcome = classify(res->record, proc, violation != NULL);
    if (opt->check_baseline && res->outcome == OUTCOME_OK && j->check == CHECK_REQUIRED)
      status = require_baseline(j, case_name, base, &res->outcome);
    job_set_outcome(res, res->outcome);
  }
  free(case_name);
  MAPP_TRY(status);
  /* The report's table of failures points at what the run printed. */
  json_object_set_new(res->record, "log", json_string(files->log));
  if (!opt->keep_output) job_drop_passed_output(res, files);
  return MAPP_OK;
}

/* What the environment gave the run, and whether it used more: a point of
 * an oversubscribed run measures the sharing, not the machine (plots draw
 * it hollow, the verdicts blame the run and not the machine for the CPU it
 * waited for). The cores it asked count the program's own helper threads
 * (the record's helper_threads). */
static int record_placement(const harness_env *env, const job *j, json_t *record) {
  json_int_t helpers = json_integer_value(json_object_get(record, "helper_threads"));
  if (helpers < 0) helpers = 0;
  bool over = env_oversubscribed(env, j, (long)helpers);
  json_t *placement = json_pack("{s:I, s:I, s:b, s:I}", "cores_per_node", (json_int_t)env->cores_per_node,
                                "gpus_per_node", (json_int_t)env->gpus_per_node, "scheduler",
                                env->scheduler != SCHEDULER_NONE, "cores_asked",
                                (json_int_t)(j->ranks * (j->threads + helpers)));
  if (!placement) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(record, "placement", placement);
  json_object_set_new(record, "oversubscribed", json_boolean(over));
  return MAPP_OK;
}

/* A run on a simulated cluster is a prediction: the record says so, with
 * the platform, and keeps the real seconds the simulation took beside the
 * app's own times, which are simulated (SMPI's clock). */
static int record_simulation(const harness_env *env, double real_s, json_t *record) {
  json_object_set_new(record, "simulated", json_boolean(env->simulated));
  if (!env->simulated) return MAPP_OK;
  json_t *sim = json_pack("{s:s, s:s, s:f}", "platform", env->platform, "env", env->name, "real_s", real_s);
  if (!sim) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(record, "simulation", sim);
  return MAPP_OK;
}

/* Files of an earlier run with the same stem would be mistaken for this one's. */
static void remove_stale_files(const job_files *files) {
  unlink(files->output);
  unlink(files->result);
  unlink(files->log);
}

int job_record_system(json_t *record, const char *system) {
  char host[256] = "unknown";
  const char *named = json_string_value(json_object_get(record, "host"));
  if (!system && named && named[0]) system = named;
  if (!system && gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  if (json_object_set_new(record, "system", json_string(system ? system : host)) != 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory recording the system");
  return MAPP_OK;
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
  proc_request req = {.argv = &argv, .env_names = &names, .env_values = &values, .log_path = files->log,
                      .time_limit_s = j->time_limit};
  if (status == MAPP_OK) status = proc_run(&req, &proc);
  if (status == MAPP_OK) status = job_judge(j, files, launch, &proc, opt, res);
  if (status == MAPP_OK && env->name) json_object_set_new(res->record, "env", json_string(env->name));
  if (status == MAPP_OK) status = job_record_system(res->record, env->system);
  if (status == MAPP_OK) status = record_placement(env, j, res->record);
  if (status == MAPP_OK) status = record_simulation(env, proc.elapsed_s, res->record);
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
  case OUTCOME_FAIL_UNCHECKED: snprintf(buf, len, "FAIL (no baseline)"); break;
  case OUTCOME_FAIL_CONSISTENCY: snprintf(buf, len, "FAIL (consistency)"); break;
  case OUTCOME_FAIL_TIMEOUT: snprintf(buf, len, "FAIL (timeout after %.1f s)", res->elapsed_s); break;
  case OUTCOME_FAIL_CONTRACT: snprintf(buf, len, "FAIL (contract)"); break;
  }
}

const char *job_outcome_name(job_outcome outcome) {
  static const char *const names[] = {"ok", "exit", "verify", "baseline",
                                      "unchecked", "consistency", "timeout", "contract"};
  return (size_t)outcome < sizeof names / sizeof names[0] ? names[outcome] : "unknown";
}

void job_set_outcome(job_result *res, job_outcome outcome) {
  res->outcome = outcome;
  if (res->record) json_object_set_new(res->record, "outcome", json_string(job_outcome_name(outcome)));
}

bool job_failed_outside_app(const job_result *res) {
  switch (res->outcome) {
  case OUTCOME_FAIL_TIMEOUT: return true;
  case OUTCOME_FAIL_EXIT: return res->exit_code != MAPP_ERR_INPUT;
  case OUTCOME_FAIL_VERIFY: return res->exit_code == MAPP_ERR_VERIFY && !res->app_wrote_record;
  default: return false;
  }
}

int job_exit_status(const job_result *res) {
  switch (res->outcome) {
  case OUTCOME_OK: return MAPP_OK;
  case OUTCOME_FAIL_VERIFY:
  case OUTCOME_FAIL_BASELINE:
  case OUTCOME_FAIL_UNCHECKED:
  case OUTCOME_FAIL_CONSISTENCY:
  case OUTCOME_FAIL_CONTRACT: return MAPP_ERR_VERIFY;
  case OUTCOME_FAIL_EXIT: return res->exit_code == MAPP_ERR_INPUT ? MAPP_ERR_INPUT : MAPP_ERR_SYSTEM;
  case OUTCOME_FAIL_TIMEOUT: return MAPP_ERR_SYSTEM;
  }
  return MAPP_ERR_SYSTEM;
}

void job_result_free(job_result *res) {
  json_decref(res->record);
  free(res->contract_error);
  compare_report_free(&res->baseline);
  *res = (job_result){0};
}
