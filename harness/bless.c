/* mapp bless APP: run the reference configuration and make its answer the
 * baseline of its case, with the tolerance, the provenance the app wrote
 * and why it was blessed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps.h"
#include "baseline.h"
#include "env.h"
#include "execute.h"
#include "fsutil.h"
#include "h5util.h"
#include "mapp_build_info.h"
#include "mapp_error.h"
#include "mapp_record.h"
#include "verbs.h"

typedef struct {
  const char *variant, *backend, *size, *scaling, *case_name, *reason, *model, *env_path;
  long ranks, threads;
  double bound;
} bless_options;

typedef struct {
  tolerance tol;
  const char *reason;
  char *command; /* the mapp bless command line */
} bless_stamp;

static int copy_fields(hid_t src, hid_t dst, const char *source_path) {
  strv names = {0};
  int status = h5_list_datasets(src, source_path, &names);
  if (status == MAPP_OK && names.count == 0) status = mapp_fail(MAPP_ERR_INPUT, "%s has no datasets", source_path);
  for (size_t i = 0; status == MAPP_OK && i < names.count; ++i)
    status = h5_copy_dataset_compressed(src, dst, names.items[i]);
  strv_free(&names);
  return status;
}

static int stamp_baseline(hid_t dst, const bless_stamp *stamp) {
  char now[64];
  mapp_utc_now(now, sizeof now);
  MAPP_TRY(h5_set_attr_string(dst, "tolerance", tolerance_model_name(stamp->tol.model)));
  MAPP_TRY(h5_set_attr_double(dst, "tolerance_bound", stamp->tol.bound));
  MAPP_TRY(h5_set_attr_string(dst, "blessed_reason", stamp->reason));
  MAPP_TRY(h5_set_attr_string(dst, "blessed_date", now));
  MAPP_TRY(h5_set_attr_string(dst, "blessed_command", stamp->command));
  return h5_set_attr_string(dst, "blessed_git_revision", mapp_git_revision);
}

/* Written beside the target and renamed over it, so a failed bless never
 * leaves a half-written baseline. */
static int write_baseline(const char *answer, const char *target, const bless_stamp *stamp) {
  char *tmp = str_printf("%s.tmp", target);
  if (!tmp) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  h5_quiet();
  hid_t src = -1, dst = -1;
  int status = h5_open_read(answer, &src);
  if (status == MAPP_OK) status = h5_create(tmp, &dst);
  if (status == MAPP_OK) status = h5_copy_attributes(src, dst);
  if (status == MAPP_OK) status = copy_fields(src, dst, answer);
  if (status == MAPP_OK) status = stamp_baseline(dst, stamp);
  h5_close(dst);
  h5_close(src);
  if (status == MAPP_OK && rename(tmp, target) != 0)
    status = mapp_fail(MAPP_ERR_INPUT, "cannot write %s", target);
  if (status != MAPP_OK) unlink(tmp);
  free(tmp);
  return status;
}

static int resolve_case(const bless_options *o, const job_result *res, const char **case_name) {
  *case_name = o->case_name ? o->case_name : json_string_value(json_object_get(res->record, "case"));
  if (!*case_name)
    return mapp_fail(MAPP_ERR_INPUT, "the run names no baseline case (a custom problem); pass --case NAME");
  if (strchr(*case_name, '/') || (*case_name)[0] == '.' || (*case_name)[0] == '\0')
    return mapp_fail(MAPP_ERR_INPUT, "--case must be a plain file name, got '%s'", *case_name);
  return MAPP_OK;
}

/* The answer is blessed only when the app's own verification passed. */
static int require_pass(const job_result *res, const char *log) {
  if (res->outcome == OUTCOME_OK) return MAPP_OK;
  char verdict[64];
  job_outcome_text(res, verdict, sizeof verdict);
  fprintf(stderr, "last lines of %s:\n", log);
  proc_print_log_tail(log, 12, stderr);
  return mapp_fail(res->outcome == OUTCOME_FAIL_VERIFY ? MAPP_ERR_VERIFY : job_exit_status(res),
                   "the reference run did not pass (%s); nothing blessed", verdict);
}

static int install_baseline(const job *j, const job_files *files, const job_result *res, const bless_options *o,
                            const bless_stamp *stamp) {
  const char *case_name;
  MAPP_TRY(resolve_case(o, res, &case_name));
  char *target = baseline_path(j->app, case_name);
  char *dir = target ? path_dirname(target) : NULL;
  int status = dir ? make_dirs(dir) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = write_baseline(files->output, target, stamp);
  if (status == MAPP_OK)
    printf("blessed %s (%s %s/%s n=%ld, tolerance %s %g): %s\n", target, j->app, j->variant, j->backend,
           j->ranks, tolerance_model_name(stamp->tol.model), stamp->tol.bound, stamp->reason);
  free(dir);
  free(target);
  return status;
}

static int bless_run(const harness_env *env, const job *j, const bless_options *o, bless_stamp *stamp) {
  char dir_template[] = "/tmp/mapp-bless-XXXXXX";
  if (!mkdtemp(dir_template)) return mapp_fail(MAPP_ERR_SYSTEM, "cannot create a temporary folder");
  job_files files;
  job_result res = {0};
  execute_options opt = {.check_baseline = false, .keep_output = true};
  int status = job_files_make(dir_template, j, &files);
  if (status == MAPP_OK) status = job_execute(env, j, &files, &opt, &res);
  if (status == MAPP_OK) status = require_pass(&res, files.log);
  if (status == MAPP_OK) status = install_baseline(j, &files, &res, o, stamp);
  unlink(files.output);
  unlink(files.result);
  unlink(files.log);
  rmdir(dir_template);
  job_result_free(&res);
  job_files_free(&files);
  return status;
}

static int bless_app(const bless_options *o, const char *app_name, const strv *extra, bless_stamp *stamp) {
  harness_env env;
  MAPP_TRY(env_load(o->env_path, &env));
  app_info app = {0};
  int status = app_query(app_name, &env, &app);
  job j = {.app = app_name, .backend = o->backend, .size = o->size, .scaling = o->scaling, .ranks = o->ranks,
           .threads = o->threads, .repetition = -1, .extra_args = extra};
  if (status == MAPP_OK) j.variant = o->variant ? o->variant : app.variants[0].name;
  if (status == MAPP_OK && app_combo(&app, j.variant, j.backend) != COMBO_RUNNABLE)
    status = mapp_fail(MAPP_ERR_INPUT, "%s %s/%s cannot run in this build (see mapp list)", app_name, j.variant,
                       j.backend);
  if (status == MAPP_OK) status = bless_run(&env, &j, o, stamp);
  app_info_free(&app);
  env_free(&env);
  return status;
}

int verb_bless(int argc, char **argv) {
  bless_options o = {.backend = "serial", .size = "tiny", .scaling = "strong", .model = "exact",
                     .reason = "not stated", .ranks = 1, .threads = 1, .bound = 0.0};
  const mapp_option opts[] = {
      {.name = "size", .kind = MAPP_OPT_CHOICE, .dest = &o.size, .choices = "tiny|small|medium|large",
       .help = "problem size preset"},
      {.name = "scaling", .kind = MAPP_OPT_CHOICE, .dest = &o.scaling, .choices = "weak|strong",
       .help = "scaling mode (weak cases need --ranks: the global problem grows with them)"},
      {.name = "ranks", .kind = MAPP_OPT_LONG, .dest = &o.ranks, .min = 1, .max = 4096,
       .help = "MPI ranks of the reference run (also -n)"},
      {.name = "variant", .kind = MAPP_OPT_STRING, .dest = &o.variant, .help = "reference variant",
       .default_text = "the app's first"},
      {.name = "backend", .kind = MAPP_OPT_CHOICE, .dest = &o.backend, .choices = "serial|omp|cuda",
       .help = "reference backend"},
      {.name = "threads", .kind = MAPP_OPT_LONG, .dest = &o.threads, .min = 1, .max = 4096,
       .help = "OpenMP threads per rank"},
      {.name = "case", .kind = MAPP_OPT_STRING, .dest = &o.case_name, .help = "baseline case name",
       .default_text = "the case the app's record names"},
      {.name = "reason", .kind = MAPP_OPT_STRING, .dest = &o.reason, .help = "why the baseline changes (recorded)"},
      {.name = "model", .kind = MAPP_OPT_STRING, .dest = &o.model, .choices = "exact|abs|rel|ulp",
       .help = "tolerance model checks will use"},
      {.name = "bound", .kind = MAPP_OPT_DOUBLE, .dest = &o.bound, .dmin = 0.0, .dmax = 1e300,
       .help = "tolerance bound"},
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &o.env_path, .help = "environment file",
       .default_text = "envs/local.yaml"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("bless", "APP", "Run the app's reference configuration and write its answer as\n"
                          "baselines/APP/CASE.h5 with tolerance, provenance and reason. Flags after -- go to the app.",
                          opts, 1, 1, true, argc, argv, &args);
  bless_stamp stamp = {.reason = o.reason, .tol.bound = o.bound};
  if (status == MAPP_OK && !args.help_shown) status = tolerance_parse_model(o.model, &stamp.tol.model);
  if (status == MAPP_OK && !args.help_shown && !(stamp.command = verb_command_line(argc, argv)))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !args.help_shown) status = bless_app(&o, args.cli.positional[0], &args.passthrough, &stamp);
  free(stamp.command);
  verb_args_free(&args);
  return status;
}
