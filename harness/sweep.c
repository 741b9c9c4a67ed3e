/* mapp sweep SPEC.yaml: every job of the spec, one record per run appended
 * to results/<name>/results.jsonl as it ends, progress on stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execute.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "results.h"
#include "spec.h"
#include "sweep_setup.h"
#include "verbs.h"

typedef struct {
  size_t ran, failed, skipped_build, skipped_done;
} sweep_tally;

typedef struct {
  const harness_env *env;
  const char *results_file, *runs_dir;
  json_t *done; /* keys already in results.jsonl (resume) */
  execute_options opt;
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

/* Runs one job, appends its record and prints how it went. */
static int sweep_one(const sweep_context *ctx, const job *j, sweep_tally *tally) {
  job_files files;
  job_result res;
  MAPP_TRY(job_files_make(ctx->runs_dir, j, &files));
  int status = job_execute(ctx->env, j, &files, &ctx->opt, &res);
  if (status == MAPP_OK) status = results_append(ctx->results_file, res.record);
  if (status == MAPP_OK) {
    char verdict[64];
    job_outcome_text(&res, verdict, sizeof verdict);
    printf("%s %.1f s", verdict, res.elapsed_s);
    if (res.outcome != OUTCOME_OK) print_failure_hint(j, &files);
    printf("\n");
    ++tally->ran;
    tally->failed += res.outcome != OUTCOME_OK;
  }
  job_result_free(&res);
  job_files_free(&files);
  return status;
}

static int sweep_jobs_run(const sweep_context *ctx, const sweep_jobs *jobs, sweep_tally *tally) {
  for (size_t i = 0; i < jobs->count; ++i) {
    const sweep_job *sj = &jobs->items[i];
    char *label = job_label(&sj->job), *key = job_key(&sj->job);
    if (!label || !key) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    printf("[%zu/%zu] %s ... ", i + 1, jobs->count, label);
    fflush(stdout);
    int status = MAPP_OK;
    if (sj->combo != COMBO_RUNNABLE) {
      printf("%s\n", skip_reason(sj->combo));
      ++tally->skipped_build;
    } else if (json_object_get(ctx->done, key)) {
      printf("skip (done)\n");
      ++tally->skipped_done;
    } else {
      status = sweep_one(ctx, &sj->job, tally);
    }
    fflush(stdout);
    free(label);
    free(key);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

static void print_summary(const sweep_spec *spec, const char *results_file, const sweep_tally *t) {
  printf("sweep %s: %zu ran (%zu ok, %zu failed), %zu skipped as not built, %zu already done\n", spec->name,
         t->ran, t->ran - t->failed, t->failed, t->skipped_build, t->skipped_done);
  printf("results: %s\n", results_file);
}

/* Before anything runs: a job the environment cannot place fails the sweep now. */
static int check_placement(const sweep_setup *setup) {
  for (size_t i = 0; i < setup->jobs.count; ++i)
    if (setup->jobs.items[i].combo == COMBO_RUNNABLE) MAPP_TRY(env_check_ranks(&setup->env, setup->jobs.items[i].job.ranks));
  return MAPP_OK;
}

static int sweep(const char *spec_path, const char *out, const char *env_path, bool resume, bool keep_output) {
  sweep_setup setup;
  MAPP_TRY(sweep_setup_open(spec_path, env_path, &setup));
  sweep_paths paths = {0};
  json_t *done = NULL;
  int status = check_placement(&setup);
  if (status == MAPP_OK) status = sweep_paths_prepare(&setup.spec, spec_path, out, resume, "sweep", &paths);
  if (status == MAPP_OK) status = sweep_done_keys(paths.results_file, resume, &done);
  sweep_tally tally = {0};
  sweep_context ctx = {.env = &setup.env, .results_file = paths.results_file,
                       .runs_dir = paths.runs_dir, .done = done,
                       .opt = {.sweep = setup.spec.name, .check_baseline = true, .keep_output = keep_output}};
  if (status == MAPP_OK) status = sweep_jobs_run(&ctx, &setup.jobs, &tally);
  if (status == MAPP_OK) {
    print_summary(&setup.spec, paths.results_file, &tally);
    status = tally.failed ? MAPP_ERR_VERIFY : MAPP_OK;
  }
  json_decref(done);
  sweep_paths_free(&paths);
  sweep_setup_close(&setup);
  return status;
}

int verb_sweep(int argc, char **argv) {
  const char *out = "results", *env_path = NULL;
  bool resume = false, keep_output = false;
  const mapp_option opts[] = {
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &out, .help = "results root: records go to OUT/<name>/"},
      {.name = "resume", .kind = MAPP_OPT_FLAG, .dest = &resume,
       .help = "skip jobs already in results.jsonl (otherwise an earlier results.jsonl is moved aside)"},
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &env_path, .help = "environment file",
       .default_text = "envs/local.yaml"},
      {.name = "keep-output", .kind = MAPP_OPT_FLAG, .dest = &keep_output,
       .help = "keep the HDF5 answers of passing runs (failed runs always keep theirs)"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("sweep", "SPEC.yaml",
                          "Run every job of a sweep spec (apps x variants x backends x sizes x threads x ranks x\n"
                          "repetitions), appending one record per run to OUT/<name>/results.jsonl.\n"
                          "Exit 1 when any run failed (all runs are still attempted).",
                          opts, 1, 1, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) status = sweep(args.cli.positional[0], out, env_path, resume, keep_output);
  verb_args_free(&args);
  return status;
}
