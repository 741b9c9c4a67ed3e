/* mapp sweep SPEC.yaml: every job of the spec, one record per run appended
 * to results/<name>/results.jsonl as it ends, progress on stdout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "dryrun.h"
#include "execute.h"
#include "fsutil.h"
#include "history.h"
#include "junit.h"
#include "mapp_error.h"
#include "results.h"
#include "rounds.h"
#include "selection.h"
#include "spec.h"
#include "sweep_setup.h"
#include "timelimit.h"
#include "verbs.h"

typedef struct {
  size_t ran, failed, skipped_build, skipped_done;
  size_t flaky;  /* passed after a retry */
  strv failures; /* "LABEL: FAIL (...)" of each failed run, for the summary */
  strv skipped_keys, skip_reasons; /* jobs this build cannot run (the JUnit file's skipped cases) */
} sweep_tally;

typedef struct {
  const harness_env *env;
  const char *results_file, *runs_dir;
  json_t *done; /* keys already in results.jsonl (resume) */
  execute_options opt;
  bool keep_output;
  consistency_book book; /* this repetition's 1-rank answers (and those kept for a peer) */
} sweep_context;

static const char *skip_reason(combo_status combo) {
  switch (combo) {
  case COMBO_NOT_BUILT: return "skip (not built)";
  case COMBO_NO_DEVICE: return "skip (no device here)";
  case COMBO_NOT_WRITTEN: return "skip (no such backend)";
  default: return "skip";
  }
}

/* The app's own error line when it printed one, and where the log is. */
static void print_failure_hint(const job *j, const job_files *files) {
  char prog[64];
  snprintf(prog, sizeof prog, "mapp-%s", j->app);
  char *message = proc_log_error(files->log, prog);
  if (message) printf(": %s", message);
  printf("  (log: %s)", files->log);
  free(message);
}

/* What a run failed to find, and the command that makes it. */
static void print_missing_baseline(const job_result *res) {
  const json_t *base = json_object_get(res->record, "baseline");
  const char *file = json_string_value(json_object_get(base, "file"));
  const char *bless = json_string_value(json_object_get(base, "bless"));
  const char *error = json_string_value(json_object_get(base, "error"));
  if (file) printf(": %s is missing (check: required); make it with: %s", file, bless ? bless : "mapp bless");
  else if (error) printf(": %s", error);
}

/* What the program broke, on the progress line: the sweep goes on. */
static void print_contract(const job *j, const job_result *res) {
  printf(": mapp-%s broke the mapp contract: %s (docs/contract.md)", j->app, res->contract_error);
}

/* Where the answer differs from the 1-rank one (a peer's: from its
 * mini-app's), and by how much. */
static void print_inconsistency(const job_result *res) {
  const json_t *c = json_object_get(res->record, "consistency");
  const char *error = json_string_value(json_object_get(c, "error"));
  const char *peer_of = json_string_value(json_object_get(c, "peer_of"));
  if (peer_of) printf(": differs from mapp-%s's answer %s", peer_of,
                      json_string_value(json_object_get(c, "file")));
  else printf(": differs from the 1-rank answer %s", json_string_value(json_object_get(c, "file")));
  if (error) printf(" (%s)", error);
  else printf(" (worst abs %.3g, worst ulp %lld)", json_number_value(json_object_get(c, "worst_abs")),
              (long long)json_integer_value(json_object_get(c, "worst_ulp")));
}

/* Checks the answer against the repetition's 1-rank one where the app is
 * rank-invariant, a peer's against its mini-app's, then drops it unless it
 * is kept (a reference, an answer a peer will be checked against, a
 * failure, --keep-output). The answer is on disk until here: the sweep
 * executes with keep_output and drops it itself. */
static int judge_consistency(sweep_context *ctx, const sweep_job *sj, const job_files *files, job_result *res) {
  bool keep = false, kept_for_peer = false;
  if (consistency_applies(&sj->job, sj->bitwise_ranks))
    MAPP_TRY(consistency_judge(&ctx->book, &sj->job, files, res, &keep));
  else if (consistency_weak_applies(&sj->job, sj->bitwise_ranks, sj->weak_reference))
    MAPP_TRY(consistency_judge_weak(ctx->env, &sj->job, files, &ctx->opt, ctx->keep_output, res));
  else if (sj->peer_of)
    MAPP_TRY(consistency_judge_peer(&ctx->book, &sj->job, sj->peer_of, sj->answer_of, files, res));
  if (sj->peer_target) MAPP_TRY(consistency_keep(&ctx->book, &sj->job, files, res, &kept_for_peer));
  keep = keep || kept_for_peer;
  if (ctx->keep_output) return MAPP_OK;
  if (keep) json_object_set_new(res->record, "output", json_null()); /* removed when the repetition ends */
  else job_drop_passed_output(res, files);
  return MAPP_OK;
}

/* Why an answer that no check failed went unchecked, if it did. */
static void print_unchecked(const job_result *res) {
  const json_t *c = json_object_get(res->record, "consistency");
  const char *status = json_string_value(json_object_get(c, "status"));
  if (status && strcmp(status, "unavailable") == 0 && res->outcome == OUTCOME_OK)
    printf(" (no consistency check: %s)", json_string_value(json_object_get(c, "reason")));
}

/* One attempt of a launch, as the record's "attempts" keeps it. */
static int note_attempt(json_t *attempts, const job_result *res) {
  int signal = res->exit_code > 128 ? res->exit_code - 128 : 0;
  json_t *a = json_pack("{s:i, s:o, s:f, s:s}", "exit_code", res->exit_code, "signal",
                        signal ? json_integer(signal) : json_null(), "elapsed_s", res->elapsed_s, "outcome",
                        job_outcome_name(res->outcome));
  if (!a || json_array_append_new(attempts, a) != 0) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  return MAPP_OK;
}

/* The log of an attempt that is launched again stays, as STEM.attemptN.log. */
static int keep_attempt_log(const job_files *files, long attempt) {
  size_t stem = strlen(files->log) - strlen(".log");
  char *kept = str_printf("%.*s.attempt%ld.log", (int)stem, files->log, attempt);
  if (!kept) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = rename(files->log, kept) == 0 ? MAPP_OK
                                             : mapp_fail(MAPP_ERR_SYSTEM, "keeping the log %s as %s failed: %s",
                                                         files->log, kept, strerror(errno));
  free(kept);
  return status;
}

/* Launches the job, and again (up to its entry's retries) while it fails
 * outside the app's own verdict; every attempt is in the record. */
static int execute_with_retries(sweep_context *ctx, const sweep_job *sj, const job_files *files, job_result *res) {
  json_t *attempts = json_array();
  if (!attempts) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  for (long attempt = 1; status == MAPP_OK; ++attempt) {
    status = job_execute(ctx->env, &sj->job, files, &ctx->opt, res);
    if (status == MAPP_OK) status = note_attempt(attempts, res);
    if (status != MAPP_OK || !job_failed_outside_app(res) || attempt > sj->measure->retries) break;
    char verdict[64];
    job_outcome_text(res, verdict, sizeof verdict);
    printf("%s %.1f s, launching again (retry %ld of %ld) ... ", verdict, res->elapsed_s, attempt,
           sj->measure->retries);
    fflush(stdout);
    status = keep_attempt_log(files, attempt);
    job_result_free(res);
  }
  if (status == MAPP_OK) json_object_set_new(res->record, "attempts", attempts);
  else json_decref(attempts);
  return status;
}

static int note_failure(sweep_tally *tally, const job *j, const char *verdict) {
  char *label = job_label(j);
  int status = label ? strv_pushf(&tally->failures, "%s: %s", label, verdict) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(label);
  return status;
}

/* Runs one job, appends its record and prints how it went. */
static int sweep_one(sweep_context *ctx, const sweep_job *sj, sweep_tally *tally) {
  const job *j = &sj->job;
  job_files files;
  job_result res = {0};
  MAPP_TRY(job_files_make(ctx->runs_dir, j, &files));
  int status = execute_with_retries(ctx, sj, &files, &res);
  if (status == MAPP_OK) status = judge_consistency(ctx, sj, &files, &res);
  if (status == MAPP_OK) status = results_append(ctx->results_file, res.record);
  if (status == MAPP_OK) {
    char verdict[64];
    job_outcome_text(&res, verdict, sizeof verdict);
    printf("%s %.1f s", verdict, res.elapsed_s);
    size_t attempts = json_array_size(json_object_get(res.record, "attempts"));
    if (attempts > 1) printf(" (attempt %zu)", attempts);
    if (res.outcome == OUTCOME_FAIL_UNCHECKED) print_missing_baseline(&res);
    else if (res.outcome == OUTCOME_FAIL_CONSISTENCY) print_inconsistency(&res);
    else if (res.outcome == OUTCOME_FAIL_CONTRACT) print_contract(j, &res);
    else if (res.outcome != OUTCOME_OK) print_failure_hint(j, &files);
    else print_unchecked(&res);
    printf("\n");
    ++tally->ran;
    tally->failed += res.outcome != OUTCOME_OK;
    tally->flaky += res.outcome == OUTCOME_OK && attempts > 1;
    if (res.outcome != OUTCOME_OK) status = note_failure(tally, j, verdict);
  }
  job_result_free(&res);
  job_files_free(&files);
  return status;
}

static int sweep_jobs_run(sweep_context *ctx, const sweep_jobs *jobs, sweep_tally *tally) {
  for (size_t i = 0; i < jobs->count; ++i) {
    const sweep_job *sj = &jobs->items[i];
    /* A repetition compares only with its own 1-rank answers. */
    if (i > 0 && sj->job.repetition != jobs->items[i - 1].job.repetition)
      consistency_book_clear(&ctx->book, ctx->keep_output);
    char *label = job_label(&sj->job), *key = job_key(&sj->job);
    if (!label || !key) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    printf("[%zu/%zu] %s ... ", i + 1, jobs->count, label);
    fflush(stdout);
    int status = MAPP_OK;
    if (sj->combo != COMBO_RUNNABLE) {
      printf("%s\n", skip_reason(sj->combo));
      ++tally->skipped_build;
      status = strv_push(&tally->skipped_keys, key);
      if (status == MAPP_OK) status = strv_push(&tally->skip_reasons, skip_reason(sj->combo));
    } else if (json_object_get(ctx->done, key)) {
      printf("skip (done)\n");
      ++tally->skipped_done;
    } else {
      status = sweep_one(ctx, sj, tally);
    }
    fflush(stdout);
    free(label);
    free(key);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

/* repetitions: auto: round after round, one more run of each configuration
 * still short of its precision and within its budget (rounds.h). */
static int sweep_rounds(sweep_context *ctx, const sweep_jobs *first, sweep_tally *tally) {
  rounds_tally judged = {0};
  bool any_auto = false;
  for (size_t i = 0; i < first->count; ++i) any_auto |= first->items[i].measure->auto_repetitions;
  for (int round = 2; any_auto; ++round) {
    sweep_jobs next;
    MAPP_TRY(rounds_next(first, ctx->results_file, &next, &judged));
    if (next.count == 0) break;
    printf("round %d (repetitions: auto): %zu configuration%s short of their precision\n", round, next.count,
           next.count == 1 ? "" : "s");
    consistency_book_clear(&ctx->book, ctx->keep_output);
    int status = sweep_jobs_run(ctx, &next, tally);
    sweep_jobs_free(&next);
    MAPP_TRY(status);
  }
  if (any_auto)
    printf("repetitions: auto: %zu configurations precise, %zu stopped at their budget (noisy), %zu at a failed run\n",
           judged.precise, judged.out_of_budget, judged.failed);
  return MAPP_OK;
}

static void print_summary(const sweep_spec *spec, const char *results_file, const sweep_tally *t) {
  printf("sweep %s: %zu ran (%zu ok, %zu failed), %zu skipped as not built, %zu already done\n", spec->name,
         t->ran, t->ran - t->failed, t->failed, t->skipped_build, t->skipped_done);
  if (t->flaky) printf("flaky: %zu run%s passed only after a retry\n", t->flaky, t->flaky == 1 ? "" : "s");
  for (size_t i = 0; i < t->failures.count; ++i) printf("failed: %s\n", t->failures.items[i]);
  printf("results: %s\n", results_file);
}

/* Before anything runs: a job the environment cannot place fails the sweep now. */
static int check_placement(const sweep_setup *setup) {
  for (size_t i = 0; i < setup->jobs.count; ++i)
    if (setup->jobs.items[i].combo == COMBO_RUNNABLE) MAPP_TRY(env_check_ranks(&setup->env, setup->jobs.items[i].job.ranks));
  return MAPP_OK;
}

typedef struct {
  const char *spec_path, *out, *env_path;
  bool resume, keep_output, dry_run;
  bool retry_failed; /* with resume: run the failed jobs again */
  const char *junit; /* write the JUnit file here (NULL: none) */
  bool history; /* add the finished sweep to the performance history */
  selection select;
} sweep_request;

/* The jobs of the spec a sweep runs: expanded, selected and placeable. */
static int sweep_open(const sweep_request *req, sweep_setup *setup) {
  MAPP_TRY(sweep_setup_open(req->spec_path, req->env_path, setup));
  int status = selection_filter_jobs(&req->select, &setup->jobs);
  if (status == MAPP_OK) status = check_placement(setup);
  if (status != MAPP_OK) sweep_setup_close(setup);
  return status;
}

/* --dry-run: the job table and its totals; nothing runs, nothing is written. */
static int sweep_dry_run(const sweep_request *req, const sweep_setup *setup) {
  sweep_paths paths;
  MAPP_TRY(sweep_paths_make(&setup->spec, req->out, &paths));
  int status = dry_run_print(setup, paths.dir, stdout);
  sweep_paths_free(&paths);
  return status;
}

/* --history: the sweep's records join OUT/history.sqlite (MAPP_HISTORY
 * overrides it), failed runs too (the history's series skip them). */
static int add_to_history(const char *out, char *results_file) {
  char *db = history_path_beside(out);
  int status = db ? history_add_results(db, &results_file, 1) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(db);
  return status;
}

/* --resume --retry-failed: failed records leave results.jsonl (kept aside). */
static int retry_failed(const char *results_file) {
  size_t moved;
  MAPP_TRY(sweep_set_failed_aside(results_file, &moved));
  printf("--retry-failed: %zu failed run%s to run again (their records kept in results-retried-*.jsonl)\n", moved,
         moved == 1 ? "" : "s");
  return MAPP_OK;
}

static int sweep(const sweep_request *req) {
  if (req->retry_failed && !req->resume)
    return mapp_fail(MAPP_ERR_INPUT, "--retry-failed runs the failed jobs of an earlier sweep again: it needs --resume");
  if (req->junit && !req->dry_run) MAPP_TRY(junit_check_path(req->junit));
  sweep_setup setup;
  MAPP_TRY(sweep_open(req, &setup));
  if (req->dry_run) {
    int status = sweep_dry_run(req, &setup);
    sweep_setup_close(&setup);
    return status;
  }
  sweep_paths paths = {0};
  json_t *done = NULL;
  int status = sweep_paths_prepare(&setup.spec, req->spec_path, req->out, req->resume, "sweep", &paths);
  if (status == MAPP_OK && req->retry_failed) status = retry_failed(paths.results_file);
  if (status == MAPP_OK) status = sweep_done_keys(paths.results_file, req->resume, &done);
  if (status == MAPP_OK) status = time_limits_apply(paths.dir, &setup);
  sweep_tally tally = {0};
  sweep_context ctx = {.env = &setup.env, .results_file = paths.results_file,
                       .runs_dir = paths.runs_dir, .done = done,
                       .opt = {.sweep = setup.spec.name, .check_baseline = true, .keep_output = true},
                       .keep_output = req->keep_output};
  if (status == MAPP_OK) status = sweep_jobs_run(&ctx, &setup.jobs, &tally);
  if (status == MAPP_OK) status = sweep_rounds(&ctx, &setup.jobs, &tally);
  consistency_book_clear(&ctx.book, req->keep_output);
  if (status == MAPP_OK && req->junit)
    status = junit_write_results(req->junit, setup.spec.name, paths.results_file, &tally.skipped_keys,
                                 &tally.skip_reasons);
  if (status == MAPP_OK) {
    print_summary(&setup.spec, paths.results_file, &tally);
    if (req->junit) printf("junit: %s\n", req->junit);
    status = tally.failed ? MAPP_ERR_VERIFY : MAPP_OK;
  }
  if (req->history && (status == MAPP_OK || status == MAPP_ERR_VERIFY)) {
    int added = add_to_history(req->out, paths.results_file);
    if (added != MAPP_OK) status = added;
  }
  json_decref(done);
  strv_free(&tally.failures);
  strv_free(&tally.skipped_keys);
  strv_free(&tally.skip_reasons);
  sweep_paths_free(&paths);
  sweep_setup_close(&setup);
  return status;
}

int verb_sweep(int argc, char **argv) {
  sweep_request req = {.out = "results"};
  const mapp_option opts[] = {
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &req.out, .help = "results root: records go to OUT/<name>/"},
      {.name = "resume", .kind = MAPP_OPT_FLAG, .dest = &req.resume,
       .help = "skip jobs already in results.jsonl (otherwise an earlier results.jsonl is moved aside)"},
      {.name = "junit", .kind = MAPP_OPT_STRING, .dest = &req.junit,
       .help = "also write the sweep's results as JUnit XML to this file (one test case per configuration)"},
      {.name = "retry-failed", .kind = MAPP_OPT_FLAG, .dest = &req.retry_failed,
       .help = "with --resume: run the jobs whose runs failed again (their records move to results-retried-*.jsonl)"},
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &req.env_path, .help = "environment file",
       .default_text = "envs/local.yaml"},
      {.name = "keep-output", .kind = MAPP_OPT_FLAG, .dest = &req.keep_output,
       .help = "keep the HDF5 answers of passing runs (failed runs always keep theirs)"},
      {.name = "dry-run", .kind = MAPP_OPT_FLAG, .dest = &req.dry_run,
       .help = "print the jobs (nodes, baselines, estimated core-seconds) and totals; run and write nothing"},
      {.name = "history", .kind = MAPP_OPT_FLAG, .dest = &req.history,
       .help = "add the sweep's records to the history OUT/history.sqlite ($MAPP_HISTORY; see mapp history)"},
      SELECTION_OPTIONS(&req.select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("sweep", "SPEC.yaml",
                          "Run every job of a sweep spec (apps x variants x backends x sizes x threads x ranks x\n"
                          "repetitions), appending one record per run to OUT/<name>/results.jsonl.\n"
                          "Exit 1 when any run failed (all runs are still attempted).",
                          opts, 1, 1, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) {
    req.spec_path = args.cli.positional[0];
    status = sweep(&req);
  }
  selection_free(&req.select);
  verb_args_free(&args);
  return status;
}
