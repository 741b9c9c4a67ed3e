/* mapp bless APP: run the reference configuration and make its answer the
 * baseline of its case, with the tolerance, the provenance the app wrote
 * and why it was blessed. An envelope baseline (envelope_file.h) runs the
 * configuration with an -O0 build (the reference), with this one (member
 * o3) and with each twin build (--twin NAME=DIR; by default fma, an -O3
 * build contracting multiply-adds as GPUs do: cmake --preset fma). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps.h"
#include "baseline.h"
#include "envelope_file.h"
#include "env.h"
#include "execute.h"
#include "fsutil.h"
#include "h5util.h"
#include "mapp_h5_attr.h"
#include "mapp_build_info.h"
#include "mapp_error.h"
#include "mapp_record.h"
#include "paths.h"
#include "verbs.h"

/* A member build of an envelope besides this one: its name and bin dir. */
typedef struct {
  char name[32];
  char *bin; /* malloc'd */
} twin_build;

typedef struct {
  const char *variant, *backend, *size, *scaling, *case_name, *reason, *model, *env_path, *o0_bin;
  long ranks, threads;
  double bound;
  bool force; /* replace an existing baseline */
  twin_build twins[ENVELOPE_MAX_MEMBERS - 1];
  size_t ntwins;
} bless_options;

/* --twin NAME=DIR */
static int parse_twin(const char *value, void *dest) {
  bless_options *o = dest;
  const char *eq = strchr(value, '=');
  size_t len = eq ? (size_t)(eq - value) : 0;
  if (!eq || len == 0 || len >= sizeof o->twins[0].name || !eq[1] || o->ntwins == ENVELOPE_MAX_MEMBERS - 1 ||
      strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789_") != len || !strncmp(value, "o3", len))
    return MAPP_ERR_INPUT;
  twin_build *t = &o->twins[o->ntwins];
  memcpy(t->name, value, len);
  t->name[len] = '\0';
  if (!(t->bin = strdup(eq + 1))) return MAPP_ERR_SYSTEM;
  ++o->ntwins;
  return MAPP_OK;
}

typedef struct {
  tolerance tol; /* envelope: bound is the multiple */
  const char *reason;
  char *command; /* the mapp bless command line */
} bless_stamp;

/* One launch of the reference configuration, in its own temporary folder
 * (the -O0 and -O3 runs of an envelope share file names). */
typedef struct {
  char dir[32];
  job_files files;
  job_result res;
} reference_run;

static int list_fields(hid_t file, const char *path, strv *names) {
  MAPP_TRY(h5_list_datasets(file, path, names));
  return names->count ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "%s has no datasets", path);
}

static int copy_fields(hid_t src, const char *path, hid_t dst) {
  strv names = {0};
  int status = list_fields(src, path, &names);
  for (size_t i = 0; status == MAPP_OK && i < names.count; ++i)
    status = h5_copy_dataset_compressed(src, names.items[i], dst, names.items[i]);
  strv_free(&names);
  return status;
}

/* The -O0 answer's fields, each member's answer as its /MEMBER twins, and
 * the -O0 build's provenance beside this build's as o0_* attributes. */
static int envelope_fields(const envelope_member *members, size_t nmembers, const char *o0_path, hid_t dst,
                           envelope_params params) {
  hid_t o0 = -1;
  strv names = {0};
  int status = h5_open_read(o0_path, &o0);
  if (status == MAPP_OK) status = h5_copy_attributes(o0, dst, "o0_");
  if (status == MAPP_OK) status = list_fields(o0, o0_path, &names);
  for (size_t i = 0; status == MAPP_OK && i < names.count; ++i)
    status = envelope_write_members(o0, o0_path, members, nmembers, dst, names.items[i], params);
  strv_free(&names);
  h5_close(o0);
  return status;
}

static int stamp_baseline(hid_t dst, const bless_stamp *stamp) {
  char now[64];
  mapp_utc_now(now, sizeof now);
  MAPP_TRY(mapp_h5_attr_string(dst, "tolerance", tolerance_model_name(stamp->tol.model)));
  MAPP_TRY(mapp_h5_attr_double(dst, "tolerance_bound", stamp->tol.bound));
  MAPP_TRY(mapp_h5_attr_string(dst, "blessed_reason", stamp->reason));
  MAPP_TRY(mapp_h5_attr_string(dst, "blessed_date", now));
  MAPP_TRY(mapp_h5_attr_string(dst, "blessed_command", stamp->command));
  return mapp_h5_attr_string(dst, "blessed_git_revision", mapp_git_revision);
}

/* One envelope's answers: the -O0 reference's and each member's. */
typedef struct {
  const char *o0_answer; /* NULL: not an envelope */
  const char *names[ENVELOPE_MAX_MEMBERS], *answers[ENVELOPE_MAX_MEMBERS]; /* [0]: o3, this build */
  size_t nmembers;
} envelope_answers;

/* Each member's answer open for reading, as the envelope writer takes them. */
static int open_members(const envelope_answers *e, hid_t this_build, envelope_member *members) {
  for (size_t m = 0; m < e->nmembers; ++m) {
    members[m] = (envelope_member){.name = e->names[m], .file = -1, .path = e->answers[m]};
    if (m == 0) members[m].file = this_build;
    else MAPP_TRY(h5_open_read(e->answers[m], &members[m].file));
  }
  return MAPP_OK;
}

static int write_envelope(hid_t src, const envelope_answers *e, hid_t dst, envelope_params params) {
  envelope_member members[ENVELOPE_MAX_MEMBERS];
  for (size_t m = 0; m < ENVELOPE_MAX_MEMBERS; ++m) members[m].file = -1;
  int status = open_members(e, src, members);
  if (status == MAPP_OK) status = envelope_fields(members, e->nmembers, e->o0_answer, dst, params);
  for (size_t m = 1; m < e->nmembers; ++m) h5_close(members[m].file);
  return status;
}

/* Written beside the target and renamed over it, so a failed bless never
 * leaves a half-written baseline. `answer` is this build's. */
static int write_baseline(const char *answer, const envelope_answers *e, const char *target, const bless_stamp *stamp) {
  char *tmp = str_printf("%s.tmp", target);
  if (!tmp) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  h5_quiet();
  hid_t src = -1, dst = -1;
  envelope_params params = {.multiple = stamp->tol.bound, .floor = MAPP_ENVELOPE_FLOOR};
  int status = h5_open_read(answer, &src);
  if (status == MAPP_OK) status = h5_create(tmp, &dst);
  if (status == MAPP_OK) status = h5_copy_attributes(src, dst, "");
  if (status == MAPP_OK) status = e->o0_answer ? write_envelope(src, e, dst, params) : copy_fields(src, answer, dst);
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
static int require_pass(const job *j, const reference_run *run) {
  if (run->res.outcome == OUTCOME_OK) return MAPP_OK;
  char verdict[64];
  job_outcome_text(&run->res, verdict, sizeof verdict);
  /* The app refused its flags (exit 2) and said why: that one line is the answer. */
  char prog[64];
  snprintf(prog, sizeof prog, "mapp-%s", j->app);
  char *message = run->res.outcome == OUTCOME_FAIL_EXIT && run->res.exit_code == MAPP_ERR_INPUT
                      ? proc_log_error(run->files.log, prog)
                      : NULL;
  if (message) {
    int status = mapp_fail(MAPP_ERR_INPUT, "the reference run was refused: %s: %s; nothing blessed", prog, message);
    free(message);
    return status;
  }
  fprintf(stderr, "last lines of %s:\n", run->files.log);
  proc_print_log_tail(run->files.log, 12, stderr);
  return mapp_fail(run->res.outcome == OUTCOME_FAIL_VERIFY ? MAPP_ERR_VERIFY : job_exit_status(&run->res),
                   "the reference run%s%s did not pass (%s); nothing blessed", j->bin_dir ? " of the build in " : "",
                   j->bin_dir ? j->bin_dir : "", verdict);
}

static int reference_run_execute(const harness_env *env, const job *j, reference_run *run) {
  snprintf(run->dir, sizeof run->dir, "/tmp/mapp-bless-XXXXXX");
  if (!mkdtemp(run->dir)) {
    run->dir[0] = '\0';
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot create a temporary folder");
  }
  execute_options opt = {.check_baseline = false, .keep_output = true};
  MAPP_TRY(job_files_make(run->dir, j, &run->files));
  MAPP_TRY(job_execute(env, j, &run->files, &opt, &run->res));
  return require_pass(j, run);
}

static void reference_run_remove(reference_run *run) {
  const char *files[] = {run->files.output, run->files.result, run->files.log};
  for (size_t i = 0; i < 3; ++i)
    if (files[i]) unlink(files[i]);
  if (run->dir[0]) rmdir(run->dir);
  job_result_free(&run->res);
  job_files_free(&run->files);
}

static const char *record_text(const reference_run *run, const char *key) {
  const char *text = json_string_value(json_object_get(run->res.record, key));
  return text ? text : "unknown";
}

/* The envelope must measure rounding alone: the two builds must be of the
 * same source revision, and not of the same flags (those agree bit for bit,
 * and would hold every candidate to the floor while claiming to measure). */
static int require_comparable_builds(const reference_run *o3, const reference_run *o0, const char *o0_bin) {
  const char *rev3 = record_text(o3, "git_revision"), *rev0 = record_text(o0, "git_revision");
  if (strcmp(rev3, rev0) != 0)
    return mapp_fail(MAPP_ERR_INPUT, "the build in %s is of revision %s, this build of %s: rebuild it "
                                     "(cmake --build build-O0) so the envelope measures rounding, not code changes",
                     o0_bin, rev0, rev3);
  const char *flags = record_text(o3, "flags");
  if (strcmp(flags, record_text(o0, "flags")) != 0) return MAPP_OK;
  return mapp_fail(MAPP_ERR_INPUT, "the build in %s has this build's flags (%s), so it cannot make an envelope: "
                                   "point --o0-bin at a build configured with cmake --preset O0", o0_bin, flags);
}

static int install_baseline(const job *j, const reference_run *run, const envelope_answers *e,
                            const bless_options *o, const bless_stamp *stamp) {
  const char *case_name;
  MAPP_TRY(resolve_case(o, &run->res, &case_name));
  char *target = baseline_path(job_baseline_app(j), case_name);
  char *dir = target ? path_dirname(target) : NULL;
  int status = dir ? make_dirs(dir) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  /* A baseline is the project's reference answer (often checked in): a
   * bless that would silently replace it must say so. */
  if (status == MAPP_OK && path_exists(target) && !o->force)
    status = mapp_fail(MAPP_ERR_INPUT, "%s exists: pass --force to replace it (and --reason to say why)", target);
  if (status == MAPP_OK) status = write_baseline(run->files.output, e, target, stamp);
  if (status == MAPP_OK) {
    printf("blessed %s (%s %s/%s n=%ld, tolerance %s %g%s%s", target, j->app, j->variant, j->backend, j->ranks,
           tolerance_model_name(stamp->tol.model), stamp->tol.bound, e->o0_answer ? ", -O0 reference from " : "",
           e->o0_answer ? o->o0_bin : "");
    for (size_t m = 0; e->o0_answer && m < e->nmembers; ++m) printf("%s%s", m ? "," : ", members ", e->names[m]);
    printf("): %s\n", stamp->reason);
  }
  free(dir);
  free(target);
  return status;
}

/* The reference configuration with this build and, for an envelope, with
 * the -O0 build and every twin build too. */
static int bless_run(const harness_env *env, const job *j, const bless_options *o, const bless_stamp *stamp) {
  bool envelope = stamp->tol.model == TOL_ENVELOPE;
  reference_run run = {0}, o0 = {0}, twins[ENVELOPE_MAX_MEMBERS - 1] = {0};
  int status = reference_run_execute(env, j, &run);
  envelope_answers e = {.nmembers = 1, .names = {ENVELOPE_O3_GROUP}, .answers = {run.files.output}};
  if (status == MAPP_OK && envelope) {
    job j0 = *j;
    j0.bin_dir = o->o0_bin;
    j0.exe = NULL; /* the -O0 build's own mapp-APP */
    status = reference_run_execute(env, &j0, &o0);
    if (status == MAPP_OK) status = require_comparable_builds(&run, &o0, o->o0_bin);
    e.o0_answer = o0.files.output;
  }
  for (size_t t = 0; status == MAPP_OK && envelope && t < o->ntwins; ++t) {
    job jt = *j;
    jt.bin_dir = o->twins[t].bin;
    jt.exe = NULL;
    status = reference_run_execute(env, &jt, &twins[t]);
    if (status == MAPP_OK) status = require_comparable_builds(&twins[t], &o0, o->twins[t].bin);
    e.names[e.nmembers] = o->twins[t].name;
    e.answers[e.nmembers++] = twins[t].files.output;
  }
  if (status == MAPP_OK) status = install_baseline(j, &run, &e, o, stamp);
  reference_run_remove(&run);
  reference_run_remove(&o0);
  for (size_t t = 0; t < o->ntwins; ++t) reference_run_remove(&twins[t]);
  return status;
}

/* Checked before anything runs: a missing -O0 build is the likely mistake. */
static int require_build(const char *bin, const char *app, const char *what, const char *preset, const char *flag) {
  char *exe = paths_app_executable(bin, app);
  if (!exe) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = access(exe, X_OK) == 0
                   ? MAPP_OK
                   : mapp_fail(MAPP_ERR_INPUT, "--model envelope needs %s of %s, and %s is missing: build it with "
                                               "cmake --preset %s && cmake --build build-%s --target mapp-%s, or pass %s",
                               what, app, exe, preset, preset, app, flag);
  free(exe);
  return status;
}

static int require_o0_app(const bless_options *o, const char *app) {
  MAPP_TRY(require_build(o->o0_bin, app, "an -O0 build", "O0", "--o0-bin DIR"));
  for (size_t t = 0; t < o->ntwins; ++t)
    MAPP_TRY(require_build(o->twins[t].bin, app, "each twin build", o->twins[t].name, "--twin NAME=DIR"));
  return MAPP_OK;
}

static int bless_app(const bless_options *o, const char *app_name, const strv *extra, bless_stamp *stamp) {
  if (stamp->tol.model == TOL_ENVELOPE) MAPP_TRY(require_o0_app(o, app_name));
  harness_env env;
  MAPP_TRY(env_load(o->env_path, &env));
  app_info app = {0};
  int status = env_check_ranks(&env, o->ranks);
  if (status == MAPP_OK) status = app_query(app_name, &env, &app);
  job j = {.app = app_name, .backend = o->backend, .size = o->size, .scaling = o->scaling, .ranks = o->ranks,
           .threads = o->threads, .repetition = -1, .extra_args = extra};
  if (status == MAPP_OK) {
    j.variant = o->variant ? o->variant : app.variants[0].name;
    j.exe = app.exe;
    j.baselines = app.baselines;
  }
  if (status == MAPP_OK && app_combo(&app, j.variant, j.backend) != COMBO_RUNNABLE)
    status = mapp_fail(MAPP_ERR_INPUT, "%s %s/%s cannot run in this build (see mapp list)", app_name, j.variant,
                       j.backend);
  if (status == MAPP_OK) status = bless_run(&env, &j, o, stamp);
  app_info_free(&app);
  env_free(&env);
  return status;
}

/* The model and its bound from the flags: the envelope's bound is its
 * multiple (default 2, the report's "twice the envelope"), and --o0-bin
 * belongs to it alone. */
static int resolve_tolerance(bless_options *o, char **o0_default, tolerance *tol) {
  MAPP_TRY(tolerance_parse_model(o->model, &tol->model));
  bool envelope = tol->model == TOL_ENVELOPE;
  if (o->o0_bin && !envelope) return mapp_fail(MAPP_ERR_INPUT, "--o0-bin is only for --model envelope");
  if (o->bound < 0) o->bound = envelope ? MAPP_ENVELOPE_MULTIPLE : 0.0;
  if (envelope && !(o->bound > 0))
    return mapp_fail(MAPP_ERR_INPUT, "--bound (the envelope multiple) must be > 0, got %g", o->bound);
  tol->bound = o->bound;
  if (envelope && !o->o0_bin && !(o->o0_bin = *o0_default = paths_source_file("build-O0/bin")))
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (o->ntwins && !envelope) return mapp_fail(MAPP_ERR_INPUT, "--twin is only for --model envelope");
  /* By default the FMA build is a member: the round-off of contraction is
   * what a GPU or an -march build legitimately adds (issue 9). */
  if (envelope && !o->ntwins) {
    snprintf(o->twins[0].name, sizeof o->twins[0].name, "fma");
    if (!(o->twins[0].bin = paths_source_file("build-fma/bin"))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    o->ntwins = 1;
  }
  return MAPP_OK;
}

/* The case a bless replaces must be named, never defaulted: --size (the
 * preset's case, e.g. tiny, tiny-weak4) or --case. */
static int require_case(bless_options *o) {
  if (!o->size && !o->case_name)
    return mapp_fail(MAPP_ERR_INPUT, "mapp bless needs the case it writes: --size PRESET (one of the app's: tiny, small, ...) "
                                     "(or --case NAME for a custom problem)");
  if (!o->size) o->size = "tiny";
  return MAPP_OK;
}

int verb_bless(int argc, char **argv) {
  bless_options o = {.backend = "serial", .size = NULL, .scaling = "strong", .model = "exact",
                     .reason = "not stated", .ranks = 1, .threads = 1, .bound = -1.0};
  const mapp_option opts[] = {
      {.name = "size", .kind = MAPP_OPT_STRING, .dest = &o.size,
       .help = "problem size preset, one of the app's (required, or --case)", .default_text = "none"},
      {.name = "scaling", .kind = MAPP_OPT_CHOICE, .dest = &o.scaling, .choices = "weak|strong",
       .help = "scaling mode (weak cases need --ranks: the global problem grows with them)"},
      {.name = "ranks", .kind = MAPP_OPT_LONG, .dest = &o.ranks, .min = 1, .max = 4096,
       .help = "MPI ranks of the reference run (also -n)"},
      {.name = "variant", .kind = MAPP_OPT_STRING, .dest = &o.variant, .help = "reference variant",
       .default_text = "the app's first"},
      {.name = "backend", .kind = MAPP_OPT_STRING, .dest = &o.backend, .help = "reference backend"},
      {.name = "threads", .kind = MAPP_OPT_LONG, .dest = &o.threads, .min = 1, .max = 4096,
       .help = "OpenMP threads per rank"},
      {.name = "case", .kind = MAPP_OPT_STRING, .dest = &o.case_name, .help = "baseline case name",
       .default_text = "the case the app's record names"},
      {.name = "reason", .kind = MAPP_OPT_STRING, .dest = &o.reason, .help = "why the baseline changes (recorded)"},
      {.name = "model", .kind = MAPP_OPT_STRING, .dest = &o.model, .choices = "exact|abs|rel|ulp|envelope",
       .help = "tolerance model checks will use (envelope: runs the -O0 build too)"},
      {.name = "bound", .kind = MAPP_OPT_DOUBLE, .dest = &o.bound, .dmin = 0.0, .dmax = 1e300,
       .help = "tolerance bound; for envelope the multiple of the envelope", .default_text = "0; envelope 2"},
      {.name = "o0-bin", .kind = MAPP_OPT_STRING, .dest = &o.o0_bin, .help = "bin dir of the -O0 build (envelope)",
       .default_text = "$MAPP_SOURCE_DIR/build-O0/bin"},
      {.name = "twin", .kind = MAPP_OPT_CALLBACK, .dest = &o, .parse = parse_twin, .choices = "NAME=DIR",
       .help = "an envelope member build besides this one (repeatable; name: a-z, 0-9, _)",
       .default_text = "fma=$MAPP_SOURCE_DIR/build-fma/bin"},
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &o.env_path, .help = "environment file",
       .default_text = "envs/local.yaml"},
      {.name = "force", .kind = MAPP_OPT_FLAG, .dest = &o.force, .help = "replace the case's baseline if it exists"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("bless", "APP", "Run the app's reference configuration and write its answer as\n"
                          "baselines/APP/CASE.h5 with tolerance, provenance and reason. With --model envelope the\n"
                          "-O0 build runs it too (its answer becomes the reference), and each member's answer\n"
                          "(this build's /o3, each --twin's) bounds the legitimate round-off.\n"
                          "Flags after -- go to the app.",
                          opts, 1, 1, true, argc, argv, &args);
  bless_stamp stamp = {.reason = o.reason};
  char *o0_default = NULL;
  if (status == MAPP_OK && !args.help_shown) status = require_case(&o);
  if (status == MAPP_OK && !args.help_shown) status = resolve_tolerance(&o, &o0_default, &stamp.tol);
  if (status == MAPP_OK && !args.help_shown && !(stamp.command = verb_command_line(argc, argv)))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK && !args.help_shown) status = bless_app(&o, args.cli.positional[0], &args.passthrough, &stamp);
  free(stamp.command);
  free(o0_default);
  for (size_t t = 0; t < o.ntwins; ++t) free(o.twins[t].bin);
  verb_args_free(&args);
  return status;
}
