/* mapp submit SPEC --env ENV: one batch script per configuration (all its
 * repetitions), submitted with sbatch; mapp collect RESULTS: the records of
 * the jobs that finished, judged like a sweep's runs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dryrun.h"
#include "execute.h"
#include "fsutil.h"
#include "launch.h"
#include "mapp_error.h"
#include "proc.h"
#include "results.h"
#include "selection.h"
#include "sweep_setup.h"
#include "verbs.h"

/* The shell helper every script runs its repetitions through: the exit code
 * and elapsed seconds go to a .status file, which is how `collect` knows a
 * repetition ended (and how it went) without asking the scheduler. */
static const char run_helper[] =
    "mapp_run() {\n"
    "  local status_file=$1 log=$2\n"
    "  shift 2\n"
    "  local start end rc\n"
    "  start=$(date +%s.%N)\n"
    "  \"$@\" >\"$log\" 2>&1\n"
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

static int push_directives(strv *lines, const harness_env *env, const job *j, const char *stem,
                           const char *sweep_name, const char *jobs_dir) {
  long nodes;
  MAPP_TRY(env_node_count(env, j, &nodes));
  MAPP_TRY(strv_push(lines, "#!/bin/bash"));
  MAPP_TRY(push_quoted_directive(lines, "job-name", "the job name", "mapp-%s-%s", sweep_name, stem));
  if (env->partition) MAPP_TRY(strv_pushf(lines, "#SBATCH --partition=%s", env->partition));
  if (env->account) MAPP_TRY(strv_pushf(lines, "#SBATCH --account=%s", env->account));
  if (env->time_limit) MAPP_TRY(strv_pushf(lines, "#SBATCH --time=%s", env->time_limit));
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

/* The whole script of a configuration (j is its repetition 0). */
static int batch_script(const submit_context *ctx, const job *j, const char *stem, json_t *launches, char **script) {
  const harness_env *env = &ctx->setup->env;
  strv lines = {0};
  int status = push_directives(&lines, env, j, stem, ctx->setup->spec.name, ctx->paths->jobs_dir);
  if (status == MAPP_OK)
    status = strv_pushf(&lines, "# Generated by `mapp submit` from %s for environment %s (%s).\n"
                        "# `mapp collect %s` gathers the records when the job has ended.",
                        ctx->setup->spec.origin, env->name, env->origin, ctx->paths->dir);
  if (status == MAPP_OK) status = push_environment(&lines, env, j);
  if (status == MAPP_OK) status = strv_push(&lines, run_helper);
  for (long rep = 0; status == MAPP_OK && rep < ctx->setup->spec.repetitions; ++rep) {
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
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s?, s:o, s:s, s:o, s:n}", "stem", stem, "app",
                   j->app, "variant", j->variant, "backend", j->backend, "size", j->size, "scaling", j->scaling,
                   "ranks", (json_int_t)j->ranks, "threads", (json_int_t)j->threads, "label", j->label, "args",
                   args, "script", script_path, "launches", launches, "job_id");
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
static int submit_one(const submit_context *ctx, const job *j, bool dry_run, json_t *entries) {
  job configuration = *j; /* all repetitions: the stem without -rK, with the entry's label or args */
  configuration.repetition = -1;
  char *stem = job_stem(&configuration);
  char *script_path = stem ? str_printf("%s/%s.sbatch", ctx->paths->jobs_dir, stem) : NULL;
  json_t *launches = json_array();
  char *script = NULL, *job_id = NULL;
  int status = script_path ? batch_script(ctx, j, stem, launches, &script) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && dry_run) printf("# ---- %s\n%s\n", script_path, script);
  if (status == MAPP_OK && !dry_run) status = write_text_file(script_path, script);
  if (status == MAPP_OK && !dry_run) status = sbatch(script_path, &job_id);
  if (status == MAPP_OK && !dry_run) {
    json_t *entry = job_entry(j, stem, script_path, json_incref(launches));
    json_object_set_new(entry, "job_id", json_string(job_id));
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
  /* the table first: jobs, nodes, baselines and core-seconds before 400 scripts */
  if (status == MAPP_OK && dry_run) status = dry_run_print(&setup, paths.dir, stdout);
  submit_context ctx = {.setup = &setup, .paths = &paths};
  size_t scripts = 0;
  for (size_t i = 0; status == MAPP_OK && i < setup.jobs.count; ++i) {
    const sweep_job *sj = &setup.jobs.items[i];
    /* A device missing here is no reason to skip: the job runs on the cluster's. */
    if (sj->job.repetition != 0 || (sj->combo != COMBO_RUNNABLE && sj->combo != COMBO_NO_DEVICE)) continue;
    status = submit_one(&ctx, &sj->job, dry_run, entries);
    ++scripts;
  }
  if (status == MAPP_OK)
    printf("%s%zu batch script%s for %s (%ld repetition%s each)\n", dry_run ? "dry run: " : "", scripts,
           scripts == 1 ? "" : "s", setup.spec.name, setup.spec.repetitions, setup.spec.repetitions == 1 ? "" : "s");
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

/* ---------------------------------------------------------------- collect */

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
  proc_outcome proc;
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
  else if (status == MAPP_OK)
    status = collect_finished(entry, j, &files, &proc, ended_state, sweep, results_file, tally);
  job_files_free(&files);
  free(status_path);
  free(stem);
  free(key);
  return status;
}

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
    for (j.repetition = 0; status == MAPP_OK && j.repetition < reps; ++j.repetition)
      status = collect_repetition(e, &j, runs_dir, sweep, results_file, done, &job_state, &asked, tally);
    free(job_state);
    strv_free(&args);
    MAPP_TRY(status);
  }
  return MAPP_OK;
}

static bool positive_integer(const json_t *value) { return json_is_integer(value) && json_integer_value(value) >= 1; }

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

static int collect(const char *dir) {
  char *jobs_path = path_join(dir, "jobs.json"), *results_file = path_join(dir, "results.jsonl");
  json_error_t err;
  json_t *doc = NULL, *done = NULL;
  int lock = -1;
  int status = jobs_path && results_file ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !(doc = json_load_file(jobs_path, 0, &err)))
    status = mapp_fail(MAPP_ERR_INPUT, "cannot read %s: %s (was the sweep submitted with mapp submit?)", jobs_path, err.text);
  if (status == MAPP_OK) status = check_jobs_file(doc, jobs_path);
  if (status == MAPP_OK) status = dir_lock(dir, "collect", &lock);
  if (status == MAPP_OK) status = sweep_done_keys(results_file, true, &done);
  collect_tally tally = {0};
  if (status == MAPP_OK) status = collect_jobs(doc, results_file, done, &tally);
  if (status == MAPP_OK) {
    printf("collected %zu record%s (%zu failed), %zu still pending, %zu collected before\nresults: %s\n",
           tally.collected, tally.collected == 1 ? "" : "s", tally.failed, tally.pending, tally.already, results_file);
    status = tally.failed ? MAPP_ERR_VERIFY : MAPP_OK;
  }
  dir_unlock(&lock);
  json_decref(done);
  json_decref(doc);
  free(results_file);
  free(jobs_path);
  return status;
}

int verb_collect(int argc, char **argv) {
  const mapp_option opts[] = {MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("collect", "RESULTS_DIR",
                          "Append the records of the submitted repetitions that have ended to results.jsonl,\n"
                          "checked against their baselines like a sweep's. Exit 1 when one failed.",
                          opts, 1, 1, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) status = collect(args.cli.positional[0]);
  verb_args_free(&args);
  return status;
}
