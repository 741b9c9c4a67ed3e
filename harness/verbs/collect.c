/* mapp collect RESULTS: the records of the batch jobs `mapp submit` wrote
 * (OUT/<name>/jobs.json) that finished, judged like a sweep's runs and
 * appended to results.jsonl. A repetition is done when its script wrote
 * its .status file; one whose job Slurm says ended without it is recorded
 * as failed with the job's state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execute.h"
#include "fsutil.h"
#include "junit.h"
#include "mapp_error.h"
#include "proc.h"
#include "results.h"
#include "sweep_setup.h"
#include "verbs.h"

typedef struct {
  size_t collected, failed, pending, already;
} collect_tally;

/* Slurm's state of a job, when the job has ended ("COMPLETED", "CANCELLED",
 * "TIMEOUT", ...); NULL while it may still run, or when Slurm cannot say (no
 * squeue here, a controller that does not answer, a job already purged from
 * its memory): such repetitions stay pending. */
static char *ended_job_state(const char *job_id) {
  static const char *const ended[] = {"COMPLETED", "FAILED",   "CANCELLED", "TIMEOUT",   "NODE_FAIL",
                                      "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED", NULL};
  if (!job_id || !*job_id) return NULL;
  strv argv = {0};
  char *text = NULL, *state = NULL;
  proc_outcome outcome;
  int status = strv_push(&argv, "squeue");
  if (status == MAPP_OK) status = strv_push(&argv, "-h");
  if (status == MAPP_OK) status = strv_push(&argv, "-t");
  if (status == MAPP_OK) status = strv_push(&argv, "all");
  if (status == MAPP_OK) status = strv_push(&argv, "-o");
  if (status == MAPP_OK) status = strv_push(&argv, "%T");
  if (status == MAPP_OK) status = strv_pushf(&argv, "--jobs=%s", job_id);
  proc_request req = {.argv = &argv, .log_path = "/dev/null"};
  if (status == MAPP_OK) status = proc_capture(&req, &text, &outcome);
  if (status == MAPP_OK && outcome.exit_code == 0) {
    text[strcspn(text, " \n")] = '\0';
    for (size_t i = 0; ended[i] && !state; ++i)
      if (strcmp(text, ended[i]) == 0) state = strdup(ended[i]);
  }
  mapp_error_clear();
  free(text);
  strv_free(&argv);
  return state;
}

/* "EXIT_CODE ELAPSED" written by mapp_run; false while the repetition has not ended. */
static bool read_status_file(const char *path, proc_outcome *out) {
  char *text = NULL;
  if (!path_exists(path) || read_text_file(path, &text) != MAPP_OK) {
    mapp_error_clear();
    return false;
  }
  bool ok = sscanf(text, "%d %lf", &out->exit_code, &out->elapsed_s) == 2;
  free(text);
  return ok;
}

/* The batch script runs each launch under timeout(1): 124 is its SIGTERM
 * at the limit, 137 its SIGKILL after the grace period. */
static void note_timeout(const job *j, proc_outcome *proc) {
  bool at_limit = j->time_limit > 0 && proc->elapsed_s >= j->time_limit;
  proc->timed_out = proc->exit_code == 124 || (proc->exit_code == 137 && at_limit);
  proc->killed = proc->exit_code == 137 && at_limit;
}

/* Judges a repetition that has ended and appends its record. */
/* scheduler_state: the state of a job that ended without this repetition's
 * status (cancelled, out of time, ...; proc->exit_code is then -1), recorded
 * as a failure; else NULL. */
static int collect_finished(const json_t *entry, const job *j, const job_files *files, const proc_outcome *proc,
                            const char *scheduler_state, const char *sweep, const char *results_file,
                            collect_tally *tally) {
  const char *launch = json_string_value(json_array_get(json_object_get(entry, "launches"), (size_t)j->repetition));
  execute_options opt = {.sweep = sweep, .check_baseline = true, .keep_output = false};
  job_result res;
  int status = job_judge(j, files, launch ? launch : "", proc, &opt, &res);
  if (status == MAPP_OK && scheduler_state)
    json_object_set_new(res.record, "scheduler_state", json_string(scheduler_state));
  /* The batch script asked for the nodes that hold every rank's cores and GPUs. */
  if (status == MAPP_OK) json_object_set_new(res.record, "oversubscribed", json_false());
  if (status == MAPP_OK) status = job_record_system(res.record, json_string_value(json_object_get(entry, "system")));
  if (status == MAPP_OK) status = results_append(results_file, res.record);
  if (status == MAPP_OK) {
    ++tally->collected;
    tally->failed += res.outcome != OUTCOME_OK;
  }
  job_result_free(&res);
  return status;
}

/* A repetition without a status file is pending while its job may still run
 * it; once Slurm says the job has ended (the status read again after asking,
 * as the job may just have written it), it is a failure of the job's state.
 * *job_state caches Slurm's answer for the job's other repetitions. */
static int collect_repetition(const json_t *entry, const job *j, const char *runs_dir, const char *sweep,
                              const char *results_file, const json_t *done, char **job_state, bool *asked,
                              collect_tally *tally) {
  char *key = job_key(j), *stem = job_stem(j);
  char *status_path = stem ? str_printf("%s/%s.status", runs_dir, stem) : NULL;
  job_files files = {0};
  proc_outcome proc = {0};
  const char *ended_state = NULL;
  int status = key && status_path ? job_files_make(runs_dir, j, &files) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  bool finished = status == MAPP_OK && !json_object_get(done, key) && read_status_file(status_path, &proc);
  if (status == MAPP_OK && !json_object_get(done, key) && !finished) {
    if (!*asked) *job_state = ended_job_state(json_string_value(json_object_get(entry, "job_id")));
    *asked = true;
    finished = *job_state && read_status_file(status_path, &proc);
    if (*job_state && !finished) {
      ended_state = *job_state;
      proc = (proc_outcome){.exit_code = -1, .elapsed_s = 0.0};
      fprintf(stderr, "%s: job %s ended %s without running it to the end: recorded as failed\n", stem,
              json_string_value(json_object_get(entry, "job_id")), ended_state);
    }
  }
  if (status == MAPP_OK && json_object_get(done, key))
    ++tally->already;
  else if (status == MAPP_OK && !finished && !ended_state)
    ++tally->pending;
  else if (status == MAPP_OK) {
    if (!ended_state) note_timeout(j, &proc);
    status = collect_finished(entry, j, &files, &proc, ended_state, sweep, results_file, tally);
  }
  job_files_free(&files);
  free(status_path);
  free(stem);
  free(key);
  return status;
}

static bool positive_integer(const json_t *value) { return json_is_integer(value) && json_integer_value(value) >= 1; }

static int collect_jobs(const json_t *doc, const char *results_file, const json_t *done, collect_tally *tally) {
  const char *runs_dir = json_string_value(json_object_get(doc, "runs_dir"));
  const char *sweep = json_string_value(json_object_get(doc, "sweep"));
  long reps = (long)json_integer_value(json_object_get(doc, "repetitions"));
  size_t i;
  const json_t *e;
  json_array_foreach(json_object_get(doc, "jobs"), i, e) {
    job j = {.app = json_string_value(json_object_get(e, "app")), .variant = json_string_value(json_object_get(e, "variant")),
             .backend = json_string_value(json_object_get(e, "backend")), .size = json_string_value(json_object_get(e, "size")),
             .scaling = json_string_value(json_object_get(e, "scaling")),
             .ranks = (long)json_integer_value(json_object_get(e, "ranks")),
             .threads = (long)json_integer_value(json_object_get(e, "threads"))};
    if (!runs_dir || !j.app || !j.variant || !j.backend || !j.size || !j.scaling)
      return mapp_fail(MAPP_ERR_INPUT, "jobs.json: job %zu is incomplete", i);
    j.label = json_string_value(json_object_get(e, "label"));
    j.baselines = json_string_value(json_object_get(e, "baselines")); /* a peer's (absent: the app's own) */
    j.time_limit = json_number_value(json_object_get(e, "time_limit")); /* 0 in jobs.json files older than it */
    strv args = {0};
    size_t k;
    const json_t *arg;
    int status = MAPP_OK;
    json_array_foreach(json_object_get(e, "args"), k, arg) {
      if (status == MAPP_OK && !json_is_string(arg))
        status = mapp_fail(MAPP_ERR_INPUT, "jobs.json: job %zu: args must be strings", i);
      if (status == MAPP_OK) status = strv_push(&args, json_string_value(arg));
    }
    j.extra_args = &args;
    char *job_state = NULL;
    bool asked = false;
    /* the entry's own count (repetitions: auto submits its first round), else the sweep's */
    long entry_reps = positive_integer(json_object_get(e, "repetitions"))
                          ? (long)json_integer_value(json_object_get(e, "repetitions"))
                          : reps;
    for (j.repetition = 0; status == MAPP_OK && j.repetition < entry_reps; ++j.repetition)
      status = collect_repetition(e, &j, runs_dir, sweep, results_file, done, &job_state, &asked, tally);
    free(job_state);
    strv_free(&args);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}


/* One entry of "jobs" as submit_one writes it. */
static int check_job_entry(const json_t *e, size_t i, const char *path) {
  static const char *const texts[] = {"stem", "app", "variant", "backend", "size", "scaling", NULL};
  if (!json_is_object(e)) return mapp_fail(MAPP_ERR_INPUT, "%s: jobs[%zu] is not an object", path, i);
  for (size_t k = 0; texts[k]; ++k)
    if (!json_is_string(json_object_get(e, texts[k])))
      return mapp_fail(MAPP_ERR_INPUT, "%s: jobs[%zu] lacks the string '%s'", path, i, texts[k]);
  if (!positive_integer(json_object_get(e, "ranks")) || !positive_integer(json_object_get(e, "threads")))
    return mapp_fail(MAPP_ERR_INPUT, "%s: jobs[%zu]: 'ranks' and 'threads' must be integers >= 1", path, i);
  if (!json_is_array(json_object_get(e, "launches")))
    return mapp_fail(MAPP_ERR_INPUT, "%s: jobs[%zu] lacks its 'launches' list", path, i);
  const json_t *args = json_object_get(e, "args"), *id = json_object_get(e, "job_id");
  if (args && !json_is_array(args)) return mapp_fail(MAPP_ERR_INPUT, "%s: jobs[%zu]: 'args' must be a list", path, i);
  if (id && !json_is_string(id) && !json_is_null(id))
    return mapp_fail(MAPP_ERR_INPUT, "%s: jobs[%zu]: 'job_id' must be a string", path, i);
  return MAPP_OK;
}

/* jobs.json as mapp submit writes it: anything else ({"jobs": 5}, a
 * hand-edited or truncated file) is an input error naming what is wrong,
 * never a collect that finds nothing and exits 0. */
static int check_jobs_file(const json_t *doc, const char *path) {
  if (!json_is_object(doc)) return mapp_fail(MAPP_ERR_INPUT, "%s is not the JSON object mapp submit writes", path);
  if (!json_is_string(json_object_get(doc, "sweep")) || !json_is_string(json_object_get(doc, "runs_dir")))
    return mapp_fail(MAPP_ERR_INPUT, "%s lacks the strings 'sweep' and 'runs_dir' (was it written by mapp submit?)",
                     path);
  if (!positive_integer(json_object_get(doc, "repetitions")))
    return mapp_fail(MAPP_ERR_INPUT, "%s: 'repetitions' must be an integer >= 1", path);
  const json_t *jobs = json_object_get(doc, "jobs");
  if (!json_is_array(jobs) || json_array_size(jobs) == 0)
    return mapp_fail(MAPP_ERR_INPUT, "%s: 'jobs' must be a non-empty list of submitted jobs", path);
  size_t i;
  const json_t *e;
  json_array_foreach(jobs, i, e) MAPP_TRY(check_job_entry(e, i, path));
  return MAPP_OK;
}

static int collect(const char *dir, const char *junit) {
  char *jobs_path = path_join(dir, "jobs.json"), *results_file = path_join(dir, "results.jsonl");
  json_error_t err;
  json_t *doc = NULL, *done = NULL;
  int lock = -1;
  int status = jobs_path && results_file ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !(doc = json_load_file(jobs_path, 0, &err)))
    status = mapp_fail(MAPP_ERR_INPUT, "cannot read %s: %s (was the sweep submitted with mapp submit?)", jobs_path, err.text);
  if (status == MAPP_OK) status = check_jobs_file(doc, jobs_path);
  if (status == MAPP_OK && junit) status = junit_check_path(junit);
  if (status == MAPP_OK) status = dir_lock(dir, "collect", &lock);
  if (status == MAPP_OK) status = sweep_done_keys(results_file, true, &done);
  collect_tally tally = {0};
  if (status == MAPP_OK) status = collect_jobs(doc, results_file, done, &tally);
  if (status == MAPP_OK) {
    printf("collected %zu record%s (%zu failed), %zu still pending, %zu collected before\nresults: %s\n",
           tally.collected, tally.collected == 1 ? "" : "s", tally.failed, tally.pending, tally.already, results_file);
    status = tally.failed ? MAPP_ERR_VERIFY : MAPP_OK;
  }
  if ((status == MAPP_OK || status == MAPP_ERR_VERIFY) && junit) {
    const char *sweep = json_string_value(json_object_get(doc, "sweep"));
    int written = junit_write_results(junit, sweep ? sweep : "collect", results_file, NULL, NULL);
    if (written != MAPP_OK) status = written;
    else printf("junit: %s\n", junit);
  }
  dir_unlock(&lock);
  json_decref(done);
  json_decref(doc);
  free(results_file);
  free(jobs_path);
  return status;
}

int verb_collect(int argc, char **argv) {
  const char *junit = NULL;
  const mapp_option opts[] = {{.name = "junit", .kind = MAPP_OPT_STRING, .dest = &junit,
                               .help = "also write the collected results as JUnit XML to this file"},
                              MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("collect", "RESULTS_DIR",
                          "Append the records of the submitted repetitions that have ended to results.jsonl,\n"
                          "checked against their baselines like a sweep's. Exit 1 when one failed.",
                          opts, 1, 1, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) status = collect(args.cli.positional[0], junit);
  verb_args_free(&args);
  return status;
}
