/* mapp run APP: one launch through the environment, its record, its
 * baseline check, one row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"
#include "env.h"
#include "execute.h"
#include "fsutil.h"
#include "mapp_error.h"
#include "verbs.h"

typedef struct {
  const char *variant, *backend, *size, *scaling, *env_path, *out;
  long ranks, threads;
} run_options;

/* Unset variant means the app's first (reference) variant. */
static int resolve_job(const app_info *app, const run_options *o, const strv *extra, job *j) {
  *j = (job){.app = app->name, .variant = o->variant ? o->variant : app->variants[0].name,
             .backend = o->backend, .size = o->size, .scaling = o->scaling, .ranks = o->ranks,
             .threads = o->threads, .repetition = -1, .extra_args = extra, .exe = app->exe,
             .baselines = app->baselines};
  switch (app_combo(app, j->variant, j->backend)) {
  case COMBO_RUNNABLE: return MAPP_OK;
  case COMBO_UNKNOWN_VARIANT: return mapp_fail(MAPP_ERR_INPUT, "%s has no variant '%s' (see mapp list)", j->app, j->variant);
  case COMBO_NOT_WRITTEN:
    return mapp_fail(MAPP_ERR_INPUT, "%s variant %s has no %s backend (see mapp list)", j->app, j->variant, j->backend);
  case COMBO_NOT_BUILT:
    return mapp_fail(MAPP_ERR_INPUT, "%s variant %s: the %s backend is not built in this build", j->app,
                     j->variant, j->backend);
  case COMBO_NO_DEVICE:
    return mapp_fail(MAPP_ERR_INPUT, "%s variant %s: the %s backend has no device on this machine", j->app,
                     j->variant, j->backend);
  }
  return MAPP_OK;
}

static void print_row(const job *j, const job_result *res) {
  const json_t *r = res->record, *fom = json_object_get(r, "fom");
  const char *verify = json_string_value(json_object_get(json_object_get(r, "verification"), "status"));
  const char *base = json_string_value(json_object_get(json_object_get(r, "baseline"), "status"));
  const char *unit = json_string_value(json_object_get(fom, "name"));
  char fom_text[64] = "-";
  if (json_is_number(json_object_get(fom, "value")))
    snprintf(fom_text, sizeof fom_text, "%.4g %s", json_number_value(json_object_get(fom, "value")), unit ? unit : "");
  printf("%-10s %-10s %-8s %5s %7s %-7s %-28s %-7s %-9s %s\n", "app", "variant", "backend", "ranks", "threads",
         "size", "fom", "verify", "baseline", "time");
  printf("%-10s %-10s %-8s %5ld %7ld %-7s %-28s %-7s %-9s %.2f s\n", j->app, j->variant, j->backend, j->ranks,
         j->threads, j->size, fom_text, verify ? verify : "-", base ? base : "-", res->elapsed_s);
}

/* A baseline failure shows its fields; a failed launch the app's own error
 * line when it printed one, else the end of the log. */
static void explain_failure(const job *j, const job_result *res, const job_files *files) {
  if (res->outcome == OUTCOME_FAIL_BASELINE) {
    const char *error = json_string_value(json_object_get(json_object_get(res->record, "baseline"), "error"));
    if (error) printf("baseline: %s\n", error);
    compare_report_print(&res->baseline, stdout);
    return;
  }
  if (res->outcome == OUTCOME_OK) return;
  char prog[64];
  snprintf(prog, sizeof prog, "mapp-%s", j->app);
  if (res->outcome == OUTCOME_FAIL_CONTRACT) {
    mapp_fail(job_exit_status(res), "%s broke the mapp contract: %s (docs/contract.md)", prog, res->contract_error);
    return;
  }
  char *message = proc_log_error(files->log, prog);
  if (message && res->outcome == OUTCOME_FAIL_EXIT) {
    mapp_fail(job_exit_status(res), "%s exited with %d: %s (log: %s)", prog, res->exit_code, message, files->log);
  } else {
    fprintf(stderr, "last lines of %s:\n", files->log);
    proc_print_log_tail(files->log, 12, stderr);
    if (res->outcome == OUTCOME_FAIL_EXIT)
      mapp_fail(job_exit_status(res), "%s exited with %d (log: %s)", prog, res->exit_code, files->log);
  }
  free(message);
}

static int run_app(const run_options *o, const char *app_name, const strv *extra) {
  harness_env env;
  MAPP_TRY(env_load(o->env_path, &env));
  app_info app = {0};
  job j;
  job_result res = {0};
  job_files files = {0};
  execute_options opt = {.check_baseline = true, .keep_output = true};
  int status = env_check_ranks(&env, o->ranks);
  if (status == MAPP_OK) status = app_query(app_name, &env, &app);
  if (status == MAPP_OK) status = resolve_job(&app, o, extra, &j);
  if (status == MAPP_OK) env_apply_to_job(&env, &j);
  if (status == MAPP_OK) status = make_dirs(o->out);
  if (status == MAPP_OK) status = job_files_make(o->out, &j, &files);
  if (status == MAPP_OK) status = job_execute(&env, &j, &files, &opt, &res);
  if (status == MAPP_OK) {
    print_row(&j, &res);
    if (path_exists(files.result)) printf("record: %s\n", files.result);
    explain_failure(&j, &res, &files);
    status = job_exit_status(&res);
  }
  job_files_free(&files);
  job_result_free(&res);
  app_info_free(&app);
  env_free(&env);
  return status;
}

int verb_run(int argc, char **argv) {
  run_options o = {.backend = "serial", .size = "tiny", .scaling = "strong", .out = "results/run",
                   .ranks = 1, .threads = 1};
  const mapp_option opts[] = {
      {.name = "ranks", .kind = MAPP_OPT_LONG, .dest = &o.ranks, .min = 1, .max = 1 << 20,
       .help = "MPI ranks (also -n)"},
      {.name = "variant", .kind = MAPP_OPT_STRING, .dest = &o.variant, .help = "implementation variant",
       .default_text = "the app's first"},
      {.name = "backend", .kind = MAPP_OPT_STRING, .dest = &o.backend, .help = "backend (see mapp list)"},
      {.name = "size", .kind = MAPP_OPT_STRING, .dest = &o.size,
       .help = "problem size preset"},
      {.name = "scaling", .kind = MAPP_OPT_CHOICE, .dest = &o.scaling, .choices = "weak|strong",
       .help = "weak: the size is per rank; strong: the size is global"},
      {.name = "threads", .kind = MAPP_OPT_LONG, .dest = &o.threads, .min = 1, .max = 4096,
       .help = "OpenMP threads per rank (sets OMP_NUM_THREADS)"},
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &o.env_path, .help = "environment file",
       .default_text = "envs/local.yaml"},
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &o.out, .help = "folder for the answer, record and log"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("run", "APP", "Run one mini-app through the environment's launcher, check its answer "
                          "against its baseline\nand print one row. Flags after -- go to the app.",
                          opts, 1, 1, true, argc, argv, &args);
  /* The size and backend name files of the run: one plain name each (the
   * app itself says whether it has them). */
  const char *named[] = {o.size, o.backend};
  for (size_t i = 0; status == MAPP_OK && !args.help_shown && i < 2; ++i)
    if (!named[i][0] || named[i][0] == '.' ||
        strspn(named[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(named[i]))
      status = mapp_fail(MAPP_ERR_INPUT, "--%s must be a plain name (letters, digits, '.', '_', '-'), got '%s'",
                         i ? "backend" : "size", named[i]);
  if (status == MAPP_OK && !args.help_shown) status = run_app(&o, args.cli.positional[0], &args.passthrough);
  verb_args_free(&args);
  return status;
}
