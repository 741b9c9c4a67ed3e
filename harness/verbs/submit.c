/* mapp submit SPEC --env ENV: one batch script per configuration (all its
 * repetitions), submitted with sbatch; `mapp collect` (collect.c) gathers
 * the records of the jobs that finished. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dryrun.h"
#include "fsutil.h"
#include "launch.h"
#include "mapp_error.h"
#include "proc.h"
#include "results.h"
#include "selection.h"
#include "sweep_setup.h"
#include "timelimit.h"
#include "verbs.h"

/* The shell helper every script runs its repetitions through: the exit code
 * and elapsed seconds go to a .status file, which is how `collect` knows a
 * repetition ended (and how it went) without asking the scheduler. */
/* mapp_run STATUS LOG LIMIT LAUNCH...: the launch under its time limit
 * (timeout: SIGTERM at LIMIT seconds, SIGKILL 5 s later; exit 124 or 137,
 * which collect records as a timeout), its exit and seconds into STATUS. */
static const char run_helper[] =
    "mapp_run() {\n"
    "  local status_file=$1 log=$2 limit=$3\n"
    "  shift 3\n"
    "  local start end rc\n"
    "  start=$(date +%s.%N)\n"
    "  timeout --kill-after=5 \"$limit\" \"$@\" >\"$log\" 2>&1\n"
    "  rc=$?\n"
    "  end=$(date +%s.%N)\n"
    "  echo \"$rc $(awk -v a=\"$start\" -v b=\"$end\" 'BEGIN { print b - a }')\" >\"$status_file\"\n"
    "}\n";


typedef struct {
  const sweep_setup *setup;
  const sweep_paths *paths; /* absolute */
} submit_context;

/* A value for an #SBATCH line: sbatch reads it up to the first blank (and
 * an unquoted '#' starts a comment) unless it is in double quotes, inside
 * which a backslash escapes the next character. A line break cannot be
 * carried at all, so a name with one is refused here rather than failing at
 * sbatch or cutting a path at its first space. malloc'd into *quoted. */
static int sbatch_quote(const char *what, const char *value, char **quoted) {
  *quoted = NULL;
  for (const char *c = value; *c; ++c)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      return mapp_fail(MAPP_ERR_INPUT, "%s has a control character (byte %d at offset %d) that an #SBATCH line "
                                       "cannot carry", what, (int)(unsigned char)*c, (int)(c - value));
  char *out = malloc(2 * strlen(value) + 3), *o = out;
  if (!out) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  *o++ = '"';
  for (const char *c = value; *c; ++c) {
    if (*c == '"' || *c == '\\') *o++ = '\\';
    *o++ = *c;
  }
  *o++ = '"';
  *o = '\0';
  *quoted = out;
  return MAPP_OK;
}

/* "#SBATCH --NAME=\"VALUE\"" with VALUE printf'd from fmt. */
static int push_quoted_directive(strv *lines, const char *name, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int push_quoted_directive(strv *lines, const char *name, const char *what, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *value = str_vprintf(fmt, ap), *quoted = NULL;
  va_end(ap);
  int status = value ? sbatch_quote(what, value, &quoted) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = strv_pushf(lines, "#SBATCH --%s=%s", name, quoted);
  free(quoted);
  free(value);
  return status;
}

/* --time without the environment's `time:`: the sum of the script's runs'
 * limits (the sweep's rule, timelimit.h) and a minute for the job's own
 * start, as H:MM:SS. */
static int push_time_directive(strv *lines, const job *j, long repetitions) {
  long seconds = (long)ceil((double)repetitions * j->time_limit) + 60;
  return strv_pushf(lines, "#SBATCH --time=%ld:%02ld:%02ld", seconds / 3600, seconds / 60 % 60, seconds % 60);
}

static int push_directives(strv *lines, const harness_env *env, const job *j, long repetitions, const char *stem,
                           const char *sweep_name, const char *jobs_dir) {
  long nodes;
  MAPP_TRY(env_node_count(env, j, &nodes));
  MAPP_TRY(strv_push(lines, "#!/bin/bash"));
  MAPP_TRY(push_quoted_directive(lines, "job-name", "the job name", "mapp-%s-%s", sweep_name, stem));
  if (env->partition) MAPP_TRY(strv_pushf(lines, "#SBATCH --partition=%s", env->partition));
  if (env->account) MAPP_TRY(strv_pushf(lines, "#SBATCH --account=%s", env->account));
  if (env->time_limit) MAPP_TRY(strv_pushf(lines, "#SBATCH --time=%s", env->time_limit));
  else MAPP_TRY(push_time_directive(lines, j, repetitions));
  MAPP_TRY(strv_pushf(lines, "#SBATCH --nodes=%ld", nodes));
  MAPP_TRY(strv_pushf(lines, "#SBATCH --ntasks=%ld", j->ranks));
  MAPP_TRY(strv_pushf(lines, "#SBATCH --cpus-per-task=%ld", j->threads));
  if (j->gpus > 0) MAPP_TRY(strv_pushf(lines, "#SBATCH --gpus-per-task=%ld", j->gpus));
  if (j->gpus > 0 && env->gpu_bind) MAPP_TRY(strv_pushf(lines, "#SBATCH --gpu-bind=%s", env->gpu_bind));
  MAPP_TRY(push_quoted_directive(lines, "output", "the jobs folder", "%s/%s.out", jobs_dir, stem));
  for (size_t i = 0; i < env->directives.count; ++i)
    MAPP_TRY(strv_pushf(lines, "#SBATCH %s", env->directives.items[i]));
  return MAPP_OK;
}

/* Modules first (their scripts may set variables the job's must override). */
static int push_environment(strv *lines, const harness_env *env, const job *j) {
  for (size_t i = 0; i < env->modules.count; ++i) MAPP_TRY(strv_pushf(lines, "module load %s", env->modules.items[i]));
  strv names = {0}, values = {0};
  int status = launch_variables(env, j, &names, &values);
  for (size_t i = 0; status == MAPP_OK && i < names.count; ++i) {
    char *quoted = shell_quote(values.items[i]);
    status = quoted ? strv_pushf(lines, "export %s=%s", names.items[i], quoted) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(quoted);
  }
  strv_free(&names);
  strv_free(&values);
  return status;
}

/* The script line of repetition j->repetition ("mapp_run STATUS LOG LAUNCH...",
 * every word quoted for the shell) and the launch alone for its record. */
static int launch_line(const harness_env *env, const job *j, const char *runs_dir, char **line, char **launch) {
  job_files files;
  MAPP_TRY(job_files_make(runs_dir, j, &files));
  strv argv = {0}, words = {0};
  char *stem = job_stem(j);
  int status = stem ? launch_command(env, j, &files, &argv) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = strv_push(&words, "mapp_run");
  if (status == MAPP_OK) status = strv_pushf(&words, "%s/%s.status", runs_dir, stem);
  if (status == MAPP_OK) status = strv_push(&words, files.log);
  if (status == MAPP_OK) status = strv_pushf(&words, "%g", j->time_limit);
  if (status == MAPP_OK) status = strv_extend(&words, &argv);
  *launch = status == MAPP_OK ? strv_join_shell(&argv) : NULL;
  *line = *launch ? strv_join_shell(&words) : NULL;
  if (status == MAPP_OK && !*line) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(stem);
  strv_free(&words);
  strv_free(&argv);
  job_files_free(&files);
  return status;
}

/* The whole script of a configuration (j is its repetition 0), running its
 * entry's repetitions: under repetitions: auto, the first round only (the
 * later rounds judge records as they arrive, which mapp sweep does). */
static int batch_script(const submit_context *ctx, const job *j, long repetitions, const char *stem,
                        json_t *launches, char **script) {
  const harness_env *env = &ctx->setup->env;
  strv lines = {0};
  int status = push_directives(&lines, env, j, repetitions, stem, ctx->setup->spec.name, ctx->paths->jobs_dir);
  if (status == MAPP_OK)
    status = strv_pushf(&lines, "# Generated by `mapp submit` from %s for environment %s (%s).\n"
                        "# `mapp collect %s` gathers the records when the job has ended.",
                        ctx->setup->spec.origin, env->name, env->origin, ctx->paths->dir);
  if (status == MAPP_OK) status = push_environment(&lines, env, j);
  if (status == MAPP_OK) status = strv_push(&lines, run_helper);
  for (long rep = 0; status == MAPP_OK && rep < repetitions; ++rep) {
    job r = *j;
    r.repetition = rep;
    char *line = NULL, *launch = NULL;
    status = launch_line(env, &r, ctx->paths->runs_dir, &line, &launch);
    if (status == MAPP_OK) status = strv_push(&lines, line);
    if (status == MAPP_OK) json_array_append_new(launches, json_string(launch));
    free(line);
    free(launch);
  }
  if (status == MAPP_OK && !(*script = strv_join(&lines, "\n"))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  strv_free(&lines);
  return status;
}

/* What collect needs to name the job's files and keys again: its
 * configuration and what sets it apart (the entry's label and args). */
static json_t *job_entry(const job *j, const char *stem, const char *script_path, json_t *launches) {
  json_t *args = json_array();
  for (size_t i = 0; j->extra_args && i < j->extra_args->count; ++i)
    json_array_append_new(args, json_string(j->extra_args->items[i]));
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s?, s:s?, s:o, s:s, s:o, s:n}", "stem", stem, "app",
                   j->app, "variant", j->variant, "backend", j->backend, "size", j->size, "scaling", j->scaling,
                   "ranks", (json_int_t)j->ranks, "threads", (json_int_t)j->threads, "label", j->label,
                   "baselines", j->baselines, "args", args, "script", script_path, "launches", launches, "job_id");
}

/* sbatch --parsable prints "ID" or "ID;CLUSTER". */
static int sbatch(const char *script_path, char **job_id) {
  strv argv = {0};
  char *text = NULL;
  proc_outcome outcome;
  int status = strv_push(&argv, "sbatch");
  if (status == MAPP_OK) status = strv_push(&argv, "--parsable");
  if (status == MAPP_OK) status = strv_push(&argv, script_path);
  proc_request req = {.argv = &argv};
  if (status == MAPP_OK) status = proc_capture(&req, &text, &outcome);
  if (status == MAPP_OK && outcome.exit_code != 0)
    status = mapp_fail(MAPP_ERR_SYSTEM, "sbatch %s failed with exit code %d", script_path, outcome.exit_code);
  if (status == MAPP_OK) {
    text[strcspn(text, ";\n")] = '\0';
    *job_id = strdup(text);
  }
  free(text);
  strv_free(&argv);
  return status;
}

static int write_jobs_file(const submit_context *ctx, json_t *entries) {
  char *path = path_join(ctx->paths->dir, "jobs.json");
  json_t *doc = json_pack("{s:s, s:s, s:s, s:I, s:O}", "sweep", ctx->setup->spec.name, "env", ctx->setup->env.origin,
                          "runs_dir", ctx->paths->runs_dir, "repetitions", (json_int_t)ctx->setup->spec.repetitions,
                          "jobs", entries);
  char *text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
  int status = path && text ? write_text_file(path, text) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(text);
  json_decref(doc);
  free(path);
  return status;
}

/* Prints (dry run) or writes and submits the script of one configuration. */
static int submit_one(const submit_context *ctx, const sweep_job *sj, bool dry_run, json_t *entries) {
  const job *j = &sj->job;
  job configuration = *j; /* all repetitions: the stem without -rK, with the entry's label or args */
  configuration.repetition = -1;
  char *stem = job_stem(&configuration);
  char *script_path = stem ? str_printf("%s/%s.sbatch", ctx->paths->jobs_dir, stem) : NULL;
  json_t *launches = json_array();
  char *script = NULL, *job_id = NULL;
  int status = script_path ? batch_script(ctx, j, sj->measure->repetitions, stem, launches, &script) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && dry_run) printf("# ---- %s\n%s\n", script_path, script);
  if (status == MAPP_OK && !dry_run) status = write_text_file(script_path, script);
  if (status == MAPP_OK && !dry_run) status = sbatch(script_path, &job_id);
  if (status == MAPP_OK && !dry_run) {
    json_t *entry = job_entry(j, stem, script_path, json_incref(launches));
    json_object_set_new(entry, "job_id", json_string(job_id));
    json_object_set_new(entry, "repetitions", json_integer(sj->measure->repetitions));
    json_object_set_new(entry, "time_limit", json_real(j->time_limit));
    /* the environment's system: (absent: collect records each run's host) */
    if (ctx->setup->env.system) json_object_set_new(entry, "system", json_string(ctx->setup->env.system));
    json_array_append_new(entries, entry);
    status = write_jobs_file(ctx, entries);
    printf("submitted %s as job %s\n", script_path, job_id);
  }
  json_decref(launches);
  free(job_id);
  free(script);
  free(script_path);
  free(stem);
  return status;
}

static int make_absolute(sweep_paths *p) {
  char **fields[] = {&p->dir, &p->results_file, &p->runs_dir, &p->jobs_dir};
  for (size_t i = 0; i < 4; ++i) {
    char *abs = path_absolute(*fields[i]);
    if (!abs) return mapp_fail(MAPP_ERR_SYSTEM, "cannot resolve %s", *fields[i]);
    free(*fields[i]);
    *fields[i] = abs;
  }
  return MAPP_OK;
}

static int prepare_paths(const sweep_setup *setup, const char *spec_path, const char *out, bool dry_run,
                         sweep_paths *paths) {
  if (dry_run) MAPP_TRY(sweep_paths_make(&setup->spec, out, paths));
  else MAPP_TRY(sweep_paths_prepare(&setup->spec, spec_path, out, true, "submit", paths));
  MAPP_TRY(make_absolute(paths));
  return dry_run ? MAPP_OK : make_dirs(paths->jobs_dir);
}

static int submit(const char *spec_path, const char *env_path, const char *out, bool dry_run, const selection *select) {
  sweep_setup setup;
  MAPP_TRY(sweep_setup_open(spec_path, env_path, &setup));
  sweep_paths paths = {0};
  json_t *entries = json_array();
  int status = selection_filter_jobs(select, &setup.jobs);
  if (status == MAPP_OK && setup.env.scheduler != SCHEDULER_SLURM)
    status = mapp_fail(MAPP_ERR_INPUT, "environment %s (%s) has no batch scheduler: use mapp sweep", setup.env.name,
                       setup.env.origin);
  if (status == MAPP_OK) status = prepare_paths(&setup, spec_path, out, dry_run, &paths);
  if (status == MAPP_OK) status = time_limits_apply(paths.dir, &setup);
  /* the table first: jobs, nodes, baselines and core-seconds before 400 scripts */
  if (status == MAPP_OK && dry_run) status = dry_run_print(&setup, paths.dir, stdout);
  submit_context ctx = {.setup = &setup, .paths = &paths};
  size_t scripts = 0, automatic = 0;
  for (size_t i = 0; status == MAPP_OK && i < setup.jobs.count; ++i) {
    const sweep_job *sj = &setup.jobs.items[i];
    /* A device missing here is no reason to skip: the job runs on the cluster's. */
    if (sj->job.repetition != 0 || (sj->combo != COMBO_RUNNABLE && sj->combo != COMBO_NO_DEVICE)) continue;
    status = submit_one(&ctx, sj, dry_run, entries);
    ++scripts;
    automatic += sj->measure->auto_repetitions;
  }
  if (status == MAPP_OK)
    printf("%s%zu batch script%s for %s (%ld repetition%s each unless its entry says otherwise)\n",
           dry_run ? "dry run: " : "", scripts, scripts == 1 ? "" : "s", setup.spec.name, setup.spec.repetitions,
           setup.spec.repetitions == 1 ? "" : "s");
  if (status == MAPP_OK && automatic)
    printf("%zu of them repetitions: auto: a batch script runs the first round only; the rounds that follow until "
           "the median is precise need mapp sweep\n", automatic);
  json_decref(entries);
  sweep_paths_free(&paths);
  sweep_setup_close(&setup);
  return status;
}

int verb_submit(int argc, char **argv) {
  const char *env_path = NULL, *out = "results";
  bool dry_run = false;
  selection select = {0};
  const mapp_option opts[] = {
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &env_path, .help = "environment file with scheduler: slurm"},
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &out, .help = "results root: OUT/<name>/{jobs,runs}"},
      {.name = "dry-run", .kind = MAPP_OPT_FLAG, .dest = &dry_run,
       .help = "print the job table (nodes, baselines, core-seconds) and the scripts; write and submit nothing"},
      SELECTION_OPTIONS(&select),
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("submit", "SPEC.yaml",
                          "Write one batch script per configuration of a sweep (its repetitions run in sequence\n"
                          "inside the job) and submit each with sbatch; job ids go to OUT/<name>/jobs.json.",
                          opts, 1, 1, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown && !env_path)
    status = mapp_fail(MAPP_ERR_INPUT, "mapp submit needs --env (an environment with scheduler: slurm)");
  if (status == MAPP_OK && !args.help_shown) status = submit(args.cli.positional[0], env_path, out, dry_run, &select);
  selection_free(&select);
  verb_args_free(&args);
  return status;
}
